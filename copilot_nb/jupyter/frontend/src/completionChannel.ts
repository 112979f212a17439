/**
 * Completions while you type, over the document's live comm: the front end asks the kernel
 * (`{request: 'complete', id, ...}`), the kernel streams `{reply: 'complete', id, delta}` and
 * ends with `{reply: 'complete', id, done: true, text, error?}`.
 *
 * One channel per open notebook document. Only the newest request is shown: a new one (every
 * keystroke that asks) cancels the one in flight (`cancel_complete`), and replies to any other
 * id are dropped. A kernel running a cell reads comm messages between cells only, unless the
 * comm runs on a kernel subshell (JupyterLab 4.6 puts comms on one where the kernel has them):
 * then at most one request waits in the kernel, the newest is held here until it is free, and
 * the status bar says that completions wait for the kernel.
 */
import { DocumentRegistry } from '@jupyterlab/docregistry';
import { INotebookModel } from '@jupyterlab/notebook';
import { Kernel, KernelMessage } from '@jupyterlab/services';

import { JSONObject } from './changes';
import { CompletionStatus } from './completionStatus';
import {
  AnswerCache,
  IAnswerSoFar,
  rest,
  stillContinues
} from './completionText';

/** What one request asks; the channel adds `request` and `id`. */
export interface ICompleteFields {
  cell_id: string;
  language: string;
  prefix: string;
  suffix: string;
  cells_above: string[];
  model: string | null;
}

/** Milliseconds with no word from a kernel that runs a cell before the status bar says so. */
const WAIT_NOTICE_MS = 250;
/** The same where the comm has its own subshell (the kernel should answer meanwhile). */
const SLOW_NOTICE_MS = 1500;

let nextId = 1;

/** One request and its answer as it streams in. */
export class PendingCompletion implements IAnswerSoFar {
  constructor(
    readonly id: number,
    readonly fields: ICompleteFields
  ) {}

  get prefix(): string {
    return this.fields.prefix;
  }

  get suffix(): string {
    return this.fields.suffix;
  }

  text = '';
  done = false;
  cancelled = false;
  heard = false;
  error = '';

  /** Resolves at the next news: a delta, the end, or a cancel. */
  news(): Promise<void> {
    if (this.done) {
      return Promise.resolve();
    }
    return new Promise(resolve => this.waiters.push(resolve));
  }

  append(delta: string): void {
    this.heard = true;
    this.text += delta;
    this.wake();
  }

  finish(text: string | null, error: string): void {
    this.heard = true;
    if (text !== null) {
      this.text = text;
    }
    this.error = error;
    this.done = true;
    this.wake();
  }

  cancel(): void {
    this.cancelled = true;
    this.done = true;
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    waiters.forEach(resolve => resolve());
  }

  private waiters: (() => void)[] = [];
}

/** An answer to show at some place: the request it comes from (null if cached) and the text. */
export interface IAnswerAt {
  pending: PendingCompletion | null;
  start: number;
  text: string;
}

/** The completion requests of one open notebook document. */
export class CompletionChannel {
  /** Forget every cached answer (the model setting changed). */
  clearCache(): void {
    this.cache.clear();
  }

  constructor(
    context: DocumentRegistry.IContext<INotebookModel>,
    private readonly comm: () => Kernel.IComm | null,
    private readonly status: CompletionStatus
  ) {
    const session = context.sessionContext;
    session.iopubMessage.connect((_, msg) => this.onIopub(msg), this);
    session.kernelChanged.connect(() => this.reset(), this);
    session.statusChanged.connect((_, status) => {
      if (
        status === 'restarting' ||
        status === 'autorestarting' ||
        status === 'dead'
      ) {
        this.reset();
      }
    }, this);
    context.disposed.connect(() => this.reset(), this);
  }

  /** Whether the kernel has copilot_nb loaded and this document attached. */
  get available(): boolean {
    return this.comm() !== null;
  }

  /** An answer already here for (prefix, suffix): one in flight or finished that the user typed
   * along, or a cached one; null if a request is needed. */
  answerAt(prefix: string, suffix: string): IAnswerAt | null {
    for (const pending of this.live.values()) {
      const left = rest(pending, prefix, suffix);
      if (left !== null && pending.heard && !pending.error) {
        return {
          pending,
          start: pending.text.length - left.length,
          text: left
        };
      }
    }
    const cached = this.cache.get(prefix, suffix);
    return cached === null ? null : { pending: null, start: 0, text: cached };
  }

