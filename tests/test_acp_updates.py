"""What an editor sees of a turn over ACP: each kernel event mapped to its update, purely."""

from __future__ import annotations

import pytest

pytest.importorskip("acp")

from copilot_nb.acp.updates import kind_of, plan_of, sides_of, update_of


def test_a_unified_diff_becomes_the_old_and_new_text_an_editor_shows() -> None:
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n keep\n-old line\n+new line\n tail\n"
    assert sides_of(diff) == ("keep\nold line\ntail", "keep\nnew line\ntail")


def test_a_new_file_has_no_old_text() -> None:
    assert sides_of("--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+yes\n") == ("", "yes")


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("read_file", "read"),
        ("edit_cell", "edit"),
        ("write_file", "edit"),
        ("run_code", "execute"),
        ("run_cell", "execute"),
        ("search_text", "search"),
        ("fetch__get", "fetch"),
        ("git__log", "other"),
    ],
)
def test_each_tool_has_the_kind_an_editor_groups_it_by(name: str, kind: str) -> None:
    assert kind_of(name) == kind


def test_a_plan_in_markdown_becomes_one_entry_per_step() -> None:
    update = plan_of("Plan:\n1. load the data\n2. plot it\n- [ ] save the figure\n")
    assert [e.content for e in update.entries] == ["load the data", "plot it", "save the figure"]
    assert {e.status for e in update.entries} == {"pending"}


def test_a_plan_without_steps_is_one_entry() -> None:
    assert [e.content for e in plan_of("Just rename x.").entries] == ["Just rename x."]


def test_a_failed_tool_is_a_failed_update_carrying_what_the_model_read() -> None:
    update = update_of(
        {
            "type": "tool_finished",
            "call_id": "c",
            "name": "x",
            "ok": False,
            "summary": "",
            "content": "no",
        }
    )
    assert update.status == "failed"
    assert update.raw_output == "no"
