"""search_text gives the same answer, byte for byte, through ripgrep as through its Python engine;
ripgrep reads only trees with big files, never outlives a run, and a broken one hands the search
back to Python.

The parity stories use small files, so they lower the size ripgrep starts at to nothing: every
text file of theirs is read by ripgrep."""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from copilot_nb.tools import ToolOutput, ToolSet
from copilot_nb.tools.search import engine, ripgrep
from copilot_nb.tools.search.engine import TextSearch
from copilot_nb.tools.search.ripgrep import ENV, find_ripgrep, ripgrep_for, search_with_ripgrep
from copilot_nb.tools.search.ripgrep_args import chunked, is_odd, same_in_rust, tells_odd_lines
from copilot_nb.tools.search.tools import search_tools
from copilot_nb.tools.search.walk import compile_glob, walk_glob
from copilot_nb.workspace.workspace import Workspace
from tests.helpers import call, until


def _installed() -> str | None:
    saved = os.environ.pop(ENV, None)
    try:
        return find_ripgrep()
    finally:
        if saved is not None:
            os.environ[ENV] = saved


RG = _installed()
pytestmark = pytest.mark.skipif(RG is None, reason="ripgrep is not installed (pip install ripgrep)")

FILES: dict[str, bytes] = {
    "README.md": b"# Demo\nTODO: write docs\n",
    "setup.py": b"from setuptools import setup\nsetup()  # TODO\n",
    "src/app.py": b"def main():\n    total = 0  # TODO: count\n    return total\n",
    "src/util/helpers.py": b"def helper_total(x):\n    return x  # todo lower\n",
    "src/util/notes.txt": b"helper notes (a+b) [x] {y} $z ^w\n",
    "src/.hidden/inner.py": b"TODO hidden folder\n",
    ".hidden.txt": b"TODO hidden file\n",
    ".gitignore": b"build/\n*.log\n!keep.log\n/anchored.txt\nnested/**/deep.py\n",
    ".git/config": b"[core]\nTODO = not searched\n",
    ".git/info/exclude": b"local_only.py\n",
    ".ipynb_checkpoints/nb-checkpoint.ipynb": b"TODO checkpoint copy\n",
    "local_only.py": b"TODO excluded by .git/info/exclude\n",
    "anchored.txt": b"TODO anchored ignore\n",
    "sub/anchored.txt": b"TODO not ignored below\n",
    "nested/a/b/deep.py": b"TODO deep ignored\n",
    "nested/a/b/shallow.py": b"TODO deep kept\n",
    "build/gen.py": b"TODO generated\n",
    "debug.log": b"TODO in a log\n",
    "keep.log": b"TODO kept log\n",
    "data/.gitignore": b"*.csv\n!keep.csv\n",
    "data/raw.csv": b"TODO,csv\n",
    "data/keep.csv": b"TODO,kept csv\n",
    "data/info.md": b"TODO data info\n",
    ".env": b"TOKEN=TODO-secret\n",
    ".env.local": b"TODO=secret too\n",
    "config/id_rsa": b"TODO private key\n",
    "config/id_rsa.pub": b"TODO public key is searched\n",
    "home/.ssh/known": b"TODO under ssh\n",
    "bin/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00TODO",
    "bin/late_nul.txt": b"TODO before a late NUL\n" + b"x" * 9000 + b"\x00\nTODO after\n",
    "bin/very_late_nul.txt": b"TODO early\n" + b"y\n" * 40000 + b"\x00 TODO end\n",
    "enc/latin1.txt": b"caf\xe9 TODO na\xefve\nplain TODO\n",
    "enc/cut.txt": b"a\xe2\x82b TODO\n\xf0\x9f\x98 x\n",
    "enc/bom.txt": b"\xef\xbb\xbfTODO with bom\nsecond\n",
    "enc/utf8.txt": b"r\xc3\xa9sum\xc3\xa9 TODO \xe2\x82\xac\n",
    "eol/crlf.txt": b"TODO one\r\ntwo TODO\r\nend\r\n",
    "eol/lone_cr.txt": b"TODO a\rb\nx\ry TODO\rz\nlast\r",
    "eol/no_newline.txt": b"first\nTODO last",
    "long/min.js": b"x" * 5000 + b"TODO" + b"y" * 5000 + b"\n",
    "many/f0.txt": b"hit TODO\n" * 3,
    "many/f1.txt": b"hit TODO\n" * 3,
    "weird name [x].txt": b"TODO brackets in a name\n",
    "-dash.txt": b"TODO dash first\n",
    "empty.txt": b"",
}


