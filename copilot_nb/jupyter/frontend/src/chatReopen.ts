/**
 * The chat panel comes back by itself after a kernel restart. A panel knows the id of the kernel
 * it runs on (`data-kernel` on its root, from `opening.py: kernel_id`); when a notebook's kernel
 * restarts (by the user, or by the server after it died) and a panel of that kernel is open in a
 * sidecar, this runs our fixed reopen code (`REOPEN_CODE`) in the new kernel once it is idle:
 * silently, kept out of the history, never text from the notebook, the model or the page. The
 * new panel resumes the notebook's saved conversation, and `panelTabs.ts` closes the old one and
 * puts the new one in its place. The old panel is told how it went (`REOPEN_EVENT`, `link.js`):
 * where copilot_nb cannot be imported it says so. One attempt per restart, and none again for a
 * panel whose attempt failed: a kernel that restarts again while the panel reopens (reopening
 * killed it) is not sent into a loop. A panel closed before the restart is not there to find, so
 * it stays closed.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { ISessionContext } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { Kernel } from '@jupyterlab/services';

import { chatSidecars } from './panelTabs';

/** The panel's event for what happened to its reopening (`link.js` listens). */
const REOPEN_EVENT = 'copilot-nb:reopen';

/** Our entry point, the same text as `opening.py: REOPEN_CODE`; `__import__` binds no name in
 * the user's namespace. */
export const REOPEN_CODE =
  '__import__("copilot_nb.jupyter.panel.opening", fromlist=["_"]).reopen()';

/** Where a kernel's panel is: waiting for the restarted kernel to be idle, or being reopened. */
type Stage = 'restarting' | 'reopening';

interface IReopenNote {
  state: 'reopening' | 'failed';
  why?: string;
}

/** Reopen the chat panel of every notebook whose kernel restarts while it is open. */
export function reopenChatsAfterRestart(
  app: JupyterFrontEnd,
  tracker: INotebookTracker
): void {
  const stages = new Map<string, Stage>(); // by kernel id: views of one notebook share it
  const watched = new WeakSet<ISessionContext>();

  // the open panels of a kernel that may still be reopened (not one whose reopening failed)
  const roots = (kernelId: string): HTMLElement[] =>
    chatSidecars(app).flatMap(widget =>
      Array.from(widget.node.querySelectorAll<HTMLElement>('.cnb-root')).filter(
        root =>
          root.dataset.kernel === kernelId && root.dataset.reopen !== 'failed'
      )
    );
  const tell = (kernelId: string, note: IReopenNote): void => {
    for (const root of roots(kernelId)) {
      // a panel whose reopening failed is not tried again: a kernel that dies on the way
      // back restarts more than once, and must not be sent round again
      root.dataset.reopen = note.state;
      root.dispatchEvent(new CustomEvent(REOPEN_EVENT, { detail: note }));
    }
  };

  const restarted = (kernel: Kernel.IKernelConnection): void => {
    const stage = stages.get(kernel.id);
    if (stage === 'restarting') {
      return; // another view of the same notebook saw it first
    }
    if (stage === 'reopening') {
      stages.delete(kernel.id);
      tell(kernel.id, {
        state: 'failed',
        why: 'the kernel restarted again while the panel was reopening'
      });
      return;
    }
    if (roots(kernel.id).length > 0) {
      stages.set(kernel.id, 'restarting');
      tell(kernel.id, { state: 'reopening' });
    }
  };

  const reopen = async (kernel: Kernel.IKernelConnection): Promise<void> => {
    stages.set(kernel.id, 'reopening');
    const why = await openChat(kernel);
    if (why === null) {
      // No reply: the kernel went away while reopening (the future was cancelled, before or
      // after the restart that follows). The stage stays, so that restart gives up.
      return;
    }
    if (stages.get(kernel.id) !== 'reopening') {
      return; // it restarted again meanwhile: `restarted` told the panel
    }
    stages.delete(kernel.id);
    if (why) {
      tell(kernel.id, { state: 'failed', why });
    }
  };

  const watch = (session: ISessionContext): void => {
    if (watched.has(session)) {
      return;
    }
    watched.add(session);
    session.statusChanged.connect((_, status) => {
      const kernel = session.session?.kernel;
      if (!kernel) {
        return;
      }
      if (status === 'restarting' || status === 'autorestarting') {
        restarted(kernel);
      } else if (status === 'idle' && stages.get(kernel.id) === 'restarting') {
        void reopen(kernel);
      }
    });
  };
  tracker.forEach(panel => watch(panel.sessionContext));
  tracker.widgetAdded.connect((_, panel) => watch(panel.sessionContext));
}

/** Why the reopen code failed, in words for the old panel; empty if it ran. */
/** Run our fixed opening call in `kernel`, out of its history: '' once it ran, why it failed,
 * or null when the kernel went away before it answered. */
export async function openChat(
  kernel: Kernel.IKernelConnection
): Promise<string | null> {
  try {
    const reply = await kernel.requestExecute({
      code: REOPEN_CODE,
      silent: true,
      store_history: false,
      allow_stdin: false
    }).done;
    return failure(reply.content);
  } catch {
    return null;
  }
}

export function failure(content: {
  status: string;
  ename?: string;
  evalue?: string;
}): string {
  if (content.status === 'ok') {
    return '';
  }
  if (content.status !== 'error') {
    return `the kernel answered "${content.status}"`;
  }
  const error = `${content.ename}: ${content.evalue}`;
  return /^(ModuleNotFound|Import)Error$/.test(content.ename ?? '')
    ? `copilot_nb cannot be imported there (${error})`
    : error;
}
