/**
 * A line diff for showing the agent's change to a cell: which lines it removed and which it
 * added. Pure and small: the common head and tail are trimmed first (most agent edits touch a
 * few lines of a cell), and only the middle gets a longest-common-subsequence table; a middle
 * too large for that table shows as all removed, then all added, which is still true.
 */

export type LineKind = 'same' | 'removed' | 'added';

/** One line of a diff. */
export interface IDiffLine {
  kind: LineKind;
  text: string;
}

/** The most cells of the LCS table (removed lines x added lines) computed before giving up. */
const MAX_TABLE = 1_000_000;

/** Split a cell's source into lines (a trailing newline makes no extra empty line). */
export function lines(text: string): string[] {
  if (text === '') {
    return [];
  }
  const split = text.split('\n');
  if (split[split.length - 1] === '') {
    split.pop();
  }
  return split;
}

/** The lines of `before` and `after`, each marked same, removed or added, in order. */
export function diffLines(before: string, after: string): IDiffLine[] {
  const a = lines(before);
  const b = lines(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) {
    head++;
  }
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  ) {
    tail++;
  }
  const out: IDiffLine[] = a
    .slice(0, head)
    .map(text => ({ kind: 'same', text }));
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  out.push(...middle(midA, midB));
  out.push(
    ...a
      .slice(a.length - tail)
      .map(text => ({ kind: 'same' as LineKind, text }))
  );
  return out;
}

/** The differing middle: an LCS walk, or all removed then all added when too large. */
function middle(a: string[], b: string[]): IDiffLine[] {
  if (a.length * b.length > MAX_TABLE || a.length === 0 || b.length === 0) {
    return [
      ...a.map(text => ({ kind: 'removed' as LineKind, text })),
      ...b.map(text => ({ kind: 'added' as LineKind, text }))
    ];
  }
  const width = b.length + 1;
  // lcs[i * width + j]: the longest common subsequence of a[i:] and b[j:]
  const lcs = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * width + j] =
        a[i] === b[j]
          ? lcs[(i + 1) * width + j + 1] + 1
          : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
    }
  }
  const out: IDiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ kind: 'same', text: a[i] });
      i++;
      j++;
    } else if (lcs[(i + 1) * width + j] >= lcs[i * width + j + 1]) {
      out.push({ kind: 'removed', text: a[i++] });
    } else {
      out.push({ kind: 'added', text: b[j++] });
    }
  }
  a.slice(i).forEach(text => out.push({ kind: 'removed', text }));
  b.slice(j).forEach(text => out.push({ kind: 'added', text }));
  return out;
}

/** A shown line, or a fold standing for `count` unchanged lines. */
export type Shown = IDiffLine | { kind: 'fold'; count: number };

/** The diff with runs of unchanged lines longer than 2 * context folded into one mark. */
export function withContext(diff: IDiffLine[], context = 2): Shown[] {
  const out: Shown[] = [];
  let run: IDiffLine[] = [];
  const flush = (atStart: boolean, atEnd: boolean) => {
    const keepHead = atStart ? 0 : context;
    const keepTail = atEnd ? 0 : context;
    if (run.length > keepHead + keepTail + 1) {
      out.push(...run.slice(0, keepHead));
      out.push({ kind: 'fold', count: run.length - keepHead - keepTail });
      out.push(...run.slice(run.length - keepTail));
    } else {
      out.push(...run);
    }
    run = [];
  };
  let started = false;
  for (const line of diff) {
    if (line.kind === 'same') {
      run.push(line);
    } else {
      flush(!started, false);
      started = true;
      out.push(line);
    }
  }
  flush(!started, true);
  return out;
}
