"""A saved conversation opens in the chat panel as named ops. The file keeps records (messages,
what cards showed, each turn's end), never ops: the panel rebuilds its ops from them on every
open, so a file written before the ops had named fields opens as one written now."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from copilot_nb.agent.conversations.store import ConversationFile
from copilot_nb.jupyter.panel.feed import Outbox
from copilot_nb.jupyter.panel.feed import tool_op as card
from copilot_nb.jupyter.panel.saved import saved_ops

SAVED = Path(__file__).parent / "data" / "saved" / "set-x.copilot-chat.jsonl"
"""Two turns, saved by copilot_nb when the panel's ops were positional lists: a read and an edit
that was approved, then a read that failed."""

MISSING = (
    "read_file: 'missing.py' does not exist in the workspace; call list_directory or find_files "
    "to see what exists"
)


def done(call_id: str, ok: bool, summary: str, result: str) -> dict[str, Any]:
    return {"op": "done", "id": call_id, "ok": ok, "summary": summary, "result": result}


EDIT = "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2"
SHOWN = [
    {"op": "user", "text": "set x to 2"},
    {"op": "text", "text": "Let me look."},
    card("call_0006", "read_file", "a.py", "json", '{\n  "path": "a.py"\n}'),
    done("call_0006", True, "a.py (1 lines)", "a.py (1 lines)\n     1\tx = 1"),
    card("call_0007", "edit_file", "a.py", "diff", "-x = 1\n+x = 2"),
    {"op": "diff", "path": "a.py", "diff": EDIT + "\n"},
    done("call_0007", True, "a.py +1 −1", f"edited a.py:\n{EDIT}"),
    {"op": "text", "text": "Changed **x** to 2."},
    {"op": "end", "status": "done"},
    {"op": "user", "text": "read missing.py"},
    card("call_0008", "read_file", "missing.py", "json", '{\n  "path": "missing.py"\n}'),
    done("call_0008", False, MISSING[:99] + "…", MISSING),
    {"op": "text", "text": "No such file."},
    {"op": "end", "status": "done"},
]


@pytest.fixture
def saved(tmp_path: Path) -> ConversationFile:
    """The saved file as copilot_nb keeps one (0600: a checkout makes it 0644, which copilot_nb
    rightly refuses to read as not its own)."""
    path = tmp_path / SAVED.name
    path.write_bytes(SAVED.read_bytes())
    path.chmod(0o600)
    return ConversationFile(path)


def test_a_conversation_saved_before_ops_had_names_opens_as_named_ops(saved: ConversationFile):
    file = saved
    ops, turns = saved_ops(file.records(file.current() or ""))
    assert ops == SHOWN
    assert [turn["request"] for turn in turns] == ["set x to 2", "read missing.py"]


def test_a_view_that_opens_on_it_gets_those_ops_in_its_replay(saved: ConversationFile):
    file = saved
    ops, _ = saved_ops(file.records(file.current() or ""))
    sent: list[Any] = []
    outbox = Outbox(sent.append)
    outbox.seed(ops)
    outbox.replay("v1")
    assert sent == [{"kind": "replay", "view": "v1", "ops": SHOWN}]
