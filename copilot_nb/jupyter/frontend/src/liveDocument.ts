/**
 * copilot_nb's live-notebook channel: the agent in the kernel reads and edits the notebook the
 * user has open, through the document's shared model, never behind its back on disk.
 *
 * For every open notebook document (one per document: a second view of the same notebook shares
 * it) this opens a comm to the kernel target `copilot_nb.live`, once the kernel has copilot_nb
 * loaded. The kernel is found ready by a comm-info probe for its silent `copilot_nb.beacon`
 * (sent when the kernel connects and after each cell run until attached) or by the short-lived
 * `copilot_nb.hello` comm the kernel opens when the extension loads.
 *
 * The kernel sends requests `{id, op, ...}` and gets `{id, ok, result}` or `{id, ok: false,
 * error, code}` back; what each op does is `notebookOps.ts`. A change names the source it
 * expects a cell to have; if the user changed the cell meanwhile, nothing is changed and the
 * reply says `conflict`. A request marked `notify` (an undo nobody waits for) shows a failure
 * as a notification instead.
 *
 * The documents are held by one `LiveDocuments`, which the live plugin provides to the others
 * as `ICopilotLive` (`tokens.ts`).
 */
import { PageConfig } from '@jupyterlab/coreutils';
import { Kernel, KernelMessage } from '@jupyterlab/services';
import { Signal } from '@lumino/signaling';

import { BlockRuns } from './blockRuns';
import { JSONObject, RequestError } from './changes';
import { CompletionChannel } from './completionChannel';
import { CompletionStatus } from './completionStatus';
import { NotebookOps } from './notebookOps';
import { ReviewDocument } from './review';
import { IAttachedChange, ICopilotLive, NotebookContext } from './tokens';

const TARGET = 'copilot_nb.live';
const BEACON = 'copilot_nb.beacon';
const HELLO = 'copilot_nb.hello';
/** 2: the page grows a streamed output in place (`outputGrowth.ts`). */
const PROTOCOL = 2;

/** One open notebook document and its channel to the kernel that serves it. */
class LiveDocument {
  constructor(
    private readonly context: NotebookContext,
    private readonly hub: LiveDocuments
  ) {
    this.review = new ReviewDocument(context.model, data =>
      this.sendEvent(data)
    );
    this.completions = new CompletionChannel(
      context,
      () => this.comm,
      hub.completionStatus
    );
    this.ops = new NotebookOps(context, this.review);
    this.blocks = new BlockRuns(() => this.comm);
    const session = context.sessionContext;
    session.kernelChanged.connect(() => this.reset(), this);
    session.statusChanged.connect((_, status) => this.onStatus(status), this);
    session.iopubMessage.connect((_, msg) => this.onIopub(msg), this);
    session.connectionStatusChanged.connect(() => this.connected(), this);
    context.pathChanged.connect(() => this.sendPath(), this);
    context.disposed.connect(() => this.dispose(), this);
    // Listening for the kernel's hello costs nothing and starts at once (a notebook whose
    // first cells load copilot_nb and ask it something attaches through it); the first probe
    // waits until the page is idle, so loading the page and starting the kernel come first.
    void session.ready.then(() => this.listenForHello());
    void session.ready.then(whenIdle).then(() => {
      this.started = true;
      void this.probe();
    });
  }

  /** Open the comm if the kernel has copilot_nb loaded (its beacon answers). */
  async probe(): Promise<void> {
    const kernel = this.kernel;
    if (
      !kernel ||
      this.comm ||
      this.probing ||
      kernel.connectionStatus !== 'connected'
    ) {
      return;
    }
    this.probing = true;
    try {
      const reply = await kernel.requestCommInfo({ target_name: BEACON });
      const comms = (reply.content as JSONObject).comms ?? {};
      if (Object.keys(comms).length > 0 && kernel === this.kernel) {
        this.attach(kernel);
      }
    } catch {
      // The kernel went away meanwhile: the next status change probes again.
    } finally {
      this.probing = false;
    }
  }

  dispose(): void {
    this.comm?.close();
    this.detach();
    this.review.dispose();
  }

  /** Send a front-end event (a review outcome) if a comm is attached; false to keep it queued. */
  private sendEvent(data: JSONObject): boolean {
    if (!this.comm) {
      return false;
    }
    this.comm.send(data);
    return true;
  }

  private get kernel(): Kernel.IKernelConnection | null {
    return this.context.sessionContext.session?.kernel ?? null;
  }

  /** The kernel connected (again): listen for its hello, and probe once started. */
  private connected(): void {
    this.listenForHello();
    if (this.started) {
      void this.probe();
    }
  }

  private listenForHello(): void {
    const kernel = this.kernel;
    if (kernel) {
      this.hub.listenForHello(kernel);
    }
  }

  /** Open the comm to the kernel's `copilot_nb.live` target (the kernel has copilot_nb). */
  attach(kernel: Kernel.IKernelConnection): void {
    if (this.comm) {
      return;
    }
    const comm = kernel.createComm(TARGET);
    this.comm = comm;
    comm.onMsg = msg => this.onRequest(comm, msg);
    comm.onClose = () => {
      if (this.comm === comm) {
        this.detach();
      }
    };
    comm.open({
      protocol: PROTOCOL,
      path: this.context.path,
      server_root: PageConfig.getOption('serverRoot'),
      client: kernel.clientId,
      app: this.hub.appName
    });
    this.review.attached = true; // what the user decided while no kernel listened goes now
    this.hub.announce(this.context, true);
  }

