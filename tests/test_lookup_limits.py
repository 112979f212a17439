"""What a turn or `%copilot models` asks a server first has one deadline and a size cap.

A model list, llama-server's `/props`, Ollama's `/api/show` and Copilot's catalog are lookups the
user waits for. httpx's timeout is per read, so a server sending one byte every few seconds held
a turn for as long as it liked, and a huge list was read whole. Each lookup now ends by its
deadline or at its cap, saying which; a turn then goes on as it does when the server cannot be
reached, and says why. The deadline is set small here through the model's `lookups`.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from copilot_nb import Agent
from copilot_nb.agent.model_strings import PROVIDERS
from copilot_nb.errors import LookupFailed
from copilot_nb.events import Done, Notice
from copilot_nb.jupyter.commands.login import show_models
from copilot_nb.models.endpoint import Endpoint, Key
from copilot_nb.models.lookups import LookupLimits
from copilot_nb.models.openai.chat import OpenAIChat
from copilot_nb.models.openai.ollama import OllamaChat
from copilot_nb.models.openai.responses import OpenAIResponses
from copilot_nb.models.provider import Provider
from copilot_nb.testing import reply
from copilot_nb.testing.github_fake import FakeGitHub, _FakeHandler
from tests.hostile_server import Answer, hostile, json_bytes

__all__ = ["hostile"]

FAST = LookupLimits(deadline=0.5, max_bytes=2**20)
"""Half a second and a megabyte: what each lookup here may take."""
WAITED = 4.0
"""Longer than any lookup here may take, far shorter than a trickle's whole answer (10 s)."""
MODELS = json_bytes({"data": [{"id": "hostile", "max_model_len": 4096}]})
TRICKLE = Answer(body=MODELS + b" " * (25 - len(MODELS) % 25), every=0.4)
"""A byte every 0.4 s: each read is quick, the answer takes ten seconds or more."""
HUGE = Answer(
    head=b'{"data": [', body=b'{"id": "m", "object": "model"}, ' * 2**10, repeat=640, tail=b"{}]}"
)
"""A 20 MB model list."""


def listing(url: str) -> dict[str, Provider]:
    def build(endpoint: Endpoint) -> OpenAIChat:
        model = OpenAIChat(endpoint.model, endpoint=endpoint)
        model.lookups = FAST
        return model

    acme = Provider(
        name="acme",
        chat=build,
        keys=(Key("ACME_API_KEY"),),
        base_url=url,
        sign_in="Set ACME_API_KEY.",
        list_models=lambda model: model.model_ids(),
        window="server",
    )
    return {**PROVIDERS, "acme": acme}


# --- `%copilot models` ------------------------------------------------------------------------


def test_a_trickling_model_list_ends_at_its_deadline_saying_so(hostile) -> None:
    server = hostile(**{"GET /v1/models": TRICKLE})
    started = time.monotonic()
    with pytest.raises(LookupFailed, match=r"model list at .* did not answer within 0\.5 s"):
        show_models("acme", registry=listing(server.url))
    assert time.monotonic() - started < WAITED


def test_a_huge_model_list_is_not_read_past_its_cap(hostile) -> None:
    server = hostile(**{"GET /v1/models": HUGE})
    with pytest.raises(LookupFailed, match=r"answered more than 1\.0 MB"):
        show_models("acme", registry=listing(server.url))
    assert server.sent["GET /v1/models"] < HUGE.size // 2, "reading stopped at the cap"


def test_a_model_list_within_its_limits_is_listed(hostile, capsys) -> None:
    server = hostile(**{"GET /v1/models": Answer(body=MODELS)})
    show_models("acme", registry=listing(server.url))
    assert capsys.readouterr().out.splitlines()[-1] == "  hostile"


# --- a turn waits for no lookup past its deadline ---------------------------------------------


def turn(model, tmp_path) -> tuple[list, float]:
    started = time.monotonic()
    agent = Agent(model=model, workspace=tmp_path)

    async def run() -> list:
        return [event async for event in agent.run("hi")]

    events = asyncio.run(run())
    return events, time.monotonic() - started


@pytest.mark.parametrize(
    ("routes", "wire"),
    [
        ({"GET /v1/models": TRICKLE}, OpenAIChat),
        ({"GET /props": TRICKLE}, OpenAIChat),  # /v1/models is a 404: llama-server's /props
        ({"GET /v1/models": HUGE}, OpenAIChat),
        ({"GET /v1/models": TRICKLE}, OpenAIResponses),
    ],
    ids=["models trickle", "props trickle", "models huge", "responses wire"],
)
def test_a_local_servers_window_lookup_does_not_hold_the_turn(
    hostile, tmp_path, routes, wire
) -> None:
    server = hostile(**routes)
    model = wire("hostile", base_url=server.url, api_key="k")
    model.lookups = FAST
    events, took = turn(model, tmp_path)
    assert took < WAITED
    assert isinstance(events[-1], Done) and events[-1].text == "ok"
    (notice,) = [e.text for e in events if isinstance(e, Notice)]
    assert "did not answer within 0.5 s" in notice or "answered more than 1.0 MB" in notice
    assert "COPILOT_NB_CONTEXT_WINDOW" in notice, "the note says what to do"
    later, took = turn(model, tmp_path)
    assert took < 1 and not [e for e in later if isinstance(e, Notice)], "asked once, said once"


@pytest.mark.parametrize("answer", [TRICKLE, HUGE], ids=["trickle", "huge"])
def test_ollamas_show_does_not_hold_the_turn(hostile, tmp_path, answer) -> None:
    server = hostile(**{"POST /api/show": answer})
    model = OllamaChat("hostile", base_url=server.url)
    model.lookups = FAST
    events, took = turn(model, tmp_path)
    assert took < WAITED
    assert isinstance(events[-1], Done) and events[-1].text == "ok"
    (notice,) = [e.text for e in events if isinstance(e, Notice)]
    assert notice.startswith("ollama: ") and "/api/show" in notice


# --- Copilot's catalog ------------------------------------------------------------------------


class _TricklingCatalog(_FakeHandler):
    def do_GET(self) -> None:
        if not self.path.rstrip("/").endswith("/models"):
            super().do_GET()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "100")
        self.end_headers()
        try:
            for _ in range(100):
                time.sleep(0.2)
                self.wfile.write(b" ")
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


class TricklingCatalog(FakeGitHub):
    handler = _TricklingCatalog


@pytest.mark.usefixtures("copilot_home")
async def test_copilots_trickling_catalog_does_not_hold_the_turn() -> None:
    with TricklingCatalog([reply("ok")]) as fake:
        model = fake.model()
        model.lookups = FAST
        started = time.monotonic()
        events = [event async for event in model.stream([{"role": "user", "content": "hi"}])]
        assert time.monotonic() - started < WAITED
    (notice,) = [e.text for e in events if isinstance(e, Notice)]
    assert "copilot: the model list at" in notice and "did not answer within 0.5 s" in notice
    assert events[-1].message.text == "ok"
