"""Shared fixtures: a clean environment, a guard that keeps every connection on loopback, a
workspace with its tools, and loopback servers. Helpers that are not fixtures live in helpers.py."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from copilot_nb.models import transport
from copilot_nb.testing import ScriptedServer
from copilot_nb.testing.github_fake import FakeGitHub
from copilot_nb.tools import ToolSet, workspace_tools
from copilot_nb.workspace.workspace import Workspace
from tests.helpers import Sleeps, behaviours, write_config
from tests.kernel_session import KernelSession, scripted_env

pytest_plugins = [
    "tests.notebook_samples",
    "tests.network_guard",  # a connection past loopback fails the test: refused_connections
    "tests.browser_lab",  # JupyterLab in Chromium: lab, page, replies, outside
    "tests.live_story",  # a stand-in front end with a live notebook: front_end
    "tests.project_wheel",  # the project's wheel, built once a session: project_wheel
    "pytester",  # runs pytest on a made-up test file: pytester
]

PROVIDER_VARIABLES = (
    "COPILOT_NB_MODEL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OLLAMA_BASE_URL",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "COPILOT_NB_GITHUB_TOKEN",
    "COPILOT_NB_GITHUB_URL",
    "COPILOT_NB_GITHUB_API_URL",
    "COPILOT_NB_GITHUB_CLIENT_ID",
    "COPILOT_NB_CONFIG_DIR",
    "COPILOT_NB_CASSETTE",
)


@pytest.fixture(autouse=True)
def no_provider_environment(monkeypatch: pytest.MonkeyPatch, tmp_path_factory) -> None:
    """Tests must never reach a real provider, whatever the developer's shell exports, nor read
    the developer's own settings (a user-level mcp.json would start their MCP servers, skills in
    ~/.claude/skills would be offered). One home folder serves the whole run, so the kernels'
    first-run caches are made once."""
    for name in PROVIDER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config")))
    monkeypatch.setenv("HOME", str(_home_for_the_run(tmp_path_factory)))


def _home_for_the_run(factory: pytest.TempPathFactory) -> Path:
    home = factory.getbasetemp() / "home"
    home.mkdir(exist_ok=True)
    return home


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty workspace folder, `ws` in the test's tmp_path: siblings of it are outside.

    A test module that needs files in it overrides this fixture with one that asks for `root`
    and fills it in."""
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


@pytest.fixture
def ws(root: Path) -> Workspace:
    """The workspace on `root`, with the default policies."""
    return Workspace(root)


@pytest.fixture
def tools(ws: Workspace) -> ToolSet:
    """The file and search tools on `ws`, as the agent gets them; call one with helpers.call."""
    return workspace_tools(ws)


@pytest.fixture
def retry_sleeps(monkeypatch: pytest.MonkeyPatch) -> Sleeps:
    """The waits the models' transport asks for between retries, recorded instead of slept.

    Through the transport's own injectable `sleep`, so a test reads the waits instead of timing
    them on the wall clock."""
    sleeps = Sleeps()
    for opener in (transport.stream_reply, transport.open_stream):
        assert opener.__kwdefaults__ is not None and "sleep" in opener.__kwdefaults__
        monkeypatch.setitem(opener.__kwdefaults__, "sleep", sleeps)
    return sleeps


@pytest.fixture
def serve() -> Iterator[type[ScriptedServer]]:
    """Start ScriptedServers that are stopped when the test ends: `server = serve(steps)`."""
    started: list[ScriptedServer] = []

    def start(*args: object, **kwargs: object) -> ScriptedServer:
        server = ScriptedServer(*args, **kwargs).start()  # type: ignore[arg-type]
        started.append(server)
        return server

    yield start  # type: ignore[misc]
    for server in started:
        server.stop()


@pytest.fixture
def kernel_for(tmp_path: Path) -> Iterator[Callable[..., KernelSession]]:
    """Start real kernels in tmp_path, with copilot_nb loaded and `%%copilot` pointed at a
    ScriptedServer, shut down when the test ends: `kernel = kernel_for(server)`, with more
    environment as keywords (`kernel_for(server, JPY_SESSION_NAME=...)`); `answers_hello=False`
    plays a front end that handles no comms at all (jupyter_client's own)."""
    sessions: list[KernelSession] = []

    def start(server: ScriptedServer, *, answers_hello: bool = True, **env: str) -> KernelSession:
        session = KernelSession(tmp_path, scripted_env(server, **env), answers_hello=answers_hello)
        sessions.append(session)
        assert session.execute("%load_ext copilot_nb").status == "ok"
        return session

    yield start
    for session in sessions:
        session.close()


@pytest.fixture
def github() -> Iterator[type[FakeGitHub]]:
    """Start loopback fakes of GitHub and the Copilot API: `fake = github(steps)`."""
    started: list[FakeGitHub] = []

    def start(*args: object, **kwargs: object) -> FakeGitHub:
        fake = FakeGitHub(*args, **kwargs).start()  # type: ignore[arg-type]
        started.append(fake)
        return fake

    yield start  # type: ignore[misc]
    for fake in started:
        fake.stop()


@pytest.fixture
def copilot_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No real sign-in or editor setting of the developer's can reach a Copilot test: the
    config folders are in tmp_path and the editor headers' variables are unset."""
    from copilot_nb.models.copilot.headers import EDITOR_SETTINGS

    monkeypatch.setenv("COPILOT_NB_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for name in EDITOR_SETTINGS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def saved_conversations_hold_no_secret(request: pytest.FixtureRequest) -> Iterator[None]:
    """After every test, each saved conversation it left (`*.copilot-chat.jsonl` in its tmp_path
    or its config folder) is scanned: no key or token format, no path under the home folder."""
    folders = [Path(os.environ.get("XDG_CONFIG_HOME", "")) / "copilot_nb"]
    if "tmp_path" in request.fixturenames:  # only where the test has one anyway
        folders.append(request.getfixturevalue("tmp_path"))
    yield
    from tests.saved_scan import scan_saved

    scan_saved(folders)


@pytest.fixture
async def stop_servers():
    """Sessions whose servers are stopped when the test ends (no child process left behind)."""
    sessions = []
    yield sessions.append
    for session in sessions:
        await session.mcp.stop()


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace, and server `b` in the user's `mcp.json`; copilot_nb's settings in a temp folder."""
    root = tmp_path / "ws"
    root.mkdir()
    monkeypatch.setenv("COPILOT_NB_CONFIG_DIR", str(tmp_path / "config"))
    write_config(root, b=behaviours())
    return root
