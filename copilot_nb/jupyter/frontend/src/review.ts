/**
 * The agent's changes waiting for review in one open notebook document, and Keep / Undo.
 *
 * Everything here is derived from the notebook's own metadata, so a reload or reopening shows
 * the same review: a changed or inserted cell carries `metadata.copilot_nb.review` (`before`
 * is the cell as it was before the agent first touched it), a deleted cell is an entry of the
 * notebook's `copilot_nb.review_deleted`, a changed file one of `copilot_nb.review_files`.
 * Only records this user's kernel vouched for (signed with their key, `reviewProof.ts`) are
 * offered: a notebook from elsewhere can carry any metadata. Keep drops the record; Undo puts
 * back `before`'s source only, as an untrusted cell without outputs (`restoreCell`), through
 * the shared model's transactions, so the notebook's own undo history (Ctrl+Z in a cell, Z for
 * cells) has it.
 * Nothing waits for the kernel, so both work while it restarts; what the user decided goes to
 * the kernel as `{event: 'review', outcomes}`, queued until a comm is attached.
 *
 * A user who types in a cell under review has kept it: their keystroke is never touched, the
 * record is dropped after it, and the cell says so for a moment. The per-keystroke cost is one
 * map lookup, so a notebook with hundreds of cells under review types as fast as one without.
 */
import { INotebookModel } from '@jupyterlab/notebook';

import { JSONObject } from './changes';
import {
  By,
  dropRecord,
  fileKey,
  ICellReview,
  IDeletedReview,
  IFileReview,
  IOutcome,
  KEY,
  deletedOf,
  filesOf,
  placeOf,
  restoreCell,
  restoredCell,
  reviewOf,
  sourceOf
} from './reviewRecords';
import { Vouchers } from './reviewProof';
import {
  CellJSON,
  indexOfCell,
  ISharedCell,
  ISharedNotebook,
  metadataObject,
  undoManagerOf
} from './sharedCells';

export type { By, ICellReview, IDeletedReview, IFileReview, IOutcome };

/** Which cells to draw again: these ids, or everything (`null`: cells or notebook records). */
export type Listener = (ids: Set<string> | null) => void;

/** One open notebook document's review: state, Keep and Undo, and the outcomes for the kernel. */
export class ReviewDocument {
  constructor(
    private readonly model: INotebookModel,
    private readonly send: (data: JSONObject) => boolean
  ) {
    this.vouchers = new Vouchers(send, () => this.reread());
    const shared = this.shared;
    shared.changed.connect(this.onNotebookChanged, this);
    shared.metadataChanged.connect(this.onNotebookMetadata, this);
    this.rescan();
    this.readNotebook();
  }

  /** Cells under review by id (the record as parsed, replaced when its metadata changes). */
  readonly cells = new Map<string, ICellReview>();
  /** A short note a cell's bar shows for a while (kept by typing, an Undo refused). */
  readonly notes = new Map<string, string>();
  /** The deleted cells and files offered for review (vouched for by the kernel). */
  deleted: IDeletedReview[] = [];
  files: IFileReview[] = [];
  /** The notebook's lists as written, offered or not: what its writes build on. */
  private allDeleted: IDeletedReview[] = [];
  private allFiles: IFileReview[] = [];
  private readonly vouchers: Vouchers;
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

