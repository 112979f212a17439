"""Tools as data: a `Tool` is a name, a description, a JSON schema and a function.

`@tool` builds one from a typed Python function (schema from the type hints, descriptions from the
docstring); `bound_tool` does the same for a built-in tool, a function whose first parameter is
its context (`context.py`). A `ToolSet` holds tools by name and runs calls; whatever goes wrong in
a call (unknown tool, arguments that are not JSON or break the schema, the tool raising) comes
back as an error *result* the model can read and act on (the wording: `arguments.py`). Only
cancellation and our own bugs in this module escape.

Every call has a time limit (`DEFAULT_TOOL_TIMEOUT`, or the caller's `timeout=`). A call past it
is cancelled and the model reads that it was stopped; the loop goes on at once either way. What
cannot be stopped keeps running in the background, its result thrown away (see `running.py`): a
synchronous tool runs in a worker thread, which Python cannot kill, and an async tool that ignores
cancellation finishes when it finishes. A tool that enforces its own limit (run_code) names the
argument holding it (`timeout_argument`), and the general limit then never cuts it short.
"""

from __future__ import annotations

import difflib
import functools
import json
import logging
import re
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, overload

from ..config import DEFAULT_TOOL_TIMEOUT
from ..errors import ConfigError, SandboxError, ToolError
from ..events import CallPreview, CellChanged, FileChanged
from ..messages import Image, ToolSpec
from ..text import first_line
from .running import invoke, is_async, within
from .schemas.arguments import expected, read_arguments, schema_problems
from .schemas.check import check_schema, own_schema, schema_library_loaded
from .schemas.typed import function_schema, offered_schema
from .schemas.validator import SchemaCheckFailed, argument_validator, bounded_check

_log = logging.getLogger(__name__)
CATEGORIES = ("read", "read-secret", "edit", "execute", "external")
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
OWN_TIMEOUT_GRACE = 10.0
"""Seconds a tool with its own time limit gets past it, to stop and report what it did."""


