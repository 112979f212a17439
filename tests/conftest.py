"""Shared fixtures: a clean environment (no real provider is ever reached) and loopback servers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from copilot_nb.testing import ScriptedServer
from copilot_nb.testing.github_fake import FakeGitHub

pytest_plugins = ["tests.browser_lab"]  # JupyterLab in Chromium: lab, page, replies, outside

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
)


@pytest.fixture(autouse=True)
def no_provider_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests must never reach a real provider, whatever the developer's shell exports."""
    for name in PROVIDER_VARIABLES:
        monkeypatch.delenv(name, raising=False)


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
