"""What a run in the background prints and displays goes to that run, and everything else where
it went before.

`redirect_stdout` swaps `sys.stdout` for the whole process: fine while a run holds the kernel's
thread, wrong once the turn goes on beside it (the turn's own output, and the user's next cell,
would land in the run). So a run's output is routed by context instead: `sys.stdout`,
`sys.stderr` and the shell's display publisher are wrapped once, and each write goes to the
`Sink` of the context it happens in (the run's thread, or the task of its awaited code), else to
the stream it wrapped.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

_SINK: ContextVar[Sink | None] = ContextVar("copilot_nb_run_sink", default=None)


class Sink:
    """One run's output as it comes: its text, its displays, and a callback on each change."""

    def __init__(self, on_change: Callable[[], None] | None = None) -> None:
        self._lock = threading.Lock()
        self._text: dict[str, list[str]] = {"stdout": [], "stderr": []}
        self.displays: list[dict[str, Any]] = []
        self.on_change = on_change

    def write(self, name: str, text: str) -> None:
        with self._lock:
            self._text[name].append(text)
        self._changed()

    def display(self, shown: dict[str, Any]) -> None:
        with self._lock:
            self.displays.append(shown)
        self._changed()

    def clear(self) -> None:
        with self._lock:
            self._text = {"stdout": [], "stderr": []}
            self.displays.clear()
        self._changed()

    def text(self, name: str) -> str:
        with self._lock:
            return "".join(self._text[name])

    def _changed(self) -> None:
        if self.on_change is not None:
            with contextlib.suppress(Exception):  # a view's failure never stops the run
                self.on_change()


@contextlib.contextmanager
def routed_to(sink: Sink) -> Iterator[None]:
    """Output written in this context (this thread, or a task created inside it) goes to `sink`."""
    token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(token)


class RoutedStream:
    """`sys.stdout` or `sys.stderr`: a run's writes go to its sink, others to the stream."""

    def __init__(self, wrapped: Any, name: str) -> None:
        self.wrapped = wrapped
        self.name = name

    def write(self, text: str) -> int:
        sink = _SINK.get()
        if sink is None:
            return int(self.wrapped.write(text) or 0)
        sink.write(self.name, text)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if _SINK.get() is None:
            self.wrapped.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


class RoutedDisplay:
    """The shell's display publisher: a run's displays go to its sink, others are published."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped

    def publish(self, data: Any, metadata: Any = None, *args: Any, **kwargs: Any) -> Any:
        sink = _SINK.get()
        if sink is None:
            return self.wrapped.publish(data, metadata, *args, **kwargs)
        if not kwargs.get("update"):
            sink.display({"data": dict(data or {}), "metadata": dict(metadata or {})})
        return None

    def clear_output(self, wait: bool = False) -> None:
        sink = _SINK.get()
        if sink is None:
            self.wrapped.clear_output(wait)
        else:
            sink.clear()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


def install(shell: Any | None) -> None:
    """Wrap the streams and the shell's publisher, once (again if something replaced them)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, RoutedStream):
            setattr(sys, name, RoutedStream(stream, name))
    publisher = getattr(shell, "display_pub", None)
    if shell is not None and publisher is not None and not isinstance(publisher, RoutedDisplay):
        shell.display_pub = RoutedDisplay(publisher)
