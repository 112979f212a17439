"""Which cell failed, and with what error: read on the kernel's side, never taken from the page.

The page's Fix with Copilot sends only a cell's id. The kernel reads that cell as the notebook
tools read it (the open notebook's live state, else the file), and its error from its own record
when it raised it: the failing runs kept since `%load_ext` (`failures.py`: each cell's latest,
by the id the front end sent with the run, while it still fails), formatted again as IPython
showed them; for an error from before `%load_ext`, Python's `sys.last_value` when the cell's run
number and error are the ones its traceback names. Otherwise the error is only an output saved
in the notebook, and the request says so (`fix_request.py`): a notebook someone sent may carry
a crafted one. With no cell named, the last cell that failed and still fails, else the
notebook's error output run last. Where no notebook is known (a console, VS Code with nothing
saved) the kernel's own record is the cell: its source as it ran.
"""

from __future__ import annotations

import re
import sys
import traceback as tb
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError

from ...agent.prompt.assembly import block_context
from ...errors import CopilotError
from ...tools.notebook.cells import find_cell
from ...tools.notebook.store import Opened, open_notebook
from ...tools.views.outputs import strip_ansi
from ...workspace.notebook_file import cell_source
from ..failures import copilot_own, failures_of, user_error
from .fix_request import FailedCell

_CELL_RUN = re.compile(r"\bCell In\s*\[(\d+)\]")
"""How IPython names a cell in a traceback's frame: `Cell In[7], line 2`."""


@dataclass(frozen=True, kw_only=True)
class KernelError:
    """The last error this kernel raised in a cell, as IPython and ipykernel keep it."""

    ename: str
    evalue: str
    traceback: tuple[str, ...]
    execution_count: int | None
    cell_id: str
    """The id the front end sent with the run (JupyterLab, Notebook 7, VS Code); "" if none."""
    source: str
    """The source of `In [N]` as it ran; "" when the history does not hold it."""


def kernel_error(shell: Any, cell_id: str = "") -> KernelError | None:
    """The last error a user's cell raised in this kernel (with `cell_id`, that cell's latest
    failing run, while it still fails); None if there is none."""
    record = failures_of(shell)
    kept = (record.by_cell.get(cell_id) if cell_id else record.last) if record else None
    if kept is not None:  # kept as it happened (since %load_ext)
        value: BaseException | None = kept.error
        count, found_id, source = kept.execution_count, kept.cell_id, kept.source
    elif record is None or not record.seen:  # an error from before %load_ext, if any
        value, count, found_id, source = _last_value(), None, "", ""
    else:
        return None  # the failing runs kept since %load_ext were all run again without error
    if value is None or not user_error(value):
        return None
    traceback = _traceback(shell, value)
    result = getattr(shell, "last_execution_result", None)
    if kept is None and result is not None and _ended_with(result, value):
        count = result.execution_count  # IPython's last run failed
        found_id = str(getattr(result.info, "cell_id", None) or "")
    if count is None:  # the run its traceback names
        named = _CELL_RUN.search(strip_ansi("\n".join(traceback)))
        count = int(named.group(1)) if named else None
    source = source or _ran(shell, count)
    if (source and copilot_own(source)) or (cell_id and found_id and found_id != cell_id):
        return None  # a copilot cell's own failure, or another cell's
    return KernelError(
        ename=type(value).__name__,
        evalue=str(value),
        traceback=traceback,
        execution_count=count,
        cell_id=found_id,
        source=source,
    )


def _last_value() -> BaseException | None:
    """Python's own record of the last error shown (IPython sets it)."""
    value = getattr(sys, "last_exc", None) or getattr(sys, "last_value", None)
    return value if isinstance(value, BaseException) else None


def _traceback(shell: Any, value: BaseException) -> tuple[str, ...]:
    """The traceback as the cell showed it (`Cell In[7], line 2`), made again from the exception
    by IPython's own formatter: ipykernel keeps what it showed only until the next cell runs."""
    formatter: Any = getattr(
        shell, "SyntaxTB" if isinstance(value, SyntaxError) else "InteractiveTB", None
    )
    try:
        return tuple(formatter.structured_traceback(type(value), value, value.__traceback__))
    except Exception:  # no IPython formatter here, or it failed: Python's own words
        return tuple(tb.format_exception(type(value), value, value.__traceback__))


async def failed_cell(session: Any, reference: str | None = None) -> FailedCell:
    """The failing cell `reference` names (its id or `#N`), or with None the last that failed;
    a UsageError that says why when there is none."""
    opened, why = await _notebook(session)
    if reference is not None:
        if opened is None:
            raise UsageError(
                f"%copilot fix {reference}: no notebook is known here ({why}); "
                "%copilot fix with no cell fixes the kernel's last error"
            )
        return _named(session.shell, opened, reference)
    kernel = kernel_error(session.shell)
    if kernel is not None:
        return _from_kernel(opened, kernel)
    if opened is not None and (found := _last_in_notebook(opened)) is not None:
        return found
    where = f"no cell of {opened.path} shows one" if opened is not None else why
    raise UsageError(
        f"%copilot fix: no failing cell to fix: this kernel has raised no error, and {where}. "
        "Run the cell that fails first, or name it: %copilot fix #4"
    )


