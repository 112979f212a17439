// The chat panel's front end (an anywidget ES module, no build step, no network). The kernel
// sends small ops in batches ([[kind, ...args], ...]; a replay: {replay, ops}); this view keeps the transcript and renders answers
// with `markdown()` and `diffHtml()` from markdown.js, which is concatenated before it.
// `render` builds the view (`buildView`), keeps the transcript (`Transcript`, one method per op)
// and wires the controls (`wireInput`, with `@` completion from complete.js) and the synced
// traits (`watchModel`).

// --- the view ----------------------------------------------------------------------------

const MODES = [
  ['ask', 'Ask'],
  ['plan', 'Plan'],
  ['agent', 'Agent']
];
const TAB_EVENT = 'copilot-nb:open-in-tab';
const FIX_EVENT = 'copilot-nb:fix'; // Fix with Copilot on a cell's error (the extension's fixInPanel.ts)

function buildView(model, root) {
  root.classList.add('cnb-root');
  root.setAttribute('data-lm-suppress-shortcuts', 'true');
  root.replaceChildren();
  const v = {};
  const header = el('div', 'cnb-header');
  v.title = el('div', 'cnb-title', model.get('title'));
  v.fresh = el('button', 'cnb-new', 'New chat');
  v.fresh.type = 'button';
  v.fresh.title = 'Forget the conversation and start a new one';
  v.tab = el('button', 'cnb-tab', 'As tab');
  v.tab.type = 'button';
  v.tab.title =
    "Move this chat to a tab of the main area (JupyterLab's Copilot commands move it back)";
  header.append(v.title, v.tab, v.fresh);
  v.header = header;

  v.log = el('div', 'cnb-log');
  v.log.setAttribute('role', 'log');
  v.empty = el('div', 'cnb-empty');
  v.empty.append(el('p', 'cnb-empty-lead', EMPTY[0]), el('p', '', EMPTY[1]));
  v.working = el('div', 'cnb-working');
  v.working.append(el('span'), el('span'), el('span'));

  const footer = el('div', 'cnb-footer');
  v.input = el('textarea', 'cnb-input');
  v.input.rows = 1;
  v.input.placeholder = 'Ask Copilot…';
  v.input.title = 'Enter sends, Shift+Enter starts a new line';
  v.send = el('button', 'cnb-send', 'Send');
  v.stop = el('button', 'cnb-stop', 'Stop');
  v.send.type = v.stop.type = 'button';
  const row = el('div', 'cnb-inputrow');
  row.append(v.input, v.send, v.stop);
  const status = el('div', 'cnb-status');
  v.picker = el('select', 'cnb-model');
  v.picker.title = 'Model for the next request';
  v.mode = el('select', 'cnb-mode');
  v.mode.title =
    'Mode for the next request: Ask reads and answers, Plan proposes a plan for you to approve, Agent does the work';
  v.mode.setAttribute('aria-label', 'Mode');
  v.mode.append(
    ...MODES.map(([value, label]) =>
      Object.assign(el('option', '', label), { value })
    )
  );
  v.meter = el('span', 'cnb-meter');
  v.bar = el('span', 'cnb-bar');
  v.fill = el('span', 'cnb-fill');
  v.bar.append(v.fill);
  status.append(v.picker, v.mode, v.meter, v.bar);
  footer.append(row, status);
  v.footer = footer;
  root.append(header, v.log, footer);
  return v;
}

// --- the transcript ----------------------------------------------------------------------

const OPS = {
  t: 'answer',
  r: 'thinking',
  u: 'user',
  tool: 'tool',
  ask: 'ask',
  asked: 'asked',
  diff: 'diff',
  done: 'done',
  undo: 'undoable',
  undone: 'undone',
  note: 'note',
  retry: 'retry',
  err: 'error',
  end: 'end',
  clear: 'clear'
};

class Transcript {
  constructor(model, view) {
    this.model = model;
    this.log = view.log;
    this.empty = view.empty;
    this.working = view.working;
    this.cards = new Map();
    this.dirty = new Set();
    this.frame = 0;
    this.clear();
  }

  nearBottom() {
    return (
      this.log.scrollHeight - this.log.scrollTop - this.log.clientHeight < 48
    );
  }

  add(node) {
    this.log.insertBefore(node, this.working);
    this.empty.remove();
    return node;
  }

