"""A tool's schema checks the model's arguments and nothing more: it fetches nothing, and its
regexes cannot hold the kernel.

A schema comes from whoever wrote the tool (an MCP server's `inputSchema`), so the check it asks
for runs on our terms: a `$ref` resolves within the schema only (a loopback server stands for
the address a hostile one names, and records that it is never asked), a reference that does not
resolve is an error the model reads, and a `pattern` that backtracks catastrophically is cut off
and reported instead of stalling the loop.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from copilot_nb.tools import Tool, ToolSet
from copilot_nb.tools.schemas.validator import CHECK_SECONDS
from tests.patience import patient

NESTED = "^(a+)+$"
"""Backtracks exponentially on `re`: 26 `a`s and a `!` held the loop 3 s."""
CATASTROPHIC = "^(a|a)+$"
"""Backtracks exponentially on `re` and on `regex` alike (which sees through `NESTED`)."""
STALLING = "a" * 26 + "!"
"""26 `a`s and a `!`: 6 s on `re`, past any budget on `regex` (doubling with each `a`)."""


class SchemaHost:
    """A loopback server that serves one schema and records every request it gets."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.requests: list[str] = []
        body = json.dumps(schema).encode()
        host = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                host.requests.append(self.path)
                self.send_response(200)
                self.send_header("content-type", "application/schema+json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/schema.json"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def schema_host() -> Iterator[SchemaHost]:
    """Serves `{"type": "integer"}`: were it fetched, it would decide that a path is a number."""
    host = SchemaHost({"type": "integer"})
    yield host
    host.close()


def server_tool(parameters: dict[str, Any], ran: list[dict[str, Any]]) -> ToolSet:
    """A tool as an MCP server offers it: its schema as the server wrote it."""

    def function(**arguments: Any) -> str:
        ran.append(arguments)
        return "ran"

    return ToolSet(
        [Tool(name="srv__open", description="Open.", parameters=parameters, function=function)]
    )


async def test_a_remote_ref_is_not_fetched_and_the_model_reads_why(schema_host) -> None:
    ran: list[dict[str, Any]] = []
    tools = server_tool({"type": "object", "properties": {"path": {"$ref": schema_host.url}}}, ran)
    out = await tools.call_tool("srv__open", {"path": "notes.txt"})
    assert schema_host.requests == [], "the kernel asked the schema's URL"
    assert out.is_error and ran == [], "nothing the schema could not check runs"
    assert out.content.startswith("srv__open: ")
    assert schema_host.url in out.content
    assert "only within the schema" in out.content, out.content


async def test_a_remote_ref_behind_an_id_or_a_dynamic_ref_is_not_fetched(schema_host) -> None:
    base = schema_host.url.rsplit("/", 1)[0]
    ran: list[dict[str, Any]] = []
    for parameters in (
        {
            "$id": f"{base}/tool.json",
            "type": "object",
            "properties": {"n": {"$ref": "schema.json"}},
        },
        {"type": "object", "properties": {"n": {"$dynamicRef": schema_host.url}}},
        {"type": "object", "$ref": f"{schema_host.url}#/definitions/x"},
    ):
        out = await server_tool(parameters, ran).call_tool("srv__open", {"n": 1})
        assert out.is_error, parameters
    assert schema_host.requests == [] and ran == []


async def test_a_ref_that_does_not_resolve_is_an_error_result_not_an_exception() -> None:
    ran: list[dict[str, Any]] = []
    tools = server_tool(
        {"type": "object", "properties": {"path": {"$ref": "#/$defs/missing"}}}, ran
    )
    out = await tools.call_tool("srv__open", {"path": "notes.txt"})
    assert out.is_error and ran == []
    assert "#/$defs/missing" in out.content, out.content
    assert "srv__open" in out.summary


async def test_local_refs_still_check_the_arguments() -> None:
    ran: list[dict[str, Any]] = []
    tools = server_tool(
        {
            "type": "object",
            "$defs": {"path": {"type": "string", "pattern": "^[a-z]+\\.txt$"}},
            "properties": {"path": {"$ref": "#/$defs/path"}},
            "required": ["path"],
        },
        ran,
    )
    assert (await tools.call_tool("srv__open", {"path": "notes.txt"})).content == "ran"
    refused = await tools.call_tool("srv__open", {"path": "Notes.md"})
    assert refused.is_error and "does not match" in refused.content
    assert ran == [{"path": "notes.txt"}]


@pytest.mark.parametrize(
    ("parameters", "arguments"),
    [
        pytest.param(
            {"type": "object", "properties": {"name": {"type": "string", "pattern": CATASTROPHIC}}},
            {"name": STALLING},
            id="pattern",
        ),
        pytest.param(
            {"type": "object", "patternProperties": {CATASTROPHIC: {"type": "integer"}}},
            {STALLING: 1},
            id="patternProperties",
        ),
        pytest.param(
            {"type": "object", "propertyNames": {"pattern": CATASTROPHIC}},
            {STALLING: 1},
            id="propertyNames",
        ),
        pytest.param(
            {
                "type": "object",
                "additionalProperties": False,
                "patternProperties": {CATASTROPHIC: True},
            },
            {STALLING: 1},
            id="additionalProperties",
        ),
        pytest.param(
            {
                "type": "object",
                "unevaluatedProperties": False,
                "patternProperties": {CATASTROPHIC: True},
            },
            {STALLING: 1},
            id="unevaluatedProperties",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {
                    "name": {
                        "$schema": "http://json-schema.org/draft-07/schema#",
                        "pattern": CATASTROPHIC,
                    }
                },
            },
            {"name": STALLING},
            id="a draft-07 subschema",
        ),
    ],
)
async def test_a_catastrophic_pattern_is_cut_off_and_the_model_reads_why(
    parameters, arguments
) -> None:
    ran: list[dict[str, Any]] = []
    tools = server_tool(parameters, ran)
    await tools.call_tool("srv__open", {})  # jsonschema imported: the time is the check's
    started = time.monotonic()
    out = await tools.call_tool("srv__open", arguments)
    took = time.monotonic() - started
    assert out.is_error and ran == [{}]
    assert CATASTROPHIC in out.content and f"{CHECK_SECONDS:g} s" in out.content, out.content
    assert took < CHECK_SECONDS + patient(2.0), f"the check held the loop {took:.1f} s"