async def _notebook(session: Any) -> tuple[Opened | None, str]:
    """The kernel's notebook as the cell tools read it (live, else the file), or why not."""
    ctx = block_context(session.workspace(), session.shell, session.live)
    try:
        return await open_notebook(ctx, None, for_edit=False), ""
    except (CopilotError, OSError, ValueError) as exc:
        return None, str(exc).split(";")[0]


def _named(shell: Any, opened: Opened, reference: str) -> FailedCell:
    try:
        index, cell = find_cell(opened.loaded, reference)
    except CopilotError as exc:
        raise UsageError(f"%copilot fix {reference}: {exc}") from None
    source = cell_source(cell)
    label = f"cell #{index + 1} of {opened.path}"
    if cell.cell_type != "code" or copilot_own(source):
        kind = "a copilot cell" if cell.cell_type == "code" else f"a {cell.cell_type} cell"
        raise UsageError(f"%copilot fix {reference}: {label} is {kind}; name a code cell of yours")
    saved = _error_output(cell)
    for kernel in (kernel_error(shell, str(cell.get("id", ""))), kernel_error(shell)):
        if kernel is not None and _raised_by(kernel, cell, saved):
            return _cell(opened, index, cell, kernel=kernel)
    if saved is None:
        raise UsageError(
            f"%copilot fix {reference}: {label} shows no error; run it, and fix it once it fails"
        )
    return _cell(opened, index, cell, saved=saved)


def _from_kernel(opened: Opened | None, kernel: KernelError) -> FailedCell:
    """The kernel's last error, with the notebook's cell where one is that run's."""
    if opened is not None:
        for index, cell in enumerate(opened.cells):
            if cell.cell_type == "code" and _raised_by(kernel, cell, _error_output(cell)):
                return _cell(opened, index, cell, kernel=kernel)
    return FailedCell(
        source=kernel.source,
        ename=kernel.ename,
        evalue=kernel.evalue,
        traceback=kernel.traceback,
        raised_here=True,
        cell_id=kernel.cell_id,
        execution_count=kernel.execution_count,
    )


def _last_in_notebook(opened: Opened) -> FailedCell | None:
    """The notebook's code cell with an error output that ran last (else the lowest one)."""
    found = [
        (cell.get("execution_count") or 0, index, cell)
        for index, cell in enumerate(opened.cells)
        if cell.cell_type == "code"
        and not copilot_own(cell_source(cell))
        and _error_output(cell) is not None
    ]
    if not found:
        return None
    _, index, cell = max(found, key=lambda item: (item[0], item[1]))
    return _cell(opened, index, cell, saved=_error_output(cell))


def _cell(
    opened: Opened,
    index: int,
    cell: Any,
    *,
    kernel: KernelError | None = None,
    saved: Mapping[str, Any] | None = None,
) -> FailedCell:
    source = cell_source(cell)
    count = cell.get("execution_count")
    if kernel is not None:
        return FailedCell(
            source=source,
            ename=kernel.ename,
            evalue=kernel.evalue,
            traceback=kernel.traceback,
            raised_here=True,
            cell_id=str(cell.get("id", "")),
            index=index,
            execution_count=kernel.execution_count if kernel.execution_count is not None else count,
            notebook=opened.path,
            edited=bool(kernel.source) and kernel.source.strip() != source.strip(),
        )
    assert saved is not None
    return FailedCell(
        source=source,
        ename=str(saved.get("ename", "")),
        evalue=str(saved.get("evalue", "")),
        traceback=_lines(saved.get("traceback")),
        raised_here=False,
        cell_id=str(cell.get("id", "")),
        index=index,
        execution_count=count if isinstance(count, int) else None,
        notebook=opened.path,
    )


def _raised_by(kernel: KernelError, cell: Any, saved: Mapping[str, Any] | None) -> bool:
    """Whether the kernel's last error is this cell's: IPython's run names the cell, or the
    cell's run number and shown error are the kernel's (a run without an id)."""
    if kernel.cell_id:
        return kernel.cell_id == str(cell.get("id", ""))
    if kernel.execution_count is None or cell.get("execution_count") != kernel.execution_count:
        return False
    return saved is None or str(saved.get("ename", "")) == kernel.ename


def _error_output(cell: Any) -> Mapping[str, Any] | None:
    outputs = cell.get("outputs") or []
    return next(
        (o for o in outputs if isinstance(o, Mapping) and o.get("output_type") == "error"), None
    )


def _ended_with(result: Any, value: BaseException) -> bool:
    """Whether an IPython run ended with this very exception (by identity, never by `==`)."""
    return any(value is e for e in (result.error_before_exec, result.error_in_exec))


def _ran(shell: Any, count: int | None) -> str:
    """The source of `In [count]` as the user typed it; "" when the history lacks it."""
    history = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    if count is None or not isinstance(history, Sequence) or not 0 < count < len(history):
        return ""
    source = history[count]
    return source if isinstance(source, str) else ""


def _lines(traceback: Any) -> tuple[str, ...]:
    if isinstance(traceback, str):
        return (traceback,)
    if isinstance(traceback, Sequence):
        return tuple(str(line) for line in traceback)
    return ()
