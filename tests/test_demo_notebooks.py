"""The demo notebooks replay offline from their committed cassettes, byte for byte.

nbval (strict, in `make test`) compares each cell's outputs; this test asks more: two replays
write the same bytes, and those are the committed notebook's, once the scratch folder's path (the
one thing that differs between machines) is read the same way nbval's sanitize file reads it.
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path

import pytest

from copilot_nb.testing.demo_notebooks import replay

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

pytestmark = pytest.mark.kernel


def sanitized(data: bytes) -> str:
    """The notebook's text with nbval's sanitize rules applied."""
    rules = configparser.ConfigParser()
    rules.read(ROOT / "notebooks" / "nbval_sanitize.cfg")
    text = data.decode("utf-8")
    for section in rules.sections():
        text = re.sub(rules[section]["regex"], rules[section]["replace"], text)
    return text


def test_every_demo_notebook_has_its_cassette_and_its_replies():
    assert NOTEBOOKS
    for notebook in NOTEBOOKS:
        assert notebook.with_name(notebook.stem + ".copilot.jsonl").is_file(), notebook.name
        assert (ROOT / "scripts" / "demo_replies" / f"{notebook.stem}.py").is_file()
        text = notebook.read_text()
        assert f"%copilot replay {notebook.stem}.copilot.jsonl" in text
        assert "recorded against a loopback server" in text  # each says what it was recorded with


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[n.stem for n in NOTEBOOKS])
def test_a_demo_notebook_replays_to_the_same_bytes_twice_and_as_committed(notebook: Path):
    first = replay(notebook)
    second = replay(notebook)
    assert first == second
    assert sanitized(first) == sanitized(notebook.read_bytes())
