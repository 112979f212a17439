/**
 * A `%%copilot` cell's output grown in place while its answer streams: the kernel sends
 * `{op: 'grow', output, from, keep, add}` instead of the whole output again (`cell_growth.py`).
 * The output is the one whose metadata carries `copilot_nb.stream === output`; its HTML, if it
 * is `from` long, becomes its first `keep` characters followed by `add`, set into the notebook's
 * model, where JupyterLab renders it as it renders every output of the kernel's.
 *
 * The HTML is the kernel's own (its `safe_html` made every piece): nothing here renders model
 * text. A growth that does not fit (no such output, HTML of another length, a shape that is not
 * a display) changes nothing and says so; the kernel's next whole update puts the output right.
 */
import type { ICodeCellModel } from '@jupyterlab/cells';
import type * as nbformat from '@jupyterlab/nbformat';
import type { INotebookModel } from '@jupyterlab/notebook';

import { JSONObject, RequestError } from './changes';

type Outputs = ICodeCellModel['outputs'];

/** Where one streamed output is: its cell's outputs and its index among them. */
interface IPlace {
  outputs: Outputs;
  index: number;
}

/** The outputs of one notebook that the kernel grows. */
export class OutputGrowth {
  constructor(private readonly model: () => INotebookModel) {}

  /** `{grown: true}`, or `{grown: false}` where the growth does not fit. */
  grow(data: JSONObject): JSONObject {
    const { output, from, keep, add } = data;
    if (
      typeof output !== 'string' ||
      typeof from !== 'number' ||
      typeof keep !== 'number' ||
      typeof add !== 'string' ||
      keep < 0 ||
      keep > from
    ) {
      throw new RequestError(
        'a growth needs output, from, keep, add',
        'bad_request'
      );
    }
    const place = this.find(output);
    if (!place) {
      return { grown: false };
    }
    const shown = place.outputs.get(place.index).toJSON();
    const html = shown.data
      ? (shown.data as JSONObject)['text/html']
      : undefined;
    if (
      shown.output_type !== 'display_data' ||
      typeof html !== 'string' ||
      html.length !== from
    ) {
      return { grown: false };
    }
    const grown: nbformat.IDisplayData = {
      ...(shown as nbformat.IDisplayData),
      data: {
        ...(shown.data as JSONObject),
        'text/html': html.slice(0, keep) + add
      }
    };
    place.outputs.set(place.index, grown);
    this.last = { ...place, output };
    return { grown: true };
  }

  /** The output marked `output`: where the last growth went, else looked for from the end. */
  private find(output: string): IPlace | null {
    const last = this.last;
    if (
      last?.output === output &&
      this.marks(last.outputs, last.index, output)
    ) {
      return last;
    }
    const cells = this.model().cells;
    for (let i = cells.length - 1; i >= 0; i--) {
      const cell = cells.get(i);
      if (cell.type !== 'code') {
        continue;
      }
      const outputs = (cell as ICodeCellModel).outputs;
      for (let j = outputs.length - 1; j >= 0; j--) {
        if (this.marks(outputs, j, output)) {
          return { outputs, index: j };
        }
      }
    }
    return null;
  }

  private marks(outputs: Outputs, index: number, output: string): boolean {
    if (index >= outputs.length) {
      return false;
    }
    const mark = outputs.get(index).metadata?.copilot_nb as
      JSONObject | undefined;
    return mark?.stream === output;
  }

  private last: (IPlace & { output: string }) | null = null;
}
