"""Every fill-in-the-middle wire against a loopback server speaking its provider's bytes: the
request body as the provider documents it, the streamed pieces as deltas, the final text and
usage, and each provider's refusal."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from copilot_nb.errors import ModelHTTPError
from copilot_nb.events import ModelResponse, Notice, TextDelta
from copilot_nb.models.chat_fill import CURSOR, ChatFill
from copilot_nb.models.copilot.fim_completions import CopilotFill
from copilot_nb.models.fim import FillRequest, InfillDecoder, TextCompletionsDecoder
from copilot_nb.models.openai.chat import OpenAIChat
from copilot_nb.models.openai.fim_completions import MistralFill, OpenAICompletions
from copilot_nb.models.openai.llama_infill import LlamaCppFill
from copilot_nb.models.openai.ollama_generate import NDJSONGenerateDecoder, OllamaFill
from copilot_nb.models.providers import row
from copilot_nb.testing.fim_wires import (
    FillServer,
    completions_events,
    infill_events,
    ollama_lines,
)

REQUEST = FillRequest(
    prefix="total = df.",
    suffix="\nprint(total)",
    context=(("cells above", "import pandas as pd"),),
    max_tokens=64,
    stop=("\n\n",),
)
PIECES = ["sum", "()", "['price']"]


@pytest.fixture
def server() -> Iterator[FillServer]:
    with FillServer(PIECES) as running:
        yield running


async def drain(events) -> tuple[list[str], ModelResponse, list[Notice]]:
    deltas, notices, final = [], [], None
    async for event in events:
        if isinstance(event, TextDelta):
            deltas.append(event.text)
        elif isinstance(event, Notice):
            notices.append(event)
        elif isinstance(event, ModelResponse):
            final = event
    assert final is not None
    return deltas, final, notices


async def test_openai_completions_send_prompt_and_suffix_and_stream_the_text(server):
    model = OpenAICompletions("qwen2.5-coder", base_url=f"{server.base_url}/v1", api_key="k")
    deltas, final, _ = await drain(model.fill(REQUEST))
    assert deltas == PIECES
    assert final.message.text == "sum()['price']"
    assert final.message.finish_reason == "stop"
    assert final.message.usage is not None and final.message.usage.output_tokens == 3
    (call,) = server.calls
    assert call.path == "/v1/completions"
    assert call.headers["Authorization"] == "Bearer k"
    assert call.body == {
        "model": "qwen2.5-coder",
        "prompt": "import pandas as pd\n\ntotal = df.",
        "max_tokens": 64,
        "temperature": 0.0,
        "stream": True,
        "suffix": "\nprint(total)",
        "stop": ["\n\n"],
    }
    await model.aclose()


async def test_a_server_that_refuses_suffix_is_asked_again_without_it_from_then_on():
    with FillServer(PIECES, refuse_suffix=True) as vllm:
        model = OpenAICompletions("m", base_url=f"{vllm.base_url}/v1", api_key="k")
        _deltas, final, notices = await drain(model.fill(REQUEST))
        assert final.message.text == "sum()['price']"
        assert "takes no suffix" in notices[0].text
        await drain(model.fill(REQUEST))
        assert ["suffix" in c.body for c in vllm.calls] == [True, False, False]
        await model.aclose()


async def test_deepseek_is_a_row_with_its_beta_base_url_and_its_own_key(server, monkeypatch):
    monkeypatch.setenv("DEEPSEEK_BASE_URL", f"{server.base_url}/beta")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "ds-key")
    model = row("deepseek").build_fill("deepseek-chat")
    assert type(model) is OpenAICompletions and model.provider == "deepseek"
    _, final, _ = await drain(model.fill(REQUEST))
    assert final.message.text == "sum()['price']"
    (call,) = server.calls
    assert call.path == "/beta/completions"
    assert call.headers["Authorization"] == "Bearer ds-key"
    assert call.body["suffix"] == REQUEST.suffix
    await model.aclose()


async def test_mistral_fim_streams_chat_chunks(server):
    model = MistralFill("codestral-latest", base_url=f"{server.base_url}/v1", api_key="m-key")
    deltas, final, _ = await drain(model.fill(REQUEST))
    assert deltas == PIECES
    assert final.message.usage is not None and final.message.usage.input_tokens == 12
    (call,) = server.calls
    assert call.path == "/v1/fim/completions"
    assert call.body["model"] == "codestral-latest"
    assert call.body["prompt"].endswith("total = df.")
    assert call.body["suffix"] == REQUEST.suffix
    await model.aclose()


async def test_ollama_generate_with_suffix_reads_newline_delimited_json(server):
    model = OllamaFill("qwen2.5-coder:1.5b", base_url=f"{server.base_url}/v1")
    deltas, final, _ = await drain(model.fill(REQUEST))
    assert deltas == PIECES
    assert final.message.usage is not None
    assert (final.message.usage.input_tokens, final.message.usage.output_tokens) == (12, 3)
    (call,) = server.calls
    assert call.path == "/api/generate"
    assert call.body == {
        "model": "qwen2.5-coder:1.5b",
        "prompt": "import pandas as pd\n\ntotal = df.",
        "suffix": "\nprint(total)",
        "stream": True,
        "options": {"num_predict": 64, "temperature": 0.0, "stop": ["\n\n"]},
    }
    await model.aclose()


async def test_llama_cpp_infill_sends_the_context_as_input_extra(server):
    model = LlamaCppFill("local", base_url=server.base_url)
    deltas, final, _ = await drain(model.fill(REQUEST))
    assert deltas == PIECES
    assert final.message.finish_reason == "stop"
    (call,) = server.calls
    assert call.path == "/infill"
    assert call.body == {
        "input_prefix": "total = df.",
        "input_suffix": "\nprint(total)",
        "input_extra": [{"filename": "cells above", "text": "import pandas as pd"}],
        "n_predict": 64,
        "temperature": 0.0,
        "stream": True,
        "stop": ["\n\n"],
    }
    await model.aclose()


async def test_copilot_ghost_text_goes_to_the_proxy_the_exchange_names(
    server, github, tmp_path: Path, monkeypatch
):
    monkeypatch.setenv("COPILOT_NB_CONFIG_DIR", str(tmp_path / "config"))
    fake = github()
    fake.proxy_url = server.base_url
    model = CopilotFill(github_token=fake.add_github_token(), hosts=fake.hosts)
    deltas, _final, _ = await drain(model.fill(REQUEST))
    assert deltas == PIECES
    (call,) = server.calls
    assert call.path == "/v1/engines/copilot-codex/completions"
    assert call.headers["Authorization"].startswith("Bearer tid=fake")
    assert call.headers["Openai-Intent"] == "copilot-ghost"
    assert call.headers["Editor-Version"].startswith("vscode/")
    body = dict(call.body)
    assert body.pop("extra") == {
        "language": "python",
        "next_indent": 0,
        "trim_by_indentation": True,
        "prompt_tokens": len(REQUEST.prompt()) // 4,
        "suffix_tokens": len(REQUEST.suffix) // 4,
    }
    assert body == {
        "prompt": "import pandas as pd\n\ntotal = df.",
        "suffix": "\nprint(total)",
        "max_tokens": 64,
        "temperature": 0.0,
        "top_p": 1,
        "n": 1,
        "stop": ["\n\n"],
        "nwo": "",
        "stream": True,
    }
    await model.aclose()


async def test_a_chat_model_completes_through_a_prompt_with_the_cursor(server):
    chat = OpenAIChat("gpt-4o", base_url=f"{server.base_url}/v1", api_key="k")
    model = ChatFill(chat)
    deltas, _final, _ = await drain(model.fill(REQUEST))
    assert deltas == PIECES
    (call,) = server.calls
    assert call.path == "/v1/chat/completions"
    user = call.body["messages"][-1]["content"]
    assert f"total = df.{CURSOR}\nprint(total)" in user
    assert "import pandas as pd" in user
    await model.aclose()


async def test_a_refusal_is_an_error_with_the_providers_words():
    with FillServer(PIECES) as running:
        model = OpenAICompletions("m", base_url=f"{running.base_url}/nowhere", api_key="k")
        with pytest.raises(ModelHTTPError, match="404"):
            await drain(model.fill(REQUEST))
        await model.aclose()


@pytest.mark.parametrize(
    ("decoder", "stream"),
    [
        (TextCompletionsDecoder, b"".join(completions_events(PIECES, "m"))),
        (TextCompletionsDecoder, b"".join(completions_events(PIECES, "m", copilot=True))),
        (InfillDecoder, b"".join(infill_events(PIECES, "m"))),
        (NDJSONGenerateDecoder, b"".join(ollama_lines(PIECES, "m"))),
    ],
)
def test_every_decoder_reads_its_stream_split_at_every_byte(decoder, stream):
    for cut in range(1, len(stream)):
        d = decoder()
        events = d.feed(stream[:cut]) + d.feed(stream[cut:]) + d.flush()
        assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "".join(PIECES)
        assert d.close().text == "".join(PIECES)
        assert d.done


async def test_a_recording_cassette_keeps_fill_requests_out_of_its_order_and_a_replay_goes_live(
    server, tmp_path, monkeypatch
):
    import json

    from copilot_nb.agent.ghost_text.model_choice import resolve_fill
    from copilot_nb.agent.model_strings import resolve_model
    from copilot_nb.models.cassettes.cassette import Cassette, using

    monkeypatch.setenv("COPILOT_NB_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("OLLAMA_BASE_URL", f"{server.base_url}/v1")
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.base_url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    tape = tmp_path / "n.copilot.jsonl"
    fill = resolve_fill("ollama:qwen2.5-coder", resolve_model)
    chat = resolve_fill("openai:gpt-4o", resolve_model)
    with using(Cassette(tape, "record")):
        _, recorded, _ = await drain(fill.fill(REQUEST))
        await drain(chat.fill(REQUEST))
    lines = [json.loads(line) for line in tape.read_text().splitlines()]
    paths = [e["request"]["path"] for e in lines if "request" in e]
    assert paths == ["/api/generate"], "the fill wire recorded, the chat fallback not"
    with using(Cassette(tape, "replay")):
        _, replayed, _ = await drain(fill.fill(REQUEST))
    assert replayed.message.text == recorded.message.text
    assert [c.path for c in server.calls] == [
        "/api/generate",
        "/v1/chat/completions",
        "/api/generate",
    ], "while a cassette replays, completions go live"
    await fill.aclose()
    await chat.aclose()
