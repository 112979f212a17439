/**
 * The review records the agent's changes leave in a notebook's metadata, read as data, and
 * what Undo puts back from them: a changed or inserted cell's `metadata.copilot_nb.review`
 * (`before` is the cell as it was before the agent first touched it), the notebook's
 * `copilot_nb.review_deleted` and `copilot_nb.review_files`. Anything malformed is left out,
 * never trusted: the records come from the kernel, and from whoever wrote the file. Each record
 * carries the kernel's signature (`sig`), which only the kernel can check (`review.ts` asks it);
 * and whatever a record says, Undo puts back source text only, in an untrusted cell without
 * outputs: never trust, outputs, attachments or another cell type from a record.
 */
import { JSONObject } from './changes';
import {
  clearOutputs,
  indexOfCell,
  ISharedCell,
  ISharedNotebook,
  metadataObject
} from './sharedCells';

export const KEY = 'copilot_nb';

/** The review record of one changed, inserted or run cell (`metadata.copilot_nb.review`). */
export interface ICellReview {
  turn: string;
  kind: 'edit' | 'insert' | 'run';
  before: JSONObject | null;
  ran: boolean;
  /** The record as the metadata holds it (what the kernel is asked to vouch for). */
  record: JSONObject;
}

/** A cell the agent deleted, waiting for review (`copilot_nb.review_deleted` of the notebook). */
export interface IDeletedReview {
  turn: string;
  before: JSONObject;
  after_id: string | null;
  index?: number;
  sig?: string;
}

/** A file the agent changed, waiting for review (`copilot_nb.review_files` of the notebook). */
export interface IFileReview {
  turn: string;
  path: string;
  diff: string;
  kind: string;
  sig?: string;
}

export type By = 'button' | 'typing' | 'all';

/** What the user decided about one change, as the kernel's review ledger records it. */
export interface IOutcome {
  turn: string;
  cell_id: string;
  kind: string;
  outcome: 'kept' | 'undone' | 'refused';
  why?: string;
  by: By;
}

/** The review record in a cell's `copilot_nb` metadata, if it is well formed. */
export function reviewOf(meta: unknown): ICellReview | null {
  const review = (meta as JSONObject | undefined)?.review;
  if (
    !review ||
    typeof review !== 'object' ||
    !['edit', 'insert', 'run'].includes(review.kind)
  ) {
    return null;
  }
  const before =
    review.before && typeof review.before === 'object' ? review.before : null;
  if (review.kind !== 'insert' && !before) {
    return null;
  }
  const turn = String(review.turn ?? '');
  return { turn, kind: review.kind, before, ran: !!review.ran, record: review };
}

/** What a bar says of a cell's Undo and the kernel ('' for a cell that did not run). */
export const NO_ROLLBACK = 'Undo does not roll back the kernel\u2019s state';
export const KERNEL_GONE =
  'The kernel restarted since the run, and the variables kept for Undo went with it: ' +
  'Undo puts back the cell only';

/**
 * What a ran cell's bar says its Undo does in the kernel: the kernel's own words (the values it
 * kept before the run) while the kernel process that kept them (`instance`) is the one
 * attached; once it is gone (restarted, or none attached), that the cell only comes back.
 */
export function kernelNote(review: ICellReview, kernel: string | null): string {
  if (!review.ran && review.kind !== 'run') {
    return '';
  }
  const kept = review.record.kernel;
  if (typeof kept !== 'string' || !kept) {
    return NO_ROLLBACK;
  }
  const from = review.record.instance;
  const gone = typeof from === 'string' && from !== '' && from !== kernel;
  return gone ? KERNEL_GONE : kept;
}

/** A cell's source as one string (nbformat allows a list of lines). */
export function sourceOf(cell: JSONObject | null | undefined): string {
  const source = cell?.source ?? '';
  return Array.isArray(source) ? source.join('') : String(source);
}

/** The deleted cells waiting for review, from the notebook's `copilot_nb` metadata. */
export function deletedOf(meta: JSONObject): IDeletedReview[] {
  const deleted = Array.isArray(meta.review_deleted) ? meta.review_deleted : [];
  return deleted.filter(
    (e: JSONObject | null) => e && e.before && typeof e.before === 'object'
  );
}

/** The changed files waiting for review, from the notebook's `copilot_nb` metadata. */
export function filesOf(meta: JSONObject): IFileReview[] {
  const files = Array.isArray(meta.review_files) ? meta.review_files : [];
  return files.filter(
    (f: JSONObject | null) => f && typeof f.path === 'string'
  );
}

/** The cell types a deleted cell can come back as (anything else comes back as raw text). */
const CELL_TYPES = ['code', 'markdown', 'raw'];
/** An id a deleted cell may keep (nbformat's own pattern); any other gets a new one. */
const CELL_ID = /^[a-zA-Z0-9-_]{1,64}$/;

/**
 * Undo of a changed cell: its source as `before` had it, in the cell's current type, with no
 * outputs and no trust (an inserted cell is taken away). The record's other fields (metadata,
 * outputs, a different type) are never put back: a record can come from anyone's file.
 */
export function restoreCell(
  shared: ISharedNotebook,
  index: number,
  review: ICellReview
): void {
  const cell = shared.cells[index];
  const before = review.before;
  if (review.kind === 'insert' || !before) {
    shared.transact(() => shared.deleteCell(index));
    return;
  }
  cell.transact(() => {
    cell.setSource(sourceOf(before));
    cell.deleteMetadata(KEY); // the agent's stamp and this record
    cell.deleteMetadata('trusted');
    clearOutputs(cell);
  });
}

/** The cell an Undo of a deletion inserts: the record's source only, never trusted. */
export function restoredCell(
  entry: IDeletedReview,
  taken: (id: string) => boolean
): JSONObject {
  const type = String(entry.before.cell_type ?? '');
  const cell: JSONObject = {
    cell_type: CELL_TYPES.includes(type) ? type : 'raw',
    source: sourceOf(entry.before),
    metadata: {}
  };
  const id = entry.before.id;
  if (typeof id === 'string' && CELL_ID.test(id) && !taken(id)) {
    cell.id = id;
  }
  if (cell.cell_type === 'code') {
    cell.outputs = [];
    cell.execution_count = null;
  }
  return cell;
}

/** A cell's metadata without its review record (the stamp stays). */
export function dropRecord(cell: ISharedCell): void {
  const meta = metadataObject(cell, KEY);
  if (!('review' in meta)) {
    return;
  }
  const rest = { ...meta };
  delete rest.review;
  if (Object.keys(rest).length) {
    cell.setMetadata(KEY, rest);
  } else {
    cell.deleteMetadata(KEY);
  }
}

export function fileKey(file: IFileReview): string {
  return `${file.turn} ${file.path}`;
}

/** Where a deleted cell goes back: after its neighbour, else where that one would, else its old index. */
export function placeOf(
  shared: ISharedNotebook,
  deleted: IDeletedReview[],
  entry: IDeletedReview,
  seen = new Set<IDeletedReview>()
): number {
  if (!entry.after_id) {
    return 0;
  }
  const above = indexOfCell(shared, entry.after_id);
  if (above >= 0) {
    return above + 1;
  }
  const chained = deleted.find(e => e.before.id === entry.after_id);
  if (chained && !seen.has(chained)) {
    seen.add(entry);
    return placeOf(shared, deleted, chained, seen);
  }
  return Math.min(entry.index ?? 0, shared.cells.length);
}
