"""Tools as data: schemas from typed functions, and a ToolSet whose every failure is a result."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any, Literal

import pytest

from copilot_nb.errors import ConfigError, SandboxError, ToolError
from copilot_nb.messages import ToolSpec
from copilot_nb.tools import Tool, ToolOutput, ToolSet, file_tools, tool
from copilot_nb.tools.context import ToolContext
from copilot_nb.tools.files.tools import read_file
from copilot_nb.tools.kernel.tools import list_variables
from copilot_nb.tools.registry import bound_tool
from copilot_nb.workspace.workspace import Workspace
from tests.helpers import until

# --- tool(): schemas from typed functions -----------------------------------------------------


def test_tool_builds_a_schema_from_type_hints_and_the_docstring() -> None:
    @tool(category="execute")
    def search(
        query: str,
        limit: int = 10,
        score: float | None = None,
        exact: bool = False,
        tags: list[str] | None = None,
        weights: dict[str, float] | None = None,
        mode: Literal["fast", "deep"] = "fast",
        extra: Any = None,
    ) -> str:
        """Search the project for text.

        More detail that the model does not need.

        Args:
            query: What to look for.
            limit: How many hits to return, at most;
                more are dropped.
            mode (str): How hard to look.

        Returns:
            The hits, one a line.
        """
        return query

    assert isinstance(search, Tool)
    assert search.category == "execute"
    assert search.description == "Search the project for text."
    assert search.parameters == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for."},
            "limit": {
                "type": "integer",
                "description": "How many hits to return, at most; more are dropped.",
                "default": 10,
            },
            "score": {"type": ["number", "null"], "default": None},
            "exact": {"type": "boolean", "default": False},
            "tags": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                "default": None,
            },
            "weights": {
                "anyOf": [
                    {"type": "object", "additionalProperties": {"type": "number"}},
                    {"type": "null"},
                ],
                "default": None,
            },
            "mode": {
                "type": "string",
                "enum": ["fast", "deep"],
                "description": "How hard to look.",
                "default": "fast",
            },
            "extra": {"default": None},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    # offered to the model: a null default is just an optional argument, and the extra-arguments
    # rule stays in the check (an unknown argument is an error the model reads)
    assert search.spec == ToolSpec(
        name="search",
        description="Search the project for text.",
        parameters={
            "type": "object",
            "properties": {
                **search.parameters["properties"],
                "score": {"type": "number"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "weights": {"type": "object", "additionalProperties": {"type": "number"}},
                "extra": {},
            },
            "required": ["query"],
        },
    )
    assert search("x") == "x"  # the decorated function stays callable


def test_tool_accepts_a_name_and_description_override() -> None:
    @tool(name="add-two", description="Add two numbers.")
    def add(a: int, b: int) -> int:
        return a + b

    assert (add.name, add.description, add.parameters["required"]) == (
        "add-two",
        "Add two numbers.",
        ["a", "b"],
    )


def _star_args(*paths: str) -> str:
    """Doc."""
    return ""


def _star_kwargs(**options: str) -> str:
    """Doc."""
    return ""


def _unannotated(path) -> str:  # type: ignore[no-untyped-def]
    """Doc."""
    return ""


def _unsupported(when: complex) -> str:
    """Doc."""
    return ""


def _bad_doc(path: str) -> str:
    """Doc.

    Args:
        pth: A typo.
    """
    return ""


def _no_doc(path: str) -> str:
    return ""


def _int_keys(table: dict[int, str]) -> str:
    """Doc."""
    return ""


@pytest.mark.parametrize(
    ("function", "words"),
    [
        (_star_args, "parameter 'paths' is variadic positional"),
        (_star_kwargs, "parameter 'options' is variadic keyword"),
        (_unannotated, "parameter 'path' has no type annotation"),
        (_unsupported, "type <class 'complex'> is not supported"),
        (_bad_doc, "the docstring describes 'pth', which is not a parameter"),
        (_no_doc, "has no description"),
        (_int_keys, "dict keys must be str"),
        (lambda x: x, "tool name '<lambda>' is not valid"),
    ],
)
def test_a_bad_tool_definition_fails_at_decoration(function: Any, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        tool(function)


def test_a_tool_with_an_invalid_schema_or_category_fails_when_built() -> None:
    with pytest.raises(ConfigError, match="category 'write'"):
        Tool(
            name="t", description="d", parameters={"type": "object"}, function=str, category="write"
        )
    with pytest.raises(ConfigError, match="invalid parameters schema"):
        Tool(
            name="t", description="d", parameters={"type": "object", "properties": 3}, function=str
        )
    with pytest.raises(ConfigError, match='"type": "object"'):
        Tool(name="t", description="d", parameters={"type": "string"}, function=str)


# --- ToolSet ----------------------------------------------------------------------------------


@tool
def greet(name: str, times: int = 1) -> str:
    """Greet someone.

    Args:
        name: Who to greet.
        times: How often.
    """
    return " ".join([f"hello {name}"] * times)


def test_a_toolset_refuses_duplicate_names_unless_told_to_override() -> None:
    tools = ToolSet([greet])
    with pytest.raises(ConfigError, match="already registered; rename one or pass override=True"):
        tools.add(greet)
    other = Tool(name="greet", description="x", parameters={"type": "object"}, function=str)
    tools.add(other, override=True)
    assert tools.get("greet") is other
    assert len(tools) == 1 and "greet" in tools and "nope" not in tools
    assert tools.get("nope") is None
    assert tools.list_tools() == [other.spec]


async def test_call_tool_runs_sync_tools_in_a_worker_thread() -> None:
    seen: list[str] = []

    @tool
    def where() -> str:
        """Say which thread runs the tool."""
        seen.append(threading.current_thread().name)
        return "ok"

    out = await ToolSet([where]).call_tool("where", {})
    assert out == ToolOutput(content="ok")
    assert seen != [threading.current_thread().name]


async def test_a_slow_sync_tool_does_not_block_the_event_loop() -> None:
    entered, release = threading.Event(), threading.Event()

    @tool
    def slow() -> str:
        """Block until released."""
        entered.set()
        assert release.wait(5)
        return "done"

    task = asyncio.create_task(ToolSet([slow]).call_tool("slow", {}))
    await until(entered.is_set)  # this polls on the loop while the tool blocks its own thread
    assert not task.done()
    release.set()
    assert (await task).content == "done"


async def test_call_tool_awaits_async_tools_and_accepts_tool_outputs() -> None:
    @tool
    async def fetch(url: str) -> ToolOutput:
        """Fetch a page."""
        await asyncio.sleep(0)
        return ToolOutput(content=f"got {url}", summary=url)

    @tool
    def count() -> dict[str, int]:
        """Return data, which becomes JSON."""
        return {"n": 1}

    tools = ToolSet([fetch, count])
    assert await tools.call_tool("fetch", {"url": "x"}) == ToolOutput(content="got x", summary="x")
    assert (await tools.call_tool("count", "")).content == '{"n": 1}'


async def test_valid_json_text_is_accepted_as_arguments() -> None:
    out = await ToolSet([greet]).call_tool("greet", '{"name": "Ada", "times": 2}')
    assert out.content == "hello Ada hello Ada"


async def test_an_unknown_tool_names_the_available_ones_closest_first() -> None:
    tools = file_tools(Workspace(Path.cwd(), read_only=True))
    out = await tools.call_tool("reed_file", {})
    assert out.is_error
    assert out.content == (
        "unknown tool 'reed_file' (did you mean 'read_file'?); available tools: read_file, "
        "edit_file, write_file, list_directory"
    )
    assert (await ToolSet().call_tool("x", {})).content.startswith("unknown tool 'x'; no tools")


async def test_invalid_json_arguments_are_explained_with_their_start() -> None:
    out = await ToolSet([greet]).call_tool("greet", '{"name": "Ada", "times": ')
    assert out.is_error
    assert out.content.startswith(
        "greet: the arguments were not valid JSON (Expecting value); they began: "
        '\'{"name": "Ada", "times": \'. Send one JSON object with: '
        "name (string, required), times (integer)"
    )
    long = await ToolSet([greet]).call_tool("greet", "{" + "x" * 1000)
    assert "x" * 198 + "…'" in long.content and "x" * 300 not in long.content
    listed = await ToolSet([greet]).call_tool("greet", ["Ada"])
    assert listed.content.startswith("greet: the arguments must be a JSON object, not an array")


async def test_exceptions_from_tools_become_error_results() -> None:
    @tool
    def boom(kind: str) -> str:
        """Fail in the way asked."""
        if kind == "tool":
            raise ToolError("the index is stale; call refresh first")
        if kind == "prefixed":
            raise ToolError("boom: already prefixed")
        if kind == "sandbox":
            raise SandboxError("path '/etc' is outside the workspace")
        if kind == "bare":
            raise ValueError
        raise KeyError("missing")

    tools = ToolSet([boom])
    results = [
        (await tools.call_tool("boom", {"kind": k}))
        for k in ("tool", "prefixed", "sandbox", "bug", "bare")
    ]
    assert all(r.is_error for r in results)
    assert [r.content for r in results] == [
        "boom: the index is stale; call refresh first",
        "boom: already prefixed",
        "boom: path '/etc' is outside the workspace",
        "boom failed: KeyError: 'missing'",
        "boom failed: ValueError",
    ]


async def test_cancellation_propagates_out_of_call_tool() -> None:
    started = asyncio.Event()

    @tool
    async def wait_forever() -> str:
        """Wait until cancelled."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    task = asyncio.create_task(ToolSet([wait_forever]).call_tool("wait_forever", {}))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


