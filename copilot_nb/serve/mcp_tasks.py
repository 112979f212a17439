"""The agent's long runs as MCP tasks at `/mcp`, so an outside agent follows a run as ours does.

`run_code` and `run_cell` start a run that may outlast the call (`tools/kernel/runs.py`); the
model follows it with wait_run, run_status and stop_run. An MCP client that declares the Tasks
extension gets the same run as a task instead: the `tools/call` answers as soon as the run has
started (after its approval), the task's id is the run's handle (`run-3`), `tasks/get` tells
its state (working, with how long it has run and its last line of output; completed, with the
tool's result inline; cancelled; failed), and `tasks/cancel` stops it as stop_run does (what it
did until then stays done). A call that is refused before any run starts (denied, another run
going on) answers with its result, as before. Clients that do not declare the extension, and
every other tool, are served exactly as before.

Which revision, and why: the Tasks extension of the 2026-07-28 revision
(`io.modelcontextprotocol/tasks`, SEP-2663: `resultType: "task"`, `tasks/get` with the result
inline, `tasks/update`, `tasks/cancel`; server-directed, so no `execution.taskSupport` on tools
and no `tasks/list` or `tasks/result`). The SDK's client (mcp 2.3) negotiates 2026-07-28 with
this endpoint by default, and drives such a result through a `ResultClaim` on `tools/call`. The
2025-11-25 form (`params.task`, `tasks/list`, `tasks/result`) is what its types still describe,
but the SDK dispatches none of its methods and checks a `tools/call` result against
`CallToolResult` on those connections, so neither side of the SDK could carry it; a legacy
client's `task` field is ignored and its call answers as it always has.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ..text import first_line
from ..tools.kernel.run_tools import ended, told_of_runs
from ..tools.kernel.runs import KEEP_ENDED, Run, last_lines
from ..tools.redaction.masking import redact_text
from ..tools.registry import ToolOutput

EXTENSION = "io.modelcontextprotocol/tasks"
TASK_TOOLS = frozenset({"run_code", "run_cell"})
"""The tools whose calls become tasks: the two that start a run."""
POLL_MS = 1000
"""How often a client is asked to poll `tasks/get`."""
MISSING_CAPABILITY = -32021
"""The extension's error for a `tasks/*` request from a client that did not declare it."""
STOPPED_BY = "the MCP client (tasks/cancel)"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(kw_only=True)
class RunTask:
    """One run followed as a task: the run, and the call carried on to the run's end."""

    run: Run
    whole: asyncio.Future[ToolOutput]
    """The tool call and then the run's end: the result a client reads when it completes."""
    created: str = field(default_factory=_now)
    updated: str = ""

    def state(self, content: Callable[[ToolOutput], list[Any]]) -> dict[str, Any]:
        """The task as `tasks/get` answers (a `DetailedTask`); `content` makes a result's
        MCP content blocks."""
        view: dict[str, Any] = {
            "taskId": self.run.handle,
            "createdAt": self.created,
            "lastUpdatedAt": self.updated or self.created,
            "ttlMs": None,
            "pollIntervalMs": POLL_MS,
        }
        if not self.whole.done():
            return {**view, "status": "working", "statusMessage": working_message(self.run)}
        error = self.whole.exception()
        if error is not None:
            message = f"{self.run.handle} ({self.run.label}): {error}"
            return {
                **view,
                "status": "failed",
                "statusMessage": message,
                "error": {"code": -32603, "message": message},
            }
        output = self.whole.result()
        if self.run.stopped_by:
            return {**view, "status": "cancelled", "statusMessage": stopped_message(self.run)}
        self.run.reported = True  # the client has read how it ended
        result = {"content": content(output), "isError": output.is_error}
        return {**view, "status": "completed", "statusMessage": output.summary, "result": result}


def working_message(run: Run) -> str:
    """A run going on in one line: its handle, how long it has run, its last line of output."""
    return _line(f"{run.handle} ({run.label}) running for {run.elapsed():.0f} s", run)


def stopped_message(run: Run) -> str:
    """A stopped run in one line (a cancelled task carries no result, so its last output)."""
    return _line(
        f"{run.handle} ({run.label}) stopped by {run.stopped_by} after {run.elapsed():.1f} s; "
        "what it did until then stays done",
        run,
    )


def _line(head: str, run: Run) -> str:
    last = last_lines(run, 1) or "(no output yet)"
    return redact_text(first_line(f"{head}; last output: {last}", 300))[0]


