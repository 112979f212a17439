"""Text helpers every layer shares: cutting text to size, byte counts for people, unified diffs,
and what a server said made safe to show.

Pure functions, no I/O: one wording for "N more characters" and one diff format (git's, with
/dev/null for a side that does not exist) wherever text is shortened or a change is shown; one
gate (`server_text`) for every word a model server sends, so that none reaches a terminal raw.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_NO_NEWLINE = "\n\\ No newline at end of file\n"
SECRET_VALUE = re.compile(
    "|".join(
        [
            r"-----BEGIN[A-Z ]*PRIVATE KEY-----(?:\\[nr]|[A-Za-z0-9+/=\s:,.-])*",
            r"\bsk-[A-Za-z0-9_\-]{20,}",  # OpenAI (sk-proj-...), Anthropic (sk-ant-...)
            r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}",  # Stripe
            r"\bgh[pousr]_[A-Za-z0-9]{30,}",  # GitHub tokens
            r"\bgithub_pat_[A-Za-z0-9_]{22,}",
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key ids
            r"\bxox[abposr]-[A-Za-z0-9-]{10,}",  # Slack
            r"\bAIza[0-9A-Za-z_\-]{35}",  # Google API keys
            r"\bhf_[A-Za-z0-9]{30,}",  # Hugging Face
            r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",  # JWT
            r"\btid=[0-9a-fA-F]{8,};[^\s\"']*",  # GitHub Copilot API tokens
            r"(?<=[Bb]earer )[A-Za-z0-9._~+/\-]{20,}=*",
            r"\bcnb-[A-Za-z0-9_\-]{32,}",  # copilot_nb's own proxy token (`%copilot serve`)
        ]
    )
)
"""Well-known secret formats, found anywhere in a string."""
_SECRET_HINTS = (
    "-----BEGIN",
    "sk-",
    "k_live_",
    "k_test_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "AKIA",
    "ASIA",
    "xox",
    "AIza",
    "hf_",
    "eyJ",
    "tid=",
    "earer ",
    "cnb-",
)
"""A literal each of SECRET_VALUE's formats contains: text with none of them cannot match."""


def may_hold_secret(text: str) -> bool:
    """False when no SECRET_VALUE format can occur in `text`: a substring check per format,
    about a hundred times faster than the regular expression on text that holds none (a
    megabyte of streamed reply costs 2 ms instead of 260)."""
    return any(hint in text for hint in _SECRET_HINTS)


SECRET_WORDS = frozenset(
    {
        "key",
        "token",
        "secret",
        "password",
        "passwd",
        "passphrase",
        "credential",
        "creds",
        "auth",
        "authorization",
        "authentication",
        "bearer",
        "cookie",
        "session",
        "sessionid",
        "private",
        "privkey",
    }
)
"""Words of a name that say it holds a secret (plurals count too, except `keys`)."""
_COMPOUND_ENDINGS = ("key", "token", "secret", "password", "passwd")
"""Run-together names ending so are secrets too: `apikey`, `accesstoken`, `clientsecret`."""
_NOT_SECRET = frozenset({"keys", "monkey", "donkey", "turkey", "hockey", "jockey", "whiskey"})
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def is_secret_name(name: str) -> bool:
    """Whether a variable, attribute or key name says it holds a secret (`githubToken` does)."""
    for word in _WORDS.findall(name):
        lower = word.lower()
        stem = lower[:-1] if lower.endswith("s") and len(lower) > 3 else lower
        if lower in _NOT_SECRET or stem in _NOT_SECRET:
            continue
        if stem in SECRET_WORDS or lower in SECRET_WORDS or stem.endswith(_COMPOUND_ENDINGS):
            return True
    return False


BINARY_CHANGE = "Binary or large file "
"""How a diff says a file changed that has no text diff: `Binary or large file X changed`."""


_SURROGATE = re.compile("[\ud800-\udfff]")


def well_formed(text: str) -> str:
    """`text` as valid Unicode: a surrogate pair joined into its character, a lone surrogate
    made U+FFFD. JSON escapes a stream split in two (`"\\ud83d"` then `"\\ude00"`) decode to
    surrogates that UTF-8 cannot encode; a file or request written with them raises."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, clearing the screen
    r"|\x1b[\]PX^_][^\x07\x1b]{0,4096}(?:\x07|\x1b\\)"  # OSC (a title, the clipboard), DCS, PM, APC
    r"|\x1b[ -/]*[0-~]"  # every other escape: two characters, or a character set's choice
    r"|\x9b[0-?]*[ -/]*[@-~]"  # CSI in its one-character (C1) form
)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""Control characters but \\n and \\t (C0, DEL, C1), and the bidi overrides and isolates that
make a line read otherwise than it is stored."""
SERVER_TEXT_CHARS = 2_000
"""Characters of a server's message shown: a provider's error is a sentence or two."""
SERVER_NAME_CHARS = 200
"""Characters of a name a server gives (a model id, a vendor) shown on one line."""


def terminal_safe(text: str) -> str:
    """`text` with nothing a terminal acts on: escape sequences taken out whole (a window
    title's or a clipboard write's payload too), every other control character but \\n and \\t,
    and bidi overrides. A terminal obeys them in a cell's text/plain, a traceback or a log."""
    text = _ESCAPE_SEQUENCE.sub("", text.replace("\r\n", "\n"))
    return _CONTROL.sub("", text)


