/**
 * Where the chat panel lives in JupyterLab. `copilot_nb.chat()` shows it in a sidecar (a widget
 * in the right-hand area); the panel's "Open in a tab" button (a DOM event, `TAB_EVENT`: the
 * panel is an anywidget outside this bundle) and the command `copilot-nb:chat-in-tab` move that
 * same widget to a tab of the main area, as jupyter-ai's chat can be; `copilot-nb:chat-in-sidebar`
 * moves it back. There is only ever one: when a new Copilot panel opens (`chat()` again, after a
 * kernel restart), the older ones close. A panel that arrives in the sidebar where none was
 * widens it to a readable width (`chatWidth.ts`).
 */
import { ILabShell, JupyterFrontEnd } from '@jupyterlab/application';
import { Widget } from '@lumino/widgets';

import { widenFor } from './chatWidth';

const TAB_EVENT = 'copilot-nb:open-in-tab';
const SIDECAR = 'jupyterlab-sidecar';
const IN_MAIN = 'cnb-in-main';
export const CHAT_IN_TAB = 'copilot-nb:chat-in-tab';
export const CHAT_IN_SIDEBAR = 'copilot-nb:chat-in-sidebar';

/** Whether a widget is a sidecar holding copilot_nb's chat panel (its default title names it
 * before the panel has rendered into it). */
function isChat(widget: Widget): boolean {
  return (
    widget.hasClass(SIDECAR) &&
    (widget.title.label === 'Copilot' ||
      widget.node.querySelector('.cnb-root') !== null)
  );
}

/** The chat panels' sidecars in the right-hand and main areas. */
export function chatSidecars(app: JupyterFrontEnd): Widget[] {
  return [
    ...Array.from(app.shell.widgets('right')),
    ...Array.from(app.shell.widgets('main'))
  ].filter(isChat);
}

/** The chat panels' sidecars, oldest first. */
function chats(app: JupyterFrontEnd, seen: WeakMap<Widget, number>): Widget[] {
  const found = chatSidecars(app);
  let next = 0;
  for (const widget of found) {
    next = Math.max(next, (seen.get(widget) ?? 0) + 1);
  }
  for (const widget of found) {
    if (!seen.has(widget)) {
      seen.set(widget, next++);
    }
  }
  return found.sort((a, b) => (seen.get(a) ?? 0) - (seen.get(b) ?? 0));
}

/** Move a chat's sidecar to the main area (`tab`; beside `ref` if given) or back to the
 * right-hand area. */
function move(
  app: JupyterFrontEnd,
  widget: Widget,
  tab: boolean,
  ref?: Widget
): void {
  widget.toggleClass(IN_MAIN, tab);
  if (tab) {
    const where = ref ? { ref: ref.id, mode: 'tab-after' as const } : {};
    app.shell.add(widget, 'main', { mode: 'split-right', ...where });
  } else {
    app.shell.add(widget, 'right');
  }
  app.shell.activateById(widget.id);
  if (!tab) {
    requestAnimationFrame(() => widenFor(widget));
  }
}

/** The commands, the panel's button and the one-panel rule. */
export function placeChatPanels(
  app: JupyterFrontEnd,
  labShell: ILabShell | null
): void {
  const seen = new WeakMap<Widget, number>();
  const placed = new WeakSet<Widget>(); // chats given their place and width once
  const newest = (): Widget | undefined => chats(app, seen).pop();
  const commands: [string, string, boolean][] = [
    [CHAT_IN_TAB, 'Open Copilot Chat in a Tab', true],
    [CHAT_IN_SIDEBAR, 'Move Copilot Chat to the Right Sidebar', false]
  ];
  for (const [id, label, tab] of commands) {
    app.commands.addCommand(id, {
      label,
      isEnabled: () => newest() !== undefined,
      execute: () => {
        const chat = newest();
        if (chat) {
          move(app, chat, tab);
        }
      }
    });
  }
  document.addEventListener(TAB_EVENT, event => {
    const target = event.target instanceof Element ? event.target : null;
    const chat = chats(app, seen).find(w => target && w.node.contains(target));
    if (chat) {
      move(app, chat, true);
    }
  });
  // a new chat panel's sidecar was added: it takes the place of the older ones, which close
  let frame = 0;
  labShell?.layoutModified.connect(() => {
    if (!frame) {
      frame = requestAnimationFrame(() => {
        frame = 0;
        const older = chats(app, seen);
        const fresh = older.pop();
        const last = older[older.length - 1];
        if (fresh && last?.hasClass(IN_MAIN) && !fresh.hasClass(IN_MAIN)) {
          move(app, fresh, true, last);
        } else if (fresh && !placed.has(fresh)) {
          placed.add(fresh);
          if (!last && !fresh.hasClass(IN_MAIN)) {
            widenFor(fresh); // the first chat in the sidebar; one that replaces another keeps its width
          }
        }
        older.forEach(old => old.dispose());
      });
    }
  });
}