  paint() {
    this.frame = 0;
    const stick = this.nearBottom();
    for (const block of this.dirty) {
      block.node.innerHTML = markdown(block.raw);
    }
    this.dirty.clear();
    if (stick) {
      this.log.scrollTop = this.log.scrollHeight;
    }
  }

  schedule() {
    if (!this.frame) {
      this.frame = requestAnimationFrame(() => this.paint());
    }
  }

  apply(op) {
    const [kind, ...a] = op;
    if (kind !== 't') {
      this.text = null;
    } // the answer block being streamed: {node, raw}
    if (kind !== 'r') {
      this.thought = null;
    }
    this.waiting?.remove(); // a retry's wait lasts until the next op
    this.waiting = null;
    if (kind !== 't' && kind !== 'r' && kind !== 'retry') {
      this.attempt = [];
    }
    const method = OPS[kind];
    if (method) {
      this[method](...a);
    }
  }

  answer(text) {
    if (!this.text) {
      this.text = { node: this.add(el('div', 'cnb-answer')), raw: '' };
      this.attempt.push(this.text.node);
    }
    this.text.raw += text;
    this.dirty.add(this.text);
  }

  thinking(text) {
    if (!this.thought) {
      const box = this.add(el('details', 'cnb-thinking'));
      box.append(el('summary', '', 'Thinking'));
      this.attempt.push(box);
      this.thought = { body: box.appendChild(el('div', 'cnb-thinking-body')) };
    }
    this.thought.body.textContent += text;
  }

  retry(text) {
    // the failed attempt's words go (the retry streams them again), as in the cell (feed.py)
    for (const node of this.attempt) {
      node.remove();
      this.dirty.forEach(
        block => block.node === node && this.dirty.delete(block)
      );
    }
    this.attempt = [];
    this.waiting = this.add(el('div', 'cnb-note cnb-waiting'));
    this.waiting.innerHTML = markdown(`⚠ ${text}`);
  }

  user(text) {
    this.add(el('div', 'cnb-user', text));
  }

  tool(id, name, target, kind, preview) {
    const entry = toolCard(name, target, kind, preview);
    this.cards.set(id, entry);
    this.lastCard = entry;
    this.add(entry.box);
  }

  ask(id, category, warning, options, kind, preview, target) {
    const entry = this.cards.get(id);
    if (!entry) {
      return;
    }
    if (preview !== undefined) {
      // what will happen (run_cell: the code in that cell), in place of the call's arguments
      if (entry.args.parentNode === entry.body) {
        entry.args.previousElementSibling?.remove();
      }
      entry.body.prepend(el('div', 'cnb-label', 'Code'), entry.args);
      showArgs(entry, kind, preview);
      if (target) {
        entry.box.querySelector('.cnb-tool-target')?.replaceChildren(target);
      }
    }
    entry.box.dataset.state = 'asking';
    entry.details.open = true;
    entry.approve =
      category === 'question'
        ? questionBar(this.model, id, warning, options)
        : askBar(this.model, entry, id, category, warning);
    entry.box.append(entry.approve);
  }

  asked(id, approved, outcome, state) {
    const entry = this.cards.get(id);
    if (!entry) {
      return;
    }
    entry.approve?.remove();
    entry.approve = null;
    entry.box.dataset.state = state || (approved ? 'running' : 'error');
    entry.outcome.textContent = outcome || (approved ? 'approved' : 'denied');
  }

  diff(path, diff) {
    if (!this.lastCard) {
      return;
    }
    const { body, args } = this.lastCard;
    this.lastCard.more?.remove(); // what the call did replaces what it would do
    this.lastCard.more = null;
    args.innerHTML = diffHtml(diff);
    if (args.parentNode === body) {
      args.previousElementSibling?.remove();
    } else {
      body.prepend(args);
    }
    const label = el('div', 'cnb-label', 'Diff ');
    label.append(el('span', 'cnb-path', path));
    body.insertBefore(label, args);
    this.lastCard.diffed = true;
  }

