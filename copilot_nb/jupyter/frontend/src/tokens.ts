/**
 * What the live-channel plugin shares with the others: one token it provides and they require
 * (as jupyter-ai's `tokens.ts`), typed state and Lumino signals instead of module globals, so
 * each plugin's state has one owner and a test or another extension can reach it the same way.
 */
import { DocumentRegistry } from '@jupyterlab/docregistry';
import { INotebookModel } from '@jupyterlab/notebook';
import { Token } from '@lumino/coreutils';
import { ISignal } from '@lumino/signaling';

import type { CompletionChannel } from './completionChannel';
import type { CompletionStatus } from './completionStatus';

/** An open notebook document's context: the key the live channel tracks documents by. */
export type NotebookContext = DocumentRegistry.IContext<INotebookModel>;

/** The live channel's documents, their completion channels and the completions' status. */
export interface ICopilotLive {
  /** The completion channel of an open notebook, if the live channel tracks it. */
  channelOf(context: NotebookContext): CompletionChannel | undefined;
  /** Forget every cached completion (the completions' model setting changed). */
  clearCompletionCaches(): void;
  /** What the status bar says about completions: one for the page, `changed` when it does. */
  readonly completionStatus: CompletionStatus;
  /** A document's comm to its kernel opened (true) or went away (false). */
  readonly attachedChanged: ISignal<ICopilotLive, IAttachedChange>;
}

/** A document attached to, or detached from, its kernel's copilot_nb. */
export interface IAttachedChange {
  readonly context: NotebookContext;
  readonly attached: boolean;
}

export const ICopilotLive = new Token<ICopilotLive>(
  'copilot-nb:ICopilotLive',
  "copilot_nb's live channel: each open notebook's comm to the kernel and its completions."
);
