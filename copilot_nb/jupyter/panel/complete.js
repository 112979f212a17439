// `@` completion in the panel's input (concatenated before front.js, whose `el` it uses). While
// the text before the caret ends in an `@` reference being typed (not inside `code`), the kernel
// is asked for candidates (a `Complete` message: wire.d.ts); its answer (`CompletionsMessage`)
// fills a small list above the input. Only the answer to this view's latest query is shown. ArrowUp/ArrowDown move, Tab or Enter accept, Escape closes (until
// the next `@`); a click accepts. Candidate text is data: it reaches the page as textContent only.

// what may precede the `@` and what a reference holds, as agent/prompt/references.py reads them
const REF_TOKEN = /(?:^|[^\p{L}\p{N}\p{M}_@`/])@([\p{L}\p{N}\p{M}_./:#-]*)$/u;
const REF_TAIL = /^[\p{L}\p{N}\p{M}_./:#-]*/u;
const COMPLETE_DELAY = 60; // ms: one query per pause in typing, not one per key

/** @typedef {{start: number, query: string}} Token the reference being typed */

class Completion {
  /**
   * @param {PanelModel} model
   * @param {string} view
   * @param {HTMLTextAreaElement} input
   */
  constructor(model, view, input) {
    this.model = model;
    this.view = view;
    this.input = input;
    this.box = el('div', 'cnb-complete');
    this.box.setAttribute('role', 'listbox');
    this.box.hidden = true;
    /** @type {CompletionItem[]} */
    this.items = [];
    this.active = 0;
    this.seq = 0;
    /** @type {Token | null} */
    this.token = null;
    this.dismissed = -1; // where the `@` is whose list Escape closed
    this.timer = 0;
    this.box.addEventListener('mousedown', event => event.preventDefault()); // focus stays
    this.box.addEventListener('click', event => {
      const target = /** @type {Element | null} */ (event.target);
      const row = target?.closest?.('.cnb-complete-item');
      if (row instanceof HTMLElement) {
        this.accept(Number(row.dataset.index));
      }
    });
    input.addEventListener('blur', () => this.reset());
    input.addEventListener('click', () => this.update());
  }

  get open() {
    return !this.box.hidden;
  }

  /** @returns {Token | null} */
  tokenAt() {
    const { value, selectionStart, selectionEnd } = this.input;
    if (selectionStart !== selectionEnd) {
      return null;
    }
    const before = value.slice(0, selectionStart);
    const found = REF_TOKEN.exec(before);
    if (!found || (before.split('`').length - 1) % 2) {
      return null; // none, or inside `code`
    }
    return { start: selectionStart - found[1].length - 1, query: found[1] };
  }

  // After each edit: ask for the reference being typed, or close.
  update() {
    clearTimeout(this.timer);
    const token = this.tokenAt();
    if (!token) {
      this.dismissed = -1;
    }
    if (!token || token.start === this.dismissed) {
      return this.reset();
    }
    this.token = token;
    this.timer = window.setTimeout(() => {
      this.seq += 1;
      this.model.send({
        kind: 'complete',
        query: token.query,
        seq: this.seq,
        view: this.view
      });
    }, COMPLETE_DELAY);
  }

  /** @param {CompletionsMessage} msg */
  receive(msg) {
    if (msg.view !== this.view || msg.seq !== this.seq || !this.token) {
      return;
    }
    if (msg.error) {
      console.warn('copilot_nb: @ completion failed:', msg.error);
    }
    this.items = msg.items.map(({ text, kind, detail }) => ({
      text: String(text),
      kind: String(kind),
      detail: String(detail ?? '')
    }));
    if (!this.items.length) {
      return this.close();
    }
    this.active = 0;
    this.box.replaceChildren(
      ...this.items.map((item, index) => {
        const row = el('div', 'cnb-complete-item');
        row.setAttribute('role', 'option');
        row.dataset.index = String(index);
        row.dataset.kind = item.kind;
        row.title = item.detail
          ? `@${item.text}  ${item.detail}`
          : `@${item.text}`;
        row.append(
          el('span', 'cnb-complete-kind', item.kind),
          el('span', 'cnb-complete-text', `@${item.text}`)
        );
        if (item.detail) {
          row.append(el('span', 'cnb-complete-detail', item.detail));
        }
        return row;
      })
    );
    this.box.hidden = false;
    this.move(0);
  }

  /** @param {number} by */
  move(by) {
    const count = this.items.length;
    this.active = (this.active + by + count) % count;
    [...this.box.children].forEach((row, index) =>
      row.setAttribute('aria-selected', String(index === this.active))
    );
    this.box.children[this.active]?.scrollIntoView?.({ block: 'nearest' });
  }

  // Put `@text ` in place of the reference being typed (and the rest of its word).
  /** @param {number} index */
  accept(index) {
    const item = this.items[index];
    const token = this.tokenAt();
    this.reset();
    if (!item || !token) {
      return;
    }
    const { value, selectionStart: caret } = this.input;
    const tail = REF_TAIL.exec(value.slice(caret))?.[0] ?? '';
    const text = `@${item.text} `;
    this.input.value =
      value.slice(0, token.start) + text + value.slice(caret + tail.length);
    const at = token.start + text.length;
    this.input.setSelectionRange(at, at);
    this.input.dispatchEvent(new Event('input')); // the box grows; the list stays closed
  }

  // A key pressed in the input: true when the open list took it.
  /** @param {KeyboardEvent} event */
  key(event) {
    if (!this.open || event.isComposing) {
      return false;
    }
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      this.move(event.key === 'ArrowDown' ? 1 : -1);
    } else if (
      (event.key === 'Tab' || event.key === 'Enter') &&
      !event.shiftKey
    ) {
      this.accept(this.active);
    } else if (event.key === 'Escape') {
      this.dismissed = this.token ? this.token.start : -1;
      this.reset();
    } else {
      if (['ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(event.key)) {
        this.reset(); // the caret moves on
      }
      return false;
    }
    return true;
  }

  close() {
    this.box.hidden = true;
    this.box.replaceChildren();
    this.items = [];
  }

  // Close and forget the query: a late answer is not shown.
  reset() {
    clearTimeout(this.timer);
    this.token = null;
    this.close();
  }
}
