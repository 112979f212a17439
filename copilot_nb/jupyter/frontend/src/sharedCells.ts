/**
 * The shared notebook model as this extension uses it, typed: JupyterLab's `ISharedNotebook` and
 * `ISharedCell` (from `@jupyter/ydoc`), with the one narrowing everyone needs (a code cell has
 * outputs and an execution count), so no module reaches into the model through `any`.
 */
import type {
  ISharedCell,
  ISharedCodeCell,
  ISharedNotebook
} from '@jupyter/ydoc';
import type * as nbformat from '@jupyterlab/nbformat';

import type { JSONObject } from './changes';

export type { ISharedCell, ISharedCodeCell, ISharedNotebook };

/** A cell as nbformat JSON (what the kernel sends and `toJSON()` gives). */
export type CellJSON = nbformat.ICell;

/** Whether a shared cell is a code cell (outputs, execution count). */
export function isCode(cell: ISharedCell): cell is ISharedCodeCell {
  return cell.cell_type === 'code';
}

/** The index of the cell with this id, or -1. */
export function indexOfCell(shared: ISharedNotebook, id: string): number {
  return shared.cells.findIndex(cell => cell.getId() === id);
}

/** A code cell without outputs or execution count (an undo, an agent's cleared cell). */
export function clearOutputs(cell: ISharedCell): void {
  if (isCode(cell)) {
    cell.setOutputs([]);
    cell.execution_count = null;
  }
}

/** A metadata entry that should be an object: `{}` where a file has none or something else
 * (a notebook from elsewhere can carry any metadata). */
export function metadataObject(
  owner: ISharedNotebook | ISharedCell,
  key: string
): JSONObject {
  const value: unknown = owner.getMetadata(key);
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as JSONObject)
    : {};
}

/** The Yjs undo manager of a notebook or cell (not in the shared interfaces), if it has one. */
export function undoManagerOf(
  owner: ISharedNotebook | ISharedCell | undefined
): { stopCapturing(): void } | null {
  const undoable = owner as
    { undoManager?: { stopCapturing(): void } | null } | undefined;
  return undoable?.undoManager ?? null;
}
