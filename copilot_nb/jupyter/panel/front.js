// The chat panel's front end (an anywidget ES module, no build step, no network). The kernel
// sends named messages (wire.d.ts: a batch of ops, a replay of them all for a view that opens,
// pongs, completions, the model form's); this view keeps the transcript and renders answers with
// `markdown()` and `diffHtml()` from markdown.js, which is concatenated before it.
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

/**
 * @param {PanelModel} model
 * @param {HTMLElement} root
 */
function buildView(model, root) {
  root.classList.add('cnb-root');
  root.setAttribute('data-lm-suppress-shortcuts', 'true');
  root.replaceChildren();
  const header = el('div', 'cnb-header');
  const title = el('div', 'cnb-title', model.get('title'));
  const fresh = el('button', 'cnb-new', 'New chat');
  fresh.type = 'button';
  fresh.title = 'Forget the conversation and start a new one';
  const tab = el('button', 'cnb-tab', 'As tab');
  tab.type = 'button';
  tab.title =
    "Move this chat to a tab of the main area (JupyterLab's Copilot commands move it back)";
  header.append(title, tab, fresh);

  const log = el('div', 'cnb-log');
  log.setAttribute('role', 'log');
  const empty = el('div', 'cnb-empty');
  empty.append(el('p', 'cnb-empty-lead', EMPTY[0]), el('p', '', EMPTY[1]));
  const working = el('div', 'cnb-working');
  working.append(el('span'), el('span'), el('span'));

  const footer = el('div', 'cnb-footer');
  const input = el('textarea', 'cnb-input');
  input.rows = 1;
  input.placeholder = 'Ask Copilot…';
  input.title = 'Enter sends, Shift+Enter starts a new line';
  const send = el('button', 'cnb-send', 'Send');
  const stop = el('button', 'cnb-stop', 'Stop');
  send.type = stop.type = 'button';
  const row = el('div', 'cnb-inputrow');
  row.append(input, send, stop);
  const status = el('div', 'cnb-status');
  const picker = el('select', 'cnb-model');
  picker.title = 'Model for the next request';
  const mode = el('select', 'cnb-mode');
  mode.title =
    'Mode for the next request: Ask reads and answers, Plan proposes a plan for you to approve, Agent does the work';
  mode.setAttribute('aria-label', 'Mode');
  mode.append(
    ...MODES.map(([value, label]) =>
      Object.assign(el('option', '', label), { value })
    )
  );
  const meter = el('span', 'cnb-meter');
  const bar = el('span', 'cnb-bar');
  const fill = el('span', 'cnb-fill');
  bar.append(fill);
  status.append(picker, mode, meter, bar);
  footer.append(row, status);
  const runs = el('div', 'cnb-runs');
  root.append(header, log, runs, footer);
  return {
    root,
    header,
    title,
    fresh,
    tab,
    log,
    empty,
    working,
    runs,
    footer,
    input,
    send,
    stop,
    picker,
    mode,
    meter,
    bar,
    fill
  };
}

/** @typedef {ReturnType<typeof buildView>} View */

// --- the transcript ----------------------------------------------------------------------

/** @typedef {{node: HTMLDivElement, raw: string}} Block an answer streamed as Markdown */

class Transcript {
  /**
   * @param {PanelModel} model
   * @param {View} view
   */
  constructor(model, view) {
    this.model = model;
    this.log = view.log;
    this.empty = view.empty;
    this.working = view.working;
    /** @type {Map<string, Card>} */
    this.cards = new Map();
    /** @type {Set<Block>} answers whose Markdown the next frame paints */
    this.dirty = new Set();
    this.frame = 0;
    this.synced = false; // the replay came: batches may follow
    /** @type {Block | null} the answer being streamed */
    this.text = null;
    /** @type {{body: HTMLDivElement} | null} the reasoning being streamed */
    this.thought = null;
    /** @type {Card | null} */
    this.lastCard = null;
    /** @type {HTMLDivElement | null} a retry's wait */
    this.waiting = null;
    /** @type {HTMLElement[]} the answer and thinking blocks since the last other op: a retry's to take back */
    this.attempt = [];
    this.clear();
  }

