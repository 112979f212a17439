// The chat panel's model form: a provider, a model and its key, in place of `%env KEY=...` in a
// cell (which the notebook saves). The key goes to the kernel once, in a message (never in a synced
// trait: a widget's state can be saved into the notebook), and the field is emptied as it is sent;
// what comes back says whether a key is saved and where, never a character of it. After a Save,
// the form asks JupyterLab (our extension, CHOSEN_EVENT) to keep the provider and model in its
// settings, which new kernels read. Concatenated before front.js, after link.js.

const CHOSEN_EVENT = 'copilot-nb:model-chosen';

class ModelForm {
  /**
   * @param {PanelModel} model
   * @param {string} view
   * @param {HTMLElement} root
   */
  constructor(model, view, root) {
    this.model = model;
    this.view = view;
    this.root = root;
    /** @type {FormView | null} the kernel's last word: providers, key statuses, the model now */
    this.state = null;
    /** @type {Map<string, ModelsMessage>} each provider's models, as the kernel listed them */
    this.listed = new Map();
    /** @type {HTMLButtonElement | undefined} the header's Model button */
    this.button = undefined;
    this.box = el('section', 'cnb-form');
    this.box.hidden = true;
    this.box.setAttribute('aria-label', 'Model settings');
    /**
     * @param {string} label
     * @param {HTMLElement} field
     */
    const row = (label, field) => {
      const line = el('label', 'cnb-form-row');
      line.append(el('span', 'cnb-form-label', label), field);
      this.box.append(line);
      return line;
    };
    this.provider = el('select', 'cnb-form-provider');
    row('Provider', this.provider);
    this.name = el('input', 'cnb-form-model');
    this.name.type = 'text';
    this.name.spellcheck = false;
    this.name.autocomplete = 'off';
    this.name.placeholder = 'model, e.g. gpt-4o';
    this.choices = el('datalist');
    this.choices.id = `cnb-models-${view}`;
    this.name.setAttribute('list', this.choices.id);
    row('Model', this.name).append(this.choices);
    this.listNote = el('div', 'cnb-form-note cnb-form-listed');
    this.box.append(this.listNote);
    this.secret = el('input', 'cnb-form-secret');
    this.secret.type = 'password';
    this.secret.autocomplete = 'off';
    this.secret.spellcheck = false;
    this.keyRow = row('Key', this.secret);
    this.keyNote = el('div', 'cnb-form-note cnb-form-key');
    this.box.append(this.keyNote);
    const actions = el('div', 'cnb-form-actions');
    this.save = el('button', 'cnb-form-save', 'Save');
    this.forget = el('button', 'cnb-form-forget', 'Forget key');
    this.close = el('button', 'cnb-form-close', 'Close');
    for (const b of [this.save, this.forget, this.close]) {
      b.type = 'button';
    }
    this.save.title =
      'Use this model now (as %copilot model does) and keep the key outside the notebook';
    this.forget.title = 'Delete the saved key of this provider';
    actions.append(this.save, this.forget, this.close);
    this.said = el('div', 'cnb-form-said');
    this.said.setAttribute('role', 'status');
    this.setting = el('div', 'cnb-form-note cnb-form-setting');
    this.box.append(actions, this.said, this.setting);
    this.wire();
  }

  wire() {
    this.provider.onchange = () => {
      const s = this.state;
      this.name.value = s && this.provider.value === s.provider ? s.model : '';
      this.said.textContent = '';
      this.show();
      this.ask('models');
    };
    this.save.onclick = () => this.submit();
    this.forget.onclick = () => {
      this.said.textContent = '';
      this.ask('forget');
    };
    this.close.onclick = () => this.toggle(false);
    this.box.addEventListener('keydown', event => {
      if (
        event.key === 'Enter' &&
        event.target instanceof HTMLInputElement &&
        !event.isComposing
      ) {
        event.preventDefault();
        this.submit();
      } else if (event.key === 'Escape') {
        this.toggle(false);
      }
    });
  }

  /**
   * @param {FormAction} action
   * @param {{model?: string, key?: string}} [extra]
   */
  ask(action, extra = {}) {
    this.model.send({
      kind: 'form',
      do: action,
      provider: this.provider.value,
      view: this.view,
      ...extra
    });
  }

