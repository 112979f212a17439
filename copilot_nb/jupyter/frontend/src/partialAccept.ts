/**
 * Taking part of the ghost text: its next word (Ctrl+→) or the rest of its line (Ctrl+Shift+→),
 * which JupyterLab's inline completer does not offer. The part is typed into the cell as the user
 * would type it, so the completer keeps the rest as ghost text (typing along an answer keeps it).
 * The keys are bound only while ghost text shows (`.jp-mod-inline-completer-active`), so the
 * editor's own word moves are untouched otherwise. The editor handles Ctrl+→ before JupyterLab's
 * key bindings see it, so (as JupyterLab does for Tab) a listener ahead of the editor runs the
 * bindings of these two commands, whatever keys the user gave them.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { NotebookPanel } from '@jupyterlab/notebook';
import { CommandRegistry } from '@lumino/commands';

import { nextLine, nextWord } from './completionText';

export const ACCEPT_WORD = 'copilot-nb:accept-word';
export const ACCEPT_LINE = 'copilot-nb:accept-line';

/** The ghost text the active cell shows now ("" if none): what the user sees is what is taken. */
function shownGhost(app: JupyterFrontEnd): string {
  const panel = app.shell.currentWidget as NotebookPanel | null;
  const host = panel?.content?.activeCell?.editor?.host;
  return host?.querySelector('.jp-GhostText')?.textContent ?? '';
}

export function addPartialAccept(app: JupyterFrontEnd): void {
  const take = (part: (text: string) => string) => {
    const panel = app.shell.currentWidget as NotebookPanel | null;
    const editor = panel?.content?.activeCell?.editor;
    const text = shownGhost(app);
    if (!editor || !text || !editor.replaceSelection) {
      return;
    }
    editor.replaceSelection(part(text));
  };
  app.commands.addCommand(ACCEPT_WORD, {
    label: 'Accept the Next Word of the Inline Completion',
    execute: () => take(nextWord)
  });
  app.commands.addCommand(ACCEPT_LINE, {
    label: 'Accept the Next Line of the Inline Completion',
    execute: () => take(nextLine)
  });
  document.addEventListener(
    'keydown',
    event => {
      const target = event.target;
      if (
        !(target instanceof Element) ||
        !target.closest('.jp-mod-inline-completer-active')
      ) {
        return;
      }
      const stroke = CommandRegistry.keystrokeForKeydownEvent(event);
      const binding = app.commands.keyBindings.find(
        b =>
          (b.command === ACCEPT_WORD || b.command === ACCEPT_LINE) &&
          b.keys.length === 1 &&
          CommandRegistry.normalizeKeystroke(b.keys[0]) === stroke &&
          target.closest(b.selector) !== null
      );
      if (!binding) {
        return;
      }
      event.preventDefault();
      event.stopImmediatePropagation();
      void app.commands.execute(binding.command);
    },
    true
  );
}
