"""What the chat panel offers after `@`: workspace files, the notebook's cells, the user's variables.

Every candidate is a reference `agent/prompt/references.py` resolves as written: a file path made only
of the characters a reference may hold (`[\\w./-]`, not ending in punctuation), so a path with a
space or other characters cannot be written as a reference and is not offered; `cell:ID` (or
`cell:#N` for a cell without an id) and `var:name`. Files come from the walk the file tools use
(`.git`, gitignored paths and symlinks skipped) with the secret paths (`.env`, keys) left out, since
a reference to one is refused anyway. The walk runs in a thread, is bounded, and is kept for
`FILES_TTL` seconds; an older listing answers at once while a new one is walked, so a keystroke
never waits for the disk once the panel has listed the workspace.

Ranking (`rank`, pure, case-insensitive): first what starts with the query (the reference, a
variable's name, a cell's id or `#N`), then a file with a folder or name that starts with it, then
a file or variable that contains it, then a cell with a word of its first line that starts with
it. Within a rank: by depth (cells and variables count as top level), files before cells before
variables, then each kind's own order (the walk's, the notebook's, by name).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ...agent.prompt.assembly import block_context
from ...agent.session import CopilotSession, current_dir
from ...errors import CopilotError
from ...kernel_bridge import hidden_names
from ...text import shorten
from ...tools.context import ToolContext
from ...tools.kernel.variables import size_of, type_name, user_variables
from ...tools.notebook.numbering import cell_label
from ...tools.notebook.store import open_notebook
from ...tools.search.walk import walk_files
from ...workspace.notebook_file import resolve_notebook
from ...workspace.workspace import Workspace
from .wire import CompletionItem

Kind = Literal["file", "cell", "var"]
MAX_CANDIDATES = 50
"""Candidates one answer holds: more is noise in a popup."""
MAX_QUERY = 200
"""Characters of a query looked at (a longer one is no reference anyone types)."""
FILES_TTL = 5.0
"""Seconds a file listing is fresh; an older one still answers while a new one is walked."""
CELLS_TTL = 2.0
"""Seconds the notebook's cells are kept: one live request per burst of typing, not per key."""
MAX_FILES = 50_000
"""Files one walk lists at most (10,000 files: about 20 ms to walk, 5 ms to rank per key)."""
WALK_SECONDS = 2.0
"""Longest one walk runs; what it found by then is the listing."""
LIVE_WAIT = 1.0
"""Seconds an open notebook may take to send its cells; past it the file's cells are used."""

_REFERABLE = re.compile(r"[\w./-]+")
_VARIABLE = re.compile(r"[A-Za-z_][\w.]*")
_CELL_ID = re.compile(r"[\w-]+")
_WORD = re.compile(r"\w+")
_TRAILING = ".,;:!?)"
"""Characters `find_references` strips from the end of a reference."""
_ORDER: dict[Kind, int] = {"file": 0, "cell": 1, "var": 2}


@dataclass(frozen=True, kw_only=True)
class Candidate:
    """One entry of the popup: `text` is the reference without its `@`."""

    text: str
    kind: Kind
    detail: str = ""
    order: int = 0
    """Its place among its own kind (a cell's index, a file's place in the walk)."""
    also: tuple[str, ...] = ()
    """Lower-cased names it also matches by (a variable's name, a cell's id and `#N`)."""
    words: str = ""
    """Lower-cased words matched last by their starts (a cell's first line), see `word_starts`."""

    def wire(self) -> CompletionItem:
        """What the front end gets (`wire.py`)."""
        return {"text": self.text, "kind": self.kind, "detail": self.detail}


def word_starts(text: str) -> str:
    """`" plot the sales"`: the words of a text, each led by a space, so `" " + start` finds a
    word that starts so (`plo`), not one that merely contains it (`pandas` for `da`)."""
    return "".join(" " + word for word in _WORD.findall(text.lower()))


