/**
 * The changes the kernel asks an open notebook to make, and the check each gets before any is
 * made: a change names the source it expects a cell to have, and changes may build on each
 * other (an undo re-inserts a cell, then restores its source), so they are checked in order
 * against a dry run of the cells' ids and sources.
 */

/** A JSON object from the wire or a notebook's metadata: its fields unchecked, read with care. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type JSONObject = { [key: string]: any };

/** A cell change the kernel asks for; `expected` is the source the agent last saw. */
export interface ICellChange {
  kind: 'set_source' | 'insert' | 'delete';
  cell_id?: string;
  expected?: string;
  source?: string;
  after_id?: string | null;
  cell?: JSONObject;
  metadata?: JSONObject;
  clear_outputs?: boolean;
  /** Review mode, on a `delete`: `{turn, before, after_id}` for the deleted cell's placeholder. */
  review?: JSONObject;
}

/** A request the front end refuses, with the code the kernel words its message by. */
export class RequestError extends Error {
  constructor(
    message: string,
    readonly code: string
  ) {
    super(message);
  }
}

/** Check one change against the dry run of the cells, and make it there. */
export function check(
  cells: { id: string; source: string }[],
  change: ICellChange
): void {
  const find = (id: string | null | undefined): number => {
    const index = cells.findIndex(cell => cell.id === id);
    if (index < 0) {
      throw new RequestError(
        `no cell with id ${id} in the open notebook`,
        'missing'
      );
    }
    return index;
  };
  if (change.kind === 'insert') {
    const at = change.after_id ? find(change.after_id) + 1 : 0;
    cells.splice(at, 0, {
      id: change.cell?.id ?? '',
      source: change.cell?.source ?? ''
    });
    return;
  }
  const index = find(change.cell_id);
  if (
    change.expected !== undefined &&
    cells[index].source !== change.expected
  ) {
    throw new RequestError(
      `cell ${change.cell_id} changed in the open notebook`,
      'conflict'
    );
  }
  if (change.kind === 'delete') {
    cells.splice(index, 1);
  } else {
    cells[index].source = change.source ?? '';
  }
}
