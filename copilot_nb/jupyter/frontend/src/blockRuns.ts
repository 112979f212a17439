/**
 * Run for a code block of a `%%copilot` cell's answer: the page never runs the code itself. It
 * sends `{event: 'run_block', id, code}` over the document's live comm; the kernel runs it
 * through the model's own `run_code` tool under the same approval policy (`block_runs.py`).
 * Where the policy asks, the kernel says `run_block_ask` and a dialog shows the code with Run and
 * Cancel; `run_block_result` ends the run, shown under the block: its outputs as the kernel
 * rendered them (`output_html.py`: safe HTML, sanitized here again as JupyterLab sanitizes an
 * output), else its text. Where the run kept the variables it changed, the result says what
 * Undo puts back beside an Undo button (`run_block_undo`, answered by `run_block_undone`).
 */
import { Dialog, Sanitizer, showDialog } from '@jupyterlab/apputils';
import { Kernel } from '@jupyterlab/services';
import { Widget } from '@lumino/widgets';

import { JSONObject } from './changes';
import { el } from './reviewNodes';

interface IRun {
  readonly code: string;
  readonly shown: HTMLElement;
}

/** The block runs of one notebook document, by id. */
export class BlockRuns {
  constructor(private readonly comm: () => Kernel.IComm | null) {}

  /** Whether a kernel with copilot_nb is attached (else Run cannot be offered). */
  get attached(): boolean {
    return this.comm() !== null;
  }

  /** Ask the kernel to run `code`; `shown` is where the outcome goes. */
  run(code: string, shown: HTMLElement): void {
    const comm = this.comm();
    if (!comm) {
      say(shown, 'Not run: copilot_nb is not loaded in this kernel.');
      return;
    }
    const id = `run-${++this.count}`;
    this.runs.set(id, { code, shown });
    shown.dataset.state = 'running';
    say(shown, 'Running…');
    comm.send({ event: 'run_block', id, code });
  }

  /** A `run_block_*` event from the kernel. */
  receive(data: JSONObject): void {
    const id = String(data.id);
    if (data.event === 'run_block_undone') {
      this.undone(id, data);
      return;
    }
    const run = this.runs.get(id);
    if (!run) {
      return;
    }
    if (data.event === 'run_block_ask') {
      say(run.shown, 'Waiting for your approval…');
      void this.ask(id, run);
    } else if (data.event === 'run_block_result') {
      this.runs.delete(id);
      this.result(id, run.shown, data);
    }
  }

  /** The outcome under the block: a head line, the outputs, and Undo where it can. */
  private result(id: string, shown: HTMLElement, data: JSONObject): void {
    shown.dataset.state = data.ok ? 'ok' : 'error';
    const summary = typeof data.summary === 'string' ? data.summary : '';
    const head =
      (data.ok ? '✓ ran' : '✗ not run') + (summary ? ` — ${summary}` : '');
    const nodes: HTMLElement[] = [el('div', 'cnb-block-head', head)];
    const html = typeof data.html === 'string' ? data.html : '';
    const output = String(data.output ?? '');
    if (html) {
      const rendered = el('div', 'cnb-block-rendered');
      rendered.innerHTML = this.sanitizer.sanitize(html);
      nodes.push(rendered);
    } else if (output) {
      nodes.push(el('pre', 'cnb-block-text', output));
    }
    if (typeof data.undo === 'string' && data.undo) {
      const bar = el('div', 'cnb-block-undo');
      const undo = el('button', 'cnb-blockbtn cnb-block-undo-btn', 'Undo');
      (undo as HTMLButtonElement).type = 'button';
      undo.addEventListener('click', () => {
        (undo as HTMLButtonElement).disabled = true;
        this.comm()?.send({ event: 'run_block_undo', id });
      });
      undo.title = 'Put the variables back as they were before this run';
      bar.append(el('span', 'cnb-block-undo-note', data.undo), undo);
      this.undos.set(id, bar);
      nodes.push(bar);
    }
    shown.replaceChildren(...nodes);
  }

  /** The kernel put the variables back, or says why not: the Undo's line says so. */
  private undone(id: string, data: JSONObject): void {
    const bar = this.undos.get(id);
    if (!bar) {
      return;
    }
    this.undos.delete(id);
    bar.dataset.state = data.ok ? 'ok' : 'error';
    bar.replaceChildren(
      el('span', 'cnb-block-undo-note', String(data.text ?? ''))
    );
  }

  private async ask(id: string, run: IRun): Promise<void> {
    const body = el('pre', 'cnb-block-approve', run.code);
    const result = await showDialog({
      title: 'Run this code in the kernel?',
      body: new Widget({ node: body }),
      buttons: [Dialog.cancelButton(), Dialog.okButton({ label: 'Run' })]
    });
    this.comm()?.send({
      event: 'run_block_answer',
      id,
      approved: result.button.accept
    });
  }

  private count = 0;
  private readonly runs = new Map<string, IRun>();
  private readonly undos = new Map<string, HTMLElement>();
  private readonly sanitizer = new Sanitizer();
}

/** One line of text in place of what `shown` held. */
function say(shown: HTMLElement, text: string): void {
  shown.replaceChildren(el('div', 'cnb-block-head', text));
}
