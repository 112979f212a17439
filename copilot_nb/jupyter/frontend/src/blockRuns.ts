/**
 * Run for a code block of a `%%copilot` cell's answer: the page never runs the code itself. It
 * sends `{event: 'run_block', id, code}` over the document's live comm; the kernel runs it
 * through the model's own `run_code` tool under the same approval policy (`block_runs.py`).
 * Where the policy asks, the kernel says `run_block_ask` and a dialog shows the code with Run and
 * Cancel; `run_block_result` ends the run, shown under the block as text.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
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
      shown.textContent = 'Not run: copilot_nb is not loaded in this kernel.';
      return;
    }
    const id = `run-${++this.count}`;
    this.runs.set(id, { code, shown });
    shown.dataset.state = 'running';
    shown.textContent = 'Running…';
    comm.send({ event: 'run_block', id, code });
  }

  /** A `run_block_*` event from the kernel. */
  receive(data: JSONObject): void {
    const id = String(data.id);
    const run = this.runs.get(id);
    if (!run) {
      return;
    }
    if (data.event === 'run_block_ask') {
      run.shown.textContent = 'Waiting for your approval…';
      void this.ask(id, run);
    } else if (data.event === 'run_block_result') {
      this.runs.delete(id);
      run.shown.dataset.state = data.ok ? 'ok' : 'error';
      const head = data.ok ? '✓ ran' : '✗ not run';
      const output = String(data.output ?? '');
      run.shown.textContent = output ? `${head}\n${output}` : head;
    }
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
}
