"""Reading and writing .ipynb files through the Workspace, never clobbering a notebook saved meanwhile.

A notebook is read with nbformat and remembered with the sha256 of the bytes it came from. A write
goes through nbformat and `Workspace.write_text` (atomic), and only after the file's bytes are
checked to hash to the same value: when JupyterLab (or anyone) saved the file in between, the write
is refused and the model is told to read it again. The check and the rename are not one atomic
step, so a save landing in that instant is not caught; everything slower is.

Cells are addressed by their nbformat 4.5 `id`. Notebooks written before 4.5 have none, and
nbformat would invent random ones on every read; here a missing, invalid or duplicate id is
replaced by one derived from the cell's position and source, so two reads of an unchanged file
agree, and the ids become permanent at the first write.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from ..errors import SandboxError, ToolError
from ..jsonschema_import import import_jsonschema

if TYPE_CHECKING:
    from .workspace import Workspace

NOTEBOOK_HINT = "pass notebook='path.ipynb'"
_VALID_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_SESSION_SOURCES = ("__session__", "JPY_SESSION_NAME", "__vsc_ipynb_file__")


@dataclass(kw_only=True)
class LoadedNotebook:
    """A notebook as read: its workspace-relative path, its nbformat node, its bytes' sha256.

    `digest` is "" for a notebook that did not exist yet when it was "read".
    """

    path: str
    node: Any
    digest: str


def digest_of(data: bytes) -> str:
    """The content hash a later write compares against."""
    return hashlib.sha256(data).hexdigest()


# --- which notebook --------------------------------------------------------------------------


def current_notebook_path(
    user_ns: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
) -> str | None:
    """The notebook this kernel serves, as its front end named it (None when nobody said).

    ipykernel copies `JPY_SESSION_NAME` (set by jupyter_server to the notebook's path) into
    `__session__`; VS Code sets `__vsc_ipynb_file__`. Consoles name sessions too, so only a
    name ending in `.ipynb` counts.
    """
    user_ns = user_ns if user_ns is not None else {}
    environ = environ if environ is not None else os.environ
    for key in _SESSION_SOURCES:
        value = environ.get(key) if key == "JPY_SESSION_NAME" else user_ns.get(key)
        if isinstance(value, str) and value.strip().lower().endswith(".ipynb"):
            return value.strip()
    return None


def resolve_notebook(
    workspace: Workspace,
    notebook: str | None,
    current: Callable[[], str | None],
    *,
    must_exist: bool = True,
) -> str:
    """The workspace-relative path of the notebook a tool call means; ToolError if unclear."""
    given = notebook.strip() if isinstance(notebook, str) and notebook.strip() else None
    if given is None:
        found = current()
        if found is None:
            raise ToolError(
                "no notebook is known for this kernel (it was not started by Jupyter with a "
                f"notebook, so __session__ and JPY_SESSION_NAME are not set); {NOTEBOOK_HINT}"
            )
        return _locate(workspace, found, must_exist=must_exist, explicit=False)
    if not given.lower().endswith(".ipynb"):
        raise ToolError(f"{given!r} is not a notebook; {NOTEBOOK_HINT} (a .ipynb file)")
    return _locate(workspace, given, must_exist=must_exist, explicit=True)


def _locate(workspace: Workspace, path: str, *, must_exist: bool, explicit: bool) -> str:
    """A path made workspace-relative; a relative session name is tried by its shorter tails.

    jupyter_server names a session relative to its own root, which may lie above the kernel's
    directory: `proj/a.ipynb` from the server root is `a.ipynb` in a kernel started in `proj/`.
    """
    candidates = [path]
    if not os.path.isabs(path) and not explicit:
        parts = PurePosixPath(path.replace(os.sep, "/")).parts
        candidates += ["/".join(parts[i:]) for i in range(1, len(parts))]
    for candidate in candidates:
        try:
            real = workspace.resolve(candidate)
        except SandboxError:
            if candidate == candidates[-1]:
                raise
            continue
        if real.is_file() or (not must_exist and candidate == path):
            return workspace.relative(real)
    where = "" if explicit else " (the notebook this kernel was started for)"
    raise ToolError(
        f"notebook {path!r}{where} does not exist in the workspace {workspace.root}; "
        f"{NOTEBOOK_HINT} with a path relative to it"
    )


# --- reading and writing ---------------------------------------------------------------------


def read_notebook(workspace: Workspace, path: str, *, missing_ok: bool = False) -> LoadedNotebook:
    """Load a notebook as nbformat 4.5 with stable cell ids, remembering what its bytes were."""
    try:
        data = workspace.read_bytes(path)
    except FileNotFoundError:
        if not missing_ok:
            raise ToolError(
                f"notebook {path!r} does not exist; call list_directory to see what exists"
            ) from None
        return LoadedNotebook(path=path, node=_nbformat().v4.new_notebook(), digest="")
    except IsADirectoryError:
        raise ToolError(f"{path!r} is a directory, not a notebook") from None
    try:
        nbformat = _nbformat()
        raw = nbformat.reader.reads(data.decode("utf-8"))
        before = (int(raw.get("nbformat", 0)), int(raw.get("nbformat_minor", 0)))
        node = nbformat.convert(raw, 4)
    except _READ_ERRORS + _nbformat_errors() as exc:
        raise ToolError(
            f"{path} is not a readable notebook ({type(exc).__name__}: {str(exc)[:200]}); "
            "read it with read_file to see what is wrong"
        ) from None
    _normalise_ids(node, renumber_all=before < (4, 5))
    return LoadedNotebook(path=path, node=node, digest=digest_of(data))


def write_notebook(workspace: Workspace, loaded: LoadedNotebook) -> None:
    """Write the notebook atomically, unless its file changed since it was read (then refuse)."""
    try:
        current = digest_of(workspace.read_bytes(loaded.path))
    except FileNotFoundError:
        current = ""
    if current != loaded.digest:
        raise ToolError(changed_message(loaded.path))
    text = _nbformat().writes(loaded.node, version=4)
    text = text if text.endswith("\n") else text + "\n"
    workspace.write_text(loaded.path, text)
    loaded.digest = digest_of(text.encode("utf-8"))


def changed_message(path: str) -> str:
    """One wording for "someone saved it meanwhile", wherever that is noticed."""
    return (
        f"{path} changed on disk since it was read (saved from JupyterLab?); "
        "read it again with list_cells and redo the edit"
    )


# --- cells -----------------------------------------------------------------------------------


def new_cell(cell_type: str, source: str, taken: set[str]) -> Any:
    """A fresh code or markdown cell with an id not in `taken`, as the agent writes it.

    The id is derived from the cell and the ids already there, not drawn at random: the same
    change to the same notebook makes the same cell, so the model reads the same result when a
    recorded session is replayed."""
    v4 = _nbformat().v4
    make = v4.new_markdown_cell if cell_type == "markdown" else v4.new_code_cell
    cell = make(source=source)
    seed = "\n".join([cell_type, source, *sorted(taken)])
    made = hashlib.sha256(seed.encode("utf-8")).hexdigest()[:8]
    while made in taken:
        made = hashlib.sha256(made.encode("ascii")).hexdigest()[:8]
    cell["id"] = made
    return as_written(cell)


def notebook_from_cells(cells: list[Mapping[str, Any]]) -> Any:
    """An nbformat node holding cells as a front end sent them (its in-memory notebook)."""
    nbformat = _nbformat()
    return nbformat.from_dict({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells})


def as_written(cell: Any) -> Any:
    """A cell the agent wrote: no outputs, no execution count, no trust (the user never ran it)."""
    if cell.get("cell_type") == "code":
        cell["outputs"] = []
        cell["execution_count"] = None
    metadata = cell.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop("trusted", None)
    return cell


def cell_source(cell: Mapping[str, Any]) -> str:
    """A cell's source as one string (nbformat on disk may split it into lines)."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _normalise_ids(node: Any, *, renumber_all: bool) -> None:
    """Give every cell a valid, unique id that is the same on every read of the same bytes."""
    node.nbformat, node.nbformat_minor = 4, max(5, int(node.get("nbformat_minor", 0)))
    kept: dict[int, str] = {}
    taken: set[str] = set()
    for index, cell in enumerate(node.cells):
        current = cell.get("id")
        valid = isinstance(current, str) and _VALID_ID.match(current) is not None
        if valid and not renumber_all and current not in taken:
            kept[index] = current
            taken.add(current)
    for index, cell in enumerate(node.cells):
        if index in kept:
            continue
        seed = f"{index}\n{cell_source(cell)}"
        made = hashlib.sha256(seed.encode("utf-8")).hexdigest()[:8]
        while made in taken:
            made = hashlib.sha256(made.encode("ascii")).hexdigest()[:8]
        cell["id"] = made
        taken.add(made)


def _nbformat() -> Any:
    """nbformat, imported on first use: it imports jsonschema, too slow for `%load_ext` (and
    first, without the IRI grammar jsonschema would build: `jsonschema_import`)."""
    import_jsonschema()
    import nbformat
    import nbformat.reader

    return nbformat


_READ_ERRORS: tuple[type[Exception], ...] = (UnicodeDecodeError, ValueError, LookupError)


def _nbformat_errors() -> tuple[type[Exception], ...]:
    from nbformat import ValidationError
    from nbformat.reader import NotJSONError

    return (NotJSONError, ValidationError)
