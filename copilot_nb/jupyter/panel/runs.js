// The agent's runs going on, listed above the input (the kernel's run_list.py sends them every
// second while one goes on): each row has the run's state line, the last line it printed and,
// while it runs, a Stop button that stops that run alone. The panel's own Stop ends the turn and
// leaves runs going. Text is set as text, never as markup. Concatenated before front.js.

class RunList {
  /**
   * @param {PanelModel} model
   * @param {HTMLElement} box
   */
  constructor(model, box) {
    this.model = model;
    this.box = box;
    box.hidden = true;
    box.setAttribute('aria-label', 'Runs going on');
  }

  /** @param {RunsMessage} msg */
  receive(msg) {
    this.box.replaceChildren(...msg.runs.map(run => this.row(run)));
    this.box.hidden = !msg.runs.length;
  }

  /** @param {RunRow} run */
  row(run) {
    const row = el('div', 'cnb-runrow');
    row.classList.toggle('cnb-running', run.running);
    row.dataset.handle = run.handle;
    const text = el('div', 'cnb-runtext');
    text.append(el('div', 'cnb-runstate', run.state));
    if (run.tail) {
      text.append(el('div', 'cnb-runtail', run.tail));
    }
    row.append(text);
    if (run.running) {
      const stop = el('button', 'cnb-runstop', 'Stop run');
      stop.type = 'button';
      stop.title = `Stop ${run.handle} alone (the turn's Stop leaves it going)`;
      stop.onclick = () => {
        stop.disabled = true;
        this.model.send({ kind: 'stop_run', handle: run.handle });
      };
      row.append(stop);
    }
    return row;
  }
}