def referable(path: str) -> bool:
    """Whether `@path` is read back by `find_references` as exactly this path."""
    return _REFERABLE.fullmatch(path) is not None and not path.endswith(tuple(_TRAILING))


def rank(
    query: str, candidates: Iterable[Candidate], limit: int = MAX_CANDIDATES
) -> list[Candidate]:
    """The candidates that match `query` (case-insensitively), best first, at most `limit`."""
    wanted = query.lower()[:MAX_QUERY]
    rest = wanted[5:] if wanted.startswith("cell:") else wanted
    starts = word_starts(rest) if ":" not in rest else ""
    scored = []
    for candidate in candidates:
        tier = _tier(wanted, candidate, starts)
        if tier is not None:
            depth = candidate.text.count("/")
            scored.append((tier, depth, _ORDER[candidate.kind], candidate.order, candidate))
    scored.sort(key=lambda item: item[:4])
    return [item[-1] for item in scored[:limit]]


def _tier(query: str, candidate: Candidate, starts: str) -> int | None:
    text = candidate.text.lower()
    if text.startswith(query) or any(name.startswith(query) for name in candidate.also):
        return 0
    if candidate.kind == "file" and "/" + query in text:
        return 1
    if query in text and candidate.kind != "cell":  # not inside a cell's random id
        return 2
    if starts and starts in candidate.words:
        return 3
    return None


def file_candidates(paths: Iterable[str]) -> list[Candidate]:
    """Workspace-relative paths as candidates, those that cannot be a reference left out."""
    return [
        Candidate(text=path, kind="file", order=index)
        for index, path in enumerate(paths)
        if referable(path)
    ]


def cell_candidates(cells: Iterable[Mapping[str, Any]]) -> list[Candidate]:
    """A notebook's cells (nbformat dicts) as `cell:ID` with their number and first line."""
    found = []
    for index, cell in enumerate(cells):
        raw = cell.get("source", "")
        source = "".join(raw) if isinstance(raw, list) else str(raw)
        first = next((line.strip() for line in source.splitlines() if line.strip()), "")
        cell_id = str(cell.get("id") or "")
        number = cell_label(index)
        name = cell_id if _CELL_ID.fullmatch(cell_id) else number
        kind = str(cell.get("cell_type", ""))
        detail = f"{number} {kind}" + (f" · {shorten(first, 60)}" if first else "")
        found.append(
            Candidate(
                text=f"cell:{name}",
                kind="cell",
                detail=detail,
                order=index,
                also=(name.lower(), number, f"cell:{number}"),
                words=word_starts(first),
            )
        )
    return found


def variable_candidates(namespace: Mapping[str, Any], hidden: Mapping[str, Any]) -> list[Candidate]:
    """The user's variables, as the context block lists them, with their type and size."""
    found = []
    for index, (name, value) in enumerate(user_variables(namespace, hidden)):
        if _VARIABLE.fullmatch(name) is None:
            continue
        size = size_of(value)
        detail = type_name(value) + (f" {size}" if size else "")
        found.append(
            Candidate(
                text=f"var:{name}", kind="var", detail=detail, order=index, also=(name.lower(),)
            )
        )
    return found


def list_files(
    workspace: Workspace, *, limit: int = MAX_FILES, seconds: float = WALK_SECONDS
) -> list[str]:
    """The files a reference may name: the file tools' walk, secrets left out, bounded."""
    is_secret = workspace.secrets.for_walk(workspace.root)
    deadline = time.monotonic() + seconds
    found: list[str] = []
    for walked, (relative, _) in enumerate(walk_files(workspace.root), 1):
        if not is_secret(relative):
            found.append(relative)
        if len(found) >= limit or (walked % 512 == 0 and time.monotonic() > deadline):
            break
    return found


