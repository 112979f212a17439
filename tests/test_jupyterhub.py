"""For a team: a real JupyterHub (configurable-http-proxy, local-process spawner, dummy
authenticator) with two Unix users, each signed in from their own Chromium context. Both ask
copilot_nb in their own notebook and get the loopback model's answer; the administrator's policy
in the servers' environment config folder refuses a provider in the cell, naming the file and
the rule; and what copilot_nb saved for one user cannot be read from the other's kernel.

The hub runs from a checkout whose venv is under a folder the users cannot enter (0700, as a
home on Debian 12 or `mktemp -d`), as many first try `make test`: their servers must get all
they run from the hub's own folder."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from copilot_nb.testing import ScriptedServer, reply
from tests import hub_server
from tests.browser_lab import ARTIFACTS
from tests.hub_packages import Source
from tests.lab_server import (
    CHROMIUM,
    FLAGS,
    LONG,
    OFF_LOOPBACK,
    run_first_cell,
    write_notebook,
    write_settings,
)

pytestmark = [pytest.mark.external, pytest.mark.browser, pytest.mark.kernel]

ALICE, BOB = "cnbhub-alice", "cnbhub-bob"
POLICY = {"providers": ["openai"], "base_urls": ["http://127.0.0.1:*/v1"]}
ISOLATION = f"""\
import os
try:
    open("/home/{BOB}/story.copilot-chat.jsonl").read()
    print("READ bob's conversation")
except PermissionError:
    print("refused: story.copilot-chat.jsonl")
"""


def answer(request: Any) -> Any:
    """The team's model: greets whoever the request names."""
    asked = str(request.messages[-1]["content"])
    who = "alice" if "alice" in asked else "bob" if "bob" in asked else "nobody"
    return reply(f"Hello {who}, from the team's model.")


@pytest.fixture(scope="module")
def closed_source(project_wheel: Path) -> Iterator[Source]:
    """This venv and the project's wheel as seen from a folder only root can enter."""
    closed = Path(tempfile.mkdtemp(prefix="copilot_nb-closed-"))
    assert mode(closed) == 0o700
    (closed / "venv").symlink_to(sys.prefix, target_is_directory=True)
    wheel = closed / project_wheel.name
    shutil.copy(project_wheel, wheel)
    try:
        yield Source(prefix=closed / "venv", wheel=wheel)
    finally:
        shutil.rmtree(closed)


@pytest.fixture(scope="module")
def hub(closed_source: Source) -> Iterator[dict[str, Any]]:
    why = hub_server.missing() or ("" if CHROMIUM.exists() else f"needs {CHROMIUM}")
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"the JupyterHub test cannot run: {why}")
        pytest.skip(why)
    model = ScriptedServer(responder=answer).start()
    users = {name: hub_server.ensure_user(name) for name in (ALICE, BOB)}
    environment = {
        "COPILOT_NB_MODEL": "openai:scripted",
        "OPENAI_BASE_URL": model.url,
        "OPENAI_API_KEY": "team-key",
    }
    try:
        with hub_server.running_hub(list(users), environment, closed_source) as running:
            policy = Path(running["venv"]) / "etc" / "jupyter" / "copilot_nb_policy.json"  # type: ignore[arg-type]
            policy.write_text(json.dumps(POLICY), encoding="utf-8")
            policy.chmod(0o644)
            yield {**running, "users": users, "policy": policy, "model": model}
    finally:
        model.stop()
        for name in users:
            hub_server.remove_user(name)


def notebook_for(user: Any, *sources: str) -> None:
    """The user's notebook, and JupyterLab settings the browser tests use (no news, every cell
    in the page), all owned by the user."""
    home = Path(user.pw_dir)
    write_notebook(home / "story.ipynb", *sources)
    write_settings(home / ".jupyter" / "lab" / "user-settings")
    for path in [home / "story.ipynb", *home.joinpath(".jupyter").rglob("*"), home / ".jupyter"]:
        os.chown(path, user.pw_uid, user.pw_gid)


def sign_in(browser: Any, hub: dict[str, Any], name: str, outside: list[str]) -> Any:
    """A context of its own (its own cookies), signed in; the hub is spawning the user's server
    when this returns, so both users' servers start while the first one's page is used. The
    spawn's page goes on to the user's notebook itself (JupyterLab loads once, not twice)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.route(OFF_LOOPBACK, lambda route: (outside.append(route.request.url), route.abort()))
    page = context.new_page()
    page.set_default_timeout(LONG)
    spawn = "/hub/spawn?" + urlencode({"next": f"/user/{name}/lab/tree/story.ipynb?reset"})
    page.goto(f"{hub['base']}/hub/login?" + urlencode({"next": spawn}))
    page.fill("input[name=username]", name)
    page.fill("input[name=password]", "any")
    page.click("#login_submit")
    spawning = re.compile(f"/(hub/spawn-pending|user)/{re.escape(name)}([/?]|$)")
    page.wait_for_url(spawning, timeout=120_000)
    return page


def open_story(page: Any, name: str) -> Any:
    """The signed-in user's notebook, once their server is up and JupyterLab has loaded it."""
    page.wait_for_url(f"**/user/{name}/lab/tree/story.ipynb**", timeout=120_000)  # the spawn
    page.wait_for_selector(".jp-Notebook .jp-Cell .cm-content")
    settle(page)
    return page


