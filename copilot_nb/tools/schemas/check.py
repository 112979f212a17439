"""Checking a tool's JSON schema, and the slow library that does it.

jsonschema's import takes most of a second even without the IRI grammar its optional format
checkers would build (`jsonschema_import`), so it is imported on first use, and off the kernel's
loop. copilot_nb's own schemas are marked valid without it (`own_schema`); any
other schema is checked when its Tool is built, once per distinct schema.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from ...errors import ConfigError
from ...jsonschema_import import import_jsonschema

_VALID_SCHEMAS: set[str] = set()
"""Parameter schemas already checked, as canonical JSON: every turn builds the same tools again,
and checking one schema costs milliseconds of the kernel's loop."""
_library_ready = False


def check_schema(name: str, parameters: Mapping[str, Any]) -> None:
    """A ConfigError when `parameters` is not a valid JSON schema (draft 2020-12)."""
    try:
        key: str | None = json.dumps(parameters, sort_keys=True)
    except (TypeError, ValueError):
        key = None  # not plain JSON: checked every time
    if key is not None and key in _VALID_SCHEMAS:
        return
    try:
        schema_library().Draft202012Validator.check_schema(dict(parameters))
    except schema_library().SchemaError as exc:
        raise ConfigError(f"tool {name!r}: invalid parameters schema: {exc.message}") from exc
    if key is not None:
        _VALID_SCHEMAS.add(key)


def own_schema(parameters: dict[str, Any]) -> dict[str, Any]:
    """`parameters`, marked as a schema of copilot_nb's own: made from type hints by
    `function_schema`, or written in a built-in tool (a test checks each against jsonschema).
    It is not checked again when its Tool is built, so the first request after `%load_ext`
    does not wait for jsonschema's slow import; a schema from elsewhere (an MCP server, a
    user's `Tool`) always is."""
    _VALID_SCHEMAS.add(json.dumps(parameters, sort_keys=True))
    return parameters


async def schema_library_loaded() -> None:
    """Import jsonschema in a worker thread the first time (or wait there for the warm-up
    thread's import), so the kernel's loop stays live meanwhile."""
    global _library_ready
    if not _library_ready:
        await asyncio.to_thread(schema_library)
        _library_ready = True


def schema_library() -> Any:
    """`jsonschema`, imported on first use (without its IRI grammar: `jsonschema_import`)."""
    return import_jsonschema()
