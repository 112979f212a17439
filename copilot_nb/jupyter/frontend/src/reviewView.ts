/**
 * What one notebook view shows of the review: in each changed cell its diff and a Keep / Undo
 * bar, "new" on an inserted cell, a placeholder with Undo where a cell was deleted, and above
 * the notebook one bar "copilot changed 3 cells and 1 file: Keep all · Undo all · ‹ previous ·
 * next ›" with the files and their diffs.
 *
 * Everything shown is data: sources, diffs and paths go in as text nodes, never as markup. The
 * view draws again only what changed, once per animation frame, so typing (which changes no
 * review record) costs it nothing.
 */
import { NotebookPanel } from '@jupyterlab/notebook';
import { Widget } from '@lumino/widgets';

import { diffLines, lines, withContext } from './lineDiff';
import { ReviewDocument } from './review';
import { button, diffNode, el, unifiedNode } from './reviewNodes';
import {
  ICellReview,
  IDeletedReview,
  IFileReview,
  kernelNote,
  sourceOf
} from './reviewRecords';

const CELL_CLASS = 'cnb-review';
const DELETED_CLASS = 'cnb-review-deleted';

/** The review as one notebook view shows it. */
export class ReviewView {
  constructor(
    private readonly panel: NotebookPanel,
    private readonly review: ReviewDocument
  ) {
    this.bar = new Widget();
    this.bar.addClass('cnb-review-notebook');
    this.bar.hide();
    this.bar.node.appendChild(this.barContent);
    // its height follows its content, once laid out at its real width too
    this.resizes = new ResizeObserver(() => this.fitBar());
    this.resizes.observe(this.barContent);
    panel.contentHeader.addWidget(this.bar);
    this.unlisten = review.listen(ids => this.schedule(ids));
    panel.disposed.connect(() => this.dispose());
    this.schedule(null);
  }

  dispose(): void {
    this.unlisten();
    this.resizes.disconnect();
    if (this.frame) {
      cancelAnimationFrame(this.frame);
    }
    this.bar.dispose();
  }

  /** Draw again at the next frame: these cells, or everything. */
  private schedule(ids: Set<string> | null): void {
    if (ids === null) {
      this.all = true;
    } else {
      ids.forEach(id => this.dirty.add(id));
    }
    if (!this.frame) {
      this.frame = requestAnimationFrame(() => this.render());
    }
  }

  private render(): void {
    this.frame = 0;
    const all = this.all;
    const dirty = this.dirty;
    this.all = false;
    this.dirty = new Set();
    for (const cell of this.panel.content.widgets) {
      const id = cell.model.id;
      if (all || dirty.has(id)) {
        this.renderCell(cell.node, id, cell.model.sharedModel.getSource());
      }
    }
    if (all) {
      this.renderDeleted();
      this.renderBar();
    }
  }

  /** A cell's part: drawn again only if its record or note changed since last time. */
  private renderCell(node: HTMLElement, id: string, source: string): void {
    const review = this.review.cells.get(id);
    const note = this.review.notes.get(id);
    const kernel = this.review.kernel;
    const drawn = this.drawn.get(node);
    if (
      drawn &&
      drawn.review === review &&
      drawn.note === note &&
      drawn.source === source &&
      drawn.kernel === kernel
    ) {
      return;
    }
    node.querySelector(`:scope > .${CELL_CLASS}`)?.remove();
    node.classList.toggle('cnb-under-review', !!review);
    this.drawn.set(node, { review, note, source, kernel });
    if (!review && !note) {
      return;
    }
    const part = el('div', CELL_CLASS);
    const bar = el('div', 'cnb-review-bar');
    part.appendChild(bar);
    if (review) {
      const label = {
        edit: 'copilot changed this cell',
        insert: 'new',
        run: 'copilot ran this cell'
      };
      bar.appendChild(
        el(
          'span',
          `cnb-review-label cnb-review-${review.kind}`,
          label[review.kind]
        )
      );
      if (review.ran && review.kind !== 'run') {
        bar.appendChild(el('span', 'cnb-review-label', 'and ran it'));
      }
      const said = kernelNote(review, this.review.kernel);
      if (said) {
        bar.appendChild(el('span', 'cnb-review-ran', said));
      }
    }
    if (note) {
      bar.appendChild(el('span', 'cnb-review-note', note));
    }
    if (review) {
      bar.appendChild(el('span', 'cnb-review-spacer'));
      bar.appendChild(
        button('Keep', 'cnb-review-keep', () => this.review.keep(id))
      );
      bar.appendChild(
        button('Undo', 'cnb-review-undo', () => this.review.undo(id))
      );
      part.appendChild(this.cellDiff(review, source));
    }
    node.insertBefore(part, node.firstChild);
  }