class FileListing:
    """The workspace's files, walked in a thread and kept briefly; one walk at a time."""

    def __init__(
        self,
        *,
        ttl: float = FILES_TTL,
        clock: Callable[[], float] = time.monotonic,
        lister: Callable[[Workspace], list[str]] = list_files,
    ) -> None:
        self._ttl = ttl
        self._clock = clock
        self._lister = lister
        self._root: Path | None = None
        self._files: list[Candidate] | None = None
        self._when = 0.0
        self._walk: asyncio.Task[list[Candidate]] | None = None

    async def candidates(self, workspace: Workspace) -> list[Candidate]:
        """The listing: a fresh one at once, an old one at once while a new one is walked,
        else (the first time, or another root) the walk's own result."""
        if self._root != workspace.root:
            self._root, self._files, self._walk = workspace.root, None, None
        fresh = self._files is not None and self._clock() - self._when < self._ttl
        if not fresh and self._walk is None:
            self._walk = asyncio.get_running_loop().create_task(self._list(workspace))
        if self._files is not None:
            return self._files
        assert self._walk is not None
        return await asyncio.shield(self._walk)  # a cancelled keystroke leaves the walk running

    async def _list(self, workspace: Workspace) -> list[Candidate]:
        try:
            files = file_candidates(await asyncio.to_thread(self._lister, workspace))
        finally:
            self._walk = None
        if workspace.root == self._root:
            self._files, self._when = files, self._clock()
        return files


class Completer:
    """Answers the panel's `@` queries from the workspace, the notebook and the namespace."""

    def __init__(
        self,
        context: Callable[[], ToolContext],
        *,
        files: FileListing | None = None,
        cells_ttl: float = CELLS_TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._context = context
        self.files = files if files is not None else FileListing()
        self._cells_ttl = cells_ttl
        self._clock = clock
        self._cells: tuple[float, list[Candidate]] | None = None

    async def candidates(self, query: str) -> list[Candidate]:
        """The best candidates for what follows `@` (at most `MAX_CANDIDATES`)."""
        ctx = self._context()
        found: list[Candidate] = []
        if ctx.workspace is not None:
            found += await self.files.candidates(ctx.workspace)
        found += await self._notebook_cells(ctx)
        hidden = hidden_names(ctx.shell)
        found += variable_candidates(ctx.namespace(), hidden)
        return rank(query, found)

    async def _notebook_cells(self, ctx: ToolContext) -> list[Candidate]:
        now = self._clock()
        if self._cells is not None and now - self._cells[0] < self._cells_ttl:
            return self._cells[1]
        cells = cell_candidates(await notebook_cells(ctx))
        self._cells = (now, cells)
        return cells


async def notebook_cells(ctx: ToolContext) -> list[dict[str, Any]]:
    """The current notebook's cells as `@cell:` resolves them: the open notebook when a front end
    has it (within `LIVE_WAIT`), else the file; none when no notebook is known."""
    if ctx.workspace is None or ctx.current_notebook() is None:
        return []
    try:
        path = resolve_notebook(ctx.workspace, None, ctx.current_notebook, must_exist=True)
        view = await ctx.live.find(ctx.workspace.root / path) if ctx.live is not None else None
        if view is not None:
            opened = await asyncio.wait_for(open_notebook(ctx, None, for_edit=False), LIVE_WAIT)
            return [dict(cell) for cell in opened.cells]
        data = await asyncio.to_thread(ctx.workspace.read_bytes, path)
        cells = json.loads(data).get("cells") or []
    except (CopilotError, OSError, ValueError, AttributeError, TimeoutError):
        return []
    return [cell for cell in cells if isinstance(cell, dict)]


def session_context(session: CopilotSession) -> ToolContext:
    """What a query reads: the workspace the next turn works in (the kernel's current
    directory), the kernel's notebook and namespace; reads here never count as the model's."""
    workspace = session.workspace()
    if workspace.root != current_dir():
        workspace = Workspace(current_dir(), secrets=workspace.secrets)
    return block_context(workspace, session.shell, session.live)
