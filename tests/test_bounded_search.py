"""A regex cannot hold the kernel: a catastrophic one ends with an error, and Stop ends a search."""

from __future__ import annotations

import asyncio
import dataclasses
import re
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from copilot_nb.tools import ToolSet
from copilot_nb.tools.search import engine
from copilot_nb.tools.search.ripgrep import ENV
from copilot_nb.tools.search.tools import search_tools
from copilot_nb.workspace.workspace import Workspace

CATASTROPHIC = "(a|a)+$"
"""Exponential in the `regex` package too (it defuses the classic `(a+)+$`)."""
WALL_CLOCK_BOUND = 60.0
"""Generous enough for a loaded two-core CI machine; the default timeout is 2 s."""


class LagMeter:
    """A ticker on the loop: the worst delay of a 5 ms wake-up while something else runs."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> LagMeter:
        self._task = asyncio.create_task(self._tick())
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._stop.set()
        assert self._task is not None
        await self._task

    async def _tick(self) -> None:
        while not self._stop.is_set():
            started = time.perf_counter()
            await asyncio.sleep(0.005)
            self.worst = max(self.worst, time.perf_counter() - started - 0.005)


@pytest.fixture(autouse=True)
def python_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """These stories are about the Python engine's bounds (ripgrep cannot backtrack, and its
    own Stop is in test_search_ripgrep.py): search_text does not use ripgrep here."""
    monkeypatch.setenv(ENV, "0")


@pytest.fixture
def root(root: Path) -> Path:
    """One file, with a line a backtracking regex takes ages on."""
    (root / "notes.txt").write_text("intro\n" + "a" * 28 + "!\n" + "outro\n")
    return root


async def test_a_catastrophic_regex_ends_with_an_error_and_the_loop_keeps_running(
    tools: ToolSet,
) -> None:
    started = time.perf_counter()
    async with LagMeter() as lag:
        out = await tools.call_tool("search_text", {"regex": CATASTROPHIC}, timeout=None)
    elapsed = time.perf_counter() - started
    assert out.is_error
    assert out.content == (
        f"search_text: the regex '{CATASTROPHIC}' took longer than {engine.REGEX_TIMEOUT:g} s "
        "on notes.txt; it backtracks catastrophically, simplify it (e.g. (a|a)+ or (a+)+ can be "
        "a+, .*.* can be .*)"
    )
    measured = f"took {elapsed:.2f} s, worst loop lag {lag.worst * 1000:.1f} ms"
    assert elapsed < WALL_CLOCK_BOUND, measured
    # The regex runs without the interpreter lock: the loop is never held for the whole call.
    assert lag.worst < engine.REGEX_TIMEOUT, measured


async def test_the_regex_of_the_report_no_longer_backtracks(tools: ToolSet) -> None:
    started = time.perf_counter()
    out = await tools.call_tool("search_text", {"regex": "(a+)+$"}, timeout=None)
    assert not out.is_error and out.content.startswith("no matches for '(a+)+$' in 1 files")
    assert time.perf_counter() - started < WALL_CLOCK_BOUND


async def test_a_catastrophic_regex_in_a_later_block_of_a_big_file_is_caught(
    root: Path, tools: ToolSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "BLOCK", 64)
    monkeypatch.setattr(engine, "REGEX_TIMEOUT", 0.2)
    (root / "big.log").write_text("fine line\n" * 50 + "a" * 40 + "!\n")
    out = await tools.call_tool("search_text", {"regex": CATASTROPHIC, "glob": "*.log"})
    assert out.is_error and "took longer than 0.2 s on big.log" in out.content


class Recording(engine.TextSearch):
    """A search that says when it has started and counts the files it took."""

    made: ClassVar[list[Recording]] = []
    created: ClassVar[threading.Event] = threading.Event()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.taken = 0
        self.started = threading.Event()
        Recording.made.append(self)
        Recording.created.set()

    def _take(self, rel: str, path: str, batch: Any) -> None:
        self.taken += 1
        self.started.set()
        if self.taken == 1:  # a slow disk: the first file is still being read when Stop comes
            self.stop.wait(30)
        super()._take(rel, path, batch)


@pytest.fixture
def many(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ToolSet:
    for number in range(2000):
        folder = tmp_path / f"d{number // 20:03d}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{number:04d}.txt").write_text(f"line {number}\n")
    Recording.made = []
    Recording.created = threading.Event()
    monkeypatch.setattr("copilot_nb.tools.search.tools.TextSearch", Recording)
    return search_tools(Workspace(tmp_path))


async def test_stop_ends_a_running_search_in_its_worker_thread(many: ToolSet) -> None:
    call = asyncio.create_task(many.call_tool("search_text", {"regex": "line"}, timeout=None))
    assert await asyncio.to_thread(Recording.created.wait, 30)  # the worker builds the search
    search = Recording.made[0]
    assert await asyncio.to_thread(search.started.wait, 30)
    call.cancel()  # what Stop does to the task awaiting the tool
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await asyncio.to_thread(search.finished.wait, 30), "the worker ran on after Stop"
    taken = search.taken
    assert taken < 2000
    assert search.taken == taken  # finished: nothing runs on in the background


async def test_a_tool_time_limit_stops_the_search_worker_too(many: ToolSet) -> None:
    out = await many.call_tool("search_text", {"regex": "line"}, timeout=0.3)
    assert out.is_error
    search = Recording.made[0]
    assert await asyncio.to_thread(search.finished.wait, 30)
    assert search.taken < 2000


async def test_find_files_stops_with_the_run(
    many: ToolSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    from copilot_nb.tools.search import walk

    walked = threading.Event()
    done = threading.Event()
    count = [0]
    original = walk.walk_files

    def slow(*args: Any, **kwargs: Any) -> Iterable[tuple[str, str]]:
        try:
            for item in original(*args, **kwargs):
                walked.set()
                count[0] += 1
                if count[0] == 1:  # a slow disk: the walk is still going when Stop comes
                    kwargs["stop"].wait(30)
                yield item
        finally:
            done.set()

    monkeypatch.setattr(walk, "walk_files", slow)
    call = asyncio.create_task(many.call_tool("find_files", {"glob": "**/*.txt"}, timeout=None))
    assert await asyncio.to_thread(walked.wait, 30)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await asyncio.to_thread(done.wait, 30)
    assert count[0] < 2000


FILES = st.lists(
    st.lists(st.sampled_from(["", "a", "b", "ab", "a b", " a", "aa\r", "é", "ba a", "\t"])),
    min_size=1,
    max_size=6,
)
PATTERNS = ["a", "^a", "a$", r"a\s*b", r"\s", "b|é", "^$", r"a\b", ".", r"\Aa", r"b\Z", "a\nb",
            r"a\s+b|b", r"b\s*a|a", "\n", r"\s+", "a*", r"(?s)a.*b"]  # fmt: skip


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=FILES, pattern=st.sampled_from(PATTERNS), newline=st.booleans())
def test_searching_many_files_at_once_finds_what_a_per_file_grep_finds(
    tmp_path: Path, files: list[list[str]], pattern: str, newline: bool
) -> None:
    """Small files are searched joined together: no match may cross into, or hide, another."""
    paths = []
    expected = []
    for index, lines in enumerate(files):
        text = "\n".join(lines) + ("\n" if newline and lines else "")
        path = tmp_path / f"f{index}.txt"
        path.write_text(text, newline="")
        paths.append((path.name, str(path)))
        per_line = pattern.replace(r"\A", "^").replace(r"\Z", "$")
        expected += [
            (path.name, n)
            for n, line in enumerate(text.split("\n"), 1)
            if re.search(per_line, line.removesuffix("\r"))
        ]
    search = engine.TextSearch(pattern)
    search.run(paths)
    assert [(m.path, m.line) for m in search.shown] == expected


class SlowPattern:
    """A glob regex that runs out of time, as one with many stars may on a long name."""

    def fullmatch(self, text: str, *, timeout: float) -> None:
        raise TimeoutError("regex timed out")


async def test_a_glob_that_takes_too_long_to_match_is_an_error_result(
    tools: ToolSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    from copilot_nb.tools.search import tools as search_module

    real = search_module.compile_glob

    def slow(text: str) -> Any:
        return dataclasses.replace(real(text), bounded=SlowPattern())

    monkeypatch.setattr(search_module, "compile_glob", slow)
    for name, arguments in (("find_files", {}), ("search_text", {"regex": "a"})):
        out = await tools.call_tool(name, {**arguments, "glob": "**/a/**/*.txt"})
        assert out.is_error
        assert out.content == (
            f"{name}: glob '**/a/**/*.txt' took longer than 1 s to match 'notes.txt'; use fewer "
            "'*' and '**' (e.g. 'src/**/*.py')"
        )


def test_globs_with_many_stars_are_matched_with_a_time_limit() -> None:
    from copilot_nb.workspace.globs import compile_glob

    assert compile_glob("**/*.py").bounded is None  # the everyday globs stay on `re`
    assert compile_glob("*.{md,txt}").bounded is None
    assert compile_glob("*" * 30 + "x").bounded is None  # a run of stars is one `**`
    glob = compile_glob("*a*a*a*a*a*a*a*a*a*a*x")
    assert glob.bounded is not None
    started = time.perf_counter()
    assert not glob.matches("a" * 200)
    assert time.perf_counter() - started < WALL_CLOCK_BOUND


async def test_a_regex_too_nested_to_compile_is_an_error_result(tools: ToolSet) -> None:
    out = await tools.call_tool("search_text", {"regex": "(" * 5000 + ")" * 5000})
    assert out.is_error and "too deeply nested or too large to compile" in out.content