  private cellDiff(review: ICellReview, source: string): HTMLElement {
    if (review.kind === 'insert' || !review.before) {
      return el('div', 'cnb-review-empty');
    }
    const before = sourceOf(review.before);
    const diff = diffLines(before, source);
    if (!diff.some(line => line.kind !== 'same')) {
      const outputs =
        review.kind === 'run' ? 'outputs are new' : 'source unchanged';
      return el('div', 'cnb-review-diff cnb-review-same', outputs);
    }
    return diffNode(withContext(diff));
  }

  /** Placeholders where cells were deleted: under the cell above (or atop the first). */
  private renderDeleted(): void {
    this.panel.content.node
      .querySelectorAll(`.${DELETED_CLASS}`)
      .forEach(n => n.remove());
    this.orphans = [];
    const widgets = this.panel.content.widgets;
    const byId = new Map(widgets.map(cell => [cell.model.id, cell.node]));
    for (const entry of this.review.deleted) {
      const placeholder = this.placeholder(entry);
      const anchor = this.anchorOf(entry, byId);
      if (anchor === 'top' && widgets.length) {
        widgets[0].node.insertBefore(placeholder, widgets[0].node.firstChild);
      } else if (anchor && anchor !== 'top') {
        anchor.appendChild(placeholder);
      } else {
        this.orphans.push(placeholder); // an empty notebook: shown in the notebook's bar
      }
    }
  }

  private anchorOf(
    entry: IDeletedReview,
    byId: Map<string, HTMLElement>,
    depth = 0
  ): HTMLElement | 'top' | null {
    if (!entry.after_id) {
      return 'top';
    }
    const node = byId.get(entry.after_id);
    if (node) {
      return node;
    }
    const chained = this.review.deleted.find(
      e => e.before.id === entry.after_id
    );
    return chained && depth < 100
      ? this.anchorOf(chained, byId, depth + 1)
      : 'top';
  }

  private placeholder(entry: IDeletedReview): HTMLElement {
    const part = el('div', DELETED_CLASS);
    const bar = el('div', 'cnb-review-bar');
    bar.appendChild(
      el(
        'span',
        'cnb-review-label cnb-review-delete',
        'copilot deleted a cell here'
      )
    );
    bar.appendChild(el('span', 'cnb-review-spacer'));
    bar.appendChild(
      button('Keep', 'cnb-review-keep', () => this.review.keepDeleted(entry))
    );
    bar.appendChild(
      button('Undo', 'cnb-review-undo', () => this.review.undoDeleted(entry))
    );
    part.appendChild(bar);
    const removed = lines(sourceOf(entry.before)).map(text => ({
      kind: 'removed' as const,
      text
    }));
    part.appendChild(
      diffNode(
        removed.length > 8
          ? [
              ...removed.slice(0, 6),
              { kind: 'fold', count: removed.length - 6 }
            ]
          : removed
      )
    );
    return part;
  }

  /** The notebook's bar: the count, Keep all, Undo all, previous / next, the files. */
  private renderBar(): void {
    const { cells, files } = this.review.counts();
    const node = this.barContent;
    node.replaceChildren();
    if (!cells && !files) {
      this.bar.hide();
      return;
    }
    this.bar.show();
    const row = el('div', 'cnb-review-bar');
    const parts = [];
    if (cells) {
      parts.push(`${cells} cell${cells === 1 ? '' : 's'}`);
    }
    if (files) {
      parts.push(`${files} file${files === 1 ? '' : 's'}`);
    }
    row.appendChild(
      el(
        'span',
        'cnb-review-summary',
        `copilot changed ${parts.join(' and ')}:`
      )
    );
    row.appendChild(
      button('Keep all', 'cnb-review-keep-all', () => this.review.keepAll())
    );
    row.appendChild(
      button('Undo all', 'cnb-review-undo-all', () => this.review.undoAll())
    );
    row.appendChild(
      button('\u2039 previous', 'cnb-review-prev', () => this.go(-1))
    );
    row.appendChild(button('next \u203a', 'cnb-review-next', () => this.go(1)));
    node.appendChild(row);
    this.orphans.forEach(placeholder => node.appendChild(placeholder));
    for (const file of this.review.files) {
      node.appendChild(this.fileNode(file));
    }
    this.fitBar();
  }

