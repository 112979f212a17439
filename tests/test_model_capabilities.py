"""What a model can do, as its provider says: Ollama's /api/show, Copilot's model list, a name table.

A model Ollama says cannot call tools is asked without them (with a notice) instead of failing;
an Ollama that cannot say changes nothing. Images are counted at a fixed cost, and a request
carries only the images its model is sent."""

from __future__ import annotations

import base64
import json
import socket
from pathlib import Path

import pytest

from copilot_nb.agent.context.compaction import Compactor
from copilot_nb.agent.context.tokens import IMAGE_TOKENS, Calibration, message_tokens
from copilot_nb.agent.context.window import ContextWindow
from copilot_nb.agent.model_strings import resolve_model
from copilot_nb.errors import ModelConnectionError
from copilot_nb.events import ModelResponse, Notice
from copilot_nb.messages import AssistantMessage, Image, ToolCall, ToolResult, UserMessage
from copilot_nb.models.capabilities import (
    DEFAULT_IMAGE_LIMITS,
    ImageLimits,
    images_to_send,
    ollama_capabilities,
    vision_by_name,
)
from copilot_nb.models.copilot.catalog import parse_models
from copilot_nb.models.openai.ollama import OllamaChat, native_url
from copilot_nb.testing import reply
from copilot_nb.testing.ollama_fake import OllamaServer
from tests.notebook_samples import png

REAL_COPILOT_MODELS = (
    Path(__file__).parent / "data" / "conformance" / "responses" / "copilot" / "models.json"
)
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
HI = [UserMessage(content="weather in Paris?")]


def image(size: int = 1) -> Image:
    return Image(media_type="image/png", data=base64.b64encode(png(size, size)).decode())


@pytest.fixture
def ollama():
    started: list[OllamaServer] = []

    def start(*args, **kwargs) -> OllamaServer:
        server = OllamaServer(*args, **kwargs).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


# --- Ollama: /api/show ---------------------------------------------------------------------------


async def test_ollama_says_the_model_cannot_call_tools_so_it_is_asked_without(ollama) -> None:
    server = ollama([reply("Sunny."), reply("Still sunny.")], capabilities=["completion"])
    model = server.model()
    events = [e async for e in model.stream(HI, tools=[WEATHER])]
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert notices == [
        "ollama: llama3.2:3b cannot call tools (Ollama's /api/show says so); "
        "asking without them, so it can only answer in text"
    ]
    assert isinstance(events[-1], ModelResponse) and events[-1].message.text == "Sunny."
    await model.complete(HI, tools=[WEATHER])

    assert server.shows == [{"model": "llama3.2:3b"}], "asked once per model"
    assert ["tools" in r.body for r in server.requests] == [False, False]
    assert model.capabilities == frozenset({"completion"})
    await model.aclose()


async def test_a_model_ollama_says_calls_tools_is_offered_them(ollama) -> None:
    server = ollama([reply("ok")], capabilities=["completion", "tools"])
    model = server.model()
    events = [e async for e in model.stream(HI, tools=[WEATHER])]
    assert not [e for e in events if isinstance(e, Notice)]
    assert server.requests[0].body["tools"][0]["function"]["name"] == "get_weather"
    await model.aclose()


@pytest.mark.parametrize(
    "setup",
    [
        {"show_route": False},  # a server without Ollama's native API: 404 page not found
        {"capabilities": None},  # an Ollama too old to list capabilities
        {"model_name": "llama3.2:3b", "capabilities": ["completion"], "ask_for": "other"},
    ],
    ids=["no-route", "old-ollama", "unknown-model"],
)
async def test_when_ollama_cannot_say_the_tools_are_offered_as_today(ollama, setup) -> None:
    ask_for = setup.pop("ask_for", None)
    server = ollama([reply("ok"), reply("ok")], **setup)
    model = OllamaChat(ask_for or server.model_name, base_url=server.url)
    await model.complete(HI, tools=[WEATHER])
    await model.complete(HI, tools=[WEATHER])
    assert ["tools" in r.body for r in server.requests] == [True, True]
    assert len(server.shows) == 1, "an answer, even a 404, is not asked for again"
    assert model.capabilities is None and model.image_limits() is None
    await model.aclose()


