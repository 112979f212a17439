"""The kernel tools: the user's live variables, the kernel's history, and code run in its namespace.

All four are coroutines, so the registry runs them on the kernel's event-loop thread rather than
in a worker thread: they look at (and run_code changes) the user's objects while no cell runs,
never beside one. How run_code runs code and enforces its timeout is in `execute.py`; what
its result says and shows, in `run_outputs.py`.

They show the user's variables, not the interpreter: a path starts at a user variable and never
steps onto a module or a dunder (`lookup.py`). Secrets are masked (`masking.py`) in what all four
show; `inspect_variable(name, reveal=True)` shows one unmasked, and is a `read-secret` call the
user approves.
"""

from __future__ import annotations

import re
import sys
import traceback
from collections.abc import Callable, Mapping
from typing import Any

from ...config import COPILOT_CELL_CALL
from ...errors import ToolError
from ...kernel_bridge import hidden_names
from ...text import human_bytes
from ..context import ToolContext
from ..redaction.masking import (
    REVEAL_HINT,
    MaskingRepr,
    is_secret_name,
    mask_label,
    redact_and_cut,
    redact_text,
)
from ..registry import ToolOutput, ToolSet, bound_tool
from ..views.outputs import last_lines, strip_ansi
from .execute import CodeRun, run_code_in
from .guard import after_run, before_run
from .lookup import lookup
from .run_outputs import run_code_output
from .run_tools import follow, refuse_if_busy, run_tools
from .state import kernel_state
from .variables import (
    describe,
    memory_of,
    preview,
    safe_repr,
    size_of,
    type_name,
    user_variables,
)

MAX_VARIABLES = 300
"""Variables listed by one list_variables call."""
MAX_HISTORY = 100
"""Most history entries get_history shows."""
MAX_INPUT_CHARS = 1500
"""Characters shown of one history input or output."""
MAX_RUN_TIMEOUT = 600.0
"""Seconds run_code may be given: it is for quick checks, not for long jobs."""
MAX_TRACEBACK_LINES = 20
"""Lines of the last exception's traceback shown by get_history."""
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def kernel_tools(
    namespace_provider: Callable[[], dict[str, Any]], *, shell: Any | None = None
) -> ToolSet:
    """Tools over a live namespace (the kernel's `user_ns`); `shell` adds IPython's history."""
    return kernel_toolset(ToolContext(namespace=namespace_provider, shell=shell))


def kernel_toolset(ctx: ToolContext) -> ToolSet:
    """The kernel tools bound to a context (its namespace and shell)."""
    return ToolSet(
        [
            bound_tool(list_variables, ctx, on_request=True),
            bound_tool(inspect_variable, ctx, classify=_reveal_is_secret),
            bound_tool(get_history, ctx, on_request=True),
            bound_tool(run_code, ctx, category="execute", timeout_argument="timeout"),
            *run_tools(ctx),
        ]
    )


async def list_variables(ctx: ToolContext) -> ToolOutput:
    """List the user's variables in the kernel: name, type, shape or length, memory, and the
    value of numbers and short strings (secrets show as <masked>).

    Modules, names starting with "_", imported functions and IPython's own names are left out.
    """
    found = _variables(ctx)
    if not found:
        return ToolOutput(
            content="no user variables are defined in the kernel yet", summary="0 variables"
        )
    rows = [("name", "type", "shape/len", "memory", "value")]
    rows += [
        (n, type_name(v), size_of(v), human_bytes(memory_of(v)), preview(n, v))
        for n, v in found[:MAX_VARIABLES]
    ]
    widths = [min(40, max(len(r[i]) for r in rows)) for i in range(4)]
    lines = ["  ".join([*(r[i].ljust(widths[i]) for i in range(4)), r[4]]).rstrip() for r in rows]
    if len(found) > MAX_VARIABLES:
        lines.append(f"… {len(found) - MAX_VARIABLES:,} more variables not shown")
    if any(row[4] == "<masked>" for row in rows):
        lines.append(f"(<masked>: a secret; {REVEAL_HINT})")
    summary = f"{len(found)} variables"
    kernel_state(ctx.shell).looked_at(
        [n for n, _ in found], ctx.namespace(), hidden_names(ctx.shell)
    )
    return ToolOutput(content=f"{summary} in the kernel:\n" + "\n".join(lines), summary=summary)


async def inspect_variable(ctx: ToolContext, name: str, reveal: bool = False) -> ToolOutput:
    """Describe one variable in detail: a DataFrame's dtypes, nulls and head; an array's stats.

    Secrets (API keys, tokens, passwords, os.environ) are masked; reveal=True asks the user
    to show them, so use it only when the user's request needs the secret itself.

    Args:
        name: A name, with attributes and items if needed: "model.coef_", 'cfg["db"]',
            "rows[0]".
        reveal: Show masked secrets too; the user is asked first.
    """
    path = name.strip()
    known = [n for n, _ in _variables(ctx)]
    found = lookup(ctx.namespace(), path, hidden=hidden_names(ctx.shell), known=known)
    hidden = hidden_names(ctx.shell)
    kernel_state(ctx.shell).looked_at(_IDENTIFIER.findall(path)[:1], ctx.namespace(), hidden)
    content = describe(path, found.value, secret=found.secret, reveal=reveal)
    summary = f"{path}: {type_name(found.value)}"
    if found.secret and not reveal:
        summary += " (masked)"
    return ToolOutput(content=content, summary=summary)