def server_text(value: object, limit: int = SERVER_TEXT_CHARS, *, one_line: bool = False) -> str:
    """What a server said, as it may be shown: cut to about `limit` characters (its start and
    end kept, saying how much was left out), valid Unicode, and plain (`terminal_safe`). Every
    word of a model server's (an error's message, a model's id or name) passes here where it
    enters, so no surface needs to clean it. `one_line`: a name, its whitespace runs one space."""
    text = value if isinstance(value, str) else str(value)
    if not one_line:
        return terminal_safe(well_formed(clip(text, limit, tail=limit // 4)))
    words = " ".join(terminal_safe(well_formed(text[: 2 * limit])).split())
    if len(words) <= limit and len(text) <= 2 * limit:
        return words
    left_out = len(words) - limit if len(text) <= 2 * limit else len(text) - limit
    return f"{words[:limit]}… [{left_out:,} more characters]"


def clip(text: str, limit: int, *, tail: int = 0) -> str:
    """`text` cut to about `limit` characters, with a marker saying how much was left out; with
    `tail`, the last `tail` characters are kept too (an error's end is often what matters)."""
    if len(text) <= limit:
        return text
    if tail <= 0:
        return f"{text[:limit]}\n… [{len(text) - limit:,} more characters]"
    keep_tail = min(tail, limit)
    keep_head = limit - keep_tail
    cut = len(text) - keep_head - keep_tail
    return f"{text[:keep_head]}\n… [{cut:,} characters cut] …\n{text[len(text) - keep_tail :]}"


def shorten(text: str, limit: int) -> str:
    """One line of at most `limit` characters, ending in '…' when cut (labels, table cells)."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def counted(count: int, noun: str, many: str = "") -> str:
    """`1 path`, `2 paths`, `1,024 lines`: a count with its noun as a reader says it, never a
    hedged plural; `many` where the plural is not the noun and an s (`1 match`, `2 matches`)."""
    return f"{count:,} {noun if count == 1 else many or noun + 's'}"


def first_line(text: str, limit: int = 120) -> str:
    """The first non-blank line of `text`, shortened: a summary for a line in a list."""
    stripped = text.strip()
    return shorten(stripped.splitlines()[0] if stripped else "", limit)


def human_bytes(size: int | None) -> str:
    """`2.4 KB`: a size a reader takes in at a glance; `?` when it could not be measured."""
    if size is None:
        return "?"
    for unit, scale in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} B"


def unified_diff(
    before: str | Sequence[str] | None, after: str | Sequence[str] | None, name: str
) -> str:
    """git's diff of one text (None: the side does not exist, shown as /dev/null); a string is
    split into lines, a list of lines (each ending in '\\n') is used as it is."""
    lines = difflib.unified_diff(
        _lines(before),
        _lines(after),
        fromfile="/dev/null" if before is None else f"a/{name}",
        tofile="/dev/null" if after is None else f"b/{name}",
    )
    return "".join(line if line.endswith("\n") else line + _NO_NEWLINE for line in lines)


def editor_lines(text: str) -> list[str]:
    """Lines as an editor counts them: split at \\n only, a final newline ends the last line."""
    if text == "":
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def cell_diff(
    notebook: str, cell_id: str, before: str | None, after: str | None, *, name: str = ""
) -> str:
    """A unified diff of one cell's source, named `notebook#cell_id` (the model addresses cells
    by id) unless `name` says otherwise; a new or deleted cell is diffed against /dev/null.
    Cells rarely end in a newline, so both sides get one: no "No newline at end of file"
    noise."""

    def lines(source: str | None) -> list[str] | None:
        return None if source is None else [line + "\n" for line in editor_lines(source)]

    return unified_diff(lines(before), lines(after), name or f"{notebook}#{cell_id}")


def _lines(text: str | Sequence[str] | None) -> list[str]:
    if text is None:
        return []
    return text.splitlines(keepends=True) if isinstance(text, str) else list(text)


def diffstat(diff: str) -> dict[str, tuple[int, int]]:
    """{path: (added, removed)} of a unified diff; hunk lengths are read, so a removed line that
    starts with '-- ' is not taken for a file header. A "Binary or large file X changed" line
    counts X with no lines."""
    stats: dict[str, list[int]] = {}
    current, old_left, new_left = "", 0, 0
    for line in diff.splitlines():
        if old_left > 0 or new_left > 0:
            if line.startswith("+"):
                new_left -= 1
                stats[current][0] += 1
            elif line.startswith("-"):
                old_left -= 1
                stats[current][1] += 1
            elif not line.startswith("\\"):
                old_left, new_left = old_left - 1, new_left - 1
            continue
        hunk = _HUNK.match(line)
        if line.startswith(("--- ", "+++ ")):
            name = line[4:].removeprefix("a/").removeprefix("b/")
            current = "" if line.startswith("--- ") else current
            if name != "/dev/null":
                current = name
        elif hunk and current:
            old_left, new_left = (int(n) if n is not None else 1 for n in hunk.groups())
        elif line.startswith(BINARY_CHANGE):
            current = line.removeprefix(BINARY_CHANGE).rsplit(" changed", 1)[0]
        else:
            continue
        if current:
            stats.setdefault(current, [0, 0])
    return {path: (added, removed) for path, (added, removed) in stats.items()}


def total_changes(diff: str) -> tuple[int, int]:
    """(lines added, lines removed) over every file of a unified diff."""
    counts = diffstat(diff).values()
    return sum(a for a, _ in counts), sum(r for _, r in counts)
