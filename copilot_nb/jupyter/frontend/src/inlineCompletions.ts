/**
 * Ghost text while you type, from the kernel that knows your data: an inline completion
 * provider for JupyterLab's inline completer (JupyterLab 4.1+ and Notebook 7), which gives Tab
 * to accept, Alt+] / Alt+[ to cycle, Alt+\ to ask, and the streaming of the ghost text.
 *
 * The provider takes the cell's text around the cursor and the cells above, and asks the kernel
 * over the document's live comm (`completionChannel.ts`); the kernel builds the prompt with what
 * it knows (variables, DataFrame columns) and asks the model. Settings (`schema/
 * inline-completions.json`): on/off, the model (empty: the kernel's own), the debounce, the
 * languages. What the model says is shown as ghost text by the editor: text, never markup.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  CompletionHandler,
  ICompletionProviderManager,
  IInlineCompletionContext,
  IInlineCompletionItem,
  IInlineCompletionList,
  IInlineCompletionProvider,
  InlineCompletionTriggerKind
} from '@jupyterlab/completer';
import { Text } from '@jupyterlab/coreutils';
import type * as nbformat from '@jupyterlab/nbformat';
import { NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStatusBar } from '@jupyterlab/statusbar';

import { CompletionChannel, PendingCompletion } from './completionChannel';
import { CompletionStatusItem } from './completionStatus';
import { cellsAbove } from './completionText';
import { addPartialAccept } from './partialAccept';
import { ICopilotLive } from './tokens';

export const PLUGIN_ID = 'copilot-nb:inline-completions';

/** The user's settings (their defaults are in the schema too). */
export interface ICompletionSettings {
  enabled: boolean;
  model: string;
  debounceMs: number;
  languages: string[];
}

const DEFAULTS: ICompletionSettings = {
  enabled: true,
  model: '',
  debounceMs: 200,
  languages: ['python']
};

const NOTHING: IInlineCompletionList = { items: [] };

/** A ghost text that streams on: the item the inline completer shows, and its request. */
interface IStreaming {
  pending: PendingCompletion;
  item: IInlineCompletionItem;
  start: number;
}

/** Where the cursor is: the notebook's channel, the cell and the text around the cursor. */
interface IPlace {
  channel: CompletionChannel;
  cellId: string;
  language: string;
  prefix: string;
  suffix: string;
  above: string[];
}

export class KernelCompletionProvider implements IInlineCompletionProvider {
  readonly name = 'copilot_nb';
  readonly identifier = 'copilot-nb:kernel';
  /** The inline completer's own settings for this provider: an answer may wait for a cell to
   * end (the completer's 5 s default would drop it); the debounce is ours (`debounceMs`). */
  readonly schema = { default: { timeout: 30_000, debouncerDelay: 0 } };

  constructor(private readonly live: ICopilotLive) {}

  settings: ICompletionSettings = { ...DEFAULTS };

  configureFrom(values: Partial<ICompletionSettings>): void {
    const model = this.settings.model;
    this.settings = { ...DEFAULTS, ...values };
    if (model !== this.settings.model) {
      this.live.clearCompletionCaches(); // those answers came from the other model
    }
    if (!this.settings.enabled) {
      this.live.completionStatus.set('idle');
    }
  }

  async fetch(
    request: CompletionHandler.IRequest,
    context: IInlineCompletionContext
  ): Promise<IInlineCompletionList> {
    const settings = this.settings;
    if (!settings.enabled) {
      return NOTHING;
    }
    const place = this.locate(request, context);
    if (
      !place ||
      !settings.languages.includes(place.language) ||
      !place.channel.available
    ) {
      return NOTHING;
    }
    const { channel, prefix, suffix } = place;
    const known = channel.answerAt(prefix, suffix);
    if (known !== null) {
      // typed along an answer, or asked again where one was given: no new request
      if (!known.pending || known.pending.done) {
        return known.text ? { items: [{ insertText: known.text }] } : NOTHING;
      }
      return { items: [this.streaming(known.pending, known.start)] };
    }
    channel.cancelAll(); // this keystroke moved on from the request in flight
    const generation = ++this.generation;
    if (
      context.triggerKind !== InlineCompletionTriggerKind.Invoke &&
      settings.debounceMs > 0
    ) {
      await new Promise(resolve => setTimeout(resolve, settings.debounceMs));
      if (generation !== this.generation) {
        return NOTHING; // another key since
      }
    }
    const pending = channel.start({
      cell_id: place.cellId,
      language: place.language,
      prefix,
      suffix,
      cells_above: place.above,
      model: settings.model.trim() || null
    });
    while (!pending.done && !pending.text) {
      await pending.news();
    }
    if (pending.cancelled || pending.error || !pending.text) {
      return NOTHING;
    }
    if (pending.done) {
      return { items: [{ insertText: pending.text }] };
    }
    return { items: [this.streaming(pending, 0)] };
  }