  /**
   * One Keep or Undo as its own step of the undo history: the notebook's and the cell's undo
   * managers stop merging (they merge what happens within half a second) before and after.
   */
  private step(f: () => void, cell?: ISharedCell): void {
    const managers = [undoManagerOf(this.shared), undoManagerOf(cell)].filter(
      manager => manager !== null
    );
    managers.forEach(manager => manager.stopCapturing());
    try {
      this.quietly(f);
    } finally {
      managers.forEach(manager => manager.stopCapturing());
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

  keep(id: string, by: By = 'button'): void {
    const review = this.cells.get(id);
    const cell = this.sharedCell(id);
    if (!review || !cell) {
      return;
    }
    const drop = () => cell.transact(() => dropRecord(cell));
    // Kept by typing joins the keystroke's history step (Ctrl+Z takes both back).
    if (by === 'typing') {
      this.quietly(drop);
    } else {
      this.step(drop, cell);
    }
    this.report({
      turn: review.turn,
      cell_id: id,
      kind: review.kind,
      outcome: 'kept',
      by
    });
  }

  undo(id: string, by: By = 'button'): void {
    const review = this.cells.get(id);
    const index = this.indexOf(id);
    if (!review || index < 0) {
      return;
    }
    const outcome = { turn: review.turn, cell_id: id, kind: review.kind, by };
    try {
      this.step(
        () => restoreCell(this.shared, index, review),
        this.shared.cells[index]
      );
      this.untrust(id);
    } catch (error) {
      const why = `could not restore the cell: ${String((error as Error).message ?? error)}`;
      this.notes.set(id, `Not undone: ${why}`);
      this.emit(new Set([id]));
      this.report({ ...outcome, outcome: 'refused', why });
      return;
    }
    this.report({ ...outcome, outcome: 'undone' });
  }

  keepDeleted(entry: IDeletedReview, by: By = 'button'): void {
    this.step(() =>
      this.shared.transact(() => this.writeDeleted(this.without(entry)))
    );
    const id = String(entry.before.id ?? '');
    this.report({
      turn: entry.turn,
      cell_id: id,
      kind: 'delete',
      outcome: 'kept',
      by
    });
  }

  undoDeleted(entry: IDeletedReview, by: By = 'button'): void {
    const id = String(entry.before.id ?? '');
    let back: string | null = null;
    this.step(() =>
      this.shared.transact(() => {
        if (this.indexOf(id) < 0) {
          const cell = restoredCell(entry, taken => this.indexOf(taken) >= 0);
          const at = placeOf(this.shared, this.deleted, entry);
          back = this.shared.insertCell(at, cell as CellJSON).getId();
        }
        this.writeDeleted(this.without(entry));
      })
    );
    if (back) {
      this.untrust(back);
    }
    this.report({
      turn: entry.turn,
      cell_id: id,
      kind: 'delete',
      outcome: 'undone',
      by
    });
  }

  keepAll(): void {
    this.orderedIds().forEach(id => this.keep(id, 'all'));
    [...this.deleted].forEach(entry => this.keepDeleted(entry, 'all'));
    [...this.files].forEach(file => this.decideFile(file, 'keep'));
  }

  /** Edits first (in place), then inserted cells, then deleted ones back (a chain in order). */
  undoAll(): void {
    const ids = this.orderedIds();
    ids
      .filter(id => this.cells.get(id)?.kind !== 'insert')
      .forEach(id => this.undo(id, 'all'));
    ids
      .filter(id => this.cells.get(id)?.kind === 'insert')
      .forEach(id => this.undo(id, 'all'));
    let pending = [...this.deleted];
    while (pending.length) {
      const ready = pending.filter(
        e => !e.after_id || this.indexOf(e.after_id) >= 0
      );
      const next = ready.length ? ready[0] : pending[0];
      this.undoDeleted(next, 'all');
      pending = pending.filter(e => e !== next);
    }
    [...this.files].forEach(file => this.decideFile(file, 'undo'));
  }

  /** Keep a file's change (dropped at once) or ask the kernel to restore it from its checkpoint. */
  decideFile(file: IFileReview, outcome: 'keep' | 'undo'): void {
    const id = this.nextFileRequest++;
    this.fileRequests.set(id, file);
    this.queue.push({
      event: 'review_file',
      id,
      turn: file.turn,
      path: file.path,
      outcome
    });
    this.flush();
    if (outcome === 'keep') {
      this.dropFile(file);
    } else {
      this.fileNotes.set(
        fileKey(file),
        this.attached ? 'Undoing…' : 'Undo waits for the kernel…'
      );
      this.emit(null);
    }
  }

  /** The kernel's answer to `review_verify`: which records it vouches for. */
  verified(data: JSONObject): void {
    this.vouchers.answer(data);
  }

  /** The kernel's answer to a file's Undo: the entry goes, or the note says why not. */
  fileResult(data: JSONObject): void {
    const file = this.fileRequests.get(data.id);
    this.fileRequests.delete(data.id);
    if (!file) {
      return;
    }
    if (data.ok) {
      this.fileNotes.delete(fileKey(file));
      this.dropFile(file);
    } else {
      this.fileNotes.set(
        fileKey(file),
        `Not undone: ${String(data.why ?? 'refused')}`
      );
      this.emit(null);
    }
  }

  /** The kernel's `review_files` request: list these files for review (same turn and path once). */
  addFiles(files: JSONObject[]): JSONObject {
    files = (files ?? []).filter(f => f && typeof f.path === 'string');
    const given: IFileReview[] = files.map(f => ({
      turn: String(f.turn ?? ''),
      path: f.path as string,
      diff: String(f.diff ?? ''),
      kind: String(f.kind ?? 'edit')
    }));
    given.forEach((f: IFileReview, i) => {
      if (typeof files[i].sig === 'string') {
        f.sig = files[i].sig;
      }
    });
    const keys = new Set(given.map(fileKey));
    const kept = this.allFiles.filter(f => !keys.has(fileKey(f)));
    this.writeNotebook('review_files', [...kept, ...given]);
    return { files: kept.length + given.length };
  }

  /** Part of a kernel's `delete` change: the deleted cell's record, in the same transaction. */
  recordDeleted(review: JSONObject, index: number, cell: JSONObject): void {
    const entry: IDeletedReview = {
      turn: String(review.turn ?? ''),
      before: (review.before as JSONObject) ?? cell,
      after_id: (review.after_id as string) ?? null,
      index
    };
    if (typeof review.sig === 'string') {
      entry.sig = review.sig;
    }
    this.writeDeleted([...this.allDeleted, entry]);
  }

  /** The comm is attached (again): send what waited. */
  set attached(value: boolean) {
    this.isAttached = value;
    this.vouchers.attached = value;
    if (value) {
      this.flush();
    }
  }

  get attached(): boolean {
    return this.isAttached;
  }

  dispose(): void {
    this.shared.changed.disconnect(this.onNotebookChanged, this);
    this.shared.metadataChanged.disconnect(this.onNotebookMetadata, this);
    this.listeners.clear();
  }

  // --- reading the model ----------------------------------------------------------------------

  private get shared(): ISharedNotebook {
    return this.model.sharedModel;
  }

  private sharedCell(id: string): ISharedCell | null {
    const index = this.indexOf(id);
    return index < 0 ? null : this.shared.cells[index];
  }

  private indexOf(id: string): number {
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
    this.readNotebook();
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
    if (had && !now && !this.quiet) {
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
    this.emit(new Set([id]));
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
      this.readNotebook();
      this.emit(null);
    }
  }

  private readNotebook(): void {
    this.readLists(metadataObject(this.shared, KEY));
  }

  /** The notebook's lists as written (`all…`), and what of them is offered (vouched for). */
  private readLists(meta: JSONObject): void {
    this.allDeleted = deletedOf(meta);
    this.allFiles = filesOf(meta);
    this.deleted = this.allDeleted.filter(e =>
      this.vouchers.vouched({ kind: 'deleted', record: e })
    );
    this.files = this.allFiles.filter(f =>
      this.vouchers.vouched({ kind: 'file', record: f })
    );
  }

  /** A cell an Undo put back renders its outputs as untrusted (it has none, and stays so). */
  private untrust(id: string): void {
    const index = this.indexOf(id);
    const cell = index < 0 ? null : this.model.cells.get(index);
    if (cell) {
      cell.trusted = false;
    }
  }

  // --- changing the model ---------------------------------------------------------------------

  private without(entry: IDeletedReview): IDeletedReview[] {
    const id = entry.before.id;
    return this.allDeleted.filter(
      e => e !== entry && !(e.turn === entry.turn && e.before.id === id)
    );
  }

  private writeDeleted(entries: IDeletedReview[]): void {
    this.writeNotebook('review_deleted', entries);
  }

  private dropFile(file: IFileReview): void {
    const key = fileKey(file);
    this.fileNotes.delete(key);
    this.quietly(() =>
      this.shared.transact(() =>
        this.writeNotebook(
          'review_files',
          this.allFiles.filter(f => fileKey(f) !== key)
        )
      )
    );
  }

  /** Set (or drop, when empty) one list of the notebook's `copilot_nb` metadata. */
  private writeNotebook(name: string, value: unknown[]): void {
    const meta: JSONObject = { ...metadataObject(this.shared, KEY) };
    if (value.length) {
      meta[name] = value;
    } else {
      delete meta[name];
    }
    if (Object.keys(meta).length) {
      this.shared.setMetadata(KEY, meta);
    } else {
      this.shared.deleteMetadata(KEY);
    }
    // Read back at once: inside a transaction the change is announced only when it ends, and
    // a second record in the same transaction must build on this one.
    this.readLists(meta);
  }

  // --- telling the kernel and the views -------------------------------------------------------

  private report(outcome: IOutcome): void {
    if (!outcome.why) {
      delete outcome.why;
    }
    this.outcomes.push(outcome);
    queueMicrotask(() => {
      if (this.outcomes.length) {
        this.queue.push({ event: 'review', outcomes: this.outcomes.splice(0) });
        this.flush();
      }
    });
  }

  private flush(): void {
    while (this.isAttached && this.queue.length) {
      if (!this.send(this.queue[0])) {
        return;
      }
      this.queue.shift();
    }
  }

  private emit(ids: Set<string> | null): void {
    this.listeners.forEach(listener => listener(ids));
  }

  private readonly listeners = new Set<Listener>();
  private readonly watched = new WeakSet<object>();
  private readonly outcomes: IOutcome[] = [];
  private readonly queue: JSONObject[] = [];
  private readonly fileRequests = new Map<number, IFileReview>();
  private nextFileRequest = 1;
  private isAttached = false;
  private quiet = 0;
}