async def test_a_nested_quantifier_that_stalled_re_answers_at_once() -> None:
    parameters = {"type": "object", "patternProperties": {NESTED: {"type": "integer"}}}
    tools = server_tool(parameters, [])
    await tools.call_tool("srv__open", {})
    started = time.monotonic()
    out = await tools.call_tool("srv__open", {STALLING: 1, "aaa": "x"})
    assert time.monotonic() - started < 1.0
    assert out.is_error and "argument 'aaa' must be integer" in out.content, out.content


async def test_many_slow_patterns_share_one_budget() -> None:
    """Each match is cut off at what is left of one budget for the call, not a budget each."""
    properties = {f"p{i}": {"type": "string", "pattern": CATASTROPHIC} for i in range(8)}
    tools = server_tool({"type": "object", "properties": properties}, [])
    started = time.monotonic()
    out = await tools.call_tool("srv__open", {f"p{i}": STALLING for i in range(8)})
    assert out.is_error
    assert time.monotonic() - started < CHECK_SECONDS + patient(2.0)


async def test_patterns_that_match_as_python_regexes_do_still_match() -> None:
    """The `regex` engine reads a schema's patterns as `re` did: a Unicode class, a lookahead."""
    ran: list[dict[str, Any]] = []
    tools = server_tool(
        {
            "type": "object",
            "properties": {"word": {"type": "string", "pattern": "^(?=\\w)\\w+é$"}},
            "patternProperties": {"^x_\\d+$": {"type": "integer"}},
        },
        ran,
    )
    assert (await tools.call_tool("srv__open", {"word": "café", "x_1": 2})).content == "ran"
    refused = await tools.call_tool("srv__open", {"word": "cafe", "x_1": "two"})
    assert refused.is_error
    assert "argument 'word'" in refused.content and "argument 'x_1'" in refused.content


async def test_a_schema_whose_check_doubles_with_each_level_stops_at_the_budget() -> None:
    """Two branches that both fail, at each of 16 levels: 65,536 paths, 20 s unbounded."""
    branches = [{"$ref": "#/$defs/n"}, {"$ref": "#/$defs/n"}]
    parameters = {
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/n"}},
        "$defs": {"n": {"type": "array", "items": {"anyOf": branches}}},
    }
    tree: Any = 1
    for _ in range(16):
        tree = [tree]
    tools = server_tool(parameters, [])
    await tools.call_tool("srv__open", {})
    started = time.monotonic()
    out = await tools.call_tool("srv__open", {"tree": tree})
    assert time.monotonic() - started < CHECK_SECONDS + patient(2.0)
    assert out.is_error and f"took over {CHECK_SECONDS:g} s" in out.content, out.content


