"""An outside agent follows a long run as an MCP task at the proxy's `/mcp` (the Tasks
extension of the 2026-07-28 revision): the official SDK client, declaring the extension, calls
`run_code` and gets a task while the code still runs; `tasks/get` shows it working with its
last line, then completed with the tool's result inline; `tasks/cancel` stops it where it is
and what it did stays; a client without the extension is answered as before; an unknown task id
is a protocol error; a call that is refused starts no task."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any, Literal

import pytest
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp_types import (
    CallToolResult,
    CancelTaskRequest,
    CancelTaskRequestParams,
    GetTaskRequest,
    GetTaskRequestParams,
    Result,
)

from copilot_nb.agent.approvals.policy import ApprovalPolicy
from copilot_nb.serve.mcp_tasks import EXTENSION, MISSING_CAPABILITY
from copilot_nb.tools.context import ToolContext
from copilot_nb.tools.kernel.runs import runs_of
from copilot_nb.tools.kernel.tools import kernel_toolset
from tests.proxy_fixtures import proxy_for

__all__ = ["proxy_for"]

SLOW = "import time\nfor step in range(8):\n    print('step', step, flush=True)\n    time.sleep(0.1)\ndone = True"
FOREVER = "import time\ncount = 0\nwhile True:\n    count += 1\n    time.sleep(0.01)"
EXECUTE = ApprovalPolicy(execute="allow")


class CreatedTask(Result):
    """The extension's `CreateTaskResult`, as this client reads it."""

    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None


class TaskState(Result):
    """A `tasks/get` answer: the task, with its result or error once it has one."""

    task_id: str
    status: str
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class GetTask(GetTaskRequest):
    name_param = "taskId"  # SEP-2663: the task id rides in Mcp-Name


class CancelTask(CancelTaskRequest):
    name_param = "taskId"


async def task_state(client: Any, task_id: str) -> TaskState:
    return await client.session.send_request(
        GetTask(params=GetTaskRequestParams(task_id=task_id)), TaskState
    )


