"""Whose review record is this: the kernel signs each record it writes with the user's key, and
vouches over the live comm (`review_verify`) only for records it signed, as they were signed.

A notebook from elsewhere can carry any metadata: a record changed by hand (another `before`,
another kind, moved to another cell), signed with someone else's key, or not signed at all is
not the agent's change, and the page offers none of them (tests/test_review_crafted_browser.py).
"""

from __future__ import annotations

import copy
import secrets
from pathlib import Path
from typing import Any

import nbformat
import pytest

from copilot_nb.models.cassettes.signing import signature
from copilot_nb.testing import call, reply
from copilot_nb.tools.review import proof as review_proof
from tests.kernel_session import KernelSession
from tests.live_frontend import LiveFrontEnd, wait_until
from tests.live_story import saved_notebook


def verified(front: LiveFrontEnd, records: list[dict[str, Any]], ask: int) -> list[bool]:
    """Ask the kernel as the page does; its answer, one flag per record."""
    front.send_event({"event": "review_verify", "id": ask, "records": records})
    wait_until(
        lambda: any(e.get("id") == ask for e in front.events), what=f"the answer to ask {ask}"
    )
    (answer,) = [e for e in front.events if e.get("id") == ask]
    assert answer["event"] == "review_verified"
    return list(answer["ok"])


@pytest.mark.kernel
def test_the_kernel_vouches_for_its_own_records_and_for_nothing_changed_or_signed_elsewhere(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    notebook = tmp_path / "proof.ipynb"
    cells = saved_notebook(
        notebook, [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_markdown_cell("draft")]
    )
    x_id, draft_id = cells[0]["id"], cells[1]["id"]
    server = serve(
        [
            reply(
                "",
                call("edit_cell", id="e", cell_id=x_id, old_str="x = 1", new_str="x = 2"),
                call("delete_cell", id="d", cell_id=draft_id),
                call("write_file", id="w", path="notes.txt", content="agent notes\n"),
            ),
            reply("Done."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    front = front_end(kernel, "proof.ipynb", cells)
    run = kernel.execute("%%copilot\ndo it")
    assert run.status == "ok", run.reply["content"]

    edited = front.cell(0)["metadata"]["copilot_nb"]["review"]
    (gone,) = front.review_of("review_deleted")
    (listed,) = front.review_of("review_files")
    assert all(isinstance(r.get("sig"), str) for r in (edited, gone, listed))
    own = [
        {"kind": "cell", "cell_id": x_id, "record": edited},
        {"kind": "deleted", "record": gone},
        {"kind": "file", "record": listed},
    ]
    assert verified(front, own, 1) == [True, True, True]

    def changed(record: dict[str, Any], **fields: Any) -> dict[str, Any]:
        return {**copy.deepcopy(record), **fields}

    other_key = secrets.token_bytes(32)
    trusted_before = {
        "cell_type": "code",
        "source": "x = 1",
        "metadata": {"trusted": True},
        "outputs": [{"output_type": "display_data", "data": {"text/html": "<script>1</script>"}}],
    }
    crafted_cell = {"turn": "t1", "kind": "edit", "before": trusted_before, "ran": False}
    crafted_deleted = {"turn": "t1", "before": {**trusted_before, "id": "evil"}, "after_id": None}
    forged = [
        {"kind": "cell", "cell_id": x_id, "record": changed(edited, before={"source": "rm -rf"})},
        {"kind": "cell", "cell_id": x_id, "record": changed(edited, kind="insert")},
        {"kind": "cell", "cell_id": "another", "record": edited},
        {"kind": "deleted", "record": changed(gone, after_id=None)},
        {"kind": "file", "record": changed(listed, path="../../.bashrc")},
        {"kind": "cell", "cell_id": x_id, "record": crafted_cell},
        {
            "kind": "cell",
            "cell_id": x_id,
            "record": {
                **crafted_cell,
                "sig": signature(other_key, review_proof.cell_parts(x_id, crafted_cell)),
            },
        },
        {
            "kind": "deleted",
            "record": {
                **crafted_deleted,
                "sig": signature(other_key, review_proof.deleted_parts(crafted_deleted)),
            },
        },
        {"kind": "file", "record": changed(listed, sig=edited["sig"])},
        {"kind": "cell", "record": edited},
        "not a record",
    ]
    assert verified(front, forged, 2) == [False] * len(forged)

    # the key is the user's, not the kernel's: a kernel started later vouches the same
    again: KernelSession = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    later = front_end(again, "proof.ipynb", front.cells)
    assert verified(later, own + forged[:2], 3) == [True, True, True, False, False]


def test_a_record_is_signed_over_what_the_page_shows_and_undo_uses() -> None:
    """Each field the page shows or an Undo uses changes the signature; a list of lines and one
    string are the same source."""
    before = {"id": "c1", "cell_type": "code", "source": ["a = 1\n", "a"], "metadata": {}}
    record = {"turn": "t1", "kind": "edit", "before": before, "ran": False}
    signed = review_proof.sign_cell("c1", record)
    assert review_proof.vouched({"kind": "cell", "cell_id": "c1", "record": signed}, key())
    same = {**signed, "before": {**before, "source": "a = 1\na"}}
    assert review_proof.vouched({"kind": "cell", "cell_id": "c1", "record": same}, key())
    for field, value in [
        ("turn", "t2"),
        ("kind", "run"),
        ("ran", True),
        ("before", {**before, "cell_type": "markdown"}),
        ("before", {**before, "source": "a = 2"}),
        ("before", None),
        ("kernel", "Undo puts back everything"),
    ]:
        item = {"kind": "cell", "cell_id": "c1", "record": {**signed, field: value}}
        assert not review_proof.vouched(item, key()), field
    assert not review_proof.vouched({"kind": "cell", "cell_id": "c1", "record": signed}, None)
    ran = review_proof.sign_cell("c1", {**record, "ran": True, "kernel": "Undo puts back df"})
    assert review_proof.vouched({"kind": "cell", "cell_id": "c1", "record": ran}, key())
    told = {**ran, "kernel": "Undo puts back df and model"}
    assert not review_proof.vouched({"kind": "cell", "cell_id": "c1", "record": told}, key())


def test_the_kernel_process_a_runs_undo_needs_is_under_its_signature() -> None:
    """A run's record names the kernel process holding what its Undo puts back; the page says
    the promise is gone once another process is attached, so that name cannot be changed."""
    record = {"turn": "t1", "kind": "run", "before": {"cell_type": "code", "source": "df"}}
    ran = {**record, "ran": True, "kernel": "Undo puts back df", "instance": "123-abc"}
    signed = review_proof.sign_cell("c1", ran)
    assert review_proof.vouched({"kind": "cell", "cell_id": "c1", "record": signed}, key())
    for instance in ("456-def", "", None):
        moved = {**signed, "instance": instance}
        item = {"kind": "cell", "cell_id": "c1", "record": moved}
        assert not review_proof.vouched(item, key()), instance


def key() -> bytes:
    from copilot_nb.models.cassettes.signing import signing_key

    found = signing_key(create=False)
    assert found is not None, "signing made the user's key"
    return found