  nearBottom() {
    return (
      this.log.scrollHeight - this.log.scrollTop - this.log.clientHeight < 48
    );
  }

  /**
   * @template {HTMLElement} T
   * @param {T} node
   * @returns {T}
   */
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

  /** @param {Op} op */
  apply(op) {
    if (op.op !== 'text') {
      this.text = null;
    }
    if (op.op !== 'reasoning') {
      this.thought = null;
    }
    this.waiting?.remove(); // a retry's wait lasts until the next op
    this.waiting = null;
    if (op.op !== 'text' && op.op !== 'reasoning' && op.op !== 'retry') {
      this.attempt = [];
    }
    switch (op.op) {
      case 'user':
        return this.user(op);
      case 'text':
        return this.answer(op);
      case 'reasoning':
        return this.thinking(op);
      case 'tool':
        return this.tool(op);
      case 'ask':
        return this.ask(op);
      case 'question':
        return this.question(op);
      case 'asked':
        return this.asked(op);
      case 'diff':
        return this.diff(op);
      case 'done':
        return this.done(op);
      case 'undoable':
        return this.undoable(op);
      case 'undone':
        return this.undone(op);
      case 'note':
        return this.note(op);
      case 'retry':
        return this.retry(op);
      case 'error':
        return this.error(op);
      case 'end':
        return this.end(op);
      case 'clear':
        return this.clear();
      default:
        // a kernel of another version: the ops this page knows still show
        console.warn('copilot_nb: an op this page does not know:', op);
    }
  }

  /** @param {TextOp} op */
  answer({ text }) {
    if (!this.text) {
      this.text = { node: this.add(el('div', 'cnb-answer')), raw: '' };
      this.attempt.push(this.text.node);
    }
    this.text.raw += text;
    this.dirty.add(this.text);
  }

  /** @param {ReasoningOp} op */
  thinking({ text }) {
    if (!this.thought) {
      const box = this.add(el('details', 'cnb-thinking'));
      box.append(el('summary', '', 'Thinking'));
      this.attempt.push(box);
      this.thought = { body: box.appendChild(el('div', 'cnb-thinking-body')) };
    }
    this.thought.body.textContent += text;
  }

  /** @param {RetryOp} op */
  retry({ text }) {
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

  /** @param {UserOp} op */
  user({ text }) {
    this.add(el('div', 'cnb-user', text));
  }

  /** @param {ToolOp} op */
  tool({ id, name, target, format, preview }) {
    const entry = toolCard(name, target, format, preview);
    this.cards.set(id, entry);
    this.lastCard = entry;
    this.add(entry.box);
  }

  /** @param {AskOp} op */
  ask({ id, category, warning, format, preview, target }) {
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
      showArgs(entry, format ?? '', preview);
      if (target) {
        entry.box.querySelector('.cnb-tool-target')?.replaceChildren(target);
      }
    }
    this.asking(entry, askBar(this.model, entry, id, category, warning));
  }

  /** @param {QuestionOp} op */
  question({ id, question, options }) {
    const entry = this.cards.get(id);
    if (entry) {
      this.asking(entry, questionBar(this.model, id, question, options));
    }
  }

  /**
   * @param {Card} entry
   * @param {HTMLDivElement} bar
   */
  asking(entry, bar) {
    entry.box.dataset.state = 'asking';
    entry.details.open = true;
    entry.approve = bar;
    entry.box.append(bar);
  }

  /** @param {AskedOp} op */
  asked({ id, approved, outcome, state }) {
    const entry = this.cards.get(id);
    if (!entry) {
      return;
    }
    entry.approve?.remove();
    entry.approve = null;
    entry.box.dataset.state = state || (approved ? 'running' : 'error');
    entry.outcome.textContent = outcome || (approved ? 'approved' : 'denied');
  }