async def test_unique_items_among_thousands_of_objects_are_checked_at_once() -> None:
    """jsonschema compares objects pair by pair: 2,000 of them took 5 s."""
    parameters = {"type": "object", "properties": {"rows": {"type": "array", "uniqueItems": True}}}
    tools = server_tool(parameters, [])
    await tools.call_tool("srv__open", {})
    rows = [{"id": i, "tags": [i, str(i)]} for i in range(2000)]
    started = time.monotonic()
    assert not (await tools.call_tool("srv__open", {"rows": rows})).is_error
    duplicated = await tools.call_tool(
        "srv__open", {"rows": [*rows, {"tags": [7, "7"], "id": 7.0}]}
    )
    assert time.monotonic() - started < 2.0
    assert duplicated.is_error, duplicated.content
    assert "non-unique elements: {'tags': [7, '7'], 'id': 7.0} repeats in" in duplicated.content
    assert (
        await tools.call_tool("srv__open", {"rows": [[True], [1], {"a": 0}, {"a": False}]})
    ).content == "ran"


ORDINARY = [
    {"type": "object", "properties": {"a": {"type": "string", "pattern": "^[a-z]+$"}}},
    {
        "type": "object",
        "patternProperties": {"^x_": {"type": "integer"}},
        "additionalProperties": False,
    },
    {
        "type": "object",
        "patternProperties": {"^x_": {"type": "integer"}},
        "additionalProperties": {"type": "string"},
    },
    {"type": "object", "properties": {"a": {}}, "additionalProperties": False},
    {
        "type": "object",
        "properties": {"kind": {"enum": ["a", "b"]}},
        "allOf": [{"patternProperties": {"^p": {"type": "integer"}}}],
        "anyOf": [{"properties": {"q": {"type": "number"}}}, {"required": ["kind"]}],
        "if": {"properties": {"kind": {"const": "a"}}},
        "then": {"properties": {"r": True}},
        "else": {"properties": {"s": True}},
        "dependentSchemas": {"kind": {"properties": {"t": True}}},
        "unevaluatedProperties": False,
    },
    {
        "type": "object",
        "$defs": {"u": {"properties": {"v": True}}},
        "$ref": "#/$defs/u",
        "unevaluatedProperties": {"type": "integer"},
    },
    {"type": "object", "properties": {"list": {"type": "array", "uniqueItems": True}}},
    {"type": "object", "propertyNames": {"pattern": "^[a-z_]+$"}},
]
INSTANCES = [
    {},
    {"a": "abc"},
    {"a": "ABC"},
    {"x_1": 1, "x_2": "two", "other": "o", "n": 3},
    {"kind": "a", "r": 1, "s": 2, "t": 3, "p1": 1, "p2": "x", "q": 1, "z": None},
    {"kind": "b", "s": 2, "v": 1, "w": "w"},
    {"list": [1, 1.0]},
    {"list": [True, 1, [1], [True], {"k": 1}, {"k": True}]},
    {"list": [{"k": [1, {"m": None}]}, {"k": [1, {"m": None}]}]},
    {"Bad-Name": 1, "good_name": 2},
]


def test_the_checks_verdicts_are_jsonschemas_own_on_ordinary_schemas() -> None:
    """Every keyword remade gives the errors jsonschema gives, where neither needs to stop."""
    import jsonschema

    from copilot_nb.tools.schemas.validator import argument_validator, bounded_check

    def errors(validator: Any, instance: Any) -> list[tuple[str, str, str]]:
        """Each error's path, keyword and message (ours names a repeated item: not compared)."""
        return sorted(
            (".".join(map(str, e.absolute_path)), e.validator, e.message)
            if e.validator != "uniqueItems"
            else (".".join(map(str, e.absolute_path)), e.validator, "")
            for e in validator.iter_errors(instance)
        )

    for schema in ORDINARY:
        for instance in INSTANCES:
            with bounded_check():
                ours = errors(argument_validator(schema), instance)
            theirs = errors(jsonschema.Draft202012Validator(schema), instance)
            assert ours == theirs, (schema, instance)
