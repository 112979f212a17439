/**
 * What waits for review in one open notebook document, read from the notebook's own metadata
 * and followed as the model changes: the cells under review, the deleted cells and changed
 * files (`reviewLists.ts`), notes for the views, and what the user's own edits decide (typing
 * in a cell under review keeps it; removing an inserted one undoes it). Keep and Undo are
 * `ReviewDocument`'s (`review.ts`); what goes to the kernel is `reviewOutbox.ts`'s.
 */
import { INotebookModel } from '@jupyterlab/notebook';

import { JSONObject } from './changes';
import { ReviewLists } from './reviewLists';
import { ReviewOutbox } from './reviewOutbox';
import {
  By,
  ICellReview,
  IDeletedReview,
  IFileReview,
  IOutcome,
  KEY,
  reviewOf,
  sourceOf
} from './reviewRecords';
import { Vouchers } from './reviewProof';
import { indexOfCell, ISharedCell, ISharedNotebook } from './sharedCells';

/** Which cells to draw again: these ids, or everything (`null`: cells or notebook records). */
export type Listener = (ids: Set<string> | null) => void;

/** One open notebook document's review state, followed as the model changes. */
export abstract class ReviewState {
  constructor(
    protected readonly model: INotebookModel,
    send: (data: JSONObject) => boolean
  ) {
    this.outbox = new ReviewOutbox(send);
    this.vouchers = new Vouchers(send, () => this.reread());
    this.lists = new ReviewLists(() => this.shared, this.vouchers);
    const shared = this.shared;
    shared.changed.connect(this.onNotebookChanged, this);
    shared.metadataChanged.connect(this.onNotebookMetadata, this);
    this.rescan();
    this.lists.read();
  }

  /** Keep one cell's change (the user typed in it: `typing`). */
  abstract keep(id: string, by?: By): void;

  /** Cells under review by id (the record as parsed, replaced when its metadata changes). */
  readonly cells = new Map<string, ICellReview>();
  /** A short note a cell's bar shows for a while (kept by typing, an Undo refused). */
  readonly notes = new Map<string, string>();
  /** The deleted cells and files offered for review (vouched for by the kernel). */
  get deleted(): IDeletedReview[] {
    return this.lists.deleted;
  }

  get files(): IFileReview[] {
    return this.lists.files;
  }

  /** Notes on files, by `turn path` (an Undo the kernel refused, one under way). */
  readonly fileNotes = new Map<string, string>();

