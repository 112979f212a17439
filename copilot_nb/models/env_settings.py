"""Settings read from the environment at each request, not once when a model is built.

A user who fixes a refused key with `%env OPENAI_API_KEY=...` (or `os.environ[...] = ...`), or
points `OPENAI_BASE_URL` at another server, expects the next request to use it: the kernel keeps
its models for the whole session, so a value read in `__init__` would hold until a restart. A
`FromEnv` attribute holds a value given in code if there is one, and otherwise reads its
variables each time it is read; an endpoint (`endpoint.py`) reads its provider's key and base
URL variables through `FromEnv.from_environment`, the one place they are read.
"""

from __future__ import annotations

import os
from typing import Any, Generic, TypeVar, overload

from .key_store import saved_key

D = TypeVar("D", bound="str | None")


class FromEnv(Generic[D]):
    """A model attribute: the value set in code, else the first of `names` that is set in the
    environment now, else `default`. Setting it to None hands it back to the environment."""

    def __init__(self, *names: str, default: D, url: bool = False) -> None:
        self.names = names
        self.default = default
        self.url = url
        """Whether the value is a base URL (a trailing `/` is dropped, so paths join)."""
        self._slot = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._slot = f"_{name}_given"

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> FromEnv[D]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> str | D: ...

    def __get__(self, obj: object | None, owner: type | None = None) -> FromEnv[D] | str | D:
        if obj is None:
            return self
        given: str | None = obj.__dict__.get(self._slot)
        value = given if given is not None else self.from_environment()
        if value is None:
            return self.default
        return value.rstrip("/") if self.url else value

    def __set__(self, obj: Any, value: str | None) -> None:
        obj.__dict__[self._slot] = value

    def given(self, obj: object) -> bool:
        """Whether `obj`'s value was set in code rather than read from the environment."""
        return obj.__dict__.get(self._slot) is not None

    def from_environment(self) -> str | None:
        """The first of the variables that is set (and not empty) now, else the key saved for
        one of them in the model form (`key_store`; never a URL), or None."""
        for name in self.names:
            if os.environ.get(name):
                return os.environ[name]
        return None if self.url else saved_key(*self.names)


__all__ = ["FromEnv"]
