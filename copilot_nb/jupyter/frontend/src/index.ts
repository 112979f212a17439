/**
 * copilot_nb's front-end plugins: the live-notebook channel (the agent in the kernel reads and
 * edits the notebook the user has open, through the document's shared model, never behind its
 * back on disk; `liveDocument.ts`, `notebookOps.ts`), which provides `ICopilotLive`
 * (`tokens.ts`), and the completions while you type, which require it (`inlineCompletions.ts`).
 */
import {
  ILabShell,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import { reopenChatsAfterRestart } from './chatReopen';
import { CodeBlockActions, listenForPanelInserts } from './codeBlocks';
import { FixActions } from './fixError';
import { inlineCompletionsPlugin } from './inlineCompletions';
import { LiveDocuments } from './liveDocument';
import { modelSettingsPlugin } from './modelSettings';
import { CHAT_IN_SIDEBAR, CHAT_IN_TAB, placeChatPanels } from './panelTabs';
import { ReviewView } from './reviewView';
import { ICopilotLive } from './tokens';

export { ICopilotLive } from './tokens';
export type { IAttachedChange } from './tokens';

const plugin: JupyterFrontEndPlugin<ICopilotLive> = {
  id: 'copilot-nb:live',
  description:
    'Lets the copilot_nb agent in the kernel read and edit the open notebook.',
  autoStart: true,
  requires: [INotebookTracker],
  provides: ICopilotLive,
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker) => {
    const live = new LiveDocuments(app.name);
    const track = (panel: NotebookPanel) => {
      // every view shows the document's review (another view shares the document's channel)
      const doc = live.track(panel.context);
      new ReviewView(panel, doc.review);
      new CodeBlockActions(panel, doc.blocks);
      new FixActions(app, panel, () => doc.comm !== null);
    };
    listenForPanelInserts(tracker);
    tracker.forEach(track);
    tracker.widgetAdded.connect((_, panel) => track(panel));
    return live;
  }
};

/** The chat panel's place: a main-area tab on request, only ever one panel, and back by itself
 * after a kernel restart. */
const chatPlacePlugin: JupyterFrontEndPlugin<void> = {
  id: 'copilot-nb:chat-place',
  description:
    'Opens the Copilot chat panel as a tab, keeps only one and reopens it after a kernel restart.',
  autoStart: true,
  optional: [ILabShell, ICommandPalette, INotebookTracker],
  activate: (
    app: JupyterFrontEnd,
    labShell: ILabShell | null,
    palette: ICommandPalette | null,
    tracker: INotebookTracker | null
  ) => {
    placeChatPanels(app, labShell);
    if (tracker) {
      reopenChatsAfterRestart(app, tracker);
    }
    for (const command of [CHAT_IN_TAB, CHAT_IN_SIDEBAR]) {
      palette?.addItem({ command, category: 'Copilot' });
    }
  }
};

export default [
  plugin,
  inlineCompletionsPlugin,
  chatPlacePlugin,
  modelSettingsPlugin
];
