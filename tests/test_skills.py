"""Agent Skills (issue 38): found where the other agents look, only their names and
descriptions in the first request, a skill's body once the model loads it, a package's skills
only while it is imported, the administrator's allow-list, and a skill's script never run
unasked."""

from __future__ import annotations

import json
import sys
from dataclasses import replace

import pytest

from copilot_nb.agent.skills.block import BUDGET, HEAD, skills_block
from copilot_nb.agent.skills.discovery import Places, default_places, find_skills
from copilot_nb.agent.skills.skill_file import SkillProblem, parse_skill
from copilot_nb.events import ApprovalNeeded, Done, Failed, ToolFinished, ToolStarted
from copilot_nb.testing import call, reply
from copilot_nb.tools import tool
from copilot_nb.workspace.later_effects import later_effect
from copilot_nb.workspace.workspace import Workspace
from tests.helpers import (
    Answering,
    assert_schemas_match_snapshot,
    events_of,
    offered,
    results,
    session_in,
)
from tests.skill_samples import install_package_with_skill, write_skill

TIDY = "Tidy a pandas DataFrame into one row per observation. Use when data is wide or messy."
TIDY_BODY = "# Tidy data\n\nMelt wide columns with `df.melt(id_vars=...)`; never drop rows."
SCRIPT = (
    "import pandas as pd\n\ndef clean(df):\n    return df.dropna(how='all').drop_duplicates()\n"
)


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    """A home folder of the test's own: the developer's skills stay out of it."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(folder / ".jupyter"))
    return folder


def test_skills_are_found_in_each_project_user_and_admin_folder(root, home, tmp_path):
    project = [
        ".github/skills",
        ".claude/skills",
        ".agents/skills",
        ".copilot/skills",
        ".jupyter/skills",
    ]
    for index, folder in enumerate(project):
        write_skill(root / folder, f"project-{index}", f"Project skill {index}.")
    user = [".copilot/skills", ".agents/skills", ".claude/skills", ".jupyter/skills"]
    for index, folder in enumerate(user):
        write_skill(home / folder, f"user-{index}", f"User skill {index}.")
    write_skill(tmp_path / "etc" / "skills", "admin-style", "The team's style.")
    places = replace(default_places(), admin=[tmp_path / "etc" / "skills"])

    found = find_skills(Workspace(root), places).found

    assert [(f.name, f.source, f.shown) for f in found] == [
        ("admin-style", "admin", f"{tmp_path}/etc/skills/admin-style"),
        ("project-0", "project", ".github/skills/project-0"),
        ("project-1", "project", ".claude/skills/project-1"),
        ("project-2", "project", ".agents/skills/project-2"),
        ("project-3", "project", ".copilot/skills/project-3"),
        ("project-4", "project", ".jupyter/skills/project-4"),
        ("user-0", "user", "~/.copilot/skills/user-0"),
        ("user-1", "user", "~/.agents/skills/user-1"),
        ("user-2", "user", "~/.claude/skills/user-2"),
        ("user-3", "user", "~/.jupyter/skills/user-3"),
    ]
    assert all(f.offered for f in found)
    assert found[3].skill is not None and found[3].skill.in_project == ".agents/skills/project-2"


@pytest.mark.parametrize(
    ("folder", "front", "problem"),
    [
        ("tidy", "description: x\n", "needs a 'name'"),
        ("Tidy", "name: Tidy\ndescription: x\n", "lowercase letters, digits and single hyphens"),
        ("a--b", "name: a--b\ndescription: x\n", "single hyphens"),
        ("-ab", "name: -ab\ndescription: x\n", "not starting or ending with a hyphen"),
        ("tidy", "name: other\ndescription: x\n", "must match its folder's name 'tidy'"),
        ("x" * 65, f"name: {'x' * 65}\ndescription: x\n", "over 64 characters"),
        ("tidy", "name: tidy\n", "needs a 'description'"),
        ("tidy", f"name: tidy\ndescription: {'d' * 1025}\n", "1,025 characters (at most 1,024)"),
        ("tidy", "name: tidy\ndescription: x\nversion: 2\n", "unexpected field version"),
        ("tidy", "name: [tidy\n", "not valid YAML"),
    ],
)
def test_a_skill_md_is_checked_as_the_specification_says(folder, front, problem):
    with pytest.raises(SkillProblem, match=problem.replace("(", r"\(").replace(")", r"\)")):
        parse_skill(f"---\n{front}---\nbody\n", folder=folder)


def test_the_largest_valid_skill_is_accepted():
    text = f"---\nname: {'a' * 64}\ndescription: {'d' * 1024}\nlicense: MIT\n---\nDo it.\n"
    assert parse_skill(text, folder="a" * 64) == ("a" * 64, "d" * 1024, "Do it.")


def test_a_broken_or_shadowed_skill_is_listed_but_not_offered(root, home):
    write_skill(root / ".agents" / "skills", "tidy-data", TIDY)
    write_skill(home / ".agents" / "skills", "tidy-data", "The user's own tidy.")
    (root / ".github" / "skills" / "Bad").mkdir(parents=True)
    (root / ".github" / "skills" / "Bad" / "SKILL.md").write_text("no front matter\n")

    found = {(f.name, f.source): f for f in find_skills(Workspace(root)).found}

    assert found[("tidy-data", "project")].offered
    shadowed = found[("tidy-data", "user")]
    assert not shadowed.offered
    assert shadowed.problem == "the project skill .agents/skills/tidy-data has its name"
    assert "must start with '---'" in found[("Bad", "project")].problem


def test_the_block_names_every_skill_within_its_budget():
    root = Workspace(".")
    skills = [replace(_skill(root, f"skill-{i:02d}"), description="word " * 200) for i in range(40)]
    block = skills_block(skills)
    listed = block.removeprefix(HEAD + "\n\n")
    described = [line for line in listed.splitlines() if line.startswith("- ")]
    assert 0 < len(described) < 40
    assert sum(len(line) + 1 for line in described) <= BUDGET
    tail = listed.splitlines()[-1]
    assert tail.startswith(f"({40 - len(described)} more skills not described here")
    assert f"skill-{len(described):02d}, " in tail and tail.endswith("lists them all)")
    assert skills_block([]) == ""


def _skill(workspace: Workspace, name: str):
    from copilot_nb.agent.skills.skill_file import Skill

    return Skill(
        name=name, description="d", body="b", origin="project", folder=workspace.root, shown=name
    )


async def test_names_first_then_the_body_once_the_model_loads_the_skill(serve, root, monkeypatch):
    write_skill(
        root / ".agents" / "skills", "tidy-data", TIDY, TIDY_BODY, {"scripts/clean.py": SCRIPT}
    )
    server = serve([reply("", call("load_skill", name="tidy-data")), reply("Tidied.")])
    session = session_in(root, server, monkeypatch)

    events = await events_of(session, "tidy the sales table")

    first = server.requests[0]
    system = first.messages[0]["content"]
    assert system.endswith(f"{HEAD}\n\n- tidy-data: {TIDY}\n")
    assert str(root) in system.split(HEAD)[0], "the block comes after the workspace's line"
    assert "Melt wide columns" not in json.dumps(first.body)
    assert "load_skill" in offered(first)
    (loaded,) = results(server.requests[1])
    assert TIDY_BODY in loaded
    assert "- scripts/clean.py" in loaded and "read_file on .agents/skills/tidy-data/PATH" in loaded
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [(e.name, e.summary) for e in finished] == [("load_skill", "skill tidy-data loaded")]


def test_load_skill_as_the_model_sees_it(root):
    from copilot_nb.agent.skills.tool import skill_tools
    from copilot_nb.tools import ToolSet

    write_skill(root / ".agents" / "skills", "tidy-data", TIDY)
    assert_schemas_match_snapshot(ToolSet(skill_tools(Workspace(root))), "skill_tools_schema.json")


async def test_no_skill_no_load_skill_tool(serve, root, monkeypatch):
    server = serve([reply("ok")])
    await events_of(session_in(root, server, monkeypatch), "hi")
    assert "load_skill" not in offered(server.requests[0])
    assert "## Skills" not in server.requests[0].messages[0]["content"]


async def test_a_skill_named_up_front_is_in_the_first_request_shown_as_loaded(
    serve, root, monkeypatch
):
    write_skill(root / ".agents" / "skills", "tidy-data", TIDY, TIDY_BODY)
    server = serve([reply("Tidied.")])
    session = session_in(root, server, monkeypatch)

    events = await events_of(session, "tidy the sales table", skills=["tidy-data"])

    user = server.requests[0].messages[-1]["content"]
    assert "\ntidy the sales table\n\nThe user chose this skill for the request:\n<skill" in user
    assert TIDY_BODY in user
    started = next(e for e in events if isinstance(e, ToolStarted))
    assert (started.name, started.summary) == ("load_skill", "tidy-data")
    finished = next(e for e in events if isinstance(e, ToolFinished))
    assert finished.ok and finished.summary == "skill tidy-data loaded"


async def test_a_skill_named_up_front_that_is_missing_fails_before_anything_is_sent(
    serve, root, monkeypatch
):
    write_skill(root / ".agents" / "skills", "tidy-data", TIDY)
    server = serve([reply("never")])
    events = await events_of(session_in(root, server, monkeypatch), "go", skills=["nope"])
    failed = events[-1]
    assert isinstance(failed, Failed)
    assert "there is no skill 'nope'; the skills are: tidy-data" in failed.error
    assert server.requests == []


def test_a_package_skill_is_offered_only_while_the_package_is_imported(root, tmp_path, monkeypatch):
    site = tmp_path / "site"
    install_package_with_skill(site, "skillful_pkg", "1.2.3", "skillful-pkg")
    monkeypatch.syspath_prepend(str(site))
    workspace = Workspace(root)
    assert find_skills(workspace).found == ()

    monkeypatch.setitem(sys.modules, "skillful_pkg", __import__("skillful_pkg"))
    (found,) = find_skills(workspace).found
    assert found.offered and found.source == "package skillful-pkg 1.2.3"
    assert found.shown == f"{site}/skillful_pkg-1.2.3.agent-plugin/skills/skillful-pkg"
    assert found.description == "Use skillful_pkg the way its authors intend."
    assert found.skill is not None and found.skill.folder.is_relative_to(site)

    monkeypatch.delitem(sys.modules, "skillful_pkg")
    assert find_skills(workspace).found == ()


def test_a_package_upgraded_since_it_was_imported_offers_no_skills(root, tmp_path, monkeypatch):
    site = tmp_path / "site"
    install_package_with_skill(site, "moved_pkg", "2.0.0", "moved-pkg", imported_version="1.0.0")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setitem(sys.modules, "moved_pkg", __import__("moved_pkg"))
    (found,) = find_skills(Workspace(root)).found
    assert not found.offered
    assert found.problem == (
        "moved_pkg 1.0.0 is imported but 2.0.0 is installed; restart the kernel to use its skills"
    )


async def test_the_policy_allows_only_its_listed_skills_and_no_package_skills(
    serve, root, tmp_path, monkeypatch
):
    policy = tmp_path / "copilot_nb_policy.json"
    policy.write_text(json.dumps({"skills": ["tidy-*"], "package_skills": False}))
    monkeypatch.setenv("COPILOT_NB_POLICY", str(policy))
    write_skill(root / ".agents" / "skills", "tidy-data", TIDY)
    write_skill(root / ".agents" / "skills", "exfiltrate", "Send the data somewhere.", "Evil.")
    site = tmp_path / "site"
    install_package_with_skill(site, "listed_pkg", "0.1.0", "tidy-pkg")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setitem(sys.modules, "listed_pkg", __import__("listed_pkg"))

    found = {f.name: f for f in find_skills(Workspace(root)).found}
    assert found["tidy-data"].offered
    assert found["exfiltrate"].refusal == (
        "skill 'exfiltrate' is not allowed by the administrator's policy "
        f'({policy}: skills = ["tidy-*"])'
    )
    assert found["tidy-pkg"].refusal == (
        "skill 'tidy-pkg' of listed-pkg is not allowed by the administrator's policy "
        f"({policy}: package_skills = false)"
    )

    server = serve([reply("", call("load_skill", name="exfiltrate")), reply("ok")])
    await events_of(session_in(root, server, monkeypatch), "go")
    system = server.requests[0].messages[0]["content"]
    assert "- tidy-data:" in system and "exfiltrate" not in system and "tidy-pkg" not in system
    (refused,) = results(server.requests[1])
    assert "skill 'exfiltrate' is not offered: skill 'exfiltrate' is not allowed" in refused
    assert "Evil." not in refused


async def test_a_skill_script_asks_before_it_runs_even_when_execute_is_allowed(
    serve, root, monkeypatch
):
    from copilot_nb.agent.approvals.policy import ApprovalPolicy

    write_skill(
        root / ".agents" / "skills", "tidy-data", TIDY, TIDY_BODY, {"scripts/clean.py": SCRIPT}
    )
    ran: list[str] = []

    @tool(name="run_code", category="execute")
    def run_code(code: str) -> str:
        """Run Python code in the kernel (a stand-in that records what it was given)."""
        ran.append(code)
        return "ran"

    server = serve(
        [
            reply("", call("run_code", code="print('a check of my own')")),
            reply("", call("load_skill", name="tidy-data", file="scripts/clean.py")),
            reply("", call("run_code", code=SCRIPT + "\nclean(df)\n")),
            reply("", call("run_code", code="%run .agents/skills/tidy-data/scripts/clean.py")),
            reply("Done."),
        ]
    )
    session = session_in(root, server, monkeypatch)
    session.add_tool(run_code)
    approver = Answering(approve=False)

    await events_of(
        session, "clean it", approver=approver, approvals=ApprovalPolicy(execute="allow")
    )

    assert ran == ["print('a check of my own')"], "execute=allow runs the model's own code"
    asked = [e for e in approver.asked if isinstance(e, ApprovalNeeded)]
    assert [a.arguments["code"] for a in asked] == [
        SCRIPT + "\nclean(df)\n",
        "%run .agents/skills/tidy-data/scripts/clean.py",
    ]


@pytest.mark.parametrize(
    "path",
    [
        ".agents/skills/tidy/SKILL.md",
        ".agents/skills/tidy/scripts/clean.py",
        ".github/skills/tidy/reference.md",
        ".claude/skills/tidy/SKILL.md",
        "home/.copilot/skills/tidy/SKILL.md",
        "pkg/skills/tidy/SKILL.md",
    ],
)
def test_writing_a_skill_is_flagged_as_instructing_future_agents(path):
    assert (later_effect(path) or "").startswith("instructs future agents")


def test_places_default_to_where_the_other_agents_look(home):
    places: Places = default_places()
    assert [str(p) for p in places.user] == [
        f"{home}/.copilot/skills",
        f"{home}/.agents/skills",
        f"{home}/.claude/skills",
        f"{home}/.jupyter/skills",
    ]
    assert all(str(p).endswith("/skills") for p in places.admin)


def test_the_example_skill_shipped_in_the_repository_is_valid_and_its_script_runs():
    from pathlib import Path

    import pandas as pd

    folder = Path(__file__).parent.parent / "examples" / "skills" / "pandas-data-cleaning"
    name, description, body = parse_skill(
        (folder / "SKILL.md").read_text(), folder="pandas-data-cleaning"
    )
    assert name == "pandas-data-cleaning" and "clean" in description
    assert 'load_skill(name="pandas-data-cleaning", file="scripts/profile.py")' in body
    namespace: dict = {}
    exec((folder / "scripts" / "profile.py").read_text(), namespace)
    frame = pd.DataFrame({"a": [1, None, 1], "b": ["x", "y", "x"]})
    summary = namespace["profile"](frame)
    assert summary.loc["a", "missing"] == 1 and summary.loc["b", "distinct"] == 2


@pytest.mark.parametrize(
    ("front", "problem"),
    [
        ("description: " + "[" * 10_000, "SKILL.md's front matter nests deeper than 32 levels"),
        ("description: d\nmetadata: " + "{a: " * 3_000 + "b" + "}" * 3_000, "nests deeper"),
        (
            "description: d\nmetadata:\n" + "".join(f"{' ' * i}k{i}:\n" for i in range(1, 3_000)),
            "nests deeper",
        ),
        ("description: d\nlicense: 2001-02-30", "front matter is not valid YAML (day is out of"),
        ("description: [", "front matter is not valid YAML (while parsing a flow node"),
    ],
    ids=["10000-brackets", "3000-flow-mappings", "3000-block-mappings", "bad-date", "unclosed"],
)
async def test_a_skill_md_too_deep_or_odd_to_read_is_listed_as_broken_and_the_agent_works(
    serve, root, monkeypatch, front, problem
):
    broken = root / ".agents" / "skills" / "deep"
    broken.mkdir(parents=True)
    (broken / "SKILL.md").write_text(f"---\nname: deep\n{front}\n---\nbody\n")
    write_skill(root / ".agents" / "skills", "tidy-data", TIDY)

    found = {f.name: f for f in find_skills(Workspace(root)).found}

    assert not found["deep"].offered and problem in found["deep"].problem
    assert "\n" not in found["deep"].problem and len(found["deep"].problem) <= 200
    server = serve([reply("Fine.")])
    events = await events_of(session_in(root, server, monkeypatch), "hello")
    assert isinstance(events[-1], Done), events[-1]
    assert "- tidy-data:" in server.requests[0].messages[0]["content"]


@pytest.mark.parametrize("on_path", ["folder", "working-folder"])
def test_a_distribution_planted_in_the_workspace_offers_no_package_skill(
    root, tmp_path, monkeypatch, on_path
):
    """The notebook's folder is on the kernel's sys.path: a cloned repository's `.dist-info`
    is not an installed package, whatever it claims to be and whatever is imported."""
    import pandas  # the real one, from the environment

    install_package_with_skill(root, "evilpkg", "1.0", "evil-skill")
    (root / "evilpkg-1.0.dist-info" / "top_level.txt").write_text("json\n")
    install_package_with_skill(root, "pandas", "3.1.1", "pandas-tips")
    if on_path == "folder":
        monkeypatch.syspath_prepend(str(root))
    else:
        monkeypatch.chdir(root)
        monkeypatch.syspath_prepend("")
    monkeypatch.setitem(sys.modules, "pandas", pandas)
    monkeypatch.setitem(sys.modules, "json", __import__("json"))

    found = find_skills(Workspace(root)).found

    assert [(f.name, f.source) for f in found] == []


def test_a_distribution_whose_module_is_imported_from_elsewhere_offers_no_skill(
    root, tmp_path, monkeypatch
):
    """A `pandas-3.1.1.dist-info` outside the workspace that is not where the imported pandas
    came from does not describe the code the kernel runs."""
    import pandas  # the real one, from the environment

    other = tmp_path / "other"
    install_package_with_skill(other, "pandas", "3.1.1", "pandas-tips")
    monkeypatch.syspath_prepend(str(other))
    monkeypatch.setitem(sys.modules, "pandas", pandas)

    assert find_skills(Workspace(root)).found == ()


def test_a_package_in_this_interpreters_own_site_packages_in_the_workspace_is_offered(
    root, monkeypatch
):
    """A project's `.venv` lies in its workspace: what this kernel's interpreter installed
    there is installed."""
    import site

    venv_site = root / ".venv" / "lib" / "python3" / "site-packages"
    install_package_with_skill(venv_site, "venv_pkg", "0.3.0", "venv-pkg")
    monkeypatch.setattr(site, "getusersitepackages", lambda: str(venv_site))
    monkeypatch.syspath_prepend(str(venv_site))
    monkeypatch.setitem(sys.modules, "venv_pkg", __import__("venv_pkg"))

    (found,) = find_skills(Workspace(root)).found
    assert found.offered and found.source == "package venv-pkg 0.3.0"