  /** Ask for a completion; every older request is cancelled (its answer is no longer shown). */
  start(fields: ICompleteFields): PendingCompletion {
    const pending = new PendingCompletion(nextId++, fields);
    this.cancelAll();
    this.live.set(pending.id, pending);
    if (this.outstanding !== null && this.blocked()) {
      this.held = pending; // sent when the kernel has read the one it holds
      this.status.set('waiting');
    } else {
      this.send(pending);
    }
    return pending;
  }

  /** Cancel every request shown: a keystroke moved on from them. */
  cancelAll(): void {
    for (const pending of this.live.values()) {
      pending.cancel();
    }
    this.live.clear();
    this.held = null;
    if (this.outstanding !== null && !this.blocked()) {
      this.post({ request: 'cancel_complete', id: this.outstanding });
      this.outstanding = null;
    }
  }

  /** The cell's text changed: cancel what no longer continues it. */
  sourceChanged(cellId: string, source: string): void {
    for (const pending of this.live.values()) {
      if (
        pending.fields.cell_id === cellId &&
        !stillContinues(pending, source)
      ) {
        this.cancelAll();
        return;
      }
    }
  }

  /** A `{reply: 'complete'}` message from the kernel. */
  receive(data: JSONObject): void {
    if (data.reply !== 'complete' || typeof data.id !== 'number') {
      return;
    }
    if (data.done && data.id === this.outstanding) {
      this.outstanding = null;
      this.flush();
    }
    const pending = this.live.get(data.id);
    if (!pending) {
      return; // stale: a newer request replaced it
    }
    if (!data.done) {
      if (typeof data.delta === 'string') {
        pending.append(data.delta);
        this.clearWaiting();
      }
      return;
    }
    this.live.delete(pending.id);
    const error = typeof data.error === 'string' ? data.error : '';
    pending.finish(typeof data.text === 'string' ? data.text : null, error);
    if (error) {
      this.status.set('error', error);
    } else if (data.waiting) {
      this.status.set('waiting');
    } else {
      this.clearWaiting(true);
      this.cache.put(pending);
    }
  }

  private send(pending: PendingCompletion): void {
    if (
      !this.post({ request: 'complete', id: pending.id, ...pending.fields })
    ) {
      this.live.delete(pending.id);
      pending.cancel();
      return;
    }
    this.outstanding = pending.id;
    const delay = this.blocked() ? WAIT_NOTICE_MS : SLOW_NOTICE_MS;
    setTimeout(() => {
      if (!pending.heard && !pending.done && this.cellRunning) {
        this.status.set('waiting');
      }
    }, delay);
  }

  /** Send the held request once the kernel reads comm messages again. */
  private flush(): void {
    const held = this.held;
    if (!held || (this.outstanding !== null && this.blocked())) {
      return;
    }
    this.held = null;
    if (this.outstanding !== null) {
      this.post({ request: 'cancel_complete', id: this.outstanding });
      this.outstanding = null;
    }
    this.send(held);
  }

  private post(data: JSONObject): boolean {
    const comm = this.comm();
    if (!comm || comm.isDisposed) {
      return false;
    }
    try {
      comm.send(data);
      return true;
    } catch {
      return false; // the kernel went away meanwhile
    }
  }

  /** A cell runs and the comm shares the kernel's main shell: its messages wait behind it. */
  private blocked(): boolean {
    const comm = this.comm() as
      (Kernel.IComm & { subshellId?: string | null }) | null;
    return this.cellRunning && !comm?.subshellId;
  }

  private clearWaiting(alsoErrors = false): void {
    if (
      this.status.kind === 'waiting' ||
      (alsoErrors && this.status.kind === 'error')
    ) {
      this.status.set('idle');
    }
  }

  /** Follow whether a cell runs (its execute request made the kernel busy). */
  private onIopub(msg: KernelMessage.IMessage): void {
    if (msg.header.msg_type !== 'status') {
      return;
    }
    const parent = msg.parent_header as Partial<KernelMessage.IHeader>;
    if (parent?.msg_type !== 'execute_request') {
      return;
    }
    const state = (msg.content as JSONObject).execution_state;
    if (state === 'busy') {
      this.cellRunning = true;
    } else if (state === 'idle') {
      this.cellRunning = false;
      this.cache.clear(); // the cell may have changed what the kernel knows (df's columns)
      this.flush();
      if (!this.held) {
        this.clearWaiting();
      }
    }
  }

  private reset(): void {
    for (const pending of this.live.values()) {
      pending.cancel();
    }
    this.live.clear();
    this.held = null;
    this.outstanding = null;
    this.cellRunning = false;
    this.clearWaiting();
  }

  private readonly live = new Map<number, PendingCompletion>();
  private readonly cache = new AnswerCache();
  private held: PendingCompletion | null = null;
  private outstanding: number | null = null;
  private cellRunning = false;
}
