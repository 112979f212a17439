// Whether the panel still reaches its kernel. After a kernel restart the panel's widget belongs
// to a kernel that is gone: what it sends goes nowhere. When the widget manager says the comm's
// life changed, the panel pings the kernel; without a pong within PING_WAIT ms it says so plainly
// and refuses input. In JupyterLab with our extension the panel then comes back by itself: the
// extension (chatReopen.ts) finds this panel by its kernel's id (`data-kernel`), runs our fixed
// reopen code in the new kernel and tells this panel how that went (REOPEN_EVENT: "reopening",
// or "failed" and why); the new panel replaces this one. Elsewhere (classic Notebook, VS Code)
// nothing reopens it and the note says to run copilot_nb.chat() again. Concatenated before
// front.js.

const PING_WAIT = 3000;
const REOPEN_EVENT = 'copilot-nb:reopen';
const AGAIN =
  'Run copilot_nb.chat() again to open the panel on the new kernel; the conversation so far reopens there.';

/**
 * The parts of the panel's view that a lost kernel disables.
 * @typedef {object} LinkView
 * @property {HTMLElement} root
 * @property {HTMLElement} footer
 * @property {HTMLTextAreaElement} input
 * @property {HTMLButtonElement} send
 * @property {HTMLButtonElement} stop
 * @property {HTMLButtonElement} fresh
 * @property {HTMLSelectElement} picker
 * @property {HTMLSelectElement} mode
 */
/** @typedef {{state: 'reopening' | 'failed', why?: string}} Reopening what the extension said */

class KernelLink {
  /**
   * @param {PanelModel} model
   * @param {LinkView} view
   */
  constructor(model, view) {
    this.model = model;
    this.view = view;
    this.seq = 0;
    this.timer = 0;
    this.lost = false;
    /** @type {HTMLDivElement | null} */
    this.note = null;
    /** @type {Reopening | null} */
    this.reopen = null;
    view.root.dataset.kernel = model.get('kernel') || '';
    /** @param {Event} event */
    this.onReopen = event => {
      this.reopen =
        /** @type {CustomEvent<Reopening>} */ (event).detail || null;
      this.cut();
      this.say();
    };
    view.root.addEventListener(REOPEN_EVENT, this.onReopen);
  }

  check() {
    const seq = ++this.seq;
    clearTimeout(this.timer);
    this.timer = window.setTimeout(
      () => this.seq === seq && this.cut(),
      PING_WAIT
    );
    try {
      this.model.send({ kind: 'ping', seq });
    } catch {
      this.cut(); // the kernel connection refuses to send: gone (a restart)
    }
  }

  /** @param {number} seq */
  pong(seq) {
    if (seq === this.seq) {
      clearTimeout(this.timer);
    }
  }

  cut() {
    if (this.lost) {
      return;
    }
    this.lost = true;
    clearTimeout(this.timer);
    const v = this.view;
    v.root.classList.add('cnb-lost');
    v.input.disabled =
      v.send.disabled =
      v.stop.disabled =
      v.fresh.disabled =
        true;
    v.picker.disabled = v.mode.disabled = true;
    v.input.placeholder = 'Disconnected';
    this.note = el('div', 'cnb-lost-note');
    this.note.setAttribute('role', 'alert');
    v.footer.prepend(this.note);
    this.say();
  }

  /** The note's words: what happened, and what the user can do (text only, never markup). */
  say() {
    if (!this.note) {
      return;
    }
    const r = this.reopen;
    this.note.textContent =
      r && r.state === 'reopening'
        ? 'The kernel restarted. The panel is reopening on the new kernel with the conversation so far…'
        : r && r.state === 'failed'
          ? `The kernel restarted, and the panel could not reopen on the new kernel: ${r.why}. ${AGAIN}`
          : `The kernel restarted, so this panel can no longer reach it. ${AGAIN}`;
  }

  dispose() {
    clearTimeout(this.timer);
    this.view.root.removeEventListener(REOPEN_EVENT, this.onReopen);
  }
}