  /**
   * The notebook's header lays its widgets out by their CSS minimum height: give the bar its
   * content's (at most 40% of the window, it scrolls beyond) and ask the header to fit again.
   */
  private fitBar(): void {
    const node = this.bar.node;
    const inner = this.barContent;
    const style = getComputedStyle(node);
    const frame = [
      'paddingTop',
      'paddingBottom',
      'borderTopWidth',
      'borderBottomWidth'
    ]
      .map(side => parseFloat(style[side as 'paddingTop']) || 0)
      .reduce((a, b) => a + b, 0);
    const natural = Math.ceil(inner.offsetHeight + frame);
    const height = `${Math.min(natural, Math.round(window.innerHeight * 0.4))}px`;
    if (node.style.minHeight !== height) {
      node.style.minHeight = height;
      this.panel.contentHeader.fit();
    }
  }

  private fileNode(file: IFileReview): HTMLElement {
    const details = el('details', 'cnb-review-file') as HTMLDetailsElement;
    const summary = el('summary', 'cnb-review-bar');
    // a flex summary has no disclosure marker: the toggle says what a click does
    const toggle = el('span', 'cnb-review-toggle', '▸ diff');
    summary.appendChild(toggle);
    const known = ['edit', 'create', 'delete', 'move'].includes(file.kind)
      ? file.kind
      : 'other';
    summary.appendChild(
      el('span', `cnb-review-label cnb-review-file-${known}`, file.kind)
    );
    summary.appendChild(el('span', 'cnb-review-path', file.path));
    const note = this.review.fileNotes.get(`${file.turn} ${file.path}`);
    if (note) {
      summary.appendChild(el('span', 'cnb-review-note', note));
    }
    summary.appendChild(el('span', 'cnb-review-spacer'));
    summary.appendChild(
      button('Keep', 'cnb-review-keep', () =>
        this.review.decideFile(file, 'keep')
      )
    );
    summary.appendChild(
      button('Undo', 'cnb-review-undo', () =>
        this.review.decideFile(file, 'undo')
      )
    );
    details.appendChild(summary);
    details.addEventListener('toggle', () => {
      toggle.textContent = details.open ? '▾ diff' : '▸ diff';
      this.fitBar();
    });
    details.appendChild(unifiedNode(file.diff));
    return details;
  }

  /** Select and show the previous or next cell with something to review (wrapping round). */
  private go(step: 1 | -1): void {
    const notebook = this.panel.content;
    const ids = this.panel.content.widgets.map(cell => cell.model.id);
    const deletedAnchors = new Set(this.review.deleted.map(e => e.after_id));
    const stops = ids
      .map((id, index) =>
        this.review.cells.has(id) || deletedAnchors.has(id) ? index : -1
      )
      .filter(index => index >= 0);
    if (deletedAnchors.has(null) && ids.length && !stops.includes(0)) {
      stops.unshift(0);
    }
    if (!stops.length) {
      return;
    }
    const at = notebook.activeCellIndex;
    const next =
      step > 0
        ? (stops.find(index => index > at) ?? stops[0])
        : ([...stops].reverse().find(index => index < at) ??
          stops[stops.length - 1]);
    notebook.activeCellIndex = next;
    void notebook.scrollToItem(next, 'center');
  }

  private readonly bar: Widget;
  private readonly barContent = el('div', 'cnb-review-notebook-content');
  private readonly resizes: ResizeObserver;
  private readonly unlisten: () => void;
  private readonly drawn = new WeakMap<
    HTMLElement,
    {
      review?: ICellReview;
      note?: string;
      source: string;
      kernel: string | null;
    }
  >();
  private orphans: HTMLElement[] = [];
  private dirty = new Set<string>();
  private all = false;
  private frame = 0;
}
