// Whether the panel still reaches its kernel. After a kernel restart the panel's widget belongs
// to a kernel that is gone: what it sends goes nowhere. When the widget manager says the comm's
// life changed, the panel pings the kernel; without a pong within PING_WAIT ms it says so plainly
// and refuses input (a new `copilot_nb.chat()` opens a panel on the new kernel and closes this
// one). Concatenated before front.js.

const PING_WAIT = 3000;

class KernelLink {
  constructor(model, view) {
    this.model = model;
    this.view = view;
    this.seq = 0;
    this.timer = 0;
    this.lost = false;
  }

  check() {
    const seq = ++this.seq;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.seq === seq && this.cut(), PING_WAIT);
    try {
      this.model.send({ kind: "ping", seq });
    } catch {
      this.cut(); // the kernel connection refuses to send: gone (a restart)
    }
  }

  pong(seq) {
    if (seq === this.seq) clearTimeout(this.timer);
  }

  cut() {
    if (this.lost) return;
    this.lost = true;
    const v = this.view;
    v.root.classList.add("cnb-lost");
    v.input.disabled = v.send.disabled = v.stop.disabled = v.fresh.disabled = true;
    v.picker.disabled = v.mode.disabled = true;
    v.input.placeholder = "Disconnected";
    const note = el("div", "cnb-lost-note", "The kernel restarted, so this panel can no longer reach it. Run copilot_nb.chat() again to open the panel on the new kernel; the conversation so far reopens there.");
    note.setAttribute("role", "alert");
    v.footer.prepend(note);
  }

  dispose() {
    clearTimeout(this.timer);
  }
}