  /** @param {DiffOp} op */
  diff({ path, diff }) {
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

  /** @param {DoneOp} op */
  done({ id, ok, summary, result, output }) {
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

  /** @param {UndoableOp} op */
  undoable({ id, note }) {
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

  /** @param {UndoneOp} op */
  undone({ id, ok, text }) {
    const entry = this.cards.get(id);
    if (!entry?.undo) {
      return;
    }
    entry.undo.dataset.state = ok ? 'ok' : 'error';
    entry.undo.replaceChildren(el('span', 'cnb-undo-note', text));
  }

  /** @param {NoteOp} op */
  note({ text }) {
    this.add(el('div', 'cnb-note')).innerHTML = markdown(text);
  }

  /** @param {ErrorOp} op */
  error({ message, detail }) {
    const box = this.add(el('div', 'cnb-error'));
    box.append(el('div', 'cnb-error-msg', message));
    if (detail) {
      const more = el('details');
      more.append(el('summary', '', 'Details'), el('pre', '', detail));
      box.append(more);
    }
  }

  /** @param {EndOp} op */
  end({ status }) {
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
    this.attempt = [];
    this.cards.clear();
    this.dirty.clear();
  }

  /**
   * @param {OpsMessage | ReplayMessage} msg
   * @param {string} view
   */
  receive(msg, view) {
    if (msg.kind === 'replay') {
      if (msg.view !== view) {
        return;
      }
      this.clear();
      msg.ops.forEach(op => this.apply(op));
      this.synced = true;
      this.paint();
      this.log.scrollTop = this.log.scrollHeight;
    } else if (this.synced) {
      const stick = this.nearBottom();
      msg.ops.forEach(op => this.apply(op));
      if (stick) {
        this.log.scrollTop = this.log.scrollHeight;
      }
      this.schedule();
    }
  }
}

// --- the controls ------------------------------------------------------------------------

/**
 * @param {PanelModel} model
 * @param {HTMLElement} root
 * @param {View} v
 * @param {Completion} completion
 */
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
    const detail = /** @type {CustomEvent<{cellId?: unknown}>} */ (event)
      .detail;
    if (!root.classList.contains('cnb-lost')) {
      model.send({ kind: 'fix', cell: String(detail?.cellId ?? '') });
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

/**
 * The parts of a view that the kernel's messages go to.
 * @typedef {object} Receivers
 * @property {Transcript} transcript
 * @property {string} view this view's id (a replay or completions name the view they are for)
 * @property {Completion} completion
 * @property {KernelLink} link
 * @property {ModelForm} form
 * @property {RunList} runs
 */

/**
 * What to do on each message and trait change of the model, by the model's event name.
 * @param {PanelModel} model
 * @param {HTMLElement} root
 * @param {View} v
 * @param {Receivers} receivers
 * @returns {Record<string, (msg: ToPage) => void>}
 */
function watchModel(model, root, v, receivers) {
  const { transcript, view, completion, link, form, runs } = receivers;
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
    const inTok = model.get('tokens_in');
    const outTok = model.get('tokens_out');
    const ctx = model.get('context');
    const budget = model.get('budget');
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
      switch (msg.kind) {
        case 'pong':
          return link.pong(msg.seq);
        case 'completions':
          return completion.receive(msg);
        case 'form':
        case 'models':
          return form.receive(msg);
        case 'ops':
        case 'replay':
          return transcript.receive(msg, view);
        case 'runs':
          return runs.receive(msg);
        default:
          // a kernel of another version: say so where a developer looks
          console.warn('copilot_nb: a message this page does not know:', msg);
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

/** @param {{model: PanelModel, el: HTMLElement}} widget */
function render({ model, el: root }) {
  const view = Math.random().toString(36).slice(2);
  const v = buildView(model, root);
  const transcript = new Transcript(model, v);
  const completion = new Completion(model, view, v.input);
  v.footer.prepend(completion.box);
  wireInput(model, root, v, completion);
  const link = new KernelLink(model, v);
  const form = new ModelForm(model, view, root);
  v.header.insertBefore(modelFormButton(form), v.tab);
  root.insertBefore(form.box, v.log);
  const runs = new RunList(model, v.runs);
  const watched = watchModel(model, root, v, {
    transcript,
    view,
    completion,
    link,
    form,
    runs
  });
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