def _check_name(name: object) -> None:
    """Providers accept only these names (OpenAI's rule, the strictest)."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ConfigError(
            f"tool name {name!r} is not valid; use 1-64 letters, digits, '_' or '-' "
            "(pass name= to @tool to choose one)"
        )


if TYPE_CHECKING:
    import jsonschema


class Trust(Protocol):
    """The user's standing approval of where a tool comes from (an MCP server, pinned to what
    it was when approved): while `granted()`, a call that would ask runs; approving a call
    `grant()`s it."""

    @property
    def note(self) -> str:
        """Why the user is asked (a new server, or one that changed since it was approved)."""
        ...

    def granted(self) -> bool: ...

    def grant(self) -> None: ...


@dataclass(frozen=True, kw_only=True)
class ToolOutput:
    """What a tool call produced: text for the model, a one-line UI summary, file changes."""

    content: str
    is_error: bool = False
    summary: str = ""
    changes: tuple[FileChanged | CellChanged, ...] = ()
    images: tuple[Image, ...] = ()
    """Images shown beside `content` to a model that accepts images (a cell's plots)."""
    outputs: tuple[Mapping[str, Any], ...] = ()
    """What the call showed, as nbformat outputs (run_code's printed text, figures, result),
    masked as `content` is: the surfaces show them under the call's line."""


@dataclass(frozen=True, kw_only=True)
class Tool:
    """A tool the model can call; checked when built, so a bad definition fails at registration."""

    name: str
    description: str
    parameters: Mapping[str, Any] = field(hash=False)
    function: Callable[..., Any]
    category: str = "read"
    override: bool = False
    """Replace a built-in tool of the same name (otherwise a clash is an error)."""
    classify: Callable[[Mapping[str, Any]], str] | None = field(default=None, compare=False)
    """The category of one call from its arguments, where it depends on them (a read of `.env`
    is a `read-secret`, a read of `a.py` a `read`); None: always `category`."""
    timeout_argument: str | None = None
    """The argument holding the tool's own limit in seconds (run_code's `timeout`): a call may
    then run that long plus a grace even past the tool set's general limit."""
    trust: Trust | None = field(default=None, compare=False)
    """Where the tool's source is approved as a whole (MCP servers); None: each call asks."""
    waits_for_user: bool = False
    """The call waits for the user (`ask_user`): no time limit, the user takes the time they need."""
    on_request: bool = False
    """Rarely needed: not listed in requests until `tool_search` finds it (or the model calls it
    by name), so the tokens of its schema are not paid on every request of every turn."""
    describe: Callable[[Mapping[str, Any]], Awaitable[CallPreview | None]] | None = field(
        default=None, compare=False
    )
    """What one call will do, in the user's words, for its approval (run_cell: the cell's number
    and the code that will run, which its `cell_id` does not show); None: the arguments say it."""

    def __post_init__(self) -> None:
        _check_name(self.name)
        if self.category not in CATEGORIES:
            raise ConfigError(
                f"tool {self.name!r}: category {self.category!r} is not one of {CATEGORIES}"
            )
        if not callable(self.function):
            raise ConfigError(f"tool {self.name!r}: function {self.function!r} is not callable")
        if not isinstance(self.parameters, Mapping) or self.parameters.get("type") != "object":
            raise ConfigError(
                f'tool {self.name!r}: parameters must be a JSON schema with "type": "object"'
            )
        check_schema(self.name, self.parameters)
        if self.timeout_argument is not None and self.timeout_argument not in (
            self.parameters.get("properties") or {}
        ):
            raise ConfigError(
                f"tool {self.name!r}: timeout_argument {self.timeout_argument!r} is not one of "
                "its arguments"
            )

    def time_limit(self, arguments: Mapping[str, Any], general: float | None) -> float | None:
        """Seconds this call may run: the general limit, or the tool's own plus a grace when that
        is longer (a general 120 s never stops a run_code the model gave 600 s)."""
        if self.waits_for_user:
            return None
        if general is None or self.timeout_argument is None:
            return general
        own = arguments.get(self.timeout_argument)
        if isinstance(own, (int, float)) and not isinstance(own, bool) and own > 0:
            return max(general, float(own) + OWN_TIMEOUT_GRACE)
        return general

    def category_for(self, arguments: Mapping[str, Any]) -> str:
        """The approval category of a call with these arguments; a classifier that fails on
        arguments it cannot read asks as for a secret, the stricter of the read categories."""
        if self.classify is None:
            return self.category
        try:
            category = self.classify(arguments)
        except Exception:
            return "read-secret" if self.category == "read" else self.category
        return category if category in CATEGORIES else self.category

    @functools.cached_property
    def spec(self) -> ToolSpec:
        """The tool as the model sees it (its schema as `offered_schema` shows it), made once:
        every request of every turn lists it again."""
        return ToolSpec(
            name=self.name, description=self.description, parameters=offered_schema(self.parameters)
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly, so a decorated function stays usable."""
        return self.function(*args, **kwargs)


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    category: str = "read",
    override: bool = False,
    classify: Callable[[Mapping[str, Any]], str] | None = None,
    timeout_argument: str | None = None,
    on_request: bool = False,
) -> Callable[[Callable[..., Any]], Tool]: ...
def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    category: str = "read",
    override: bool = False,
    classify: Callable[[Mapping[str, Any]], str] | None = None,
    timeout_argument: str | None = None,
    on_request: bool = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a typed function into a Tool; use bare (`@tool`) or with options (`@tool(name=...)`)."""

    def build(func: Callable[..., Any]) -> Tool:
        tool_name = name if name is not None else str(getattr(func, "__name__", ""))
        _check_name(tool_name)
        doc, parameters = function_schema(func, tool_name)
        own_schema(parameters)
        text = description if description is not None else doc
        if not text:
            raise ConfigError(
                f"tool {tool_name!r} has no description; add a docstring or pass description="
            )
        return Tool(
            name=tool_name,
            description=text,
            parameters=parameters,
            function=func,
            category=category,
            override=override,
            classify=classify,
            timeout_argument=timeout_argument,
            on_request=on_request,
        )

    return build if fn is None else build(fn)


def bound_tool(
    function: Callable[..., Any],
    context: object,
    *,
    category: str = "read",
    classify: Callable[[Mapping[str, Any]], str] | None = None,
    timeout_argument: str | None = None,
    describe: Callable[[Any, Mapping[str, Any]], Awaitable[CallPreview | None]] | None = None,
    on_request: bool = False,
) -> Tool:
    """A Tool from `function(context, **arguments)`, with the context bound: the model sees the
    function's name, docstring and other parameters, never the context (nor `describe`'s)."""
    built = tool(
        name=function.__name__,
        category=category,
        classify=classify,
        timeout_argument=timeout_argument,
        on_request=on_request,
    )(functools.partial(function, context))
    if describe is None:
        return built
    return replace(built, describe=functools.partial(describe, context))


class ToolSet:
    """Tools by name, with the one entry point the agent uses: `call_tool`, which never raises."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._validators: dict[str, jsonschema.protocols.Validator] = {}
        for item in tools:
            self.add(item)

    def add(self, tool: Tool, *, override: bool = False) -> None:
        """Register a tool; a second tool with the same name is a mistake unless `override`."""
        if not isinstance(tool, Tool):
            raise ConfigError(f"expected a Tool (e.g. from @tool), not {type(tool).__name__}")
        if tool.name in self._tools and not override:
            raise ConfigError(
                f"a tool named {tool.name!r} is already registered; "
                "rename one or pass override=True"
            )
        self._tools[tool.name] = tool
        self._validators.pop(tool.name, None)

    def _validator(self, name: str) -> jsonschema.protocols.Validator:
        """The tool's argument validator, made at its first call: building a toolset must not
        wait for jsonschema's import (the first request after `%load_ext` would)."""
        found = self._validators.get(name)
        if found is None:
            parameters = self._tools[name].parameters
            found = self._validators[name] = argument_validator(parameters)
        return found

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def list_tools(self) -> list[ToolSpec]:
        return [t.spec for t in self._tools.values()]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __repr__(self) -> str:
        return f"ToolSet({', '.join(self._tools)})"

    async def call_tool(
        self, name: str, arguments: Any, *, timeout: float | None = DEFAULT_TOOL_TIMEOUT
    ) -> ToolOutput:
        """Run one call for at most `timeout` seconds (None: no limit); every failure, a timeout
        included, becomes an error result; only cancellation propagates."""
        found = self._tools.get(name)
        if found is None:
            return _error(self._unknown_message(name))
        args = read_arguments(name, found.parameters, arguments)
        if isinstance(args, str):
            return _error(args)
        await schema_library_loaded()
        try:
            with bounded_check():
                problems = schema_problems(self._validator(name), found.parameters, args)
        except SchemaCheckFailed as exc:
            return _error(f"{name}: {exc}")
        except (RecursionError, MemoryError):
            problems = ["arguments nested too deep to check; send flat JSON arguments"]
        if problems:
            lines = [f"{name}: {p}" for p in problems]
            return _error("\n".join([*lines, f"{name} expects: {expected(found.parameters)}"]))
        limit = found.time_limit(args, timeout)
        try:
            finished, result = await within(invoke(found.function, args), limit)
            if not finished:
                assert limit is not None
                return ToolOutput(
                    content=_timeout_message(found, limit),
                    is_error=True,
                    summary=f"timed out after {limit:g} s",
                )
        except (ToolError, SandboxError) as exc:
            message = str(exc)
            return _error(message if message.startswith(f"{name}:") else f"{name}: {message}")
        except Exception as exc:
            _log.debug("tool %s raised", name, exc_info=True)
            detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            return _error(f"{name} failed: {detail}")
        return _as_output(result)

    def _unknown_message(self, name: Any) -> str:
        names = sorted(self._tools)
        if not names:
            return f"unknown tool {name!r}; no tools are available in this conversation"
        close = difflib.get_close_matches(str(name), names, n=3, cutoff=0.6)
        ordered = close + [n for n in names if n not in close]
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"unknown tool {name!r}{hint}; available tools: {', '.join(ordered)}"


def _timeout_message(found: Tool, limit: float) -> str:
    """What the model reads when a call ran out of time; it says what may still be happening."""
    background = (
        " (it ran in a worker thread, which cannot be stopped: it may still finish in the "
        "background, and its result will not be shown)"
        if not is_async(found.function)
        else ""
    )
    return (
        f"{found.name} did not finish within {limit:g} s and was stopped{background}; "
        "what it did until then stays done. Ask for less in one call (a narrower path, "
        "pattern or range), or ask the user to raise the limit (CopilotMagics.tool_timeout)."
    )


def _as_output(result: Any) -> ToolOutput:
    if isinstance(result, ToolOutput):
        return result
    if result is None:
        return ToolOutput(content="(no output)")
    if isinstance(result, str):
        return ToolOutput(content=result)
    try:
        return ToolOutput(content=json.dumps(result, ensure_ascii=False, default=str))
    except (TypeError, ValueError):
        return ToolOutput(content=str(result))


def _error(message: str) -> ToolOutput:
    return ToolOutput(content=message, is_error=True, summary=first_line(message, 100))
