// The chat panel's Markdown: a small safe subset (fences, headings, lists, quotes, tables,
// rules, inline marks and links), rendered from text that is escaped first, so model text never
// becomes live HTML and only http(s)/mailto links are made; an image is a link, never loaded.
// tests/test_panel_markdown_js.py runs it under Node against the XSS corpus.
// Concatenated before front.js.

/* eslint-disable no-control-regex -- NUL marks the code and links held back (HOLE):
   markdown() takes every NUL out of the text first, so only these placeholders carry one. */
/** @type {Record<string, string>} */
const ESCAPES = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;'
};
/** @param {unknown} s */
const esc = s => String(s).replace(/[&<>"']/g, c => ESCAPES[c]);
const HOLE = '\u0000';

/** @param {string} src */
function inline(src) {
  /** @type {string[]} */
  const held = [];
  /** @param {string} html */
  const hold = html => HOLE + (held.push(html) - 1) + HOLE;
  let s = src.replace(
    /(`+)([\s\S]*?[^`])\1(?!`)/g,
    (_, _t, /** @type {string} */ code) => hold(`<code>${esc(code)}</code>`)
  );
  s = s.replace(
    /\[([^\]\n]+)\]\(\s*<?([^\s)>]+)>?(?:\s+"[^"]*")?\s*\)/g,
    (
      /** @type {string} */ m,
      /** @type {string} */ text,
      /** @type {string} */ url
    ) =>
      /^(https?:\/\/|mailto:)/i.test(url)
        ? hold(
            `<a href="${esc(url)}" target="_blank" rel="noopener noreferrer">${marks(esc(text))}</a>`
          )
        : m
  );
  // a bare URL never swallows a placeholder (\u0000n\u0000) of code or a link held above
  s = s.replace(
    /https?:\/\/[^\s<>()\]\u0000]*[^\s<>()\].,;:!?'"*_\u0000]/g,
    (/** @type {string} */ url) =>
      hold(
        `<a href="${esc(url)}" target="_blank" rel="noopener noreferrer">${esc(url)}</a>`
      )
  );
  s = marks(esc(s)).replace(/( {2,}|\\)\n/g, '<br>');
  return s.replace(
    /\u0000(\d+)\u0000/g,
    (_, /** @type {string} */ i) => held[Number(i)]
  );
}

/** @param {string} s */
function marks(s) {
  return s
    .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^\w])__(?=\S)([\s\S]*?\S)__(?!\w)/g, '$1<strong>$2</strong>')
    .replace(/\*(?=[^\s*])([^*]*?[^\s*])\*/g, '<em>$1</em>')
    .replace(/(^|[^\w])_(?=[^\s_])([^_]*?[^\s_])_(?!\w)/g, '$1<em>$2</em>')
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '<del>$1</del>');
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?/;
const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])(?:\s+(.*)|$)/;
const TABLE_RULE = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
/** @param {string} l */
const startsBlock = l =>
  FENCE.test(l) ||
  HEADING.test(l) ||
  RULE.test(l) ||
  QUOTE.test(l) ||
  ITEM.test(l);
/** @param {string} l */
const indentOf = l => l.length - l.trimStart().length;

/**
 * Model text as safe HTML (the subset above).
 * @param {unknown} src
 * @returns {string}
 */
function markdown(src) {
  return blocks(
    String(src)
      .replace(/\r\n?/g, '\n')
      .replace(/\u0000/g, '')
      .split('\n')
  );
}

/**
 * @param {string[]} lines
 * @returns {string}
 */
function blocks(lines) {
  /** @type {string[]} */
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if (!line.trim()) {
      i++;
    } else if ((m = FENCE.exec(line))) {
      const close = new RegExp(
        `^ {0,3}${m[1][0] === '`' ? '`' : '~'}{${m[1].length},}\\s*$`
      );
      const body = [];
      for (i++; i < lines.length && !close.test(lines[i]); i++) {
        body.push(lines[i]);
      }
      i++;
      out.push(codeBlock(body.join('\n'), m[2]));
    } else if ((m = HEADING.exec(line))) {
      const n = m[1].length;
      out.push(`<h${n}>${inline(m[2])}</h${n}>`);
      i++;
    } else if (RULE.test(line)) {
      out.push('<hr>');
      i++;
    } else if (QUOTE.test(line)) {
      const inner = [];
      for (; i < lines.length && QUOTE.test(lines[i]); i++) {
        inner.push(lines[i].replace(QUOTE, ''));
      }
      out.push(`<blockquote>${blocks(inner)}</blockquote>`);
    } else if ((m = ITEM.exec(line))) {
      i = list(lines, i, out);
    } else if (
      line.includes('|') &&
      i + 1 < lines.length &&
      TABLE_RULE.test(lines[i + 1]) &&
      lines[i + 1].includes('-')
    ) {
      i = table(lines, i, out);
    } else {
      const para = [line];
      for (
        i++;
        i < lines.length && lines[i].trim() && !startsBlock(lines[i]);
        i++
      ) {
        para.push(lines[i]);
      }
      out.push(`<p>${inline(para.join('\n').trim())}</p>`);
    }
  }
  return out.join('');
}

/**
 * @param {string[]} lines
 * @param {number} i the list's first line (one ITEM matches)
 * @param {string[]} out
 * @returns {number} the line after the list
 */
function list(lines, i, out) {
  const first = /** @type {RegExpExecArray} */ (ITEM.exec(lines[i]));
  const ordered = /\d/.test(first[2]);
  const start = ordered ? parseInt(first[2], 10) : 1;
  const base = indentOf(lines[i]);
  /** @type {string[][]} */
  const items = [];
  let loose = false;
  while (i < lines.length) {
    const m = ITEM.exec(lines[i]);
    if (!m || /\d/.test(m[2]) !== ordered || indentOf(lines[i]) > base + 1) {
      break;
    }
    const width = m[1].length + m[2].length + 1;
    const body = [m[3] || ''];
    for (i++; i < lines.length; i++) {
      const l = lines[i];
      if (!l.trim()) {
        let j = i + 1;
        while (j < lines.length && !lines[j].trim()) {
          j++;
        }
        if (
          j < lines.length &&
          indentOf(lines[j]) >= Math.min(width, base + 2)
        ) {
          loose = true;
          body.push('');
          continue;
        }
        break;
      }
      if (indentOf(l) >= Math.min(width, base + 2)) {
        body.push(l.slice(Math.min(width, indentOf(l))));
      } else if (!startsBlock(l) && body[body.length - 1].trim()) {
        body.push(l.trim());
      } else {
        break;
      }
    }
    items.push(body);
    let j = i;
    while (j < lines.length && !lines[j].trim()) {
      j++;
    }
    const next = j < lines.length ? ITEM.exec(lines[j]) : null;
    if (
      j > i &&
      next &&
      /\d/.test(next[2]) === ordered &&
      indentOf(lines[j]) <= base + 1
    ) {
      loose = true;
    }
    if (!next || indentOf(lines[j]) > base + 1) {
      break;
    }
    i = j;
  }
  const html = items.map(body => {
    const inner = blocks(body);
    return `<li>${loose ? inner : inner.replace(/^<p>([\s\S]*?)<\/p>/, '$1')}</li>`;
  });
  const tag = ordered ? 'ol' : 'ul';
  out.push(
    `<${tag}${ordered && start !== 1 ? ` start="${start}"` : ''}>${html.join('')}</${tag}>`
  );
  return i;
}

/** @param {string} row */
function cells(row) {
  let s = row.trim();
  if (s.startsWith('|')) {
    s = s.slice(1);
  }
  if (s.endsWith('|') && !s.endsWith('\\|')) {
    s = s.slice(0, -1);
  }
  return s.split(/(?<!\\)\|/).map(c => c.trim().replace(/\\\|/g, '|'));
}

/**
 * @param {string[]} lines
 * @param {number} i the table's head
 * @param {string[]} out
 * @returns {number} the line after the table
 */
function table(lines, i, out) {
  const head = cells(lines[i]);
  const align = cells(lines[i + 1]).map(c =>
    c.startsWith(':') && c.endsWith(':')
      ? 'center'
      : c.endsWith(':')
        ? 'right'
        : 'left'
  );
  /**
   * @param {string} tag
   * @param {string | undefined} text
   * @param {number} k
   */
  const cell = (tag, text, k) =>
    `<${tag} style="text-align:${align[k] || 'left'}">${inline(text || '')}</${tag}>`;
  const rows = [];
  for (
    i += 2;
    i < lines.length && lines[i].trim() && lines[i].includes('|');
    i++
  ) {
    rows.push(cells(lines[i]));
  }
  const body = rows.map(
    r => `<tr>${head.map((_, k) => cell('td', r[k], k)).join('')}</tr>`
  );
  out.push(
    `<div class="cnb-table"><table><thead><tr>${head.map((h, k) => cell('th', h, k)).join('')}</tr></thead>` +
      `<tbody>${body.join('')}</tbody></table></div>`
  );
  return i;
}

const RUNNABLE = /^(python3?|py|ipython3?)$/i;

// Copy, Insert (shown where the page's extension takes it: panel.css) and, for Python, Run
// (through the kernel's approval): blocks.js acts on their clicks.
/**
 * @param {string} code
 * @param {string} lang
 */
function codeBlock(code, lang) {
  const label = lang ? `<span class="cnb-lang">${esc(lang)}</span>` : '';
  /**
   * @param {string} cls
   * @param {string} text
   * @param {string} title
   */
  const button = (cls, text, title) =>
    `<button class="cnb-blockbtn ${cls}" type="button" title="${title}">${text}</button>`;
  const run = RUNNABLE.test(lang)
    ? button(
        'cnb-run',
        'Run',
        'Run this code in the kernel (asks first, as when Copilot runs code)'
      )
    : '';
  const buttons =
    button('cnb-copy', 'Copy', 'Copy the code') +
    button('cnb-insert', 'Insert', 'Insert as a cell below the active cell') +
    run;
  return `<div class="cnb-codeblock"><div class="cnb-codebar">${label}${buttons}</div><pre><code>${esc(code)}</code></pre></div>`;
}

/**
 * A diff as lines of escaped text, each marked added, removed, hunk or context.
 * @param {string} text
 */
function diffHtml(text) {
  /** @param {string} l */
  const kind = l =>
    l.startsWith('+++') || l.startsWith('---')
      ? 'meta'
      : l[0] === '+'
        ? 'add'
        : l[0] === '-'
          ? 'del'
          : l.startsWith('@@')
            ? 'hunk'
            : '';
  return text
    .split('\n')
    .map(l => `<span class="cnb-d-${kind(l) || 'ctx'}">${esc(l) || ' '}</span>`)
    .join('\n');
}
