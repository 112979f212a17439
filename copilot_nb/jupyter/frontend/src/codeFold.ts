/**
 * Where a long preview in an approval folds, and what its button says: the same place and the
 * same words as a `%%copilot` cell's prompt (`approval_prompt.py`: `split_preview`,
 * `more_label`) and the chat panel's card (`cards.js`), so one action asks the same way
 * wherever it came from. Pure: text in, text out.
 */

/** Lines shown before the fold, and at most this many characters. */
export const FOLD_LINES = 40;
export const FOLD_CHARS = 3000;
/** Characters a line of the rest holds on average beyond which the label counts characters. */
export const LONG_LINE = 100;

/** The start of `text` shown at once and the rest; together they are all of it. */
export function foldAt(text: string): [string, string] {
  let cut = 0;
  for (let line = 0; line < FOLD_LINES; line++) {
    const newline = text.indexOf('\n', cut);
    if (newline < 0) {
      cut = text.length;
      break;
    }
    cut = newline + 1;
  }
  cut = Math.min(cut, FOLD_CHARS);
  return [text.slice(0, cut), text.slice(cut)];
}

/** What the button that shows `rest` says: `Show 20 more lines`. */
export function moreLabel(rest: string): string {
  const lines =
    (rest.match(/\n/g) ?? []).length + (rest.endsWith('\n') ? 0 : 1);
  const label = `Show ${count(lines)} more line${lines === 1 ? '' : 's'}`;
  return rest.length > LONG_LINE * lines
    ? `${label} (${count(rest.length)} characters)`
    : label;
}

/** A count as Python's `f"{n:,}"` writes it. */
function count(n: number): string {
  return n.toLocaleString('en-US');
}