def settle(page: Any) -> None:
    """Until the notebook's Python kernel is idle. A kernel chooser JupyterLab may show while the
    session starts is answered with its choice (Python 3); any other dialog fails the test."""
    deadline = time.monotonic() + LONG / 1000
    ready = page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")
    kernel = page.locator(".jp-Toolbar-kernelName", has_text="Python")
    while time.monotonic() < deadline:
        dialog = page.locator(".jp-Dialog")
        if dialog.count():
            text = dialog.inner_text()
            if "Select Kernel" not in text:
                ARTIFACTS.mkdir(exist_ok=True)
                page.screenshot(path=str(ARTIFACTS / "jupyterhub-dialog.png"))
                raise AssertionError(f"JupyterLab showed a dialog: {text}")
            dialog.locator(".jp-mod-accept").click()
        elif ready.count() and kernel.count():
            return
        page.wait_for_timeout(100)
    raise TimeoutError("the notebook's kernel did not become idle")


def run_cell(page: Any, index: int, wait_for: str) -> str:
    """Run cell `index` (0 first) and wait until its output shows `wait_for`; its output text."""
    settle(page)
    if index == 0:
        run_first_cell(page)
    else:
        cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
        cell.locator(".cm-content").click()
        page.keyboard.press("Shift+Enter")
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    if not wait_for:  # a cell with no output: until its prompt shows its execution count
        cell.locator(".jp-InputPrompt").filter(has_text=re.compile(r"\[\d+\]")).wait_for()
        return ""
    output = cell.locator(".jp-OutputArea")
    output.filter(has_text=wait_for).wait_for()
    return str(output.inner_text())


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_folder_that_keeps_other_users_out_is_named() -> None:
    with tempfile.TemporaryDirectory(dir="/tmp") as made:  # not pytest's folder, which is 0700
        top = Path(made)
        top.chmod(0o755)
        python = top / "home" / "clone" / ".venv" / "bin" / "python"
        python.parent.mkdir(parents=True)
        assert hub_server.closed_folder(python) is None
        (top / "home").chmod(0o700)
        assert hub_server.closed_folder(python) == top / "home"


def test_two_users_on_a_hub_with_a_policy(hub):
    from playwright.sync_api import sync_playwright

    alice, bob = hub["users"][ALICE], hub["users"][BOB]
    notebook_for(alice, "%load_ext copilot_nb", "%%copilot\nI am alice", ISOLATION)
    notebook_for(bob, "%load_ext copilot_nb", "%%copilot\nI am bob", "%copilot model anthropic:x")
    outside: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        try:
            alices = sign_in(browser, hub, ALICE, outside)
            bobs = sign_in(browser, hub, BOB, outside)
            open_story(alices, ALICE)
            run_cell(alices, 0, "")
            assert "Hello alice, from the team's model." in run_cell(alices, 1, "Hello alice")

            open_story(bobs, BOB)
            run_cell(bobs, 0, "")
            assert "Hello bob, from the team's model." in run_cell(bobs, 1, "Hello bob")
            refused = run_cell(bobs, 2, "not allowed")
            assert (
                "provider 'anthropic' is not allowed by the administrator's policy "
                f'({hub["policy"]}: providers = ["openai"])'
            ) in refused

            isolation = run_cell(alices, 2, "story.copilot-chat.jsonl")
            # Alice's sign-in does not open Bob's server either
            bobs_file = alices.request.get(f"{hub['base']}/user/{BOB}/api/contents/story.ipynb")
            assert bobs_file.status != 200 and "I am bob" not in bobs_file.text()
        finally:
            browser.close()
    assert not outside, f"the pages asked for URLs off loopback: {outside}"

    # What copilot_nb saved is each user's own, and owner-only
    for user in (alice, bob):
        saved = Path(user.pw_dir) / "story.copilot-chat.jsonl"
        assert saved.stat().st_uid == user.pw_uid and mode(saved) == 0o600
    assert mode(Path(bob.pw_dir)) & 0o005, "the home itself is readable by others here"
    assert "refused: story.copilot-chat.jsonl" in isolation
    assert "READ" not in isolation