  submit() {
    const key = this.secret.value;
    this.secret.value = ''; // the key leaves the page's fields as it is sent
    this.save.disabled = true;
    this.said.textContent = 'Saving…';
    this.said.dataset.outcome = '';
    this.ask('save', { model: this.name.value.trim(), key });
  }

  /** @param {boolean} [open] */
  toggle(open = this.box.hidden) {
    this.box.hidden = !open;
    this.root.classList.toggle('cnb-form-open', open);
    this.button?.setAttribute('aria-expanded', String(open));
    if (!open) {
      this.secret.value = '';
      return;
    }
    this.said.textContent = '';
    this.ask('state');
  }

  /** @param {FormMessage | ModelsMessage} msg */
  receive(msg) {
    if (msg.kind === 'models') {
      this.listed.set(msg.provider, msg);
      this.show();
      return;
    }
    const first = this.state === null;
    const state = (this.state = msg.form);
    if (first) {
      // the first word from the kernel: its providers, and the model it uses now
      const names = state.providers.map(p => p.name);
      this.provider.replaceChildren(
        ...names.map(n => Object.assign(el('option', '', n), { value: n }))
      );
      this.provider.value = names.includes(state.provider)
        ? state.provider
        : names[0];
      this.name.value = state.model;
      this.ask('models');
    }
    this.show();
    if (msg.view === this.view) {
      this.save.disabled = false;
      this.said.textContent = msg.said;
      this.said.dataset.outcome = msg.outcome || '';
      if (msg.chosen) {
        this.root.dispatchEvent(
          new CustomEvent(CHOSEN_EVENT, { bubbles: true, detail: msg.chosen })
        );
      }
    }
  }

  show() {
    const s = this.state;
    if (!s) {
      return;
    }
    const entry =
      s.providers.find(p => p.name === this.provider.value) || s.providers[0];
    const key = entry.key;
    this.keyRow.hidden = !key;
    this.forget.hidden = !key;
    this.forget.disabled = !key?.saved;
    this.keyNote.dataset.state = key?.problem
      ? 'problem'
      : key?.saved
        ? 'saved'
        : 'none';
    this.keyNote.textContent = keyWords(entry);
    this.secret.placeholder = key?.saved
      ? 'saved; paste a new key to replace it'
      : 'paste the key';
    this.secret.setAttribute(
      'aria-label',
      key ? `${key.name}, kept outside the notebook` : 'Key'
    );
    const listed = this.listed.get(entry.name);
    this.choices.replaceChildren(
      ...(listed?.ids || []).map(id =>
        Object.assign(el('option'), { value: id })
      )
    );
    const count = listed?.ids.length;
    this.listNote.textContent = listed
      ? listed.note ||
        `${count} model${count === 1 ? '' : 's'} listed by ${entry.name}; or type a name.`
      : '';
    this.setting.textContent = s.problem
      ? s.problem
      : s.setting
        ? `New kernels start with ${s.setting} (JupyterLab's settings, copilot_nb: model).`
        : '';
  }
}

/** @param {ProviderView} entry */
function keyWords(entry) {
  const key = entry.key;
  if (!key) {
    return entry.sign_in; // signs in another way (Copilot), or needs no key (Ollama)
  }
  const env = `${key.name} is also set in the kernel's environment, and that one is used.`;
  if (key.problem) {
    return key.problem;
  }
  if (key.saved) {
    return `Key saved in ${key.where}.${key.environment ? ` ${env}` : ''}`;
  }
  if (key.environment) {
    return `${key.name} is set in the kernel's environment. A key saved here is used where it is not.`;
  }
  return `No key saved for ${key.name}. It is kept outside the notebook, where only you can read it.`;
}

/** @param {ModelForm} form */
function modelFormButton(form) {
  const button = el('button', 'cnb-setup', 'Model');
  button.type = 'button';
  button.title = 'Choose the provider, the model and its key';
  button.setAttribute('aria-expanded', 'false');
  button.onclick = () => form.toggle();
  form.button = button;
  return button;
}
