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
 * error, code}` back. Ops: `snapshot` (every cell as nbformat JSON, plus which cell runs now),
 * `apply` (a list of changes all checked first, then made through the undo history the user's
 * own keys take back), `set_outputs` (a cell's outputs and execution
 * count). A change names the source it expects a cell to have; if the user changed the cell
 * meanwhile, nothing is changed and the reply says `conflict`. A request marked `notify` (an
 * undo nobody waits for) shows a failure as a notification instead.
 *
 * Everything received is data: sources and outputs go into the model, where JupyterLab's own
 * renderers and sanitizer treat them as they treat any notebook content.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { PageConfig } from '@jupyterlab/coreutils';
import { DocumentRegistry } from '@jupyterlab/docregistry';
import {
  INotebookModel,
  INotebookTracker,
  NotebookPanel
} from '@jupyterlab/notebook';
import { Kernel, KernelMessage } from '@jupyterlab/services';

import { check, ICellChange, JSONObject, RequestError } from './changes';
import { ReviewDocument } from './review';
import { ReviewView } from './reviewView';
import { CompletionChannel } from './completionChannel';
import { inlineCompletionsPlugin } from './inlineCompletions';

const TARGET = 'copilot_nb.live';
const BEACON = 'copilot_nb.beacon';
const HELLO = 'copilot_nb.hello';
const PROTOCOL = 1;

/** One open notebook document and its channel to the kernel that serves it. */
class LiveDocument {
  constructor(
    private readonly context: DocumentRegistry.IContext<INotebookModel>,
    private readonly appName: string
  ) {
    this.review = new ReviewDocument(context.model, data =>
      this.sendEvent(data)
    );
    this.completions = new CompletionChannel(context, () => this.comm);
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
    this.comm = null;
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
    if (!kernel || helloKernels.has(kernel)) {
      return;
    }
    helloKernels.add(kernel);
    kernel.registerCommTarget(HELLO, () => {
      for (const doc of documentsOf(kernel)) {
        if (!doc.comm) {
          doc.attach(kernel);
        }
      }
    });
  }

  private attach(kernel: Kernel.IKernelConnection): void {
    if (this.comm) {
      return;
    }
    const comm = kernel.createComm(TARGET);
    this.comm = comm;
    comm.onMsg = msg => this.onRequest(comm, msg);
    comm.onClose = () => {
      if (this.comm === comm) {
        this.comm = null;
        this.review.attached = false;
      }
    };
    comm.open({
      protocol: PROTOCOL,
      path: this.context.path,
      server_root: PageConfig.getOption('serverRoot'),
      client: kernel.clientId,
      app: this.appName
    });
    this.review.attached = true; // what the user decided while no kernel listened goes now
  }

  private reset(): void {
    this.comm = null; // the old kernel's comm died with it
    this.review.attached = false;
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
      this.comm = null;
      this.review.attached = false;
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
    if (data.event === 'review_verified') {
      this.review.verified(data); // which review records the kernel vouches for
      return;
    }
    if (data.event === 'review_file_result') {
      this.review.fileResult(data); // the kernel's answer to a file's Keep or Undo
      return;
    }
    if (data.reply === 'complete') {
      this.completions.receive(data); // completions while you type (inlineCompletions.ts)
      return;
    }
    const id = data.id;
    let reply: JSONObject;
    try {
      reply = { id, ok: true, result: this.handle(data) };
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

  private handle(data: JSONObject): JSONObject {
    switch (data.op) {
      case 'snapshot':
        return this.snapshot();
      case 'apply':
        return this.apply(data.changes as ICellChange[]);
      case 'set_outputs':
        return this.setOutputs(data);
      case 'review_files':
        return this.review.addFiles(data.files);
      default:
        throw new RequestError(
          `unknown op ${JSON.stringify(data.op)}`,
          'bad_request'
        );
    }
  }

  private get model(): INotebookModel {
    const model = this.context.model;
    if (!model) {
      throw new RequestError('the notebook is not loaded', 'gone');
    }
    return model;
  }

  private snapshot(): JSONObject {
    const model = this.model;
    const cells = [];
    for (let i = 0; i < model.cells.length; i++) {
      const cell = model.cells.get(i);
      const json = cell.toJSON() as JSONObject;
      json.running = (cell as JSONObject).executionState === 'running';
      cells.push(json);
    }
    return { path: this.context.path, dirty: model.dirty, cells };
  }

  private indexOf(cellId: string): number {
    const cells = this.model.sharedModel.cells;
    const index = cells.findIndex(cell => cell.getId() === cellId);
    if (index < 0) {
      throw new RequestError(
        `no cell with id ${cellId} in the open notebook`,
        'missing'
      );
    }
    return index;
  }

  /**
   * Check the changes in order against a dry run of the cells' ids and sources (a change may
   * build on an earlier one: an undo re-inserts a cell, then restores its source), then make
   * them all. One refused change changes nothing.
   */
  private apply(changes: ICellChange[]): JSONObject {
    const shared = this.model.sharedModel;
    const dryRun = shared.cells.map(cell => ({
      id: cell.getId(),
      source: cell.getSource()
    }));
    changes.forEach(change => check(dryRun, change));
    // The agent's own changes: not the user typing in a cell under review.
    return this.review.quietly(() => this.applyChecked(changes));
  }

  private applyChecked(changes: ICellChange[]): JSONObject {
    const shared = this.model.sharedModel;
    // Checked, then made with no await in between (nothing the user types can land in the
    // middle). Each change goes through the undo history the user's own key takes back: cells
    // added or removed through the notebook's (Z), a cell's text through that cell's (Ctrl+Z).
    for (const change of changes) {
      if (change.kind === 'set_source') {
        const cell = shared.cells[this.indexOf(change.cell_id ?? '')];
        cell.transact(() => this.applyOne(change));
      } else {
        shared.transact(() => this.applyOne(change));
      }
    }
    return { applied: changes.length, cells: shared.cells.length };
  }

  private applyOne(change: ICellChange): void {
    const shared = this.model.sharedModel;
    if (change.kind === 'insert') {
      const at = change.after_id ? this.indexOf(change.after_id) + 1 : 0;
      shared.insertCell(at, change.cell as any);
      return;
    }
    const index = this.indexOf(change.cell_id ?? '');
    if (change.kind === 'delete') {
      const cell = shared.cells[index].toJSON() as JSONObject;
      shared.deleteCell(index);
      if (change.review) {
        // Review mode: the deleted cell waits for review in the notebook's metadata, written
        // in this same transaction (a reload shows its placeholder again).
        this.review.recordDeleted(change.review, index, cell);
      }
      return;
    }
    const cell = shared.cells[index] as any;
    cell.setSource(change.source ?? '');
    if (change.cell) {
      // Undo: the cell as it was, metadata and outputs included.
      const metadata: JSONObject = change.cell.metadata ?? {};
      for (const key of Object.keys(cell.getMetadata())) {
        if (!(key in metadata)) {
          cell.deleteMetadata(key);
        }
      }
      cell.setMetadata(metadata);
      if (cell.cell_type === 'code') {
        cell.setOutputs(change.cell.outputs ?? []);
        cell.execution_count = change.cell.execution_count ?? null;
      }
      return;
    }
    if (change.metadata) {
      for (const [key, value] of Object.entries(change.metadata)) {
        cell.setMetadata(key, value);
      }
    }
    if (change.clear_outputs && cell.cell_type === 'code') {
      cell.setOutputs([]);
      cell.execution_count = null;
    }
  }

  private setOutputs(data: JSONObject): JSONObject {
    const shared = this.model.sharedModel;
    const index = this.indexOf(data.cell_id);
    const cell = shared.cells[index] as any;
    if (cell.cell_type !== 'code') {
      throw new RequestError(
        `cell ${data.cell_id} is not a code cell`,
        'bad_request'
      );
    }
    if (data.expected !== undefined && cell.getSource() !== data.expected) {
      throw new RequestError(
        `cell ${data.cell_id} changed in the open notebook`,
        'conflict'
      );
    }
    // Outputs the agent puts in a cell render as untrusted (HTML sanitized, no script) until
    // the user runs the cell themselves: they did not see the code run.
    this.model.cells.get(index).trusted = false;
    cell.transact(() => {
      cell.setOutputs(data.outputs ?? []);
      cell.execution_count = data.execution_count ?? null;
      for (const [key, value] of Object.entries(
        (data.metadata as JSONObject) ?? {}
      )) {
        cell.setMetadata(key, value);
      }
    }, false);
    return { index };
  }

  comm: Kernel.IComm | null = null;
  readonly review: ReviewDocument;
  readonly completions: CompletionChannel;
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

const documents = new Map<
  DocumentRegistry.IContext<INotebookModel>,
  LiveDocument
>();
const helloKernels = new WeakSet<Kernel.IKernelConnection>();

function documentsOf(kernel: Kernel.IKernelConnection): LiveDocument[] {
  return [...documents.entries()]
    .filter(([context]) => context.sessionContext.session?.kernel === kernel)
    .map(([, doc]) => doc);
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'copilot-nb:live',
  description:
    'Lets the copilot_nb agent in the kernel read and edit the open notebook.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker) => {
    const track = (panel: NotebookPanel) => {
      const context = panel.context;
      if (!documents.has(context)) {
        documents.set(context, new LiveDocument(context, app.name));
        context.disposed.connect(() => documents.delete(context));
      }
      // every view shows the document's review (another view shares the document's channel)
      new ReviewView(panel, documents.get(context)!.review);
    };
    tracker.forEach(track);
    tracker.widgetAdded.connect((_, panel) => track(panel));
  }
};

export default [plugin, inlineCompletionsPlugin];
