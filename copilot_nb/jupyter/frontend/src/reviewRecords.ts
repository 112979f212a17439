/**
 * The review records the agent's changes leave in a notebook's metadata, read as data, and
 * what Undo puts back from them: a changed or inserted cell's `metadata.copilot_nb.review`
 * (`before` is the cell as it was before the agent first touched it), the notebook's
 * `copilot_nb.review_deleted` and `copilot_nb.review_files`. Anything malformed is left out,
 * never trusted: the records come from the kernel, and from whoever wrote the file.
 */
import { JSONObject } from './changes';

export const KEY = 'copilot_nb';

/** The review record of one changed, inserted or run cell (`metadata.copilot_nb.review`). */
export interface ICellReview {
  turn: string;
  kind: 'edit' | 'insert' | 'run';
  before: JSONObject | null;
  ran: boolean;
}

/** A cell the agent deleted, waiting for review (`copilot_nb.review_deleted` of the notebook). */
export interface IDeletedReview {
  turn: string;
  before: JSONObject;
  after_id: string | null;
  index?: number;
}

/** A file the agent changed, waiting for review (`copilot_nb.review_files` of the notebook). */
export interface IFileReview {
  turn: string;
  path: string;
  diff: string;
  kind: string;
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
  if (!review || typeof review !== 'object' || !['edit', 'insert', 'run'].includes(review.kind)) {
    return null;
  }
  const before = review.before && typeof review.before === 'object' ? review.before : null;
  if (review.kind !== 'insert' && !before) {
    return null;
  }
  return { turn: String(review.turn ?? ''), kind: review.kind, before, ran: !!review.ran };
}

/** A cell's source as one string (nbformat allows a list of lines). */
export function sourceOf(cell: JSONObject | null | undefined): string {
  const source = cell?.source ?? '';
  return Array.isArray(source) ? source.join('') : String(source);
}

/** The deleted cells waiting for review, from the notebook's `copilot_nb` metadata. */
export function deletedOf(meta: JSONObject): IDeletedReview[] {
  const deleted = Array.isArray(meta.review_deleted) ? meta.review_deleted : [];
  return deleted.filter((e: any) => e && e.before && typeof e.before === 'object');
}

/** The changed files waiting for review, from the notebook's `copilot_nb` metadata. */
export function filesOf(meta: JSONObject): IFileReview[] {
  const files = Array.isArray(meta.review_files) ? meta.review_files : [];
  return files.filter((f: any) => f && typeof f.path === 'string');
}

/** Put the cell back as `before` said (one step of the history), or take an inserted cell away. */
export function restoreCell(shared: any, index: number, review: ICellReview): void {
  const cell = shared.cells[index];
  const before = review.before;
  if (review.kind === 'insert' || !before) {
    shared.transact(() => shared.deleteCell(index));
    return;
  }
  if ((before.cell_type ?? cell.cell_type) !== cell.cell_type) {
    // Another type of cell: only a new cell with the same id can be it.
    shared.transact(() => {
      shared.deleteCell(index);
      shared.insertCell(index, { ...before, id: cell.getId() });
    });
    return;
  }
  cell.transact(() => {
    cell.setSource(sourceOf(before));
    const metadata: JSONObject = before.metadata ?? {};
    for (const key of Object.keys(cell.getMetadata())) {
      if (!(key in metadata)) {
        cell.deleteMetadata(key);
      }
    }
    cell.setMetadata(metadata);
    if (cell.cell_type === 'code') {
      cell.setOutputs(before.outputs ?? []);
      cell.execution_count = before.execution_count ?? null;
    }
  });
}

/** A cell's metadata without its review record (the stamp stays). */
export function dropRecord(cell: any): void {
  const meta: JSONObject | undefined = cell.getMetadata(KEY);
  if (!meta || !('review' in meta)) {
    return;
  }
  const { review: _review, ...rest } = meta;
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
  shared: any,
  deleted: IDeletedReview[],
  entry: IDeletedReview,
  seen = new Set<IDeletedReview>()
): number {
  if (!entry.after_id) {
    return 0;
  }
  const above = shared.cells.findIndex((cell: any) => cell.getId() === entry.after_id);
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
