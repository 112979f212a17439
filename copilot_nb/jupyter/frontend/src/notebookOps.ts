/**
 * The operations the kernel asks of an open notebook over its live comm: `snapshot` (every
 * cell as nbformat JSON, plus which cell runs now), `apply` (a list of changes all checked
 * first, then made through the undo history the user's own keys take back) and `set_outputs`
 * (a cell's outputs and execution count), and `grow` (a streamed answer's output, grown in
 * place: `outputGrowth.ts`). Apart from the comm's life (`liveDocument.ts`), so
 * what the kernel may do to a notebook reads in one place.
 *
 * Everything received is data: sources and outputs go into the model, where JupyterLab's own
 * renderers and sanitizer treat them as they treat any notebook content.
 */
import type { ICodeCellModel } from '@jupyterlab/cells';
import type * as nbformat from '@jupyterlab/nbformat';
import { INotebookModel } from '@jupyterlab/notebook';

import { check, ICellChange, JSONObject, RequestError } from './changes';
import { OutputGrowth } from './outputGrowth';
import { ReviewDocument } from './review';
import {
  CellJSON,
  clearOutputs,
  indexOfCell,
  isCode,
  ISharedNotebook
} from './sharedCells';

/** One open notebook's model, as the kernel's requests read and change it. */
export class NotebookOps {
  constructor(
    private readonly context: {
      readonly path: string;
      readonly model: INotebookModel | null;
    },
    private readonly review: ReviewDocument
  ) {
    this.growth = new OutputGrowth(() => this.model);
  }

  /**
   * The answer to one request `{op, ...}`; a `RequestError` refuses it. Whatever a request
   * writes (a change, a run's outputs and record) is the agent's, never the user's typing.
   */
  handle(data: JSONObject): JSONObject {
    return this.review.quietly(() => this.handleOne(data));
  }

  private handleOne(data: JSONObject): JSONObject {
    switch (data.op) {
      case 'snapshot':
        return this.snapshot();
      case 'apply':
        return this.apply(data.changes as ICellChange[]);
      case 'set_outputs':
        return this.setOutputs(data);
      case 'review_files':
        return this.review.addFiles(data.files);
      case 'grow':
        return this.growth.grow(data);
      default:
        throw new RequestError(
          `unknown op ${JSON.stringify(data.op)}`,
          'bad_request'
        );
    }
  }

  private readonly growth: OutputGrowth;

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
      json.running =
        cell.type === 'code' &&
        (cell as ICodeCellModel).executionState === 'running';
      cells.push(json);
    }
    return { path: this.context.path, dirty: model.dirty, cells };
  }

  private indexOf(cellId: string): number {
    const index = indexOfCell(this.model.sharedModel, cellId);
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
    return this.applyChecked(shared, changes);
  }

  private applyChecked(
    shared: ISharedNotebook,
    changes: ICellChange[]
  ): JSONObject {
    // Checked, then made with no await in between (nothing the user types can land in the
    // middle). Each change goes through the undo history the user's own key takes back: cells
    // added or removed through the notebook's (Z), a cell's text through that cell's (Ctrl+Z).
    for (const change of changes) {
      if (change.kind === 'set_source') {
        const cell = shared.cells[this.indexOf(change.cell_id ?? '')];
        cell.transact(() => this.applyOne(shared, change));
      } else {
        shared.transact(() => this.applyOne(shared, change));
      }
    }
    return { applied: changes.length, cells: shared.cells.length };
  }

  private applyOne(shared: ISharedNotebook, change: ICellChange): void {
    if (change.kind === 'insert') {
      const at = change.after_id ? this.indexOf(change.after_id) + 1 : 0;
      shared.insertCell(at, change.cell as CellJSON);
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
    const cell = shared.cells[index];
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
      if (isCode(cell)) {
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
    if (change.clear_outputs) {
      clearOutputs(cell);
    }
  }

  private setOutputs(data: JSONObject): JSONObject {
    const index = this.indexOf(data.cell_id);
    const cell = this.model.sharedModel.cells[index];
    if (!isCode(cell)) {
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
    const outputs: nbformat.IOutput[] = data.outputs ?? [];
    const metadata: JSONObject = data.metadata ?? {};
    cell.transact(() => {
      cell.setOutputs(outputs);
      cell.execution_count = data.execution_count ?? null;
      for (const [key, value] of Object.entries(metadata)) {
        cell.setMetadata(key, value);
      }
    }, false);
    return { index };
  }
}
