/**
 * The chat panel's width in JupyterLab's right sidebar. The sidebar opens at its minimum
 * (`--jp-sidebar-min-width`, 250 px), where a chat's answers, code and approvals wrap at every
 * few words; neither `sidecar` nor the shell has an option for a widget's width there. So when a
 * chat panel first arrives in the right area, the area is widened to a readable width (at most
 * a third of the window), through the public API of the Lumino split panel it sits in; the user
 * can drag it narrower, and a chat that replaces one already there keeps the width it had.
 */
import { SplitPanel, Widget } from '@lumino/widgets';

/** Pixels a chat reads well at: about 55 characters of its answers. */
export const READABLE = 400;
/** The largest share of the window the sidebar takes for it. */
const SHARE = 1 / 3;

/** Widen the area holding `chat` in its horizontal split panel to `width`, if narrower. */
export function widenFor(chat: Widget, width: number = READABLE): void {
  let area: Widget = chat;
  while (area.parent && !isHorizontalSplit(area.parent)) {
    area = area.parent;
  }
  const split = area.parent;
  if (!split || !isHorizontalSplit(split)) {
    return;
  }
  const sizes = split.widgets.map(w =>
    w.isVisible ? w.node.getBoundingClientRect().width : 0
  );
  const index = split.widgets.indexOf(area);
  const total = sizes.reduce((sum, size) => sum + size, 0);
  const wanted = Math.min(width, Math.floor(total * SHARE));
  const grow = wanted - sizes[index];
  const main = sizes.indexOf(Math.max(...sizes));
  if (grow <= 0 || main === index || sizes[main] - grow < wanted) {
    return;
  }
  sizes[index] = wanted;
  sizes[main] -= grow;
  split.setRelativeSizes(sizes);
}

function isHorizontalSplit(widget: Widget): widget is SplitPanel {
  return widget instanceof SplitPanel && widget.orientation === 'horizontal';
}
