"""The stream decoders' two JSON parsers (msgspec when installed, else the standard library) give
the same events, the same reply and the same errors, on every recorded stream and on the JSON
where the two libraries differ; and a missing or disabled msgspec falls back to the library."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from copilot_nb.models import fast_json
from copilot_nb.models.anthropic.stream import MessagesStreamDecoder
from copilot_nb.models.openai.chat_stream import ChatCompletionsDecoder
from copilot_nb.models.openai.responses_stream import ResponsesDecoder
from tests.stream_splits import SPLITS, feed_all

CORPUS = Path(__file__).parent / "data" / "conformance"
DECODERS: dict[str, Any] = {
    "openai": ChatCompletionsDecoder,
    "anthropic": MessagesStreamDecoder,
    "responses": ResponsesDecoder,
}
PARSERS = fast_json.available()


def corpus() -> list[tuple[str, Path]]:
    cases = [
        (json.loads(path.with_suffix(".expected.json").read_text())["provider"], path)
        for path in sorted(CORPUS.glob("*.sse"))
    ]
    return cases + [("responses", path) for path in sorted((CORPUS / "responses").glob("*.sse"))]


CASES = corpus()


@pytest.fixture
def parser() -> Iterator[None]:
    """Restores the parser in use after a test switches it."""
    previous = fast_json.backend
    yield
    fast_json.use(previous)


def outcome(kind: str, pieces: list[bytes]) -> tuple[Any, ...]:
    """Everything a decoder gives for a stream: events, the error, the reply, its error body."""
    decoder = DECODERS[kind]()
    events, error = feed_all(decoder, pieces)
    failure = None if error is None else (type(error).__name__, str(error), repr(error.body))
    return events, failure, decoder.close(), repr(decoder.error)


def each_parser(kind: str, pieces: list[bytes]) -> dict[str, tuple[Any, ...]]:
    results = {}
    for name in PARSERS:
        fast_json.use(name)
        results[name] = outcome(kind, pieces)
    return results


def test_the_corpus_covers_every_wire() -> None:
    assert {kind for kind, _ in CASES} == set(DECODERS)
    assert len(CASES) >= 55


@pytest.mark.usefixtures("parser")
@pytest.mark.parametrize("split", ["whole", "bytewise", "random0"])
@pytest.mark.parametrize(("kind", "path"), CASES, ids=[path.stem for _, path in CASES])
def test_every_recorded_stream_decodes_the_same_with_each_parser(
    kind: str, path: Path, split: str
) -> None:
    results = each_parser(kind, SPLITS[split](path.read_bytes()))
    assert len(set(map(repr, results.values()))) == 1, results


EDGES = [
    '{"a": 1, "a": 2}',  # duplicate keys: the last wins
    '{"n": 123456789012345678901234567890}',  # past 64 bits
    '{"n": -9223372036854775808, "m": 18446744073709551615}',
    '{"x": NaN, "y": Infinity, "z": -Infinity}',  # not JSON, but the library takes them
    '{"f": 1e400, "g": -1e400, "h": 1e-400}',
    '{"f": 0.1, "g": -0.0, "h": 1E2, "i": 2.5e-3, "j": 1.7976931348623157e308}',
    '{"s": "\\ud800"}',  # a lone surrogate escape
    '{"s": "\\ud83d\\ude00 \\u00e9 \\n \\" \\\\ \\/"}',
    '{"s": "tab\there"}',  # a raw control character inside a string
    '{"s": "del\x7f"}',
    '  {"padded": true}  ',
    '{"a": [1, 2, {"b": null}]}',
    "{" * 3000 + "}" * 3000,
    '{"nested": ' + "[" * 2000 + "]" * 2000 + "}",
    '{"a": 1} {"b": 2}',
    '{"a": 1}x',
    '{"a": 1',
    '{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}}',
    '{"choices": [{"index": 0, "delta": {"content": "hi"}}]}',
    '{"type": "response.output_text.delta", "output_index": 0, "delta": "hi"}',
    # near the shapes the decoders read without a dict (fast_json.shaped): each must decode as
    # the dict path does
    '{"choices": [{"index": 0, "delta": {"content": "hi", "role": "assistant"}}]}',
    '{"choices": [{"index": null, "delta": {"content": "hi"}}]}',
    '{"choices": [{"index": 1, "delta": {"content": "hi"}}]}',
    '{"choices": [{"delta": {"content": "hi"}, "finish_reason": ""}]}',
    '{"choices": [{"delta": {"content": "hi"}, "finish_reason": "stop"}]}',
    '{"choices": [{"delta": {"content": "hi"}}], "usage": {"prompt_tokens": 1}}',
    '{"choices": [{"delta": {"content": "hi"}}], "error": {"message": "no"}}',
    '{"choices": [{"delta": {"content": "a"}}, {"index": 1, "delta": {"content": "b"}}]}',
    '{"choices": [{"delta": {"content": ""}}]}',
    '{"choices": [{"delta": {"content": "a", "content": "b"}}], "choices": []}',
    '{"choices": [{"delta": {"content": ["x"]}}]}',
    '{"type": "content_block_delta", "index": 3, "delta": {"type": "text_delta", "text": "hi"}}',
    '{"type": "content_block_delta", "delta": {"type": "text_delta", "text": ""}}',
    '{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": null}}',
    '{"type": "response.output_text.delta", "output_index": 5, "delta": "hi", "item": {"type": "x"}}',
    '{"type": "response.output_text.delta", "output_index": 0, "delta": ""}',
    '{"type": "response.output_text.delta", "delta": "hi", "type": "response.completed"}',
    '{"type": "response.output_text.delta", "output_index": false, "delta": "hi"}',
]


@pytest.mark.parametrize("text", EDGES, ids=range(len(EDGES)))
def test_each_parser_gives_the_library_value_or_declines(text: str, parser: None) -> None:
    data = text.encode("utf-8", "surrogatepass")
    try:
        expected: Any = json.loads(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        expected = ValueError
    for name in PARSERS:
        fast_json.use(name)
        try:
            got = fast_json.loads(data)
        except fast_json.DECLINED:
            continue  # declined: the caller takes the library's own path
        assert expected is not ValueError, (name, text)
        assert repr(got) == repr(expected), name  # repr: NaN != NaN, -0.0 == 0.0


INVALID_UTF8 = b'{"s": "caf\xe9 \xff"}'


@pytest.mark.parametrize(
    "data", [*(e.encode("utf-8", "surrogatepass") for e in EDGES), INVALID_UTF8]
)
@pytest.mark.parametrize("kind", list(DECODERS))
def test_odd_json_in_a_stream_decodes_the_same_with_each_parser(
    kind: str, data: bytes, parser: None
) -> None:
    head = {
        "openai": b"",
        "anthropic": (
            b'event: content_block_start\ndata: {"type": "content_block_start", "index": 0, '
            b'"content_block": {"type": "text", "text": ""}}\n\n'
        ),
        "responses": (
            b'data: {"type": "response.output_item.added", "output_index": 0, '
            b'"item": {"type": "message"}}\n\n'
        ),
    }[kind]
    for name in (b"", b"event: error\n", b"event: message_delta\n"):
        stream = head + name + b"data: " + data + b"\n\n"
        results = each_parser(kind, [stream])
        assert len(set(map(repr, results.values()))) == 1, results


def run_python(code: str, **env: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**__import__("os").environ, **env},
    ).stdout.strip()


def test_without_msgspec_the_library_parses() -> None:
    code = (
        "import sys; sys.modules['msgspec'] = None\n"
        "from copilot_nb.models import fast_json\n"
        "from copilot_nb.models.openai.chat_stream import ChatCompletionsDecoder\n"
        "d = ChatCompletionsDecoder()\n"
        'd.feed(b\'data: {"choices": [{"index": 0, "delta": {"content": "hi"}}]}\\n\\n\')\n'
        "print(fast_json.backend, fast_json.available(), d.close().text)\n"
        "try:\n    fast_json.use('msgspec')\nexcept ImportError as e:\n    print(e)\n"
    )
    lines = run_python(code).splitlines()
    assert lines[0] == "json ['json'] hi"
    assert "msgspec is not installed" in lines[1]


def test_the_variable_turns_msgspec_off() -> None:
    code = "from copilot_nb.models import fast_json; print(fast_json.backend)"
    assert run_python(code, COPILOT_NB_FAST_JSON="0") == "json"
    installed = "msgspec" in PARSERS
    assert run_python(code, COPILOT_NB_FAST_JSON="1") == ("msgspec" if installed else "json")


def test_an_unknown_parser_is_refused(parser: None) -> None:
    with pytest.raises(ValueError, match="unknown JSON parser 'simdjson'"):
        fast_json.use("simdjson")


@pytest.mark.parametrize("kind", list(DECODERS))
def test_data_nested_too_deep_is_a_stream_error(kind: str, parser: None) -> None:
    data = b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    for name in PARSERS:
        fast_json.use(name)
        events, failure, _, _ = outcome(kind, [b"data: " + data + b"\n\n"])
        assert events == []
        assert failure is not None and failure[0] == "StreamError", name
