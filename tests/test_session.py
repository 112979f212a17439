"""The kernel's shared session: which tools the agent gets, and one conversation for all surfaces."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from copilot_nb import ConfigError, tool
from copilot_nb.agent.session import CopilotSession
from copilot_nb.testing import call, reply


@tool
def shout(text: str) -> str:
    """Upper-case a text.

    Args:
        text: what to shout.
    """
    return text.upper()


@tool(name="read_file", override=True)
def my_read_file(path: str) -> str:
    """Read a file my way.

    Args:
        path: the file.
    """
    return f"custom read of {path}"


def session_with(namespace: dict) -> CopilotSession:
    return CopilotSession(SimpleNamespace(user_ns=namespace))


def names(session: CopilotSession, tmp_path) -> list[str]:
    from copilot_nb.workspace.workspace import Workspace

    return [spec.name for spec in session.tools_for(Workspace(tmp_path)).list_tools()]


def test_tools_defined_in_the_kernel_are_offered(tmp_path):
    session = session_with({"shout": shout, "_hidden": shout, "x": 1})
    offered = names(session, tmp_path)
    assert "shout" in offered and "read_file" in offered
    assert offered.count("shout") == 1


def test_a_clash_with_a_built_in_is_an_error_unless_it_overrides(tmp_path):
    clash = tool(name="write_file")(shout.function)
    with pytest.raises(ConfigError, match="name of a built-in"):
        names(session_with({"clash": clash}), tmp_path)
    assert "read_file" in names(session_with({"mine": my_read_file}), tmp_path)


def test_filters_apply_to_everything(tmp_path):
    session = session_with({"shout": shout})
    session.excluded = ["write_file", "shout"]
    assert "write_file" not in names(session, tmp_path) and "shout" not in names(session, tmp_path)
    session.available = ["read_file"]
    assert names(session, tmp_path) == ["read_file"]


async def test_an_overriding_tool_is_the_one_called(serve, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    server = serve([reply("", call("read_file", path="a.py")), reply("done")])
    session = session_with({"mine": my_read_file})
    session.model_spec = "openai:scripted"
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    agent = session.agent_for(session.model())
    assert await agent.ask("read a.py") == "done"
    result = server.requests[1].messages[-1]
    assert result["content"] == "custom read of a.py"


def test_one_agent_is_shared_until_new(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    session = session_with({})
    session.model_spec = "offline"
    first = session.agent_for(session.model())
    assert session.agent_for(session.model()) is first
    assert session.agent_for(session.model(), new=True) is not first
