// The chat panel's tool cards and their approval bars (a question's, a call's, a plan's), as
// DOM nodes with text set as text. Concatenated before front.js, after blocks.js; `el` and the
// wording tables are shared with front.js from here.

/**
 * A tool call's card, as the transcript keeps it.
 * @typedef {object} Card
 * @property {string} name
 * @property {HTMLDivElement} box
 * @property {HTMLDetailsElement} details
 * @property {HTMLDivElement} body
 * @property {HTMLPreElement} args what the call does (its arguments, then its diff)
 * @property {HTMLSpanElement} outcome
 * @property {HTMLDivElement | null} approve the bar of buttons while it asks
 * @property {boolean} diffed a diff replaced its arguments
 * @property {HTMLButtonElement | null} [more] "Show N more lines", while some are unseen
 * @property {boolean} [unseen]
 * @property {HTMLButtonElement} [yes] Approve, enabled once everything is seen
 * @property {boolean} [answered]
 * @property {HTMLDivElement | null} [undo] a code block Run's Undo, and then how it went
 */

/**
 * A new element, with its class and text (set as text, never as markup).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string} [cls]
 * @param {string} [text]
 * @returns {HTMLElementTagNameMap[K]}
 */
const el = (tag, cls, text) => {
  const node = document.createElement(tag);
  if (cls) {
    node.className = cls;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
};
/** @param {number} n */
const fmt = n =>
  n < 1000
    ? String(n)
    : n < 1e6
      ? `${(n / 1e3).toFixed(1)}k`
      : `${(n / 1e6).toFixed(1)}M`;
/** @type {Record<string, string>} */
const ASK = {
  edit: 'change files',
  execute: 'run code',
  read: 'read',
  'read-secret': 'read a secret (a credential file or a masked variable)',
  external: "call an MCP server's tool (it runs outside copilot_nb's sandbox)",
  plan: 'carry out this plan in agent mode'
};
const FOLD_LINES = 40;
const FOLD_CHARS = 3000;
const LONG_LINE = 100;
// where a long preview folds and what its button says: as approval_prompt.py does in a cell
const EMPTY = [
  'Ask about your notebook, files or data.',
  'Enter sends, Shift+Enter starts a new line; @ attaches a file, a cell or a variable. The conversation is shared with %%copilot cells.'
];

/**
 * @param {string} name
 * @param {string} target
 * @param {string} format how the preview reads: diff, code, json or plain
 * @param {string} preview
 * @returns {Card}
 */
function toolCard(name, target, format, preview) {
  const box = el('div', 'cnb-tool');
  box.dataset.state = 'running';
  const details = el('details');
  const head = el('summary', 'cnb-tool-head');
  head.append(el('span', 'cnb-icon'), el('span', 'cnb-tool-name', name));
  if (target) {
    head.append(el('span', 'cnb-tool-target', target));
  }
  const outcome = el('span', 'cnb-tool-outcome');
  head.append(outcome);
  const body = el('div', 'cnb-tool-body');
  const args = el('pre', 'cnb-args');
  const label =
    format === 'diff' ? 'Change' : format === 'code' ? 'Content' : 'Arguments';
  if (preview) {
    body.append(el('div', 'cnb-label', label), args);
  }
  details.append(head, body);
  box.append(details);
  /** @type {Card} */
  const entry = {
    name,
    box,
    details,
    body,
    args,
    outcome,
    approve: null,
    diffed: false
  };
  showArgs(entry, format, preview);
  return entry;
}

// The start of a long text and the rest, cut where approval_prompt.split_preview cuts it (and
// frontend/src/codeFold.ts, for a code block's Run).
/**
 * @param {string} text
 * @returns {[string, string]}
 */
function foldAt(text) {
  let cut = 0;
  for (let line = 0; line < FOLD_LINES; line++) {
    const newline = text.indexOf('\n', cut);
    if (newline < 0) {
      cut = text.length;
      break;
    }
    cut = newline + 1;
  }
  cut = Math.min(cut, FOLD_CHARS);
  return [text.slice(0, cut), text.slice(cut)];
}

/** @param {string} rest */
function moreLabel(rest) {
  const lines =
    (rest.match(/\n/g) || []).length + (rest.endsWith('\n') ? 0 : 1);
  const label = `Show ${lines.toLocaleString('en-US')} more line${lines === 1 ? '' : 's'}`;
  return rest.length > LONG_LINE * lines
    ? `${label} (${rest.length.toLocaleString('en-US')} characters)`
    : label;
}

// What a call will do, in its card: all of it, or a long one's start and a "Show N more lines"
// button. Until that is pressed, the card's Approve (askBar) stays disabled: nothing is approved
// unseen, and nothing hides in a box of its own to scroll above Approve.
/**
 * @param {Card} entry
 * @param {string} format
 * @param {string} text
 */
function showArgs(entry, format, text) {
  const [head, rest] = foldAt(text || '');
  /** @param {string} shown */
  const fill = shown => {
    if (format === 'diff') {
      entry.args.innerHTML = diffHtml(shown);
    } else {
      entry.args.textContent = shown;
    }
  };
  fill(head);
  entry.more?.remove();
  entry.more = null;
  entry.unseen = Boolean(rest);
  if (!rest) {
    return;
  }
  const more = el('button', 'cnb-more', moreLabel(rest));
  more.type = 'button';
  more.onclick = () => {
    fill(text);
    more.remove();
    entry.more = null;
    entry.unseen = false;
    if (entry.yes && !entry.answered) {
      entry.yes.disabled = false;
      entry.yes.title = '';
    }
  };
  entry.args.after(more);
  entry.more = more;
}

/**
 * @param {PanelModel} model
 * @param {string} id
 * @param {string} question
 * @param {string[]} options
 */
function questionBar(model, id, question, options) {
  const bar = el('div', 'cnb-approve');
  const text = el('input', 'cnb-reply');
  text.type = 'text';
  text.placeholder = 'Type an answer';
  const send = el('button', 'cnb-approve-btn', 'Send');
  const no = el('button', 'cnb-deny-btn', 'Decline');
  const choices = (options || []).map(option =>
    el('button', 'cnb-option-btn', String(option))
  );
  const buttons = [send, no, ...choices];
  buttons.forEach(b => {
    b.type = 'button';
  });
  /** @param {FromPage} message */
  const reply = message => {
    buttons.forEach(b => {
      b.disabled = true;
    });
    text.disabled = true;
    model.send(message);
  };
  choices.forEach((b, i) => {
    b.onclick = () => reply({ kind: 'answer', id, text: String(options[i]) });
  });
  send.onclick = () => {
    if (text.value.trim()) {
      reply({ kind: 'answer', id, text: text.value });
    }
  };
  no.onclick = () => reply({ kind: 'deny', id });
  bar.append(
    el('div', 'cnb-approve-q', String(question)),
    ...choices,
    text,
    send,
    no
  );
  return bar;
}

/**
 * @param {PanelModel} model
 * @param {Card} entry
 * @param {string} id
 * @param {string} category
 * @param {string} warning
 */
function askBar(model, entry, id, category, warning) {
  const bar = el('div', 'cnb-approve');
  const yes = el('button', 'cnb-approve-btn', 'Approve');
  const no = el('button', 'cnb-deny-btn', 'Deny');
  yes.type = no.type = 'button';
  /** @param {'approve' | 'deny'} kind */
  const answer = kind => {
    yes.disabled = no.disabled = true;
    entry.answered = true;
    model.send({ kind, id });
  };
  entry.yes = yes;
  if (entry.unseen) {
    yes.disabled = true;
    yes.title = `${entry.more?.textContent} first: approve only what you have seen`;
  }
  yes.onclick = () => answer('approve');
  no.onclick = () => answer('deny');
  if (category === 'plan') {
    const changes = el('input', 'cnb-reply');
    changes.type = 'text';
    changes.placeholder = 'What to change in the plan';
    const revise = el('button', 'cnb-option-btn', 'Revise');
    revise.type = 'button';
    revise.onclick = () => {
      if (!changes.value.trim()) {
        return;
      }
      yes.disabled = no.disabled = revise.disabled = changes.disabled = true;
      model.send({ kind: 'revise', id, text: changes.value });
    };
    bar.append(
      el('span', 'cnb-approve-q', 'Carry out this plan?'),
      yes,
      no,
      changes,
      revise
    );
    return bar;
  }
  bar.append(
    el(
      'span',
      'cnb-approve-q',
      `Allow ${entry.name} to ${ASK[category] || 'run'}?`
    ),
    yes,
    no
  );
  if (warning) {
    bar.append(el('div', 'cnb-approve-warn', `⚠ ${warning}`));
  }
  return bar;
}