  done(id, ok, summary, result, output) {
    const entry = this.cards.get(id);
    if (!entry) {
      return;
    }
    entry.box.dataset.state = ok ? 'ok' : 'error';
    entry.outcome.textContent = summary;
    if (output) {
      // what a run printed and drew, as a notebook shows it: the kernel's safe HTML
      // (jupyter/output_html.py), which the text result only repeats
      const shown = el('div', 'cnb-output');
      shown.innerHTML = output;
      entry.body.append(el('div', 'cnb-label', 'Output'), shown);
    } else if (result && !(ok && entry.diffed)) {
      // an edit's result repeats its diff: show it only when the call failed
      entry.body.append(
        el('div', 'cnb-label', 'Result'),
        el('pre', 'cnb-result', result)
      );
    }
  }

  undoable(id, note) {
    // a code block's Run kept the variables it changed: what Undo puts back, and the button
    const entry = this.cards.get(id);
    if (!entry) {
      return;
    }
    const bar = el('div', 'cnb-undo');
    const button = el('button', 'cnb-undo-btn', 'Undo');
    button.type = 'button';
    button.title = 'Put the variables back as they were before this run';
    button.onclick = () => {
      button.disabled = true;
      this.model.send({ kind: 'undo', id });
    };
    bar.append(el('span', 'cnb-undo-note', note), button);
    entry.undo?.remove();
    entry.undo = bar;
    entry.box.append(bar);
  }

  undone(id, ok, text) {
    const entry = this.cards.get(id);
    if (!entry?.undo) {
      return;
    }
    entry.undo.dataset.state = ok ? 'ok' : 'error';
    entry.undo.replaceChildren(el('span', 'cnb-undo-note', text));
  }

  note(text) {
    this.add(el('div', 'cnb-note')).innerHTML = markdown(text);
  }

  error(message, detail) {
    const box = this.add(el('div', 'cnb-error'));
    box.append(el('div', 'cnb-error-msg', message));
    if (detail) {
      const more = el('details');
      more.append(el('summary', '', 'Details'), el('pre', '', detail));
      box.append(more);
    }
  }

  end(status) {
    for (const entry of this.cards.values()) {
      entry.approve?.remove();
      entry.approve = null;
      if (
        entry.box.dataset.state === 'running' ||
        entry.box.dataset.state === 'asking'
      ) {
        entry.box.dataset.state = 'stopped';
        entry.outcome.textContent ||= 'cancelled';
      }
    }
    if (status === 'stopped') {
      this.add(el('div', 'cnb-stopped', 'Stopped'));
    }
  }

  clear() {
    this.log.replaceChildren(this.empty, this.working);
    this.text = this.thought = this.lastCard = this.waiting = null;
    this.attempt = []; // the answer and thinking blocks since the last other op: a retry's to take back
    this.cards.clear();
    this.dirty.clear();
  }

  receive(msg, view) {
    if (msg.replay !== undefined) {
      if (msg.replay !== view) {
        return;
      }
      this.clear();
      msg.ops.forEach(op => this.apply(op));
      this.synced = true;
      this.paint();
      this.log.scrollTop = this.log.scrollHeight;
    } else if (this.synced && Array.isArray(msg)) {
      const stick = this.nearBottom();
      msg.forEach(op => this.apply(op));
      if (stick) {
        this.log.scrollTop = this.log.scrollHeight;
      }
      this.schedule();
    }
  }
}

// --- the controls ------------------------------------------------------------------------

function wireInput(model, root, v, completion) {
  const grow = () => {
    v.input.style.height = 'auto';
    v.input.style.height = `${Math.min(v.input.scrollHeight, 180)}px`;
  };
  const submit = () => {
    const prompt = v.input.value.trim();
    if (!prompt || model.get('busy') || root.classList.contains('cnb-lost')) {
      return;
    }
    model.send({ kind: 'prompt', text: prompt });
    v.input.value = '';
    completion.reset();
    grow();
  };
  root.addEventListener('keydown', event => {
    event.stopPropagation(); // keys typed here are not notebook shortcuts
    if (event.target === v.input && completion.key(event)) {
      event.preventDefault();
    } else if (
      event.target === v.input &&
      event.key === 'Enter' &&
      !event.shiftKey &&
      !event.isComposing
    ) {
      event.preventDefault();
      submit();
    }
  });
  root.addEventListener('keyup', e => e.stopPropagation());
  root.addEventListener('keypress', e => e.stopPropagation());
  root.addEventListener('click', event => blockAction(model, event));
  v.input.addEventListener('input', () => {
    grow();
    completion.update();
  });
  v.send.onclick = submit;
  v.stop.onclick = () => {
    v.stop.disabled = true;
    model.send({ kind: 'stop' });
  };
  v.fresh.onclick = () => model.send({ kind: 'new' });
  v.tab.onclick = () =>
    root.dispatchEvent(new CustomEvent(TAB_EVENT, { bubbles: true }));
  root.addEventListener(FIX_EVENT, event => {
    // only the failing cell's id: the kernel reads the cell and its error itself
    if (!root.classList.contains('cnb-lost')) {
      model.send({ kind: 'fix', cell: String(event.detail?.cellId ?? '') });
    }
  });
  v.picker.onchange = () => {
    model.set('model', v.picker.value);
    model.save_changes();
  };
  v.mode.onchange = () => {
    model.set('mode', v.mode.value);
    model.save_changes();
  };
}