@pytest.fixture
def root(root: Path, tmp_path: Path) -> Path:
    """A project with every kind of file the two engines must agree on."""
    for name, data in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TODO outside the workspace\n")
    (root / "link_out").symlink_to(outside)
    (root / "link_file_out.txt").symlink_to(outside / "secret.txt")
    (root / "link_in").symlink_to(root / "src")
    (root / "link_in.py").symlink_to(root / "setup.py")
    return root


REAL_SIZES = {"BIG_FILE": ripgrep.BIG_FILE, "WORTH": ripgrep.WORTH}


@pytest.fixture(autouse=True)
def every_file_to_ripgrep(monkeypatch: pytest.MonkeyPatch) -> None:
    """ripgrep reads every text file of these small trees (the stories about the choice itself
    set the real sizes back)."""
    monkeypatch.setattr(ripgrep, "BIG_FILE", 0)
    monkeypatch.setattr(ripgrep, "WORTH", 0)


@pytest.fixture(autouse=True)
def ripgrep_answers(
    request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> Iterator[None]:
    """No search of these stories falls back to Python because ripgrep failed (but one)."""
    yield
    if "broken" not in request.node.name:
        fell_back = [
            r.getMessage() for r in caplog.records if "searching in Python" in r.getMessage()
        ]
        assert not fell_back


async def both(tools: ToolSet, monkeypatch: pytest.MonkeyPatch, **arguments: Any) -> ToolOutput:
    """search_text through the Python engine and through ripgrep: the same output."""
    assert RG is not None
    monkeypatch.setenv(ENV, "0")
    python = await call(tools, "search_text", **arguments)
    monkeypatch.setenv(ENV, RG)
    through_rg = await call(tools, "search_text", **arguments)
    assert through_rg.content == python.content
    assert through_rg.summary == python.summary
    assert through_rg.is_error == python.is_error
    return through_rg


PATTERNS = [
    "TODO",
    "(?i)todo",
    "todo",
    r"TODO\b",
    r"\bTODO:",
    "^TODO",
    "TODO$",
    r"\ATODO",
    r"TODO\Z",
    "T.DO",
    r"a.b",
    r"x.y",
    r"caf.",
    r"na.ve",
    r"[^a-z ]TODO",
    r"\WTODO",
    r"\S+ TODO",
    r"\(a\+b\) \[x\] \{y\} \$z \^w",
    r"é|€",
    r"r\w+sum",
    r"\d+",
    "hit|kept",
    "nowhere to be found",
    r"TODO\s*\w*",
    "(?i)TODO.*(docs|log)",
    r"y{3}TODO",
    r"(?P<word>TODO)",
    r"TODO(?=:)",  # lookahead: Python engine only
    r"(\w)\1",  # a backreference: Python engine only
    "^$",  # an empty line: Python engine only
]


@pytest.mark.parametrize("regex", PATTERNS)
async def test_every_pattern_gives_the_same_answer_either_way(
    tools: ToolSet, monkeypatch: pytest.MonkeyPatch, regex: str
) -> None:
    await both(tools, monkeypatch, regex=regex)


GLOBS = ["**/*.py", "*.{md,txt}", "src/**", "src/*/*.py", "data/*", "eol/**", ".env*",
         "config/*", "home/**", "bin/*", "link_in/**", "link_out/**", "nowhere/**", "*.log",
         "weird name ?x?.txt", "-dash.txt", "nested/**/*.py", "**/deep.py"]  # fmt: skip


@pytest.mark.parametrize("glob", GLOBS)
async def test_every_glob_gives_the_same_answer_either_way(
    tools: ToolSet, monkeypatch: pytest.MonkeyPatch, glob: str
) -> None:
    await both(tools, monkeypatch, regex="TODO", glob=glob)
    await both(tools, monkeypatch, regex="^T.DO", glob=glob)


async def test_the_answer_a_model_reads(tools: ToolSet, monkeypatch: pytest.MonkeyPatch) -> None:
    out = await both(tools, monkeypatch, regex="TODO", glob="src/**")
    assert out.content.splitlines() == [
        "2 matches in 2 files for 'TODO' in files matching 'src/**'",
        "src/.hidden/inner.py:1: TODO hidden folder",
        "src/app.py:2:     total = 0  # TODO: count",
    ]
    out = await both(tools, monkeypatch, regex="TODO")
    lines = out.content.splitlines()
    assert "bin/late_nul.txt:1: TODO before a late NUL" in lines  # the NUL is past 8 KB
    assert "enc/latin1.txt:1: caf\ufffd TODO na\ufffdve" in lines
    assert not any(line.startswith(("build/", ".git/", ".env", "link_", "config/id_rsa:"))
                   for line in lines)  # fmt: skip
    assert "config/id_rsa.pub:1: TODO public key is searched" in lines
    assert lines[-1] == (
        "(1 binary files skipped; 4 files that may hold secrets not searched (e.g. .env; "
        "read_file shows one after the user approves))"
    )


async def test_caps_and_size_limits_are_the_same(
    root: Path, tools: ToolSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "MAX_MATCHES", 5)
    out = await both(tools, monkeypatch, regex="TODO")
    assert "more matches; narrow with glob=" in out.content
    monkeypatch.setattr(engine, "MAX_MATCHES", 1)
    await both(tools, monkeypatch, regex="hit", glob="many/**")
    monkeypatch.setattr(engine, "MAX_SEARCH_BYTES", 70_000)
    out = await both(tools, monkeypatch, regex="TODO")
    assert "files over 0 MB not searched (e.g. bin/very_late_nul.txt;" in out.content


async def test_a_line_of_many_thousand_characters_is_clipped_the_same(
    tools: ToolSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = await both(tools, monkeypatch, regex="TODO", glob="long/*")
    assert out.content.splitlines()[1].startswith("long/min.js:1: …x")


async def test_an_ignored_start_folder_and_a_file_as_glob(
    root: Path, tools: ToolSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    for glob in ("build/**", "build/gen.py", ".git/**", ".ipynb_checkpoints/*", "README.md"):
        await both(tools, monkeypatch, regex="TODO", glob=glob)


async def test_the_workspace_is_the_whole_world(
    root: Path, tools: ToolSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    for glob in ("../**", "/etc/**", "~/**", "link_out/../../**"):
        out = await both(tools, monkeypatch, regex="TODO", glob=glob)
        assert out.is_error and "leaves the workspace" in out.content
    out = await both(tools, monkeypatch, regex="outside the workspace")
    assert out.content.startswith("no matches")


# --- the engine itself, without the tool --------------------------------------------------------


def test_the_engine_fills_the_same_search(root: Path) -> None:
    assert RG is not None
    workspace = Workspace(root)
    is_secret = workspace.secrets.for_walk(root)
    for glob in (None, compile_glob("**/*.txt"), compile_glob("enc/**")):
        python = TextSearch("T.DO", is_secret=is_secret)
        python.run(walk_glob(workspace, glob))
        through_rg = TextSearch("T.DO", is_secret=is_secret)
        search_with_ripgrep(RG, through_rg, workspace, glob)
        assert through_rg.finished.is_set()
        assert through_rg.shown == python.shown and through_rg.total == python.total
        assert (through_rg.searched, through_rg.binary) == (python.searched, python.binary)
        assert (through_rg.secrets, through_rg.too_big) == (python.secrets, python.too_big)


def test_which_patterns_ripgrep_gets(monkeypatch: pytest.MonkeyPatch) -> None:
    assert RG is not None
    monkeypatch.setenv(ENV, RG)
    assert ripgrep_for(TextSearch("def \\w+")) == RG
    for python_only in ("^$", "a*", r"(?<=x)y", r"(a)\1", "a++", r"(?x) a", "a{,2}", "[[:alpha:]]"):
        assert ripgrep_for(TextSearch(python_only)) is None, python_only
    monkeypatch.setenv(ENV, "0")
    assert ripgrep_for(TextSearch("def")) is None
    monkeypatch.setenv(ENV, "no-such-ripgrep-program")
    assert find_ripgrep() is None


@pytest.mark.parametrize(
    ("pattern", "same"),
    [("abc", True), (r"\w+\s\d", True), ("(?i)abc", True), ("a(?i)b", False), (r"\Aa", False),
     (r"(?P<n>a)", True), (r"(?=a)", False), ("a{2,3}", True), ("a{x}", False), (r"[\b]", False),
     ("[a-z&&b]", False), (r"\n", False), ("\x00", False), (r"\p{L}", True), (r"\N{DASH}", False)],
)  # fmt: skip
def test_same_in_rust_is_conservative(pattern: str, same: bool) -> None:
    assert same_in_rust(pattern) is same


@pytest.mark.parametrize(
    ("pattern", "tells"),
    [("abc", False), (r"a\.b", False), ("a.b", True), ("^a", True), ("a$", True),
     ("[^a]", True), (r"\W", True), (r"\S", True), ("é", True), (r"\x7f", False),
     (r"\xe9", True), (r"[a-z]+", False), (r"\bword\b", False), (r"\s", True), (r"\x0d", True),
     (r"[\t-~]", True), (r"[ -~]", False), (r"\D", True)],
)  # fmt: skip
def test_patterns_that_could_read_odd_lines_differently(pattern: str, tells: bool) -> None:
    assert tells_odd_lines(pattern) is tells


@pytest.mark.parametrize(
    ("line", "odd"),
    [(b"plain", False), (b"a\rb", True), (b"caf\xc3\xa9", False), (b"caf\xe9", True),
     (b"\xe2\x82", True), (b"", False)],
)  # fmt: skip
def test_lines_the_engines_could_read_differently(line: bytes, odd: bool) -> None:
    assert is_odd(line) is odd


def test_paths_are_given_in_runs_within_the_command_line_limit() -> None:
    paths = [f"src/file_{i:04d}.py" for i in range(1000)]
    runs = list(chunked(paths, limit=2000))
    assert [p for run in runs for p in run] == paths
    assert all(sum(len(p) + 1 for p in run) <= 2000 for run in runs) and len(runs) > 1
    assert list(chunked(["x" * 50], limit=10)) == [["x" * 50]]  # one long path still goes


# --- processes -----------------------------------------------------------------------------------


def _program(folder: Path, name: str, body: str) -> str:
    """A stand-in for rg: a small program of our own, run as ripgrep would be."""
    path = folder / name
    path.write_text(f"#!{sys.executable}\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


async def test_a_broken_ripgrep_hands_the_search_to_python(
    tools: ToolSet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, "0")
    expected = await call(tools, "search_text", regex="TODO")
    broken = _program(tmp_path, "rg-broken", "import sys; sys.stderr.write('boom'); sys.exit(2)")
    garbled = _program(tmp_path, "rg-garbled", "print('not a count'); raise SystemExit(0)")
    for program in (broken, garbled):
        monkeypatch.setenv(ENV, program)
        out = await call(tools, "search_text", regex="TODO")
        assert out.content == expected.content


def _sleeper(tmp_path: Path) -> tuple[str, Path]:
    pid_file = tmp_path / "rg.pid"
    body = f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(120)"
    return _program(tmp_path, "rg-slow", body), pid_file


def _pid(pid_file: Path) -> int | None:
    text = pid_file.read_text() if pid_file.exists() else ""
    return int(text) if text else None


async def _started(pid_file: Path) -> int:
    await until(lambda: _pid(pid_file) is not None, what="the stand-in ripgrep started")
    pid = _pid(pid_file)
    assert pid is not None
    return pid


def _reaped(pid: int) -> bool:
    """Gone, and not a zombie waiting for its parent."""
    return not psutil.pid_exists(pid)


async def _gone(pid: int) -> bool:
    await until(lambda: _reaped(pid), what=f"process {pid} ended and reaped")
    return True


async def test_stop_kills_ripgrep(
    tools: ToolSet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program, pid_file = _sleeper(tmp_path)
    monkeypatch.setenv(ENV, program)
    task = asyncio.create_task(tools.call_tool("search_text", {"regex": "TODO"}, timeout=None))
    pid = await _started(pid_file)
    task.cancel()  # what Stop does to the task awaiting the tool
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _gone(pid), "ripgrep outlived a stopped search"


async def test_the_time_limit_kills_ripgrep(
    tools: ToolSet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program, pid_file = _sleeper(tmp_path)
    monkeypatch.setenv(ENV, program)
    out = await tools.call_tool("search_text", {"regex": "TODO"}, timeout=1.0)
    assert out.is_error
    assert await _gone(await _started(pid_file)), "ripgrep outlived the time limit"


async def test_a_real_search_leaves_no_process_behind(
    tools: ToolSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert RG is not None
    monkeypatch.setenv(ENV, RG)
    before = {child.pid for child in psutil.Process().children(recursive=True)}
    out = await call(tools, "search_text", regex="TODO")
    assert not out.is_error
    after = {child.pid for child in psutil.Process().children(recursive=True)}
    assert after <= before


async def test_a_catastrophic_regex_is_answered_by_ripgrep(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Python engine stops `(a|a)+$` with an error; ripgrep cannot backtrack, so it
    answers, and the Python engine only reads files that have a match."""
    assert RG is not None
    (root / "notes.txt").write_text("intro\n" + "a" * 28 + "!\n")
    monkeypatch.setenv(ENV, RG)
    out = await call(search_tools(Workspace(root)), "search_text", regex="(a|a)+$", glob="*.txt")
    assert not out.is_error and out.content.startswith("no matches for '(a|a)+$'")


# --- which engine reads what --------------------------------------------------------------------


def _recording(tmp_path: Path) -> tuple[str, Path]:
    """A stand-in rg that notes the files it is given, then runs the real one."""
    assert RG is not None
    calls = tmp_path / "rg-calls.txt"
    body = (
        "import os, sys\n"
        "files = sys.argv[sys.argv.index('--') + 1 :]\n"
        f"open({str(calls)!r}, 'a').write('\\n'.join(files) + '\\n')\n"
        f"os.execv({RG!r}, [{RG!r}, *sys.argv[1:]])"
    )
    return _program(tmp_path, "rg-recording", body), calls


def _log_file(path: Path, megabytes: float, hits: int) -> None:
    """A log of about `megabytes` MB with `hits` TODO lines spread through it (one CRLF)."""
    line = b"2024-05-01T12:00:00Z INFO worker.queue id=4711 took=12ms status=ok\n"
    lines = [line] * int(megabytes * 2**20 / len(line))
    for i in range(hits):
        lines[(i + 1) * len(lines) // (hits + 1)] = b"ERROR TODO: retry %d\r\n" % i
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(lines))


async def _through(program: str, tools: ToolSet, monkeypatch: pytest.MonkeyPatch) -> ToolOutput:
    monkeypatch.setenv(ENV, "0")
    python = await call(tools, "search_text", regex="TODO")
    monkeypatch.setenv(ENV, program)
    through_rg = await call(tools, "search_text", regex="TODO")
    assert through_rg.content == python.content and through_rg.summary == python.summary
    return through_rg


async def test_a_tree_of_small_files_is_answered_by_python_alone(
    root: Path, tools: ToolSet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, size in REAL_SIZES.items():
        monkeypatch.setattr(ripgrep, name, size)
    program, calls = _recording(tmp_path)
    await _through(program, tools, monkeypatch)
    _log_file(root / "logs" / "one.txt", 0.5, 3)  # big, but not worth a process
    await _through(program, tools, monkeypatch)
    assert not calls.exists(), "ripgrep started for a tree Python reads as fast"


async def test_big_files_are_read_by_ripgrep_and_the_rest_by_python(
    root: Path, tools: ToolSet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, size in REAL_SIZES.items():
        monkeypatch.setattr(ripgrep, name, size)
    program, calls = _recording(tmp_path)
    (root / ".gitignore").write_bytes(FILES[".gitignore"] + b"logs/ignored.txt\n")
    for name in ("logs/a.txt", "logs/b.txt", "logs/ignored.txt", "logs/sub/c.txt"):
        _log_file(root / name, 3, 4)
    out = await _through(program, tools, monkeypatch)
    assert "logs/a.txt:" in out.content and "logs/sub/c.txt:" in out.content
    given = calls.read_text().split()
    assert given == ["logs/a.txt", "logs/b.txt", "logs/sub/c.txt"]  # not the ignored one
