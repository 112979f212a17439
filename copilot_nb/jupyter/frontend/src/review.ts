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
import { JSONObject } from './changes';
import {
  By,
  dropRecord,
  fileKey,
  ICellReview,
  IDeletedReview,
  IFileReview,
  IOutcome,
  placeOf,
  restoreCell,
  restoredCell
} from './reviewRecords';
import { Listener, ReviewState } from './reviewState';
import { CellJSON, ISharedCell, undoManagerOf } from './sharedCells';

export type {
  By,
  ICellReview,
  IDeletedReview,
  IFileReview,
  IOutcome,
  Listener
};

/** One open notebook document's review: Keep and Undo on its state (`reviewState.ts`). */
export class ReviewDocument extends ReviewState {
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
    this.step(() => this.shared.transact(() => this.lists.dropDeleted(entry)));
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
        this.lists.dropDeleted(entry);
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
    this.outbox.decideFile(file, outcome);
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

  /** The kernel's answer to a file's Undo: the entry goes, or the note says why not. */
  fileResult(data: JSONObject): void {
    const file = this.outbox.answered(data.id);
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

  /** A cell an Undo put back renders its outputs as untrusted (it has none, and stays so). */
  private untrust(id: string): void {
    const index = this.indexOf(id);
    const cell = index < 0 ? null : this.model.cells.get(index);
    if (cell) {
      cell.trusted = false;
    }
  }

  private dropFile(file: IFileReview): void {
    this.fileNotes.delete(fileKey(file));
    this.quietly(() => this.shared.transact(() => this.lists.dropFile(file)));
  }
}