async def test_an_unreachable_ollama_fails_as_the_chat_request_does() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = OllamaChat("llama3.2:3b", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
    with pytest.raises(ModelConnectionError):
        await model.complete(HI, tools=[WEATHER])
    assert model.capabilities is None and not model._asked, "asked again once it is up"
    await model.aclose()


async def test_ollama_vision_decides_whether_images_are_sent(ollama) -> None:
    history = [
        *HI,
        AssistantMessage(
            tool_calls=(ToolCall.from_raw(id="c", name="run_cell", raw_arguments=""),)
        ),
        ToolResult(tool_call_id="c", name="run_cell", content="[image/png 1x1]", images=(image(),)),
    ]
    seeing = ollama([reply("a dot")], capabilities=["completion", "tools", "vision"])
    blind = ollama([reply("?")], capabilities=["completion", "tools"])
    for server in (seeing, blind):
        model = server.model()
        await model.complete(history)
        await model.aclose()
    assert seeing.requests[0].body["messages"][-1]["content"][1]["type"] == "image_url"
    assert blind.requests[0].body["messages"][-1]["role"] == "tool"


def test_the_model_string_builds_an_ollama_model_at_its_base_url(monkeypatch) -> None:
    model = resolve_model("ollama:qwen3:8b")
    assert isinstance(model, OllamaChat) and model.base_url == "http://localhost:11434/v1"
    monkeypatch.setenv("OLLAMA_BASE_URL", "http://gpu-box:11434/v1/")
    model = resolve_model("ollama:qwen3:8b")
    assert model.name == "qwen3:8b" and native_url(model.base_url) == "http://gpu-box:11434"


def test_ollama_capabilities_are_read_from_the_answer() -> None:
    assert ollama_capabilities({"capabilities": ["completion", "vision"]}) == {
        "completion",
        "vision",
    }
    assert ollama_capabilities({"details": {}}) is None
    assert ollama_capabilities(["tools"]) is None


# --- which models accept images --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "sees"),
    [
        ("gpt-4o", True),
        ("gpt-4o-mini", True),
        ("openai/gpt-4.1", True),
        ("gpt-5.3-codex", True),
        ("o3-mini", False),
        ("claude-3-5-sonnet-latest", True),
        ("claude-sonnet-4-5", True),
        ("claude-opus-4-1", True),
        ("claude-2.1", False),
        ("gemini-2.5-pro", True),
        ("gpt-3.5-turbo", False),
        ("llama3.2:3b", False),
    ],
)
def test_the_name_table(name: str, sees: bool) -> None:
    assert vision_by_name(name) is sees


def test_copilots_list_says_which_models_see_and_how_many_images() -> None:
    models = {m.id: m for m in parse_models(json.loads(REAL_COPILOT_MODELS.read_text()))}
    gpt4o, mini, claude = models["gpt-4o"], models["gpt-4o-mini"], models["claude-sonnet-4"]
    assert (gpt4o.vision, gpt4o.max_images, gpt4o.max_image_bytes) == (True, 1, 3_145_728)
    assert gpt4o.image_types == ("image/jpeg", "image/png", "image/webp", "image/gif")
    assert not mini.vision and mini.max_images is None
    assert claude.vision and claude.max_images == 5 and "image/gif" not in claude.image_types
    limits = DEFAULT_IMAGE_LIMITS.narrowed(
        max_images=claude.max_images,
        max_bytes=claude.max_image_bytes,
        media_types=claude.image_types,
    )
    assert limits == ImageLimits(
        max_images=4, max_bytes=3_145_728, media_types=("image/png", "image/jpeg", "image/webp")
    )


