/**
 * The review's building blocks as DOM nodes: an element with text, a button, and the two kinds
 * of diff (a cell's, computed line by line; a file's, a unified diff from the kernel). Text
 * always goes in as text nodes, never as markup: sources, diffs and paths are data.
 */
import { lines, Shown } from './lineDiff';

/** One element with a class and, optionally, text (always as a text node). */
export function el(tag: string, className: string, text?: string): HTMLElement {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** A button that does its action and nothing else (the click goes no further). */
export function button(
  label: string,
  className: string,
  action: () => void
): HTMLButtonElement {
  const node = el(
    'button',
    `cnb-review-btn ${className}`,
    label
  ) as HTMLButtonElement;
  node.type = 'button';
  node.addEventListener('click', event => {
    event.stopPropagation();
    action();
  });
  return node;
}

/** A diff as lines marked removed / added / unchanged, with long unchanged runs folded. */
export function diffNode(shown: Shown[]): HTMLElement {
  const block = el('div', 'cnb-review-diff');
  for (const line of shown) {
    if (line.kind === 'fold') {
      block.appendChild(
        el('div', 'cnb-diff-fold', `⋯ ${line.count} unchanged lines`)
      );
      continue;
    }
    const mark =
      line.kind === 'removed' ? '-' : line.kind === 'added' ? '+' : ' ';
    block.appendChild(
      el('div', `cnb-diff-line cnb-diff-${line.kind}`, `${mark} ${line.text}`)
    );
  }
  return block;
}

/** A unified diff's text (a file's) as lines coloured by their first character. */
export function unifiedNode(diff: string): HTMLElement {
  const block = el('div', 'cnb-review-diff');
  for (const line of lines(diff)) {
    const kind = line.startsWith('@@')
      ? 'fold'
      : line.startsWith('+') && !line.startsWith('+++')
        ? 'added'
        : line.startsWith('-') && !line.startsWith('---')
          ? 'removed'
          : 'same';
    const className =
      kind === 'fold' ? 'cnb-diff-fold' : `cnb-diff-line cnb-diff-${kind}`;
    block.appendChild(el('div', className, line));
  }
  return block;
}