function watchModel(model, root, v, transcript, view, completion, link, form) {
  const models = () => {
    v.picker.replaceChildren(
      ...model.get('models').map(m => el('option', '', m))
    );
    v.picker.value = model.get('model');
    v.picker.title = `Model for the next request: ${model.get('model')}`;
  };
  const busy = () => {
    const on = model.get('busy');
    root.classList.toggle('cnb-busy', on);
    v.send.hidden = on;
    v.stop.hidden = !on;
    if (!on) {
      v.stop.disabled = false;
    }
  };
  const usage = () => {
    const [inTok, outTok, ctx, budget] = [
      'tokens_in',
      'tokens_out',
      'context',
      'budget'
    ].map(k => model.get(k));
    const note = model.get('usage_note') || '';
    const about = model.get('estimated') ? '~' : ''; // a server sent no usage: our estimate
    v.meter.textContent =
      inTok || outTok
        ? `${about}${fmt(inTok)} in · ${about}${fmt(outTok)} out`
        : '';
    v.meter.title =
      `${about}${inTok.toLocaleString()} input tokens (every request's prompt, summed) and ${about}${outTok.toLocaleString()} output tokens in this chat` +
      (about ? ' (~: partly our estimate, a server sent no usage)' : '') +
      (note ? `; ${note}` : '');
    v.bar.hidden = !budget;
    if (budget) {
      const share = Math.min(1, ctx / budget);
      v.fill.style.width = `${(share * 100).toFixed(1)}%`;
      v.bar.classList.toggle('cnb-warn', share > 0.8);
      v.bar.title = `context: ${ctx.toLocaleString()} of ${budget.toLocaleString()} tokens (the last request's prompt)`;
    }
  };
  const mode = () => {
    v.mode.value = model.get('mode');
  };
  models();
  mode();
  busy();
  usage();
  return {
    'msg:custom': msg => {
      if (msg.pong !== undefined) {
        link.pong(msg.pong);
      } else if (msg.complete !== undefined) {
        completion.receive(msg);
      } else if (msg.form !== undefined || msg.models !== undefined) {
        form.receive(msg);
      } else {
        transcript.receive(msg, view);
      }
    },
    comm_live_update: () => link.check(),
    'change:models': models,
    'change:model': models,
    'change:mode': mode,
    'change:busy': busy,
    'change:title': () => (v.title.textContent = model.get('title')),
    'change:tokens_in': usage,
    'change:tokens_out': usage,
    'change:estimated': usage,
    'change:context': usage,
    'change:budget': usage,
    'change:usage_note': usage
  };
}

function render({ model, el: root }) {
  const view = Math.random().toString(36).slice(2);
  const v = buildView(model, root);
  const transcript = new Transcript(model, v);
  const completion = new Completion(model, view, v.input);
  v.footer.prepend(completion.box);
  wireInput(model, root, v, completion);
  v.root = root;
  const link = new KernelLink(model, v);
  const form = new ModelForm(model, view, root);
  v.header.insertBefore(modelFormButton(form), v.tab);
  root.insertBefore(form.box, v.log);
  const watched = watchModel(
    model,
    root,
    v,
    transcript,
    view,
    completion,
    link,
    form
  );
  for (const [name, fn] of Object.entries(watched)) {
    model.on(name, fn);
  }
  model.send({ kind: 'ready', view });
  return () => {
    for (const [name, fn] of Object.entries(watched)) {
      model.off(name, fn);
    }
    if (transcript.frame) {
      cancelAnimationFrame(transcript.frame);
    }
    completion.reset();
    link.dispose();
    form.secret.value = '';
  };
}

export default { render };
