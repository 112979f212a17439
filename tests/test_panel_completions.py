"""`@` completion in the chat panel, kernel side: which files, cells and variables are offered
for what the user typed, in which order, and how fast for a big workspace."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import types
from pathlib import Path
from typing import Any

import comm
import nbformat
import pytest

from copilot_nb.agent.prompt.references import find_references
from copilot_nb.agent.session import CopilotSession
from copilot_nb.jupyter.panel.mentions import (
    MAX_CANDIDATES,
    Candidate,
    Completer,
    FileListing,
    cell_candidates,
    file_candidates,
    list_files,
    rank,
    referable,
    variable_candidates,
)
from copilot_nb.jupyter.panel.widget import ChatPanel
from copilot_nb.jupyter.panel.wire import Complete
from copilot_nb.tools.context import ToolContext
from copilot_nb.workspace.workspace import Workspace
from tests.helpers import until
from tests.panel_front import Front, RecordingComm

COMPLETE_JS = Path(__file__).parent.parent / "copilot_nb" / "jupyter" / "panel" / "complete.js"


def files(*paths: str) -> list[Candidate]:
    return file_candidates(paths)


def texts(found: list[Candidate]) -> list[str]:
    return [c.text for c in found]


def make_tree(root: Path, *paths: str) -> None:
    for path in paths:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("x\n")


# --- ranking (pure) -----------------------------------------------------------------------


def test_prefix_matches_come_first_then_a_folder_or_name_prefix_then_any_substring():
    found = rank("da", files("notes/da.txt", "src/a/update.py", "src/data.py", "x.md", "data.csv"))
    assert texts(found) == ["data.csv", "notes/da.txt", "src/data.py", "src/a/update.py"]


def test_within_a_rank_shallow_files_come_first_then_the_walk_order():
    found = rank("", files("a/b/c.py", "z.py", "a/y.py", "b.py"))
    assert texts(found) == ["z.py", "b.py", "a/y.py", "a/b/c.py"]


def test_matching_ignores_case():
    assert texts(rank("READ", files("docs/readme.md", "README.md"))) == [
        "README.md",
        "docs/readme.md",
    ]


def test_at_most_fifty_candidates_however_many_match():
    many = files(*(f"file{i:04d}.txt" for i in range(500)))
    found = rank("file", many)
    assert len(found) == MAX_CANDIDATES == 50
    assert texts(found)[:2] == ["file0000.txt", "file0001.txt"]
    assert rank("nothing-like-it", many) == []


def test_files_then_cells_then_variables_when_they_rank_alike():
    cells = cell_candidates([{"id": "data-load", "cell_type": "code", "source": "x = 1"}])
    found = rank("da", [*variable_candidates({"data": [1]}, {}), *cells, *files("data.csv")])
    assert texts(found) == ["data.csv", "cell:data-load", "var:data"]


def test_var_and_cell_prefixes_narrow_to_their_kind():
    cells = cell_candidates([{"id": "abc", "cell_type": "code", "source": "df = load()"}])
    variables = variable_candidates({"df": [1], "dx": 2}, {})
    everything = [*files("df.csv", "var.txt"), *cells, *variables]
    assert texts(rank("var:", everything)) == ["var:df", "var:dx"]
    assert texts(rank("var:df", everything)) == ["var:df"]
    assert texts(rank("cell:", everything)) == ["cell:abc"]
    assert texts(rank("v", everything)) == ["var.txt", "var:df", "var:dx", "df.csv"]


def test_a_cell_is_found_by_its_id_its_number_or_words_of_its_first_line():
    cells = cell_candidates(
        [
            {"id": "load-1", "cell_type": "code", "source": ["import pandas as pd\n", "df = 1"]},
            {"id": "f00d", "cell_type": "markdown", "source": "\n\n## Plot the sales\nmore"},
            {"cell_type": "code", "source": ""},  # an old notebook: no id
        ]
    )
    assert [(c.text, c.detail) for c in cells] == [
        ("cell:load-1", "#1 code · import pandas as pd"),
        ("cell:f00d", "#2 markdown · ## Plot the sales"),
        ("cell:#3", "#3 code"),
    ]
    assert texts(rank("cell:f0", cells)) == ["cell:f00d"]
    assert texts(rank("#2", cells)) == ["cell:f00d"]
    assert texts(rank("cell:#3", cells)) == ["cell:#3"]
    assert texts(rank("plot", cells)) == ["cell:f00d"]
    assert texts(rank("anda", cells)) == [], "words match by their starts"
    assert texts(rank("00", cells)) == [], "nor inside an id (random hex)"
    assert texts(rank("cell:pandas", cells)) == ["cell:load-1"]


def test_variables_are_the_context_blocks_list_with_type_and_size():
    namespace = {
        "df": [1, 2, 3],
        "rate": 0.5,
        "Model": type("Model", (), {"__module__": "__main__"}),
        "np": types,  # a module
        "_private": 1,
        "In": [],  # IPython's own, unless the user rebinds it
        "Path": Path,  # imported
    }
    found = variable_candidates(namespace, {"In": namespace["In"]})
    assert [(c.text, c.detail) for c in found] == [
        ("var:Model", "type"),
        ("var:df", "list len 3"),
        ("var:rate", "float"),
    ]


# --- files from the walk ------------------------------------------------------------------


def test_secrets_git_and_ignored_folders_are_never_offered(tmp_path):
    make_tree(
        tmp_path,
        "data.csv",
        ".env",
        ".env.local",
        "keys/server.pem",
        "src/.env",
        ".git/config",
        ".ipynb_checkpoints/nb-checkpoint.ipynb",
        "build/out.txt",
        "src/app.py",
        "src/cache.pyc",
        "notebook.ipynb",
    )
    (tmp_path / ".gitignore").write_text("build/\n*.pyc\n")
    listed = list_files(Workspace(tmp_path))
    assert sorted(listed) == [".gitignore", "data.csv", "notebook.ipynb", "src/app.py"]


def test_a_path_that_cannot_be_written_as_a_reference_is_not_offered(tmp_path):
    """references.py reads `[\\w./-]+` after `@` (trailing punctuation dropped): a path with a
    space, a bracket or a quote has no way to be written, so offering it would insert a reference
    that does not resolve."""
    names = [
        "my notes.txt",
        "odd<img src=x>.txt",
        "quote's.md",
        "ends-with.",
        "café.csv",
        "dir with space/inner.py",
        "Makefile",
        "sub/données-2024_v1.csv",
    ]
    make_tree(tmp_path, *names)
    ws = Workspace(tmp_path)
    offered = texts(file_candidates(list_files(ws)))
    assert sorted(offered) == ["Makefile", "café.csv", "sub/données-2024_v1.csv"]
    for path in offered:  # each reads back as itself, as the request will resolve it
        (reference,) = find_references(f"look at @{path} please", ws)
        assert (reference.text, reference.tool) == (path, "read_file")
    assert not referable("a b") and not referable("x.") and referable("a/b-c_d.e")


def test_the_walk_stops_at_its_bound(tmp_path):
    make_tree(tmp_path, *(f"f{i}.txt" for i in range(30)))
    assert len(list_files(Workspace(tmp_path), limit=10)) == 10


# --- the listing cache ----------------------------------------------------------------------


async def test_the_listing_is_kept_briefly_and_an_old_one_answers_while_it_is_walked_again(
    tmp_path,
):
    now = [0.0]
    walks: list[str] = []

    def lister(workspace: Workspace) -> list[str]:
        walks.append("walk")
        return list_files(workspace)

    make_tree(tmp_path, "a.txt")
    listing = FileListing(ttl=5, clock=lambda: now[0], lister=lister)
    ws = Workspace(tmp_path)
    assert texts(await listing.candidates(ws)) == ["a.txt"]
    make_tree(tmp_path, "b.txt")
    now[0] = 4
    assert texts(await listing.candidates(ws)) == ["a.txt"]
    assert len(walks) == 1
    now[0] = 6  # stale: answered from the old listing at once, a new walk starts
    assert texts(await listing.candidates(ws)) == ["a.txt"]

    async def refreshed() -> bool:
        return texts(await listing.candidates(ws)) == ["a.txt", "b.txt"]

    await until(refreshed, what="the new walk is in")
    assert len(walks) == 2


async def test_a_cancelled_query_leaves_the_shared_walk_running(tmp_path):
    make_tree(tmp_path, "a.txt")
    listing = FileListing()
    ws = Workspace(tmp_path)
    first = asyncio.ensure_future(listing.candidates(ws))
    second = asyncio.ensure_future(listing.candidates(ws))
    await asyncio.sleep(0)
    first.cancel()
    assert texts(await second) == ["a.txt"]


async def test_a_10000_file_workspace_is_walked_once_for_many_keystrokes(tmp_path):
    """The listing is kept between keystrokes (its time per keystroke is in `make bench`)."""
    for i in range(100):
        make_tree(tmp_path, *(f"pkg{i}/sub/data{j}.csv" for j in range(50)))
        make_tree(tmp_path, *(f"pkg{i}/mod{j}.py" for j in range(50)))
    completer = Completer(lambda: ToolContext(workspace=Workspace(tmp_path)))
    first = await completer.candidates("d")
    assert len(first) == MAX_CANDIDATES
    (tmp_path / "pkg42" / "mod7.py").unlink()  # a walk now would miss it
    for query in ("p", "pk", "pkg4", "pkg42/", "pkg42/sub/da", "data7", "zz"):
        await completer.candidates(query)
    assert "pkg42/mod7.py" in texts(await completer.candidates("pkg42/mod7"))


# --- cells and variables from the kernel's context ----------------------------------------


async def test_the_completer_offers_files_cells_and_variables_of_the_kernel(tmp_path):
    make_tree(tmp_path, "data.csv", ".env")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("import pandas as pd", id="load"),
        nbformat.v4.new_markdown_cell("# Data overview", id="intro"),
    ]
    nbformat.write(notebook, tmp_path / "analysis.ipynb")
    namespace: dict[str, Any] = {"data": [1, 2], "total": 3}
    ctx = ToolContext(
        workspace=Workspace(tmp_path),
        current_notebook=lambda: "analysis.ipynb",
        namespace=lambda: namespace,
    )
    completer = Completer(lambda: ctx)
    found = await completer.candidates("da")
    assert [c.wire() for c in found] == [
        {"text": "data.csv", "kind": "file", "detail": ""},
        {"text": "var:data", "kind": "var", "detail": "list len 2"},
        {"text": "cell:intro", "kind": "cell", "detail": "#2 markdown · # Data overview"},
    ]
    assert texts(await completer.candidates("")) == [
        "analysis.ipynb",
        "data.csv",
        "cell:load",
        "cell:intro",
        "var:data",
        "var:total",
    ]


# --- the panel answers its front end --------------------------------------------------------


@pytest.fixture
def panel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ChatPanel:
    monkeypatch.setattr(comm, "create_comm", RecordingComm)
    monkeypatch.chdir(tmp_path)
    make_tree(tmp_path, "data.csv", "docs/data-notes.md", ".env")
    return ChatPanel(CopilotSession(), model="offline")


async def test_a_views_query_is_answered_to_that_view_with_its_seq(panel):
    front = Front(panel)
    front.say(kind="complete", query="da", seq=7, view="v1")
    await front.until(lambda: front.completions())
    assert front.completions() == [
        {
            "kind": "completions",
            "seq": 7,
            "view": "v1",
            "items": [
                {"text": "data.csv", "kind": "file", "detail": ""},
                {"text": "docs/data-notes.md", "kind": "file", "detail": ""},
            ],
        }
    ]
    assert front.ops() == [], "a query leaves the transcript alone"


async def test_a_newer_query_replaces_one_still_running(panel, monkeypatch):
    front = Front(panel)
    gate = asyncio.Event()
    real = panel.completer.candidates

    async def slow_first(query: str) -> list[Candidate]:
        if query == "d":
            await gate.wait()
        return await real(query)

    monkeypatch.setattr(panel.completer, "candidates", slow_first)
    first = panel.complete(Complete(query="d", seq=1, view="v"))
    await asyncio.sleep(0)
    second = panel.complete(Complete(query="docs", seq=2, view="v"))
    gate.set()
    assert first is not None and second is not None
    await asyncio.wait([first, second])
    assert first.cancelled()
    assert [(a["seq"], a["items"]) for a in front.completions()] == [
        (2, [{"text": "docs/data-notes.md", "kind": "file", "detail": ""}])
    ]


async def test_a_malformed_query_is_answered_by_no_one_and_a_failure_answers_empty(
    panel, monkeypatch
):
    front = Front(panel)
    front.say(kind="complete", query="da")  # no seq: nobody waits for it
    front.say(kind="complete", query="da", seq="1", view="v")
    assert front.completions() == [] and front.kinds() == ["error", "error"]

    async def broken(query: str) -> list[Candidate]:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(panel.completer, "candidates", broken)
    front.say(kind="complete", query="da", seq=3, view="v")
    await front.until(lambda: front.completions())
    assert front.completions() == [
        {
            "kind": "completions",
            "seq": 3,
            "view": "v",
            "items": [],
            "error": "RuntimeError: disk on fire",
        }
    ]


# --- the front end finds the reference being typed as references.py does ------------------

TOKENS = """
const fs = require("fs");
const vm = require("vm");
const context = vm.createContext({});
vm.runInContext(fs.readFileSync(process.argv[1], "utf8") + ";globalThis.T = REF_TOKEN;", context);
const texts = JSON.parse(fs.readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(texts.map((t) => { const m = context.T.exec(t); return m ? m[1] : null; })));
"""


def test_the_front_end_sees_a_reference_where_references_py_reads_one(tmp_path):
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("node is missing: CI must run the panel's JS tests")
        pytest.skip("needs node")
    cases = {
        "@da": "da",
        "look at @src/data.csv": "src/data.csv",
        "(@cell:#3": "cell:#3",
        "@var:df.col": "var:df.col",
        "@données": "données",
        "mail me@example": None,  # an address, not a reference
        "a/@x": None,
        "@@x": None,
        "`@dataclass": None,  # the front end also skips an odd number of backticks
        "@da b": None,  # the caret has left the reference
        "@": "",
    }
    done = subprocess.run(
        [node, "-e", TOKENS, str(COMPLETE_JS)],
        input=json.dumps(list(cases)),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert dict(zip(cases, json.loads(done.stdout), strict=True)) == cases
    ws = Workspace(tmp_path)
    make_tree(tmp_path, "da", "données")  # a bare word is a reference when such a file exists
    for text, token in cases.items():  # what references.py reads there, once the word is done
        if token and not text.startswith("`"):
            (found,) = find_references(text + " ", ws)
            assert found.text == token