  /** The rest of a streamed answer, as it comes (the user may type along it meanwhile). */
  async *stream(
    token: string
  ): AsyncGenerator<{ response: IInlineCompletionItem }> {
    const streaming = this.streams.get(token);
    this.streams.delete(token);
    if (!streaming) {
      return;
    }
    const { pending, item } = streaming;
    let start = streaming.start;
    let shown = item.insertText;
    while (!pending.done) {
      await pending.news();
      if (pending.cancelled) {
        return;
      }
      // the inline completer cut what the user typed along off the front of the item
      start += Math.max(0, shown.length - item.insertText.length);
      shown = pending.text.slice(start);
      yield { response: { insertText: shown, isIncomplete: !pending.done } };
    }
  }

  private streaming(
    pending: PendingCompletion,
    start: number
  ): IInlineCompletionItem {
    for (const [token, old] of this.streams) {
      if (old.pending.done) {
        this.streams.delete(token); // a stale answer the completer never streamed
      }
    }
    const token = `${pending.id}:${++this.tokens}`;
    const item: IInlineCompletionItem = {
      insertText: pending.text.slice(start),
      isIncomplete: true,
      token
    };
    this.streams.set(token, { pending, item, start });
    return item;
  }

  /** The notebook cell the completer asks about, or null (a console, a file editor). */
  private locate(
    request: CompletionHandler.IRequest,
    context: IInlineCompletionContext
  ): IPlace | null {
    const panel = context.widget as NotebookPanel;
    const cell = panel?.content?.activeCell;
    const notebook = panel?.content?.model;
    if (!cell || !notebook || !panel.context) {
      return null;
    }
    const channel = this.live.channelOf(panel.context);
    const source = cell.model.sharedModel.getSource();
    if (!channel || source !== request.text) {
      return null;
    }
    this.watch(cell.model.sharedModel, cell.model.id, channel);
    const cursor = Text.charIndexToJsIndex(request.offset, request.text);
    const sources: string[] = [];
    for (let i = 0; i < notebook.cells.length; i++) {
      const other = notebook.cells.get(i);
      if (other.id === cell.model.id) {
        break;
      }
      if (other.type === 'code') {
        sources.push(other.sharedModel.getSource());
      }
    }
    return {
      channel,
      cellId: cell.model.id,
      language: languageOf(
        cell.model.type,
        request.mimeType,
        notebook.metadata
      ),
      prefix: request.text.slice(0, cursor),
      suffix: request.text.slice(cursor),
      above: cellsAbove(sources)
    };
  }

  /** Every change to a cell's text cancels a request it no longer continues. */
  private watch(
    shared: {
      changed: { connect: (fn: () => void) => unknown };
      getSource: () => string;
    },
    cellId: string,
    channel: CompletionChannel
  ): void {
    if (this.watched.has(shared)) {
      return;
    }
    this.watched.add(shared);
    shared.changed.connect(() =>
      channel.sourceChanged(cellId, shared.getSource())
    );
  }

  private generation = 0;
  private tokens = 0;
  private readonly streams = new Map<string, IStreaming>();
  private readonly watched = new WeakSet<object>();
}

/** The language of the text under the cursor: the kernel's in a code cell. */
function languageOf(
  cellType: string,
  mimeType: string | undefined,
  metadata: Partial<nbformat.INotebookMetadata>
): string {
  if (cellType === 'markdown') {
    return 'markdown';
  }
  if (cellType !== 'code') {
    return cellType;
  }
  const info = metadata.language_info?.name ?? metadata.kernelspec?.language;
  if (typeof info === 'string' && info) {
    return info.toLowerCase();
  }
  return mimeType?.includes('python') ? 'python' : (mimeType ?? 'python');
}

/** Registers the provider and its status bar item, and follows its settings. */
export const inlineCompletionsPlugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description:
    'Ghost text while you type, completed by the kernel that knows your data.',
  autoStart: true,
  requires: [ICopilotLive],
  optional: [ICompletionProviderManager, ISettingRegistry, IStatusBar],
  activate: (
    app: JupyterFrontEnd,
    live: ICopilotLive,
    manager: ICompletionProviderManager | null,
    registry: ISettingRegistry | null,
    statusBar: IStatusBar | null
  ) => {
    if (!manager) {
      return; // an application without JupyterLab's completer
    }
    const provider = new KernelCompletionProvider(live);
    manager.registerInlineProvider(provider);
    addPartialAccept(app);
    if (statusBar) {
      const status = live.completionStatus;
      const item = new CompletionStatusItem(status);
      statusBar.registerStatusItem(PLUGIN_ID, {
        item,
        align: 'left',
        rank: 100,
        isActive: () => status.kind !== 'idle',
        activeStateChanged: status.changed
      });
    }
    if (registry) {
      void registry
        .load(PLUGIN_ID)
        .then(settings => {
          const apply = () =>
            provider.configureFrom(
              settings.composite as unknown as Partial<ICompletionSettings>
            );
          apply();
          settings.changed.connect(apply);
        })
        .catch(reason =>
          console.warn('copilot_nb: completion settings not loaded', reason)
        );
    }
  }
};
