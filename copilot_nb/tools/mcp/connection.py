"""One MCP server as the agent uses it: started on first use, shared, restarted after a crash.

The official SDK (`mcp`, the optional extra) does the protocol; this module owns the lifecycle
on the kernel's event loop. A connection lives in one task (`_run`), because the SDK's client is
an async context that must be entered and left by the same task; calls come from any task of the
same loop. A server that dies mid-call fails that call with a message naming the server and the
last lines it wrote to stderr; the next call starts it again, after a back-off that grows with
each crash in a row. A server announcing that its tool list changed is listed again, and
`on_change` is told (the tool set is rebuilt from the next model round).

A stdio child gets only what the SDK passes on (PATH, HOME, USER, SHELL, TERM, LOGNAME) plus the
`env` its config names: the kernel's API keys are not handed to servers.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ...telemetry import tool_context
from ...text import clip, counted
from .config import ServerConfig
from .elicitation import Answer
from .start_errors import start_error
from .stderr import StderrTail

START_TIMEOUT = 30.0
"""Seconds a server may take to start and list its tools."""
STOP_TIMEOUT = 8.0
"""Seconds to wait for a server to stop (the SDK closes stdin, then terminates, then kills)."""
BACKOFF = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
"""Seconds before the n-th restart in a row after a crash."""
NOTICE_GRACE = 0.05
"""Seconds to wait after a call to an HTTP server whose tools may change, for the notice of a
change the call made: it travels on its own stream, and may arrive just after the result."""
STDERR_TAIL = 1500
MAX_RESOURCES = 50
"""Resources named in the description of a server's read_resource tool."""
INSTALL_HINT = "MCP servers need the mcp extra: pip install 'copilot_nb[mcp]'"


class ServerUnavailable(Exception):
    """The server could not be reached; the message says why, for the model and the user."""