# --- bound_tool: the built-in tools are functions of a context ---------------------------------


def test_a_bound_tool_shows_the_model_every_parameter_but_the_context() -> None:
    def greet(ctx: dict[str, str], name: str, loud: bool = False) -> str:
        """Greet someone.

        Args:
            name: Who to greet.
            loud: Shout it.
        """
        return ctx["greeting"] + " " + (name.upper() if loud else name)

    bound = bound_tool(greet, {"greeting": "hello"}, category="edit")
    assert (bound.name, bound.description, bound.category) == ("greet", "Greet someone.", "edit")
    assert bound.parameters == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Who to greet."},
            "loud": {"type": "boolean", "description": "Shout it.", "default": False},
        },
        "required": ["name"],
        "additionalProperties": False,
    }
    assert bound(name="ann", loud=True) == "hello ANN"


async def test_a_bound_async_tool_runs_on_the_loop_and_a_sync_one_in_a_worker() -> None:
    loop_thread = threading.get_ident()

    async def on_loop(ctx: object) -> str:
        """Say whether the loop's thread runs this."""
        return str(threading.get_ident() == loop_thread)

    def in_worker(ctx: object) -> str:
        """Say whether the loop's thread runs this."""
        return str(threading.get_ident() == loop_thread)

    tools = ToolSet([bound_tool(on_loop, None), bound_tool(in_worker, None)])
    assert (await tools.call_tool("on_loop", {})).content == "True"
    assert (await tools.call_tool("in_worker", {})).content == "False"