  listen(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Run `f` (a kernel's apply, our own Keep or Undo) without reading it as the user's typing. */
  quietly<T>(f: () => T): T {
    this.quiet++;
    try {
      return f();
    } finally {
      this.quiet--;
    }
  }

  /** Ids of the cells under review, in the notebook's order. */
  orderedIds(): string[] {
    return this.shared.cells
      .map(cell => cell.getId())
      .filter((id: string) => this.cells.has(id));
  }

  /** How many changes wait: cells (changed, inserted or deleted) and files. */
  counts(): { cells: number; files: number } {
    return {
      cells: this.cells.size + this.deleted.length,
      files: this.files.length
    };
  }

  /**
   * The attached kernel process (`{event: 'kernel', instance}`, sent as the comm opens; null
   * while none is): what a ran cell's Undo can still put back in the kernel depends on it.
   */
  kernel: string | null = null;

  /** The kernel said which process it is. */
  kernelIs(instance: unknown): void {
    this.kernel = typeof instance === 'string' && instance ? instance : null;
    this.emit(null);
  }

  /** The kernel's answer to `review_verify`: which records it vouches for. */
  verified(data: JSONObject): void {
    this.vouchers.answer(data);
  }

  /** The kernel's `review_files` request: list these files for review (same turn and path once). */
  addFiles(files: JSONObject[]): JSONObject {
    return this.lists.addFiles(files);
  }

  /** Part of a kernel's `delete` change: the deleted cell's record, in the same transaction. */
  recordDeleted(review: JSONObject, index: number, cell: JSONObject): void {
    this.lists.recordDeleted(review, index, cell);
  }

  /** The comm is attached (again): send what waited. Detached, its kernel is gone. */
  set attached(value: boolean) {
    this.outbox.attached = value;
    this.vouchers.attached = value;
    if (!value && this.kernel !== null) {
      this.kernel = null;
      this.emit(null);
    }
  }

  get attached(): boolean {
    return this.outbox.attached;
  }

  dispose(): void {
    this.shared.changed.disconnect(this.onNotebookChanged, this);
    this.shared.metadataChanged.disconnect(this.onNotebookMetadata, this);
    this.listeners.clear();
  }

  // --- reading the model ----------------------------------------------------------------------

  protected get shared(): ISharedNotebook {
    return this.model.sharedModel;
  }

  protected sharedCell(id: string): ISharedCell | null {
    const index = this.indexOf(id);
    return index < 0 ? null : this.shared.cells[index];
  }

  protected indexOf(id: string): number {
    return indexOfCell(this.shared, id);
  }

  /** Follow a cells' order change: watch new cells, notice reviewed cells that went away. */
  private onNotebookChanged(_: unknown, change: JSONObject): void {
    if (change.cellsChange) {
      this.rescan();
      this.emit(null);
    }
  }

  private rescan(): void {
    const present = new Set<string>();
    for (const cell of this.shared.cells) {
      const id = cell.getId();
      present.add(id);
      if (!this.watched.has(cell)) {
        this.watched.add(cell);
        cell.changed.connect(this.onCellChanged, this);
        cell.metadataChanged.connect(this.onCellMetadata, this);
        this.readCell(cell);
      }
    }
    for (const [id, review] of this.cells) {
      if (!present.has(id)) {
        this.cells.delete(id);
        // A cell moved is removed and inserted again; only one still gone was taken away.
        if (!this.quiet) {
          setTimeout(() => this.gone(id, review), 0);
        }
      }
    }
  }

  /** A reviewed cell the user removed (or Z took back): an insert is undone, an edit kept. */
  private gone(id: string, review: ICellReview): void {
    if (this.indexOf(id) >= 0) {
      return;
    }
    const outcome = review.kind === 'insert' ? 'undone' : 'kept';
    this.report({
      turn: review.turn,
      cell_id: id,
      kind: review.kind,
      outcome,
      by: 'typing'
    });
  }

  /** The kernel vouched for more records: read every one again. */
  private reread(): void {
    for (const cell of this.shared.cells) {
      this.readCell(cell);
    }
    this.lists.read();
    this.emit(null);
  }

  /** A cell's record, if well formed and vouched for by this user's kernel. */
  private readCell(cell: ISharedCell): boolean {
    const id = cell.getId();
    const parsed = reviewOf(cell.getMetadata(KEY));
    const item = parsed && {
      kind: 'cell' as const,
      cell_id: id,
      record: parsed.record
    };
    const review = item && this.vouchers.vouched(item) ? parsed : null;
    const had = this.cells.get(id);
    if (review) {
      this.cells.set(id, review);
    } else {
      this.cells.delete(id);
    }
    return !!had !== !!review || (!!had && !!review);
  }

  private onCellMetadata(cell: ISharedCell, change: JSONObject): void {
    if (change.key !== KEY) {
      return;
    }
    const id = cell.getId();
    const had = this.cells.get(id);
    this.readCell(cell);
    const now = this.cells.get(id);
    // A record replaced by one the kernel has not vouched for yet (the agent wrote it) is no
    // decision; only one taken away is.
    const gone = had && !now && !reviewOf(cell.getMetadata(KEY));
    if (gone && !this.quiet) {
      // The user's history took the record away (Ctrl+Z of the agent's edit), or they did.
      const undone = had.before && cell.getSource() === sourceOf(had.before);
      const outcome = undone ? 'undone' : 'kept';
      this.report({
        turn: had.turn,
        cell_id: id,
        kind: had.kind,
        outcome,
        by: 'typing'
      });
    }
    // One cell more or fewer under review: the notebook's count is drawn again too.
    this.emit(!had !== !now ? null : new Set([id]));
  }

  /** The user typed in a cell under review: it is kept (after the keystroke, never instead). */
  private onCellChanged(cell: ISharedCell, change: JSONObject): void {
    if (!change.sourceChange) {
      return;
    }
    const id = cell.getId();
    if (!this.cells.has(id)) {
      return;
    }
    if (this.quiet || change.metadataChange?.has(KEY)) {
      // The agent changed it again, or the history (Ctrl+Z) brought a change back with its
      // record: not typing; its diff is drawn again.
      this.emit(new Set([id]));
      return;
    }
    queueMicrotask(() => {
      if (this.cells.has(id)) {
        this.keep(id, 'typing');
        this.notes.set(id, 'Kept: you edited this cell.');
        this.emit(new Set([id]));
        setTimeout(() => {
          this.notes.delete(id);
          this.emit(new Set([id]));
        }, 6000);
      }
    });
  }

  private onNotebookMetadata(_: unknown, change: JSONObject): void {
    if (change.key === KEY) {
      this.lists.read();
      this.emit(null);
    }
  }

  // --- telling the kernel and the views -------------------------------------------------------

  protected report(outcome: IOutcome): void {
    this.outbox.report(outcome);
  }

  protected emit(ids: Set<string> | null): void {
    this.listeners.forEach(listener => listener(ids));
  }

  protected readonly outbox: ReviewOutbox;
  private readonly vouchers: Vouchers;
  protected readonly lists: ReviewLists;
  private readonly listeners = new Set<Listener>();
  private readonly watched = new WeakSet<object>();
  private quiet = 0;
}
