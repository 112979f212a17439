/**
 * Fix with Copilot on the error output of a code cell: two buttons under the traceback, "In a
 * cell below" and "In the chat panel". Both are always in sight (no menu to open, no setting
 * to find): a reader tells them apart at a glance, each is one Tab stop and one click, and each
 * names where the turn will show.
 *
 * The buttons are this view's, drawn on the rendered output (found as outputs appear, as
 * `codeBlocks.ts` finds code blocks); the notebook's content never holds them, so a saved and
 * reopened notebook shows them again from here. Only an error output of a code cell gets them,
 * not a copilot cell's own (`%%copilot`, `%copilot`). Keys typed on them are theirs, not the
 * notebook's shortcuts, so Enter and Space press them.
 *
 * "In a cell below" inserts a `%%copilot --fix ID` cell right below (`insertCodeCell`, the
 * code blocks' Insert: one step of the notebook's own undo) and runs it: anyone can read it and
 * run it again, and the kernel reads the failing cell and its error itself (`failed_cell.py`).
 * "In the chat panel" is `fixInPanel.ts`. Only the cell's id ever leaves the page.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { Notification } from '@jupyterlab/apputils';
import { Cell, CodeCell } from '@jupyterlab/cells';
import { NotebookActions, NotebookPanel } from '@jupyterlab/notebook';

import { insertCodeCell } from './codeBlocks';
import { fixInPanel } from './fixInPanel';
import { OutputWatch } from './outputWatch';
import { el } from './reviewNodes';

const BAR = 'cnb-fixbar';
/** How long a click waits for the kernel's copilot_nb to attach (it does just after loading). */
const ATTACH_WAIT = 5000;
const OWN = /^\s*%%?copilot\b/;

/** The cell "In a cell below" inserts for the failing cell `cellId`. */
export function fixCellSource(cellId: string): string {
  return `%%copilot --fix ${cellId}\nFix the error in the cell above.`;
}

/** The Fix with Copilot buttons on the error outputs of one notebook view. */
export class FixActions {
  constructor(
    private readonly app: JupyterFrontEnd,
    private readonly panel: NotebookPanel,
    private readonly attached: () => boolean
  ) {
    this.watch = new OutputWatch(panel, '.jp-OutputArea-output', () =>
      this.decorate()
    );
  }

  dispose(): void {
    this.watch.dispose();
  }

  /** Put the buttons on every error output that has none (a redrawn output has new nodes):
   * the outputs' types first, so a notebook with no error costs one look at each cell. */
  private decorate(): void {
    for (const cell of this.panel.content.widgets) {
      const area =
        cell.model.type === 'code' ? (cell as CodeCell).outputArea : null;
      const outputs = area?.model;
      const errors: number[] = [];
      for (let index = 0; outputs && index < outputs.length; index++) {
        if (outputs.get(index).type === 'error') {
          errors.push(index);
        }
      }
      if (!area || !errors.length || OWN.test(cell.model.sharedModel.source)) {
        continue;
      }
      for (const index of errors) {
        const shown = area.widgets[index]?.node.querySelector<HTMLElement>(
          '.jp-OutputArea-output'
        );
        if (shown && !shown.querySelector(`.${BAR}`)) {
          shown.appendChild(this.bar(cell));
        }
      }
    }
  }

  private bar(cell: Cell): HTMLElement {
    const bar = el('div', BAR);
    bar.setAttribute('role', 'group');
    bar.setAttribute('aria-label', 'Fix with Copilot');
    bar.dataset.lmSuppressShortcuts = 'true'; // Enter and Space press the buttons
    bar.append(
      el('span', 'cnb-fix-label', 'Fix with Copilot'),
      action(
        'In a cell below',
        'cnb-fix-below',
        'Insert a %%copilot cell below that asks Copilot to fix this error, and run it',
        () => void this.below(cell)
      ),
      action(
        'In the chat panel',
        'cnb-fix-panel',
        'Ask Copilot to fix this error in the chat panel (opened if it is not)',
        () => void fixInPanel(this.app, this.panel, cell.model.id)
      )
    );
    return bar;
  }

  /** Insert the fix's `%%copilot` cell right below the failing one, and run it; where the
   * kernel has not said copilot_nb is loaded, wait a little (it attaches just after
   * `%load_ext` ran), else say what to do. */
  private async below(cell: Cell): Promise<void> {
    if (!(await attachedWithin(this.attached, ATTACH_WAIT))) {
      Notification.warning(
        'Fix with Copilot in a cell needs copilot_nb loaded in this kernel: run ' +
          '%load_ext copilot_nb first, or choose "In the chat panel".',
        { autoClose: 8000 }
      );
      return;
    }
    const notebook = this.panel.content;
    const index = notebook.widgets.indexOf(cell);
    if (index < 0) {
      return;
    }
    insertCodeCell(this.panel, index + 1, fixCellSource(cell.model.id));
    const inserted = notebook.widgets[index + 1];
    if (inserted?.model.type === 'code') {
      void NotebookActions.runCells(
        notebook,
        [inserted],
        this.panel.sessionContext
      );
    }
  }

  private readonly watch: OutputWatch;
}

/** Whether `attached()` holds now or comes true within `wait` ms (looked at every 100 ms). */
function attachedWithin(
  attached: () => boolean,
  wait: number
): Promise<boolean> {
  const deadline = performance.now() + wait;
  return new Promise(resolve => {
    const look = () => {
      if (attached() || performance.now() > deadline) {
        resolve(attached());
      } else {
        setTimeout(look, 100);
      }
    };
    look();
  });
}

function action(
  label: string,
  className: string,
  title: string,
  act: () => void
): HTMLButtonElement {
  const button = el(
    'button',
    `cnb-fixbtn ${className}`,
    label
  ) as HTMLButtonElement;
  button.type = 'button';
  button.title = title;
  button.setAttribute('aria-label', `Fix with Copilot ${label.toLowerCase()}`);
  button.addEventListener('click', event => {
    event.stopPropagation();
    act();
  });
  return button;
}