async def test_a_built_in_tool_is_a_function_a_test_calls_with_its_own_context(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    out = read_file(ToolContext(workspace=Workspace(tmp_path)), "a.txt", start_line=2)
    assert out.content == "a.txt (lines 2-2 of 2)\n     2\ttwo"
    listed = await list_variables(ToolContext(namespace=lambda: {"total": 75}))
    assert listed.content.splitlines()[-1].split() == ["total", "int", "28", "B", "75"]


def test_every_schema_of_our_own_is_a_valid_json_schema(tmp_path) -> None:
    """copilot_nb's own schemas (made from type hints, or written in a built-in tool) are not
    checked when built (jsonschema's import is slow, and the first request after `%load_ext`
    would wait for it): they are checked here, every built-in tool's and each form of hint's."""

    import jsonschema

    from copilot_nb import Agent, OpenAIChat
    from copilot_nb.agent.approvals.ask_user import ask_user_tool
    from copilot_nb.agent.subagents import delegate_tool
    from copilot_nb.tools import file_tools, kernel_tools, notebook_tools, search_tools
    from copilot_nb.tools.wrappers import DeferredToolSet
    from copilot_nb.workspace.workspace import Workspace

    @tool
    def every_hint(
        a: int,
        b: float,
        c: str | None,
        d: list[int],
        e: dict[str, float],
        f: Literal["x", "y"],
        g: Any = None,
        i: bool = False,
    ) -> str:
        """Takes every kind of argument."""
        return ""

    workspace = Workspace(tmp_path)
    agent = Agent(model=OpenAIChat(model="m", base_url="http://127.0.0.1:9", api_key="k"))
    deferring = DeferredToolSet(ToolSet(), file_tools(workspace), threshold=1)
    (search,) = [spec for spec in deferring.list_tools() if spec.name == "tool_search"]
    built_in = [
        *file_tools(workspace),
        *search_tools(workspace),
        *notebook_tools(workspace, current_notebook=lambda: None),
        *kernel_tools(dict),
        ask_user_tool(agent),
        delegate_tool(agent, resolve=lambda spec: agent.model),
        search,
    ]
    assert len(built_in) >= 21
    for item in [*built_in, every_hint]:
        jsonschema.Draft202012Validator.check_schema(dict(item.parameters))
