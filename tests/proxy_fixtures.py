"""A running proxy for tests: `ProxyServer` on its own loop in a thread, over a backend whose
model is a loopback `ScriptedServer` and whose tools are a workspace's."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from copilot_nb.agent.approvals.policy import ApprovalPolicy
from copilot_nb.models.openai.chat import OpenAIChat
from copilot_nb.serve.backend import Backend
from copilot_nb.serve.server import ProxyServer
from copilot_nb.testing import ScriptedServer
from copilot_nb.tools import workspace_tools
from copilot_nb.workspace.workspace import Workspace

MODEL = "openai:scripted"


@dataclass
class RunningProxy:
    server: ProxyServer
    upstream: ScriptedServer
    loop: asyncio.AbstractEventLoop

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def token(self) -> str:
        return self.server.token

    def openai(self, **options: Any) -> Any:
        import openai

        return openai.OpenAI(base_url=f"{self.url}/v1", api_key=self.token, **options)

    def async_openai(self, **options: Any) -> Any:
        import openai

        return openai.AsyncOpenAI(base_url=f"{self.url}/v1", api_key=self.token, **options)


def backend_for(upstream: ScriptedServer, root: Path, **options: Any) -> Backend:
    workspace = Workspace(root)
    key = options.pop("api_key", "k")
    build = options.pop("model", None)  # upstream -> Model: another wire or family
    model = (
        build(upstream)
        if build is not None
        else OpenAIChat("scripted", base_url=upstream.url, api_key=key, max_retries=0)
    )
    policy = options.pop("approvals", ApprovalPolicy())
    tools = options.pop("tools", None) or workspace_tools(workspace)
    return Backend(
        model_names=lambda: [MODEL],
        resolve=lambda name: model,
        tools=lambda: tools,
        workspace=lambda: workspace,
        approvals=lambda: policy,
        **options,
    )


@pytest.fixture
def proxy_for(root: Path) -> Iterator[Callable[..., RunningProxy]]:
    """`proxy_for(turns, server={...}, model=..., **backend_options)`: a proxy over a scripted
    upstream (`server`: `ProxyServer` options such as timeouts; `model`: the upstream's `Model`,
    built from the `ScriptedServer`, by default OpenAI's wire to a model named "scripted"),
    stopped at the end."""
    running: list[tuple[RunningProxy, threading.Event, threading.Thread]] = []

    def start(
        turns: list[Any], server: dict[str, Any] | None = None, **options: Any
    ) -> RunningProxy:
        upstream = ScriptedServer(turns)
        upstream.start()
        ready = threading.Event()
        stop = threading.Event()
        box: dict[str, Any] = {}

        async def main() -> None:
            proxy = ProxyServer(backend=backend_for(upstream, root, **options), **(server or {}))
            await proxy.start()
            box["proxy"] = RunningProxy(proxy, upstream, asyncio.get_running_loop())
            ready.set()
            await asyncio.to_thread(stop.wait)
            await proxy.stop()

        thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
        thread.start()
        assert ready.wait(15), "the proxy did not start"
        proxy = box["proxy"]
        running.append((proxy, stop, thread))
        return proxy

    yield start
    for proxy, stop, thread in running:
        stop.set()
        thread.join(15)
        proxy.upstream.stop()
