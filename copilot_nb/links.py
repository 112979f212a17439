"""Which link targets a click may follow: one rule for every view of the model's text.

The cell's and the panel's HTML (`jupyter/safe_html.py`) and the Markdown export of a saved
conversation (`agent/conversations/transcript.py`) all ask `safe_url`, so a target one of them
refuses is refused by all: only `http`, `https`, `mailto` and relative targets, judged after
entities and percent-escapes are decoded and whitespace and control characters are removed, as a
browser would.
"""

from __future__ import annotations

import html
import re
from urllib.parse import unquote

ALLOWED_SCHEMES = frozenset({"http", "https", "mailto"})
SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")
_INVISIBLE = re.compile(r"[\x00-\x20\x7f-\x9f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")


def safe_url(url: str) -> bool:
    """True for a link target a click may follow: http(s), mailto, or relative (no other scheme)."""
    for form in (url, unquote(url)):
        plain = _INVISIBLE.sub("", html.unescape(form))
        scheme = SCHEME.match(plain)
        if scheme is not None and scheme.group(1).lower() not in ALLOWED_SCHEMES:
            return False
    return True