async def get_history(ctx: ToolContext, n: int = 10) -> ToolOutput:
    """Show the kernel's recent inputs and outputs (In/Out) and the last error with its traceback.

    Args:
        n: How many recent inputs to show (at most 100).
    """
    if n < 1:
        raise ToolError(f"get_history: n must be at least 1, not {n}")
    namespace = ctx.namespace()
    entries = _inputs(namespace, ctx.shell)[-min(n, MAX_HISTORY) :]
    found = namespace.get("Out")
    outputs: Mapping[Any, Any] = found if isinstance(found, Mapping) else {}
    lines: list[str] = []
    for number, text in entries:
        shown, _ = redact_and_cut(text.rstrip(), MAX_INPUT_CHARS)
        lines.append(f"In [{number}]: {_indent(shown)}")
        if number in outputs:
            shown, _ = redact_and_cut(_output(text, outputs[number]), MAX_INPUT_CHARS)
            lines.append(f"Out[{number}]: {_indent(shown)}")
    if not lines:
        lines.append("(no inputs in this kernel's history yet)")
    lines += [redact_text(line)[0] for line in _last_error(ctx.shell)]
    content = "\n".join(lines)
    if "<masked: " in content:
        content += f"\n(secrets are masked; {REVEAL_HINT} if it is a variable)"
    return ToolOutput(content=content, summary=f"{len(entries)} inputs")


async def run_code(ctx: ToolContext, code: str, timeout: float = 30) -> ToolOutput:
    """Run Python code in the user's kernel, in their namespace, and show what it printed and
    returned. For quick checks and small computations; never to install packages or restart
    the kernel. Print small results; output past a limit is cut.

    It runs as a cell would (top-level await works) and its variables stay defined. A run past
    the timeout is stopped, what it did until then stays done. A run still going after a few
    seconds returns its handle and output so far and goes on; follow it with wait_run.

    Args:
        code: Python source; the value of a last expression is returned, as in a cell.
        timeout: Seconds before the run is stopped (at most 600).
    """
    if not 0 < timeout <= MAX_RUN_TIMEOUT:
        raise ToolError(
            f"run_code: timeout must be more than 0 and at most {MAX_RUN_TIMEOUT:g} seconds, "
            f"not {timeout:g}"
        )
    runs = refuse_if_busy(ctx, "run_code")
    kept = before_run(ctx, code, "run_code")

    async def finish(run: CodeRun) -> ToolOutput:
        return run_code_output(run, ctx.shell, timeout, after_run(ctx, code, kept))

    if runs.wait_seconds <= 0:  # runs in the background are off: the kernel's thread, blocking
        return await finish(
            await run_code_in(ctx.namespace(), code, timeout=timeout, shell=ctx.shell)
        )
    return await follow(ctx, runs, code, label="run_code", timeout=timeout, finish=finish)


def _reveal_is_secret(arguments: Mapping[str, Any]) -> str:
    """inspect_variable with reveal=True shows a secret unmasked: the user is asked first."""
    return "read-secret" if arguments.get("reveal") else "read"


def _variables(ctx: ToolContext) -> list[tuple[str, Any]]:
    return user_variables(ctx.namespace(), hidden_names(ctx.shell))


def _inputs(namespace: Mapping[str, Any], shell: Any | None) -> list[tuple[int, str]]:
    """(number, source) of past inputs as the user typed them, leaving out `%%copilot` cells.

    Those are already in the conversation, and one of them is the cell running now.
    """
    history = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    if history is None:
        history = namespace.get("In") or namespace.get("_ih") or []
    return [
        (number, text)
        for number, text in enumerate(history)
        if isinstance(text, str) and text.strip() and not is_copilot_cell(text)
    ]


def _output(source: str, value: Any) -> str:
    """A history output, masked whole when the input that made it names a secret (`api_key`)."""
    last = source.strip().splitlines()[-1] if source.strip() else ""
    if any(is_secret_name(word) for word in _IDENTIFIER.findall(last)):
        return mask_label(value, hint=False)
    return safe_repr(value, masker=MaskingRepr())


def is_copilot_cell(text: str) -> bool:
    """A `%%copilot` cell, as typed or as the input transformer rewrote it (IPython's `In`)."""
    return text.lstrip().startswith("%%copilot") or COPILOT_CELL_CALL in text


def _last_error(shell: Any | None) -> list[str]:
    """The last exception the kernel showed: ipykernel keeps its traceback; Python keeps the value."""
    value = getattr(sys, "last_value", None)
    shown = getattr(shell, "_last_traceback", None) if shell is not None else None
    if value is None and not shown:
        return ["last error: none"]
    head = f"{type(value).__name__}: {value}" if value is not None else "(unknown)"
    if shown:
        text = strip_ansi("\n".join(shown))
    else:
        assert value is not None
        text = "".join(traceback.format_exception(type(value), value, value.__traceback__))
    lines = [line for line in text.splitlines() if line.strip()]
    return [f"last error: {head}", *last_lines(lines, MAX_TRACEBACK_LINES)]


def _indent(text: str) -> str:
    return text.replace("\n", "\n    ")
