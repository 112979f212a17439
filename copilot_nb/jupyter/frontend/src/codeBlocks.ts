/**
 * Every code block of an answer is live: Copy, Insert as a cell and, for Python, Run.
 *
 * In a notebook the kernel renders a `%%copilot` answer's blocks as `pre.cnb-code` (no script,
 * no buttons: an output never carries code that runs); this view finds them as outputs appear
 * and puts a bar above each. Insert puts the block in a new code cell below the cell whose
 * answer it is; Run asks the kernel (`blockRuns.ts`), which runs it under the same approval as
 * the model's `run_code`. The chat panel (an anywidget, outside this bundle) asks for an insert
 * with a DOM event, `INSERT_EVENT`, which goes below the active cell of the current notebook;
 * the page says it listens with `data-copilot-nb-insert` on its body, so a panel without this
 * extension offers no Insert.
 */
import { Clipboard } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import { BlockRuns } from './blockRuns';
import { OutputWatch } from './outputWatch';
import { el } from './reviewNodes';

const BLOCK = 'pre.cnb-code';
const PYTHON = new Set(['python', 'py', 'python3', 'ipython', 'ipython3']);
export const INSERT_EVENT = 'copilot-nb:insert-cell';

/** A block's language, from its code's `language-*` class ('' if it has none). */
export function languageOf(pre: Element): string {
  const code = pre.querySelector('code');
  const match = /(?:^|\s)language-(\S+)/.exec(code?.className ?? '');
  return match ? match[1].toLowerCase() : '';
}

/** Whether a block of this language can be run in the kernel. */
export function runnable(language: string): boolean {
  return PYTHON.has(language);
}

/** A block's code as the user reads it, without the newline markdown ends it with. */
function codeOf(pre: Element): string {
  return (
    (pre.querySelector('code') ?? pre).textContent?.replace(/\n$/, '') ?? ''
  );
}

/** A new code cell of `code` at `index` of the notebook, made the active cell. */
export function insertCodeCell(
  panel: NotebookPanel,
  index: number,
  code: string
): void {
  const model = panel.content.model;
  if (!model) {
    return;
  }
  model.sharedModel.insertCell(index, { cell_type: 'code', source: code });
  panel.content.activeCellIndex = index;
}

/** The bar on each code block of one notebook view's outputs. */
export class CodeBlockActions {
  constructor(
    private readonly panel: NotebookPanel,
    private readonly runs: BlockRuns
  ) {
    this.watch = new OutputWatch(panel, BLOCK, () => this.decorate());
  }

  dispose(): void {
    this.watch.dispose();
  }

  /** Put a bar on every block that has none (an output drawn again has new blocks). */
  private decorate(): void {
    const blocks = this.panel.content.node.querySelectorAll<HTMLElement>(
      `.jp-OutputArea-output ${BLOCK}`
    );
    blocks.forEach(pre => {
      if (!pre.previousElementSibling?.classList.contains('cnb-blockbar')) {
        pre.before(this.bar(pre));
      }
    });
  }

  private bar(pre: HTMLElement): HTMLElement {
    const bar = el('div', 'cnb-blockbar');
    const language = languageOf(pre);
    bar.appendChild(el('span', 'cnb-blocklang', language));
    const copy = action('Copy', 'cnb-block-copy', () => {
      Clipboard.copyToSystem(codeOf(pre));
      copy.textContent = 'Copied';
      setTimeout(() => (copy.textContent = 'Copy'), 1200);
    });
    const insert = action('Insert as a cell', 'cnb-block-insert', () => {
      const cells = this.panel.content.widgets;
      const index = cells.findIndex(cell => cell.node.contains(pre));
      insertCodeCell(this.panel, index + 1, codeOf(pre));
    });
    insert.title = 'Insert this code as a new cell below this one';
    bar.append(copy, insert);
    if (runnable(language)) {
      const run = action('Run', 'cnb-block-run', () => {
        let shown = pre.nextElementSibling as HTMLElement | null;
        if (!shown?.classList.contains('cnb-block-output')) {
          shown = el('div', 'cnb-block-output');
          pre.after(shown);
        }
        this.runs.run(codeOf(pre), shown);
      });
      run.title =
        'Run this code in the kernel (asks first, as when Copilot runs code)';
      bar.appendChild(run);
    }
    return bar;
  }

  private readonly watch: OutputWatch;
}

/** Listen for the chat panel's Insert: below the active cell of the current notebook. */
export function listenForPanelInserts(tracker: INotebookTracker): void {
  document.addEventListener(INSERT_EVENT, event => {
    const code = (event as CustomEvent<{ code?: unknown }>).detail?.code;
    const panel = tracker.currentWidget;
    if (typeof code !== 'string' || !panel) {
      return;
    }
    insertCodeCell(panel, panel.content.activeCellIndex + 1, code);
  });
  document.body.dataset.copilotNbInsert = 'true';
}

function action(
  label: string,
  className: string,
  act: () => void
): HTMLButtonElement {
  const node = el('button', `cnb-blockbtn ${className}`, label);
  const button = node as HTMLButtonElement;
  button.type = 'button';
  button.addEventListener('click', event => {
    event.stopPropagation();
    act();
  });
  return button;
}
