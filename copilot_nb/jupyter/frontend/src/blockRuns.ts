/**
 * Run for a code block of a `%%copilot` cell's answer: the page never runs the code itself. It
 * sends `{event: 'run_block', id, code}` over the document's live comm; the kernel runs it
 * through the model's own `run_code` tool under the same approval policy (`block_runs.py`).
 * Where the policy asks, the kernel says `run_block_ask` (with the question and any warning a
 * cell's prompt shows) and a dialog shows the code with Run and Cancel, asked as a cell asks: all
 * of the code above Run, in one scroll with it, and a long one's start with "Show N more lines",
 * which Run waits for (`codeFold.ts`). `run_block_result` ends the run, shown under the block:
 * its outputs as the kernel rendered them (`output_html.py`: safe HTML, sanitized here again as JupyterLab sanitizes an
 * output), else its text. Where the run kept the variables it changed, the result says what
 * Undo puts back beside an Undo button (`run_block_undo`, answered by `run_block_undone`).
 */
import { Dialog, Sanitizer } from '@jupyterlab/apputils';
import { Kernel } from '@jupyterlab/services';
import { Widget } from '@lumino/widgets';

import { JSONObject } from './changes';
import { foldAt, moreLabel } from './codeFold';
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
      void this.ask(id, run, data);
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

  private async ask(id: string, run: IRun, data: JSONObject): Promise<void> {
    const body = new CodeToApprove(run.code, text(data.warning));
    const dialog = new Dialog({
      title: text(data.question) || 'Run this code in the kernel?',
      body,
      buttons: [Dialog.cancelButton(), Dialog.okButton({ label: 'Run' })]
    });
    dialog.addClass('cnb-block-dialog');
    body.gate(dialog.node.querySelector('.jp-Dialog-button.jp-mod-accept'));
    const result = await dialog.launch();
    this.comm()?.send({
      event: 'run_block_answer',
      id,
      approved: result.button.accept && result.value === true
    });
  }

  private count = 0;
  private readonly runs = new Map<string, IRun>();
  private readonly undos = new Map<string, HTMLElement>();
  private readonly sanitizer = new Sanitizer();
}

/**
 * The dialog's body: any warning, the code (a long one's start and a "Show N more lines"
 * button), and its value, whether all of the code was shown: Run is disabled until it is, and
 * an Enter that accepts the dialog before then does not approve.
 */
class CodeToApprove extends Widget {
  constructor(code: string, warning: string) {
    super({ node: el('div', 'cnb-block-ask') });
    const [head, rest] = foldAt(code);
    this.seen = !rest;
    if (warning) {
      this.node.append(el('div', 'cnb-block-warn', `⚠ ${warning}`));
    }
    const pre = el('pre', 'cnb-block-approve', head);
    this.node.append(pre);
    if (rest) {
      this.more = el('button', 'cnb-blockbtn cnb-block-more', moreLabel(rest));
      (this.more as HTMLButtonElement).type = 'button';
      this.more.addEventListener('click', () => {
        pre.textContent = code;
        this.more?.remove();
        this.seen = true;
        if (this.run) {
          this.run.disabled = false;
          this.run.title = '';
        }
      });
      this.node.append(this.more);
    }
  }

  /** Keep `run` (the dialog's Run) disabled until all of the code was shown. */
  gate(run: HTMLButtonElement | null): void {
    this.run = run;
    if (run && !this.seen && this.more) {
      run.disabled = true;
      run.title = `${this.more.textContent} first: run only what you have seen`;
    }
  }

  getValue(): boolean {
    return this.seen;
  }

  private seen: boolean;
  private more: HTMLElement | null = null;
  private run: HTMLButtonElement | null = null;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** One line of text in place of what `shown` held. */
function say(shown: HTMLElement, text: string): void {
  shown.replaceChildren(el('div', 'cnb-block-head', text));
}
