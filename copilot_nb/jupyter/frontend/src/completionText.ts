/**
 * The pure text work behind completions while you type, apart from the page so it can be
 * tested under Node: which cells above go with a request, and whether what the user has typed
 * since a request still continues its answer (typing along the ghost text keeps it, no new
 * request), the small cache of answers by (prefix, suffix), and the next word or line of a
 * ghost text that partial accept takes.
 */

/** Characters of the cells above that one request carries at most (the kernel budgets again). */
export const CELLS_ABOVE_LIMIT = 20_000;

/**
 * The sources of the cells above the current one, nearest first, at most `limit` characters in
 * all: the cell that does not fit whole keeps its end (the lines nearest the cursor), and the
 * cells above it are left out.
 */
export function cellsAbove(
  sourcesInOrder: string[],
  limit: number = CELLS_ABOVE_LIMIT
): string[] {
  const out: string[] = [];
  let left = limit;
  for (let i = sourcesInOrder.length - 1; i >= 0 && left > 0; i--) {
    const source = sourcesInOrder[i];
    if (source.length <= left) {
      out.push(source);
      left -= source.length;
    } else {
      out.push(source.slice(source.length - left));
      left = 0;
    }
  }
  return out;
}

/** Where an answer was asked for, and what it says so far. */
export interface IAnswerSoFar {
  prefix: string;
  suffix: string;
  text: string;
}

/**
 * What is left of `answer` to show at (prefix, suffix), or null if the user has not typed along
 * it: same suffix, and the new prefix is the old one plus the start of the answer. An answer
 * fully typed gives "" (nothing left to show, nothing to ask either).
 */
export function rest(
  answer: IAnswerSoFar,
  prefix: string,
  suffix: string
): string | null {
  if (suffix !== answer.suffix || !prefix.startsWith(answer.prefix)) {
    return null;
  }
  const typed = prefix.slice(answer.prefix.length);
  return answer.text.startsWith(typed) ? answer.text.slice(typed.length) : null;
}

/** The typed text of a cell whose source is now `source`, if it still continues `answer`. */
export function stillContinues(answer: IAnswerSoFar, source: string): boolean {
  const { prefix, suffix } = answer;
  if (source.length < prefix.length + suffix.length) {
    return false;
  }
  if (!source.startsWith(prefix) || !source.endsWith(suffix)) {
    return false;
  }
  const typed = source.slice(prefix.length, source.length - suffix.length);
  return answer.text.startsWith(typed);
}

/**
 * The last few finished answers, most recent last: asked again at the same place, or typed
 * along, they come back at once with no request to the kernel.
 */
export class AnswerCache {
  constructor(readonly size: number = 32) {}

  /** Remember a finished answer (an empty one too: the model had nothing to add there). */
  put(answer: IAnswerSoFar): void {
    this.entries = this.entries.filter(
      e => !(e.prefix === answer.prefix && e.suffix === answer.suffix)
    );
    this.entries.push({
      prefix: answer.prefix,
      suffix: answer.suffix,
      text: answer.text
    });
    if (this.entries.length > this.size) {
      this.entries.shift();
    }
  }

  /** What is left to show at (prefix, suffix) from the most recent answer it continues. */
  get(prefix: string, suffix: string): string | null {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const left = rest(this.entries[i], prefix, suffix);
      if (left !== null) {
        return left;
      }
    }
    return null;
  }

  clear(): void {
    this.entries = [];
  }

  private entries: IAnswerSoFar[] = [];
}

/** The next word of a ghost text: spaces, then a run of word characters or of punctuation. */
export function nextWord(text: string): string {
  const match = /^\s*(\w+|[^\w\s]+)/.exec(text);
  return match ? match[0] : text;
}

/** The rest of the ghost text's line, with its line break (a leading break is a line itself). */
export function nextLine(text: string): string {
  const end = text.indexOf('\n');
  return end < 0 ? text : text.slice(0, end + 1);
}
