"""The completion service against loopback FIM servers: requests, streamed deltas, the final
text, the cache, cancellation by a newer request or by the front end, and its errors."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pandas as pd
import pytest

from copilot_nb.agent.ghost_text.service import CompletionService
from copilot_nb.agent.model_strings import resolve_model
from copilot_nb.testing.fim_wires import FillServer
from tests.helpers import until
from tests.secret_namespace import (
    GITHUB_TOKEN,
    HUGGING_FACE_TOKEN,
    assert_no_token_named,
    named_by_tokens,
)


class Document:
    """Stands for one open document: its replies, in order."""

    def __init__(self) -> None:
        self.replies: list[dict[str, Any]] = []
        self.arrived = asyncio.Event()

    def send(self, reply: dict[str, Any]) -> None:
        self.replies.append(reply)
        self.arrived.set()

    def final(self, ident: int) -> dict[str, Any] | None:
        return next((r for r in self.replies if r["id"] == ident and r.get("done")), None)

    async def wait_final(self, ident: int, timeout: float = 10) -> dict[str, Any]:
        async with asyncio.timeout(timeout):
            while (found := self.final(ident)) is None:
                self.arrived.clear()
                await self.arrived.wait()
        return found


def service_for(spec: str, namespace: dict[str, Any], **options: Any) -> CompletionService:
    return CompletionService(
        namespace=lambda: (namespace, {}),
        model_spec=lambda requested: requested or spec,
        chat_model=resolve_model,
        **options,
    )


def ask(ident: int, prefix: str, suffix: str = "", **more: Any) -> dict[str, Any]:
    return {
        "request": "complete",
        "id": ident,
        "cell_id": "c1",
        "language": "python",
        "prefix": prefix,
        "suffix": suffix,
        "cells_above": ["import pandas as pd"],
        **more,
    }


@pytest.fixture
def frame() -> dict[str, Any]:
    return {"pd": pd, "df": pd.DataFrame({"city": ["Oslo"], "price": [1.5]})}


async def test_a_request_streams_deltas_then_the_final_text(frame, monkeypatch):
    with FillServer(["```python\n", "price", "'].sum()", "\n```"]) as server:
        monkeypatch.setenv("OLLAMA_BASE_URL", f"{server.base_url}/v1")
        service = service_for("ollama:qwen2.5-coder", frame)
        doc = Document()
        service.handle(ask(1, "total = df['", "\nprint(total)"), doc.send, doc)
        final = await doc.wait_final(1)
        assert final == {"reply": "complete", "id": 1, "done": True, "text": "price'].sum()"}
        deltas = "".join(r["delta"] for r in doc.replies if "delta" in r)
        assert deltas == "price'].sum()", "deltas are the post-processed text as it grew"
        (call,) = server.calls
        assert "#   columns: city (" in call.body["prompt"], "the kernel's DataFrame columns"
        assert call.body["prompt"].startswith("import pandas as pd\n\n")
        usage = service.usage.of("ollama:qwen2.5-coder")
        assert (usage.requests, usage.answered, usage.output_tokens) == (1, 1, 4)
        await service.aclose()


async def test_the_same_context_again_is_answered_from_the_cache(frame, monkeypatch):
    with FillServer(["sum()"]) as server:
        monkeypatch.setenv("OLLAMA_BASE_URL", f"{server.base_url}/v1")
        service = service_for("ollama:m", frame)
        doc = Document()
        service.handle(ask(1, "df."), doc.send, doc)
        await doc.wait_final(1)
        service.handle(ask(2, "df."), doc.send, doc)
        assert (await doc.wait_final(2))["text"] == "sum()"
        assert len(server.calls) == 1
        assert service.usage.of("ollama:m").cached == 1
        await service.aclose()


async def test_a_newer_request_cancels_the_older_and_a_cancel_stops_one(frame, monkeypatch):
    with FillServer(["m()"], delay=0.5) as server:
        monkeypatch.setenv("OLLAMA_BASE_URL", f"{server.base_url}/v1")
        service = service_for("ollama:m", frame)
        doc = Document()
        service.handle(ask(1, "df.s"), doc.send, doc)
        await until(lambda: len(server.calls) == 1, what="the first request reached the server")
        service.handle(ask(2, "df.su"), doc.send, doc)
        assert (await doc.wait_final(2))["text"] == "m()"
        assert doc.final(1) is None, "the older request was cancelled: no answer for it"
        service.handle(ask(3, "df.c"), doc.send, doc)
        await until(lambda: len(server.calls) == 3, what="the third request reached the server")
        service.handle({"request": "cancel_complete", "id": 3}, doc.send, doc)
        await until(lambda: service.usage.of("ollama:m").cancelled == 2, what="3 was cancelled")
        assert doc.final(3) is None
        usage = service.usage.of("ollama:m")
        assert (usage.cancelled, usage.answered) == (2, 1)
        await service.aclose()


async def test_two_documents_do_not_cancel_each_other(frame, monkeypatch):
    with FillServer(["sum()"], delay=0.2) as server:
        monkeypatch.setenv("OLLAMA_BASE_URL", f"{server.base_url}/v1")
        service = service_for("ollama:m", frame)
        one, two = Document(), Document()
        service.handle(ask(1, "df."), one.send, one)
        service.handle(ask(1, "x = df."), two.send, two)
        assert (await one.wait_final(1))["text"] == "sum()"
        assert (await two.wait_final(1))["text"] == "sum()"
        await service.aclose()


@pytest.mark.parametrize(
    ("spec", "allowed", "words"),
    [
        ("offline", True, "no model configured for completions"),
        ("ollama:m", False, "turned off by the administrator's policy"),
    ],
)
async def test_no_model_or_a_policy_is_a_short_error(frame, spec, allowed, words):
    service = service_for(spec, frame, allowed=lambda: allowed)
    doc = Document()
    service.handle(ask(1, "df."), doc.send, doc)
    final = await doc.wait_final(1)
    assert final["text"] == "" and words in final["error"]


async def test_a_bad_request_and_a_dead_server_say_so(frame, monkeypatch):
    monkeypatch.setenv("OLLAMA_BASE_URL", "http://127.0.0.1:9/v1")
    service = service_for("ollama:m", frame)
    doc = Document()
    service.handle({"request": "complete", "id": 1, "prefix": 3}, doc.send, doc)
    assert (await doc.wait_final(1))["error"] == "prefix must be a string"
    service.handle(ask(2, "df."), doc.send, doc)
    final = await doc.wait_final(2, timeout=30)
    assert "connection" in final["error"] and final["text"] == ""
    assert service.usage.of("ollama:m").failed == 1
    await service.aclose()


async def test_an_ollama_model_without_insert_completes_through_its_chat_api(frame, monkeypatch):
    with FillServer(["sum()"], refuse_insert=True) as server:
        monkeypatch.setenv("OLLAMA_BASE_URL", f"{server.base_url}/v1")
        service = service_for("ollama:llama3", frame)
        doc = Document()
        service.handle(ask(1, "df."), doc.send, doc)
        assert (await doc.wait_final(1))["text"] == "sum()"
        service.handle(ask(2, "x = df."), doc.send, doc)
        assert (await doc.wait_final(2))["text"] == "sum()"
        paths = [c.path for c in server.calls if c.path != "/api/show"]
        assert paths == ["/api/generate", "/v1/chat/completions", "/v1/chat/completions"]
        await service.aclose()


def test_an_error_shown_in_the_status_bar_masks_a_key_the_provider_echoed():
    from copilot_nb.agent.ghost_text.service import _short
    from copilot_nb.errors import ModelHTTPError

    key = "sk-proj-" + "Zx9" * 16
    shown = _short(ModelHTTPError(f"openai answered HTTP 401: Incorrect API key {key}", status=401))
    assert key not in shown and "HTTP 401" in shown


async def test_no_token_named_in_the_kernel_or_split_over_literals_reaches_the_wire(monkeypatch):
    split = f'key = "{GITHUB_TOKEN[:12]}" "{GITHUB_TOKEN[12:]}"\n'
    above = [f'hf = ("{HUGGING_FACE_TOKEN[:9]}"\n      "{HUGGING_FACE_TOKEN[9:]}")', "x = 1"]
    with FillServer(["sum()"]) as server:
        monkeypatch.setenv("OLLAMA_BASE_URL", f"{server.base_url}/v1")
        service = service_for("ollama:m", named_by_tokens())
        doc = Document()
        for ident, target in enumerate(("obj.", "frame.", "mod.", "made.", "series.")):
            prefix = f"{split}print(cfg, frame, series, made, mod)\n{target}"
            service.handle(ask(ident, prefix, cells_above=above), doc.send, doc)
            assert (await doc.wait_final(ident))["text"] == "sum()"
        assert len(server.calls) == 5
        wire = json.dumps([(call.path, call.headers, call.body) for call in server.calls])
        assert "'host'" in wire and "price (float64)" in wire and "x = 1" in wire
        assert_no_token_named(wire)
        await service.aclose()