class ServerConnection:
    """A configured server and, while it runs, its client, tools, prompts and resources."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        on_change: Callable[[ServerConnection], None],
        on_elicit: Callable[[str, Any], Awaitable[Answer]] | None = None,
    ) -> None:
        self.config = config
        self.on_change = on_change
        self.on_elicit = on_elicit
        """Asks the user what the server asks (`elicitation/create`): given the server's name
        and the request's params. None: the client does not offer elicitation."""
        self.state = "stopped"
        """stopped, starting, running, crashed or failed."""
        self.error = ""
        self.tools: list[Any] = []
        """The server's tools as it lists them (the SDK's `Tool` objects)."""
        self.prompts: list[Any] = []
        self.resources: list[Any] = []
        self.has_resources = False
        self.server_info = ""
        self.crashes = 0
        """Crashes in a row (reset by a call that succeeds)."""
        self._retry_at = 0.0
        self._client: Any = None
        self._runner: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._stop: asyncio.Event | None = None
        self._refreshing: asyncio.Task[None] | None = None
        self._refusal = ""
        self._may_change = False
        """The server says its tool list may change (capability `tools.listChanged`)."""
        self._stopping: asyncio.Task[None] | None = None
        self._scope: Any = None
        """The running connection's anyio cancel scope."""
        self._noticed = asyncio.Event()
        """Set when a change notice arrives; cleared when a call starts."""
        self._stderr = StderrTail()
        """The server's stderr: drained at once, its last 64 KB kept."""

    @property
    def usable(self) -> bool:
        """Its tools are offered: it runs, or it crashed and starts again on the next call."""
        return self.state in ("running", "crashed")

    # --- lifecycle ----------------------------------------------------------------------------

    async def start(self, wait: float = START_TIMEOUT) -> None:
        """Running when this returns, or ServerUnavailable saying why not."""
        if self.state == "running" and self._client is not None:
            return
        if self.state == "crashed":
            await self.stop()  # let the old connection wind down before the next one
        if self._runner is None or self._runner.done():
            delay = self._retry_at - time.monotonic()
            if delay > 0:
                if delay > wait:
                    raise ServerUnavailable(
                        f"MCP server {self.config.name!r} crashed "
                        f"{counted(self.crashes, 'time')} in a row; it is started again in "
                        f"{delay:.0f} s"
                    )
                await asyncio.sleep(delay)
            loop = asyncio.get_running_loop()
            self._ready = loop.create_future()
            self._stop = asyncio.Event()
            self.state, self.error, self._refusal = "starting", "", ""
            self._runner = loop.create_task(self._run(self._ready, self._stop))
        assert self._ready is not None
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), wait)
        except TimeoutError:
            if self.state == "starting":  # given up: stopped, not tried again at every turn
                error = (
                    f"MCP server {self.config.name!r} did not start within {wait:g} s; "
                    f"%copilot mcp restart {self.config.name} tries again" + self._stderr_note()
                )
                self.state, self.error = "failed", error
                self._stopping = asyncio.get_running_loop().create_task(self._wind_down())
                raise ServerUnavailable(error) from None
        if self.state != "running":
            raise ServerUnavailable(
                self.error or f"MCP server {self.config.name!r} is {self.state}"
            )

    async def stop(self) -> None:
        """Stop the server (its process, for stdio) and forget its tools until the next start.
        Stops asked for at once share one: each returns when the server is down."""
        if self._stopping is None or self._stopping.done():
            self._stopping = asyncio.get_running_loop().create_task(self._wind_down())
        await asyncio.shield(self._stopping)

    async def _wind_down(self) -> None:
        runner, self._runner = self._runner, None
        if self._stop is not None:
            self._stop.set()
        if runner is not None and not runner.done():
            if self._client is None and self._scope is not None:
                self._scope.cancel()  # still connecting: not yet waiting for the stop signal
            try:
                await asyncio.wait_for(asyncio.shield(runner), STOP_TIMEOUT)
            except TimeoutError:
                runner.cancel()
        self._client = None
        if self.state in ("running", "starting"):
            self.state = "stopped"

    def close(self) -> None:
        """Release the stderr pipe (after `stop`)."""
        self._stderr.close()

    async def _run(self, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        """The connection's whole life, in one task: connect, list, serve calls, stop.

        `stop()` ends it through `stop` (running) or this task's anyio cancel scope (starting):
        a native `Task.cancel()` could cut short the SDK's shielded shutdown of a stdio child."""
        try:
            import anyio
            from mcp import Client
        except ImportError:
            self._fail(ready, "failed", f"MCP server {self.config.name!r}: {INSTALL_HINT}")
            return
        try:
            with anyio.CancelScope() as self._scope:
                async with contextlib.AsyncExitStack() as stack:
                    client = await stack.enter_async_context(
                        Client(
                            await self._transport(stack),
                            message_handler=self._on_message,
                            client_info=_client_info(),
                            elicitation_callback=self._elicit if self.on_elicit else None,
                        )
                    )
                    await self._list(client)
                    self._client, self.state = client, "running"
                    if not ready.done():
                        ready.set_result(None)
                    if _listens(client):
                        listening = await stack.enter_async_context(anyio.create_task_group())
                        listening.start_soon(self._listen, client)
                        stack.callback(listening.cancel_scope.cancel)
                    await stop.wait()
            if self._scope.cancelled_caught:
                self._fail(ready, "stopped", f"MCP server {self.config.name!r} was stopped")
        except asyncio.CancelledError:
            self._fail(ready, "stopped", f"MCP server {self.config.name!r} was stopped")
            raise
        except BaseException as exc:  # the SDK reports a failed start as exception groups
            self._fail(ready, "failed", self._start_error(exc))
        finally:
            self._client = None

    async def _transport(self, stack: contextlib.AsyncExitStack) -> Any:
        if self.config.command:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            parameters = StdioServerParameters(
                command=self.config.command,
                args=list(self.config.args),
                env=dict(self.config.env) or None,
                cwd=self.config.cwd,
            )
            return stdio_client(parameters, errlog=self._stderr.file)
        import httpx2
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

        from ...models.network import ssl_context

        # The SDK's own client, but with the environment's CA bundle (REQUESTS_CA_BUNDLE too);
        # it reads the proxy variables itself.
        http = await stack.enter_async_context(
            httpx2.AsyncClient(
                timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
                headers=dict(self.config.headers),
                verify=ssl_context(),
            )
        )
        http.event_hooks["response"].append(self._note_refusal)
        return streamable_http_client(self.config.url, http_client=http)

    async def _note_refusal(self, response: Any) -> None:
        """Keep the last HTTP error status: the SDK's own error does not say it."""
        if response.status_code >= 400:
            self._refusal = f"HTTP {response.status_code} {response.reason_phrase}".strip()

    async def _list(self, client: Any) -> None:
        capabilities = client.server_capabilities
        self.tools = list((await client.list_tools()).tools) if capabilities.tools else []
        self._may_change = bool(capabilities.tools and capabilities.tools.list_changed)
        self.prompts = list((await client.list_prompts()).prompts) if capabilities.prompts else []
        self.has_resources = capabilities.resources is not None
        if self.has_resources:
            self.resources = list((await client.list_resources()).resources)[:MAX_RESOURCES]
        info = client.server_info
        self.server_info = f"{info.name} {info.version}".strip() if info is not None else ""

    async def _listen(self, client: Any) -> None:
        """On 2026-07-28 connections change notices come only to a listener that asked for them
        (they reach `_on_message` too, which does the work)."""
        with contextlib.suppress(Exception):
            async with client.listen(tools_list_changed=True, prompts_list_changed=True) as sub:
                async for _ in sub:
                    pass

    async def _on_message(self, message: Any) -> None:
        method = getattr(message, "method", "")
        changed = method in (
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
        )
        if changed:
            self._noticed.set()
        if changed and (self._refreshing is None or self._refreshing.done()):
            self._refreshing = asyncio.get_running_loop().create_task(self._refresh())

    async def _elicit(self, context: Any, params: Any) -> Any:
        """The server asks the user something in the middle of a call (see `elicitation.py`)."""
        from mcp_types import ElicitResult

        assert self.on_elicit is not None
        answer = await self.on_elicit(self.config.name, params)
        return ElicitResult(action=answer.action, content=answer.content)  # type: ignore[arg-type]

    async def _refresh(self) -> None:
        client = self._client
        if client is None:
            return
        try:
            await self._list(client)
        except Exception as exc:  # the server went away meanwhile: the next call says so
            self.error = f"listing the tools of {self.config.name!r} again failed: {exc}"
            return
        self.on_change(self)

    async def settled(self, wait: float = 2.0) -> None:
        """Return once a tool list announced as changed has been read again (or after `wait`)."""
        refreshing = self._refreshing
        if refreshing is not None and not refreshing.done():
            with contextlib.suppress(TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(refreshing), wait)

    def _fail(self, ready: asyncio.Future[None], state: str, error: str) -> None:
        """Settle a start that did not succeed; a server given up stays `failed`, with its why."""
        if self.state != "failed":
            self.state, self.error = state, error
        if not ready.done():
            ready.set_result(None)

    # --- calls --------------------------------------------------------------------------------

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float | None) -> Any:
        """The server's `CallToolResult`; ServerUnavailable when it cannot answer."""
        client = await self._client_for_call()
        self._noticed.clear()
        try:
            with tool_context():  # the SDK sends the call's `traceparent` in `params._meta`
                result = await asyncio.wait_for(client.call_tool(name, arguments), timeout)
        except TimeoutError:
            raise ServerUnavailable(
                f"MCP server {self.config.name!r} did not answer {name} within {timeout:g} s; "
                "the call was cancelled"
            ) from None
        except Exception as exc:
            raise self._call_error(exc, name) from None
        if self.config.url and self._may_change and not self._noticed.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._noticed.wait(), NOTICE_GRACE)
        await self.settled()
        self.crashes = 0
        return result

    async def read_resource(self, uri: str, timeout: float | None) -> Any:
        client = await self._client_for_call()
        try:
            return await asyncio.wait_for(client.read_resource(uri), timeout)
        except TimeoutError:
            raise ServerUnavailable(
                f"MCP server {self.config.name!r} did not return {uri} within {timeout:g} s"
            ) from None
        except Exception as exc:
            raise self._call_error(exc, f"resources/read {uri}") from None

    async def _client_for_call(self) -> Any:
        await self.start()
        if self._client is None:
            raise ServerUnavailable(f"MCP server {self.config.name!r} is {self.state}")
        return self._client

    def _call_error(self, exc: BaseException, what: str) -> ServerUnavailable:
        """An error from the server is its answer; a closed connection is a crash."""
        code = getattr(exc, "code", None)
        if code == -32000:  # CONNECTION_CLOSED: the process died or the connection dropped
            self.crashes += 1
            self.state = "crashed"
            delay = BACKOFF[min(self.crashes, len(BACKOFF)) - 1]
            self._retry_at = time.monotonic() + delay
            self.error = (
                f"MCP server {self.config.name!r} stopped during {what} (connection closed)"
                + self._stderr_note()
            )
            if self._stop is not None:
                self._stop.set()
            return ServerUnavailable(
                f"{self.error}\nIt is started again on the next call, after {delay:g} s."
            )
        message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        return ServerUnavailable(f"MCP server {self.config.name!r} refused {what}: {message}")

    # --- words --------------------------------------------------------------------------------

    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr (stdio servers), for error messages."""
        return clip(self._stderr.text()[-STDERR_TAIL * 2 :].strip()[-STDERR_TAIL:], STDERR_TAIL)

    def _stderr_note(self) -> str:
        self._stderr.settle()
        tail = self.stderr_tail()
        return f"\nits last stderr lines:\n{tail}" if tail else ""

    def _start_error(self, exc: BaseException) -> str:
        return start_error(self.config, exc, self._refusal) + self._stderr_note()


def _listens(client: Any) -> bool:
    """A 2026-07-28 connection to a server whose tools or prompts may change."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    capabilities = client.server_capabilities
    changing = bool(
        (capabilities.tools and capabilities.tools.list_changed)
        or (capabilities.prompts and capabilities.prompts.list_changed)
    )
    return changing and client.protocol_version in MODERN_PROTOCOL_VERSIONS


def _client_info() -> Any:
    from importlib.metadata import PackageNotFoundError, version

    from mcp_types import Implementation

    try:
        ours = version("copilot_nb")
    except PackageNotFoundError:
        ours = "0"
    return Implementation(name="copilot_nb", version=ours)