# --- which images a request carries ----------------------------------------------------------------


def turn(call_id: str, *images: Image) -> list:
    return [
        UserMessage(content=f"turn {call_id}"),
        AssistantMessage(tool_calls=(ToolCall.from_raw(id=call_id, name="t", raw_arguments=""),)),
        ToolResult(tool_call_id=call_id, name="t", content="[image/png]", images=images),
    ]


def test_a_request_carries_the_current_turns_newest_images_only() -> None:
    old, new = turn("a", image(1)), turn("b", image(2), image(3), image(4))
    history = [*old, AssistantMessage(text="ok"), *new]
    sent = images_to_send(history, ImageLimits(max_images=2))
    assert sent[2].images == () and sent[-1].images == (image(3), image(4))
    assert sent[1] is history[1], "untouched messages are the same objects"
    assert all(m.images == () for m in images_to_send(history, None) if isinstance(m, ToolResult))
    gif = Image(media_type="image/gif", data=image().data)
    only_png = ImageLimits(media_types=("image/png",), max_bytes=image(2).size)
    assert images_to_send(turn("c", gif, image(2), image(9)), only_png)[-1].images == (image(2),)


def test_an_image_costs_a_fixed_number_of_tokens_not_its_base64_length() -> None:
    big = Image(media_type="image/png", data="A" * 400_000)
    plain = ToolResult(tool_call_id="c", name="t", content="[image/png 640x480]")
    shown = ToolResult(tool_call_id="c", name="t", content=plain.content, images=(big, big))
    assert message_tokens(shown) == message_tokens(plain) + 2 * IMAGE_TOKENS


async def test_the_context_window_drops_images_the_model_will_not_be_sent(serve) -> None:
    history = [*turn("a", image(1)), AssistantMessage(text="ok"), *turn("b", image(2))]
    seeing = await ContextWindow().fit(list(history), serve([]).model(vision=True))
    assert [m.images for m in seeing if isinstance(m, ToolResult)] == [(), (image(2),)]
    blind = await ContextWindow().fit(list(history), serve([]).model())
    assert [m.images for m in blind if isinstance(m, ToolResult)] == [(), ()]


async def test_a_shortened_result_loses_its_images() -> None:
    rounds = []
    for n in range(4):
        rounds += turn(f"c{n}", image(n + 1))[1:]
    history = [UserMessage(content="go"), *rounds]
    compactor = Compactor(
        cost=message_tokens,
        calibration=Calibration(),
        limit=3_000,
        target=2_500,
        window=4_000,
        model=None,
        tools_cost=0,
        summarize=False,
    )
    messages, done = await compactor.run(history, before=4_200)
    images = [m.images for m in messages if isinstance(m, ToolResult)]
    assert images[:2] == [(), ()] and images[2:] == [(image(3),), (image(4),)]
    assert done.elided == 2


async def test_ollama_moved_with_ollama_base_url_is_asked_there(ollama, monkeypatch) -> None:
    """`%env OLLAMA_BASE_URL=...` after a first request: the next one goes to the new server,
    which is asked what the model can do (the old server's answer was about another server)."""
    old = ollama([reply("from the old one")], capabilities=["completion"])
    new = ollama([reply("from the new one")], capabilities=["completion", "tools"])
    monkeypatch.setenv("OLLAMA_BASE_URL", old.url)
    model = OllamaChat(old.model_name)
    first = await model.complete(HI, tools=[WEATHER])
    monkeypatch.setenv("OLLAMA_BASE_URL", new.url)
    second = await model.complete(HI, tools=[WEATHER])
    assert (first.text, second.text) == ("from the old one", "from the new one")
    assert ["tools" in r.body for r in (*old.requests, *new.requests)] == [False, True]
    assert len(old.shows) == len(new.shows) == 1
    await model.aclose()
