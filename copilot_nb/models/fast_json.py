"""The stream decoders' JSON parser for one event's data: msgspec when it is installed (the
`fast` extra), else the standard library's own C scanner without the Python layers around it.

A model stream is thousands of small JSON objects; parsing them is most of what decoding costs.
`loads(data)` is only a fast path: it returns exactly `json.loads(data.decode("utf-8",
"replace"))`, or raises `ValueError` (`RecursionError` for deep nesting) whenever it cannot be
sure to (the caller then takes its
general path, so the values and every error message are the standard library's). msgspec
accepts a subset of what `json` does (no NaN or Infinity, no lone surrogates, strict UTF-8) and
gives the same values on it, integers of any size and floats to the last bit included; tests hold
it to that on the conformance corpus and on edge cases. (orjson is a little faster but turns
integers past 64 bits into floats, so it is not used.) `COPILOT_NB_FAST_JSON=0` turns msgspec
off; `use()` switches parsers for tests and benchmarks.
"""

from __future__ import annotations

import contextlib
import json
import json.scanner
import os
from collections.abc import Callable
from typing import Any

_c_make_scanner = getattr(json.scanner, "c_make_scanner", None)  # None without the _json module
_scan: Callable[[str, int], tuple[Any, int]] | None = (
    _c_make_scanner(json.JSONDecoder()) if _c_make_scanner is not None else None
)


def _stdlib(data: bytes) -> Any:
    """`json.loads` less its Python layers: the C scanner from offset 0 must end at the end."""
    text = data.decode("utf-8", "replace")
    try:
        value, end = _scan(text, 0)  # type: ignore[misc]  # None only when _json is missing
    except StopIteration as exc:
        raise ValueError("not one JSON value") from exc
    if end != len(text):
        raise ValueError("not one JSON value")
    return value


def _plain(data: bytes) -> Any:
    """Where the C scanner is missing: `json.loads` itself."""
    return json.loads(data.decode("utf-8", "replace"))


def _msgspec() -> Callable[[bytes], Any] | None:
    """msgspec's JSON decoder (its errors are `ValueError`s), or None when it is not installed."""
    try:
        import msgspec.json
    except ImportError:
        return None
    return msgspec.json.Decoder().decode


STDLIB: Callable[[bytes], Any] = _stdlib if _scan is not None else _plain
loads: Callable[[bytes], Any] = STDLIB
"""One event's data (UTF-8 bytes) as JSON, or `ValueError`/`RecursionError`: take the general
path."""
DECLINED = (ValueError, RecursionError)
"""What `loads` raises when the general path must decide."""
backend = "json"
"""Which parser `loads` is: "msgspec" or "json"."""


_SHAPED: dict[Any, Callable[[bytes], Any]] = {}


def shaped(shape: Callable[[Any], Any]) -> Callable[[bytes], Any] | None:
    """With msgspec in use: a decoder of one event shape into msgspec Structs, made by `shape`
    from the msgspec module (remembered); an event that does not fit raises `ValueError`. None
    with the standard library: every event takes the dict path.

    A decoder's commonest event (a text delta) then costs no dict: the fields it needs are
    checked and read in C, the rest skipped. A shape must fit only events whose outcome needs
    nothing but its fields: unknown fields of the innermost part forbidden, values typed exactly
    (`None` where the dict path ignores a null)."""
    if backend != "msgspec":
        return None
    decode = _SHAPED.get(shape)
    if decode is None:
        import msgspec.json

        decode = _SHAPED[shape] = msgspec.json.Decoder(shape(msgspec)).decode
    return decode


def available() -> list[str]:
    """The parsers this installation can use, fastest first."""
    return ["msgspec", "json"] if _msgspec() is not None else ["json"]


def use(name: str) -> str:
    """Switch the parser ("msgspec" or "json"); returns the one in use before. Raises
    `ImportError` for msgspec when it is not installed."""
    global loads, backend
    previous = backend
    if name == "msgspec":
        fast = _msgspec()
        if fast is None:
            raise ImportError("msgspec is not installed (pip install 'copilot-nb[fast]')")
        loads, backend = fast, "msgspec"
    elif name == "json":
        loads, backend = STDLIB, "json"
    else:
        raise ValueError(f"unknown JSON parser {name!r}: msgspec or json")
    return previous


if os.environ.get("COPILOT_NB_FAST_JSON", "1") != "0":
    with contextlib.suppress(ImportError):  # msgspec not installed: the standard library
        use("msgspec")
