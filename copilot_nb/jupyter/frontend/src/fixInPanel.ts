/**
 * Fix with Copilot in the chat panel: the panel of the notebook's kernel is revealed (opened
 * first where none is) and handed the failing cell's id; the kernel reads the cell and its
 * error itself and runs the turn there (`ChatPanel.fix`), asking for approvals in the panel as
 * any of its turns does. The page sends no text of the cell or its error.
 *
 * The panel is an anywidget outside this bundle, so the id goes to it as a DOM event on its
 * root (`FIX_EVENT`, which `front.js` forwards to the kernel), as the panel's own Insert and
 * "As tab" come to this extension. Where no panel of this kernel is open, the page runs our
 * fixed opening call (`REOPEN_CODE`, the one that brings a panel back after a restart),
 * silently and out of the history, never text from the notebook, the model or the page; where
 * it cannot open one (no `sidecar`), a notification says why and what to use instead.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { Notification } from '@jupyterlab/apputils';
import { NotebookPanel } from '@jupyterlab/notebook';
import { Widget } from '@lumino/widgets';

import { openChat } from './chatReopen';
import { chatSidecars } from './panelTabs';

/** The panel's event for a fix (`front.js` listens): `detail.cellId`. */
export const FIX_EVENT = 'copilot-nb:fix';
/** How long a panel being opened may take to appear (a busy kernel runs the call later). */
const OPEN_WAIT = 60000;
const INSTEAD = 'Choose "In a cell below" instead.';

interface IChat {
  readonly widget: Widget;
  readonly root: HTMLElement;
}

/** Ask the chat panel of this notebook's kernel to fix the cell `cellId`. */
export async function fixInPanel(
  app: JupyterFrontEnd,
  panel: NotebookPanel,
  cellId: string
): Promise<void> {
  const kernel = panel.sessionContext.session?.kernel;
  if (!kernel) {
    warn('Fix with Copilot: this notebook has no kernel; start one first.');
    return;
  }
  let chat = chatOf(app, kernel.id);
  if (!chat) {
    const why = (await openChat(kernel)) ?? 'the kernel went away';
    if (why) {
      warn(`Copilot could not open the chat panel: ${why}. ${INSTEAD}`);
      return;
    }
    chat = await appeared(() => chatOf(app, kernel.id));
    if (!chat) {
      warn(`The chat panel did not appear. ${INSTEAD}`);
      return;
    }
  }
  app.shell.activateById(chat.widget.id);
  chat.root.dispatchEvent(new CustomEvent(FIX_EVENT, { detail: { cellId } }));
}

/** The open chat panel of this kernel (not one cut off by a restart), newest first. */
function chatOf(app: JupyterFrontEnd, kernelId: string): IChat | null {
  for (const widget of chatSidecars(app).reverse()) {
    const root = Array.from(
      widget.node.querySelectorAll<HTMLElement>('.cnb-root')
    ).find(
      node =>
        node.dataset.kernel === kernelId && !node.classList.contains('cnb-lost')
    );
    if (root) {
      return { widget, root };
    }
  }
  return null;
}

/** What `find` finds once it does (looked for every 100 ms), or null after OPEN_WAIT. */
function appeared<T>(find: () => T | null): Promise<T | null> {
  const deadline = performance.now() + OPEN_WAIT;
  return new Promise(resolve => {
    const look = () => {
      const found = find();
      if (found || performance.now() > deadline) {
        resolve(found);
      } else {
        setTimeout(look, 100);
      }
    };
    look();
  });
}

function warn(message: string): void {
  Notification.warning(message, { autoClose: 8000 });
}