  /** The comm is gone (closed, or died with its kernel). */
  private detach(): void {
    const had = this.comm !== null;
    this.comm = null;
    this.review.attached = false;
    if (had) {
      this.hub.announce(this.context, false);
    }
  }

  private reset(): void {
    this.detach(); // the old kernel's comm died with it
    this.listenForHello();
    if (this.started) {
      void this.probe();
    }
  }

  private onStatus(status: string): void {
    if (
      status === 'restarting' ||
      status === 'autorestarting' ||
      status === 'dead'
    ) {
      this.detach();
    }
  }

  /**
   * Probe again when a cell has run (it may have loaded copilot_nb): only after an execute
   * request, never after the probe's own request, so a kernel without copilot_nb is asked once
   * per cell run, not in a loop.
   */
  private onIopub(msg: KernelMessage.IMessage): void {
    const parent = msg.parent_header as Partial<KernelMessage.IHeader>;
    if (
      !this.comm &&
      msg.header.msg_type === 'status' &&
      (msg.content as JSONObject).execution_state === 'idle' &&
      parent?.msg_type === 'execute_request'
    ) {
      void this.probe();
    }
  }

  private sendPath(): void {
    this.comm?.send({ event: 'path', path: this.context.path });
  }

  private onRequest(comm: Kernel.IComm, msg: KernelMessage.ICommMsgMsg): void {
    const data = msg.content.data as JSONObject;
    if (data.event === 'kernel') {
      this.review.kernelIs(data.instance); // which kernel process holds a run's kept values
      return;
    }
    if (data.event === 'review_verified') {
      this.review.verified(data); // which review records the kernel vouches for
      return;
    }
    if (data.event === 'review_file_result') {
      this.review.fileResult(data); // the kernel's answer to a file's Keep or Undo
      return;
    }
    if (String(data.event).startsWith('run_block_')) {
      this.blocks.receive(data); // a code block's Run (blockRuns.ts)
      return;
    }
    if (data.reply === 'complete') {
      this.completions.receive(data); // completions while you type (inlineCompletions.ts)
      return;
    }
    const id = data.id;
    let reply: JSONObject;
    try {
      reply = { id, ok: true, result: this.ops.handle(data) };
    } catch (error) {
      const code = error instanceof RequestError ? error.code : 'error';
      reply = {
        id,
        ok: false,
        code,
        error: String((error as Error).message ?? error)
      };
      if (data.notify) {
        // Nobody awaits this reply (`%copilot undo`): tell the user here. Loaded only now, so
        // the page does not wait for it at start-up.
        const message = `copilot_nb: not undone, nothing changed: ${reply.error}`;
        void import('@jupyterlab/apputils').then(({ Notification }) =>
          Notification.warning(message, { autoClose: false })
        );
      }
    }
    comm.send(reply);
  }

  comm: Kernel.IComm | null = null;
  readonly review: ReviewDocument;
  readonly completions: CompletionChannel;
  readonly blocks: BlockRuns;
  private readonly ops: NotebookOps;
  private probing = false;
  private started = false;
}

/** Resolves when the browser has nothing more urgent to do (at most a few seconds later). */
function whenIdle(): Promise<void> {
  return new Promise(resolve => {
    if ('requestIdleCallback' in window) {
      window.requestIdleCallback(() => resolve(), { timeout: 3000 });
    } else {
      setTimeout(resolve, 500);
    }
  });
}

/**
 * Every open notebook document the live channel tracks, by context: provided to the other
 * plugins as `ICopilotLive`. A kernel's hello is listened for once per kernel connection.
 */
export class LiveDocuments implements ICopilotLive {
  constructor(readonly appName: string) {}

  readonly completionStatus = new CompletionStatus();

  get attachedChanged(): Signal<this, IAttachedChange> {
    return this._attachedChanged;
  }

  /** The document of this context, created the first time a view of it opens. */
  track(context: NotebookContext): LiveDocument {
    let doc = this.documents.get(context);
    if (!doc) {
      doc = new LiveDocument(context, this);
      this.documents.set(context, doc);
      context.disposed.connect(() => this.documents.delete(context));
    }
    return doc;
  }

  channelOf(context: NotebookContext): CompletionChannel | undefined {
    return this.documents.get(context)?.completions;
  }

  clearCompletionCaches(): void {
    this.documents.forEach(doc => doc.completions.clearCache());
  }

  /** Attach every document of this kernel when it says hello (it loaded copilot_nb). */
  listenForHello(kernel: Kernel.IKernelConnection): void {
    if (this.helloKernels.has(kernel)) {
      return;
    }
    this.helloKernels.add(kernel);
    kernel.registerCommTarget(HELLO, () => {
      for (const [context, doc] of this.documents) {
        if (context.sessionContext.session?.kernel === kernel && !doc.comm) {
          doc.attach(kernel);
        }
      }
    });
  }

  /** Tell the other plugins that a document attached or detached. */
  announce(context: NotebookContext, attached: boolean): void {
    this._attachedChanged.emit({ context, attached });
  }

  private readonly documents = new Map<NotebookContext, LiveDocument>();
  private readonly helloKernels = new WeakSet<Kernel.IKernelConnection>();
  private readonly _attachedChanged = new Signal<this, IAttachedChange>(this);
}
