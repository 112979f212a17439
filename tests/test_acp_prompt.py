"""What an editor attaches to a prompt reaches the turn as a `%%copilot` cell would say it."""

from __future__ import annotations

import pytest

acp = pytest.importorskip("acp")

from copilot_nb.acp.prompt_text import prompt_text  # noqa: E402


def test_files_of_the_session_folder_become_at_references() -> None:
    blocks = [
        acp.text_block("explain"),
        acp.resource_link_block("data.csv", "file:///work/data/data.csv"),
        acp.resource_block(acp.embedded_text_resource("file:///work/a.py", "x = 1")),
    ]
    assert prompt_text(blocks, "/work") == "explain @data/data.csv @a.py"


def test_a_file_outside_the_folder_or_with_spaces_is_named_not_attached() -> None:
    blocks = [
        acp.text_block("compare"),
        acp.resource_link_block("x", "file:///etc/hosts"),
        acp.resource_link_block("y", "file:///work/my%20data.csv"),
    ]
    text = prompt_text(blocks, "/work")
    assert text == "compare (attached: `/etc/hosts`) (attached: `/work/my data.csv`)"


def test_a_web_address_is_not_attached_as_a_file() -> None:
    blocks = [acp.text_block("see"), acp.resource_link_block("page", "https://example.com/x")]
    assert prompt_text(blocks, "/work") == "see"
