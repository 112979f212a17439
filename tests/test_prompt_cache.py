"""A prompt cache hits across workspaces: what the model is sent first is the same for every
folder, user and day, and whatever varies comes after it (issue 35, case 6).

Providers (and llama-server) reuse the longest shared prefix of a request; a folder named in the
first sentence made each new workspace pay for the whole prompt again."""

from __future__ import annotations

import json
from datetime import date

from copilot_nb.agent.prompt.system import NOTEBOOK_PROMPT
from copilot_nb.testing import reply
from tests.helpers import events_of, session_in


def _shared_prefix(a: str, b: str) -> str:
    """The characters two texts begin with alike: what a prompt cache can reuse."""
    same = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    return a[:same]


async def _first_request(serve, folder, monkeypatch) -> dict:
    folder.mkdir()
    server = serve([reply("ok")])
    session = session_in(folder, server, monkeypatch)
    await events_of(session, "hi")
    return dict(server.requests[0].body)


async def test_two_workspaces_send_the_same_long_prefix_and_the_same_tools(
    serve, tmp_path, monkeypatch
) -> None:
    one = await _first_request(serve, tmp_path / "alpha-project", monkeypatch)
    two = await _first_request(serve, tmp_path / "beta-analysis", monkeypatch)
    first, second = one["messages"][0], two["messages"][0]
    assert first["role"] == second["role"] == "system"
    shared = _shared_prefix(first["content"], second["content"])
    assert shared.startswith(NOTEBOOK_PROMPT)
    assert len(shared) >= 0.9 * len(first["content"]), "the folder belongs at the end"
    assert first["content"].rstrip().endswith(str(tmp_path / "alpha-project"))
    assert date.today().isoformat() not in first["content"], "no date in the cached part"
    assert json.dumps(one["tools"]) == json.dumps(two["tools"]), "the tool list is stable"