class RunTasks:
    """The endpoint's tasks: the runs started by clients that follow them as tasks."""

    def __init__(self) -> None:
        self._tasks: dict[str, RunTask] = {}

    @staticmethod
    def offered(name: str, ctx: Any) -> bool:
        """Whether this call becomes a task: a tool that starts a run, from a client that
        declared the extension on this request."""
        return name in TASK_TOOLS and declared(ctx)

    async def start(self, call: Callable[[], Awaitable[ToolOutput]]) -> RunTask | ToolOutput:
        """Make the call; as soon as its run starts, the task that follows it. A call that ends
        before any run starts (refused, or denied at its approval) is its result."""
        loop = asyncio.get_running_loop()
        started: asyncio.Future[Run] = loop.create_future()

        def tell(run: Run) -> None:
            if not started.done():
                started.set_result(run)

        async def carried() -> ToolOutput:
            with told_of_runs(tell):
                output = await call()
            if not started.done():
                return output
            run = started.result()
            return ended(run, await asyncio.shield(run.outcome))

        whole = asyncio.ensure_future(carried())
        either: set[asyncio.Future[Any]] = {started, whole}
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if not started.done():
            return whole.result()
        task = RunTask(run=started.result(), whole=whole)
        whole.add_done_callback(lambda _: setattr(task, "updated", _now()))
        self._tasks[task.run.handle] = task
        self._forget_old()
        return task

    def get(self, task_id: str) -> RunTask:
        """The task by its id, or the protocol error for an id this server never gave."""
        task = self._tasks.get(task_id)
        if task is None:
            from mcp.shared.exceptions import MCPError
            from mcp_types import INVALID_PARAMS

            known = ", ".join(self._tasks) or "none yet"
            raise MCPError(
                INVALID_PARAMS,
                f"Failed to retrieve task: no task {first_line(task_id, 80)!r} on this server "
                f"(its tasks: {known}); a task's id is what tools/call returned",
            )
        return task

    def cancel(self, task_id: str) -> None:
        """Stop the task's run where it is, as stop_run does; a run already over stays as it
        ended (cancellation is cooperative)."""
        self.get(task_id).run.stop(STOPPED_BY)

    def _forget_old(self) -> None:
        over = [handle for handle, task in self._tasks.items() if task.whole.done()]
        for handle in over[: max(0, len(over) - KEEP_ENDED)]:
            del self._tasks[handle]


def created(task: RunTask, content: Callable[[ToolOutput], list[Any]]) -> dict[str, Any]:
    """The `tools/call` answer that hands the client its task (`CreateTaskResult`)."""
    state = task.state(content)
    return {
        **{k: v for k, v in state.items() if k not in ("result", "error")},
        "resultType": "task",
    }


def declared(ctx: Any) -> bool:
    """Whether the client declared the Tasks extension on this request, on a connection of a
    revision that has it (a handshake-era one cannot carry its results)."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    if getattr(ctx, "protocol_version", None) not in MODERN_PROTOCOL_VERSIONS:
        return False
    capabilities = getattr(getattr(ctx, "session", None), "client_capabilities", None)
    extensions = getattr(capabilities, "extensions", None)
    return isinstance(extensions, Mapping) and EXTENSION in extensions


def serve_tasks(server: Any, tasks: RunTasks, content: Callable[[ToolOutput], list[Any]]) -> None:
    """Serve `tasks/get`, `tasks/update` and `tasks/cancel` on a low-level `Server`, and
    advertise the extension."""
    from mcp_types import CancelTaskRequestParams, GetTaskRequestParams

    async def get(ctx: Any, params: GetTaskRequestParams) -> dict[str, Any]:
        _require_declared(ctx)
        return tasks.get(params.task_id).state(content)

    async def update(ctx: Any, params: GetTaskRequestParams) -> dict[str, Any]:
        # a run never asks its client for input: its `inputResponses` answer nothing, ignored
        _require_declared(ctx)
        tasks.get(params.task_id)
        return {}

    async def cancel(ctx: Any, params: CancelTaskRequestParams) -> dict[str, Any]:
        _require_declared(ctx)
        tasks.cancel(params.task_id)
        return {}

    server.add_request_handler("tasks/get", GetTaskRequestParams, get)
    server.add_request_handler("tasks/update", GetTaskRequestParams, update)
    server.add_request_handler("tasks/cancel", CancelTaskRequestParams, cancel)
    server.extensions[EXTENSION] = {}


def _require_declared(ctx: Any) -> None:
    if declared(ctx):
        return
    from mcp.shared.exceptions import MCPError

    raise MCPError(
        MISSING_CAPABILITY,
        "Missing required client capability: declare the io.modelcontextprotocol/tasks "
        "extension to follow tasks",
        data={"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
    )