async def settled(client: Any, task_id: str, within: float = 15) -> TaskState:
    """Poll `tasks/get` until the task is over."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        state = await task_state(client, task_id)
        if state.status not in ("working", "input_required"):
            return state
        await _pause(0.05)
    raise AssertionError(f"{task_id} still {state.status} after {within} s")


async def _pause(seconds: float) -> None:
    import anyio

    await anyio.sleep(seconds)


class Tasks(ClientExtension):
    """The client side of the extension: a claimed task is polled to its result."""

    identifier = EXTENSION

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self.resolve)]

    async def resolve(self, created: CreatedTask, ctx: ClaimContext) -> CallToolResult:
        state = await settled(_SessionClient(ctx.session), created.task_id)
        assert state.result is not None, state
        return CallToolResult.model_validate(state.result)


class _SessionClient:
    def __init__(self, session: Any) -> None:
        self.session = session


@pytest.fixture
def namespace() -> Iterator[dict[str, Any]]:
    space: dict[str, Any] = {}
    runs = runs_of(None)
    runs.wait_seconds = 0.2
    yield space
    going = runs.running()
    if going is not None:
        going.stop("the test's end")
    runs.wait_seconds = 10.0


@asynccontextmanager
async def connected(proxy: Any, *, tasks: bool = True, mode: str = "auto") -> AsyncIterator[Any]:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {proxy.token}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(
            streamable_http_client(f"{proxy.url}/mcp", http_client=http),
            extensions=[Tasks()] if tasks else None,
            mode=mode,
        ) as client,
    ):
        yield client


def kernel_proxy(proxy_for: Any, namespace: dict[str, Any], **options: Any) -> Any:
    tools = kernel_toolset(ToolContext(namespace=lambda: namespace))
    return proxy_for([], tools=tools, **{"allow_execution": True, "approvals": EXECUTE, **options})


async def test_a_long_run_is_a_task_followed_to_its_result(proxy_for, namespace):
    proxy = kernel_proxy(proxy_for, namespace)
    async with connected(proxy) as client:
        assert EXTENSION in (client.server_capabilities.extensions or {}), "advertised"
        created = await client.session.call_tool("run_code", {"code": SLOW}, allow_claimed=True)

        assert isinstance(created, CreatedTask), created
        assert created.status == "working" and created.task_id.startswith("run-")
        assert "done" not in namespace, "answered before the code ends"
        working = await task_state(client, created.task_id)
        while "last output: step" not in (working.status_message or ""):
            working = await task_state(client, created.task_id)
        assert working.status == "working" and f"{created.task_id} (" in working.status_message

        state = await settled(client, created.task_id)

    assert state.status == "completed" and state.result is not None
    result = CallToolResult.model_validate(state.result)
    assert not result.is_error and "step 7" in result.content[0].text
    assert namespace["done"] is True, "the variable is in the namespace"


async def test_the_sdk_client_resolves_a_task_through_its_extension(proxy_for, namespace):
    proxy = kernel_proxy(proxy_for, namespace)
    async with connected(proxy) as client:
        result = await client.call_tool("run_code", {"code": SLOW})

    assert not result.is_error and "step 7" in result.content[0].text


async def test_cancel_stops_the_run_and_what_it_did_stays(proxy_for, namespace):
    proxy = kernel_proxy(proxy_for, namespace)
    async with connected(proxy) as client:
        created = await client.session.call_tool(
            "run_code", {"code": FOREVER, "timeout": 60}, allow_claimed=True
        )
        while not namespace.get("count"):
            await _pause(0.01)
        acknowledged = await client.session.send_request(
            CancelTask(params=CancelTaskRequestParams(task_id=created.task_id)), Result
        )
        state = await settled(client, created.task_id)
        after = await client.call_tool("run_code", {"code": "count > 0"})

    assert acknowledged.model_dump(exclude_none=True).keys() <= {"meta"}, "an empty ack"
    assert state.status == "cancelled" and state.result is None
    assert "stopped by the MCP client" in state.status_message
    assert namespace["count"] > 0, "what it did until then stays done"
    assert after.content[0].text == "result:\nTrue", "the next run goes"


@pytest.mark.parametrize(
    ("tasks", "mode"), [(False, "auto"), (True, "legacy")], ids=["undeclared", "2025-11-25"]
)
async def test_without_the_extension_a_call_is_answered_as_before(
    proxy_for, namespace, tasks, mode
):
    proxy = kernel_proxy(proxy_for, namespace)
    async with connected(proxy, tasks=tasks, mode=mode) as client:
        quick = await client.call_tool("run_code", {"code": "1 + 1"})
        slow = await client.call_tool("run_code", {"code": SLOW})

    assert quick.content[0].text == "result:\n2"
    assert "is still running after" in slow.content[0].text, "the handle, as the model reads it"


async def test_an_unknown_task_is_invalid_params(proxy_for, namespace):
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_PARAMS

    proxy = kernel_proxy(proxy_for, namespace)
    async with connected(proxy) as client:
        with pytest.raises(MCPError) as raised:
            await task_state(client, "run-999999")

    assert raised.value.code == INVALID_PARAMS
    assert "no task 'run-999999'" in raised.value.message


async def test_a_client_that_did_not_declare_tasks_is_told_what_it_lacks(proxy_for, namespace):
    from mcp.shared.exceptions import MCPError

    proxy = kernel_proxy(proxy_for, namespace)
    async with connected(proxy, tasks=False) as client:
        with pytest.raises(MCPError) as raised:
            await task_state(client, "run-1")

    assert raised.value.code == MISSING_CAPABILITY == -32021
    assert raised.value.data == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}


async def test_a_refused_call_starts_no_task(proxy_for, namespace):
    denied = kernel_proxy(proxy_for, namespace, approvals=ApprovalPolicy())  # nobody to ask
    not_allowed = kernel_proxy(proxy_for, namespace, allow_execution=False)
    for proxy, said in ((denied, "nobody can approve it"), (not_allowed, "--allow-execution")):
        async with connected(proxy) as client:
            answer = await client.session.call_tool(
                "run_code", {"code": "x = 1"}, allow_claimed=True
            )
        assert isinstance(answer, CallToolResult), answer
        assert answer.is_error and said in answer.content[0].text
    assert "x" not in namespace
