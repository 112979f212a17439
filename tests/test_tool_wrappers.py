"""Filters and deferred tools: what the model is offered, and how it finds the rest."""

from __future__ import annotations

import time

from copilot_nb import Agent, Tool, ToolSet
from copilot_nb.testing import call, reply
from copilot_nb.tools.wrappers import DeferredToolSet, FilteredToolSet


def make_tool(name: str, description: str = "") -> Tool:
    def run(x: int = 0) -> str:
        return f"{name}({x})"

    schema = {
        "type": "object",
        "properties": {"x": {"type": "integer"}},
        "additionalProperties": False,
    }
    return Tool(
        name=name, description=description or f"Tool {name}.", parameters=schema, function=run
    )


CORE = ToolSet([make_tool("read_file"), make_tool("write_file"), make_tool("list_directory")])


def many(count: int) -> ToolSet:
    tools = [make_tool(f"crm_tool_{i}", f"Customer records, operation {i}.") for i in range(count)]
    tools.append(make_tool("weather_now", "Current weather for a city."))
    return ToolSet(tools)


async def test_an_allow_list_wins_over_exclusions():
    filtered = FilteredToolSet(CORE, available=["read_file"], excluded=["read_file", "write_file"])
    assert [t.name for t in filtered] == ["read_file"]
    assert filtered.get("write_file") is None and "write_file" not in filtered
    out = await filtered.call_tool("write_file", {})
    assert out.is_error and "unknown tool 'write_file'" in out.content
    assert "read_file" in out.content


async def test_exclusions_hide_tools_from_requests_and_calls():
    filtered = FilteredToolSet(CORE, excluded=["write_file"])
    assert [s.name for s in filtered.list_tools()] == ["read_file", "list_directory"]
    assert (await filtered.call_tool("read_file", {"x": 2})).content == "read_file(2)"


async def test_few_tools_are_all_listed():
    deferred = DeferredToolSet(CORE, many(5))
    names = [s.name for s in deferred.list_tools()]
    assert "tool_search" not in names and len(names) == 9


async def test_many_tools_are_deferred_behind_tool_search():
    deferred = DeferredToolSet(CORE, many(60))
    assert [s.name for s in deferred.list_tools()] == [
        "read_file",
        "write_file",
        "list_directory",
        "tool_search",
    ]
    found = await deferred.call_tool("tool_search", {"pattern": "weather|city"})
    assert "weather_now" in found.content and not found.is_error
    assert "weather_now" in [s.name for s in deferred.list_tools()]
    assert (await deferred.call_tool("crm_tool_7", {"x": 1})).content == "crm_tool_7(1)"
    assert "crm_tool_7" in [s.name for s in deferred.list_tools()]
    bad = await deferred.call_tool("tool_search", {"pattern": "("})
    assert bad.is_error and "not a valid regex" in bad.content
    none = await deferred.call_tool("tool_search", {"pattern": "zebra"})
    assert "no tool matches" in none.content


async def test_a_backtracking_tool_search_pattern_ends_with_an_error():
    slow = Tool(
        name="slow_tool",
        description="a" * 40 + "!",
        parameters={"type": "object", "properties": {}},
        function=lambda: "",
    )
    deferred = DeferredToolSet(CORE, [*many(60), slow])
    started = time.monotonic()
    result = await deferred.call_tool("tool_search", {"pattern": "(a|a)+$"})
    assert result.is_error and "backtracks catastrophically" in result.content
    assert time.monotonic() - started < 30  # bounded by SEARCH_SECONDS, generous for a busy CI


async def test_the_model_searches_then_calls_what_it_found(serve, tmp_path):
    server = serve(
        [
            reply("", call("tool_search", pattern="weather")),
            reply("", call("weather_now", x=3)),
            reply("It is sunny."),
        ]
    )
    agent = Agent(model=server.model(), workspace=tmp_path, tools=DeferredToolSet(CORE, many(60)))
    assert await agent.ask("weather?") == "It is sunny."
    listed = [[t["function"]["name"] for t in r.body["tools"]] for r in server.requests]
    assert "weather_now" not in listed[0] and "tool_search" in listed[0]
    assert "weather_now" in listed[1]
    assert len(listed[0]) == 4
    result = [m for m in server.requests[2].messages if m["role"] == "tool"][-1]
    assert result["content"] == "weather_now(3)"


async def test_a_filtered_deferred_catalogue_stays_deferred():
    filtered = FilteredToolSet(DeferredToolSet(CORE, many(60)), excluded=["write_file"])
    assert [s.name for s in filtered.list_tools()] == ["read_file", "list_directory", "tool_search"]


def rare(name: str, description: str) -> Tool:
    return Tool(
        name=name,
        description=description,
        parameters={"type": "object", "properties": {}},
        function=lambda: f"{name} ran",
        on_request=True,
    )


async def test_a_rarely_needed_core_tool_waits_named_in_tool_search_and_is_listed_once_found():
    core = ToolSet(
        [*CORE, rare("move_path", "Move a file."), rare("get_history", "Kernel In/Out.")]
    )
    deferred = DeferredToolSet(core, many(2))
    first = deferred.list_tools()
    assert [s.name for s in first] == [
        "read_file",
        "write_file",
        "list_directory",
        "crm_tool_0",
        "crm_tool_1",
        "weather_now",
        "tool_search",
    ]
    assert "move_path, get_history." in first[-1].description  # named, so no guessing
    found = await deferred.call_tool("tool_search", {"pattern": "^get_history$"})
    assert "get_history" in found.content and "move_path" not in found.content
    assert (await deferred.call_tool("move_path", {})).content == "move_path ran"  # by name
    # what was found comes after tool_search: the list before it, the cached prefix, is unchanged
    assert [s.name for s in deferred.list_tools()] == [
        *(s.name for s in first),
        "move_path",
        "get_history",
    ]


async def test_past_the_threshold_the_extra_tools_wait_beside_the_rare_core_ones():
    deferred = DeferredToolSet(ToolSet([*CORE, rare("move_path", "Move a file.")]), many(60))
    (search,) = [s for s in deferred.list_tools() if s.name == "tool_search"]
    assert search.description.startswith(
        "Find more tools, listed once found: move_path, crm_tool_0, crm_tool_1,"
    )
    assert "and 50 more." in search.description
    assert "weather_now" in (await deferred.call_tool("tool_search", {"pattern": "city"})).content
