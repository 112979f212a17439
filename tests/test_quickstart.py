"""README's quickstart, followed as written in a fresh clone: `git clone`, `cd`, `make demo` shows
each cell as it runs and leaves the user's own saved conversation alone, and `make lab` prints a
URL where JupyterLab answers with the extension.

The commands come from README's quickstart block, so the two cannot drift. For speed the clone
reuses this checkout's virtualenv (a `.venv` link, and `make -o .venv/.installed-stamp` so make does
not reinstall it); the clone's own Makefile, scripts and package run (`PYTHONPATH`)."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from copilot_nb.agent.conversations.recorder import Recorder, file_for
from copilot_nb.messages import AssistantMessage, UserMessage
from tests.helpers import free_port, wait_for_http, wait_until

pytestmark = [pytest.mark.external, pytest.mark.kernel]

ROOT = Path(__file__).resolve().parents[1]
STAMP = ".venv/.installed-stamp"
TOKEN = "quickstart-token"


def quickstart_commands(readme: str) -> list[str]:
    """The commands of the first `bash` block under README's `## Quickstart`, comments dropped."""
    section = readme.split("\n## Quickstart\n", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```bash\n(.*?)```", section, re.S)
    assert found, "README's quickstart has no bash block"
    lines = (re.sub(r"(^|\s)#.*$", "", line).strip() for line in found.group(1).splitlines())
    return [line for line in lines if line]


def plant_conversation() -> Path:
    """A console conversation of the user's own, in their config folder (from `HOME`)."""
    recorder = Recorder(file_for(None))
    recorder.begin("PLANTED question of the user's own")
    recorder.message(UserMessage(content="PLANTED question of the user's own"))
    recorder.message(AssistantMessage(text="PLANTED answer"))
    recorder.end(model="offline", provider="offline", premium=None)
    return recorder.file.path


def test_readme_quickstart_runs_as_written_in_a_fresh_clone(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "COPILOT_NB_CONFIG_DIR", "COPILOT_NB_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    planted = plant_conversation()
    assert planted.is_relative_to(home / ".config" / "copilot_nb")
    before = planted.read_bytes()

    commands = quickstart_commands((ROOT / "README.md").read_text())
    assert [c.split()[0] for c in commands] == ["git", "cd", "make", "make"], commands
    clone, cd, demo, lab = commands
    env = {**os.environ, "REPO": str(ROOT)}
    subprocess.run(clone, shell=True, cwd=tmp_path, env=env, check=True, timeout=60)
    here = tmp_path / shlex.split(cd)[1]
    (here / ".venv").symlink_to(Path(sys.prefix))
    env["PYTHONPATH"] = str(here)

    def make(command: str) -> str:
        return command.replace("make ", f"make -o {STAMP} ", 1)

    shown = subprocess.run(
        make(demo), shell=True, cwd=here, env=env, capture_output=True, text=True, timeout=150
    )
    said = shown.stdout + shown.stderr
    assert shown.returncode == 0, said[-3000:]
    progress = re.findall(r"\[(\d+)/(\d+)\] In \[", said)
    assert progress == [(str(n), "7") for n in range(1, 8)], said[-3000:]
    assert said.index("Starting a kernel") < said.index("[1/7]")
    assert "hello, notebook" in said
    assert "resumed" not in said and "PLANTED" not in said
    assert planted.read_bytes() == before, "make demo wrote into the user's own conversation"
    assert "make lab" in said

    port = free_port()
    env["LAB_ARGS"] = (
        f"--no-browser --allow-root --ServerApp.ip=127.0.0.1 --ServerApp.port={port} "
        f"--ServerApp.port_retries=0 --IdentityProvider.token={TOKEN} "
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"
    )
    log_path = tmp_path / "lab.log"
    with log_path.open("w") as log:
        server = subprocess.Popen(
            make(lab),
            shell=True,
            cwd=here,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}/lab?token={TOKEN}"
    try:
        printed = f"http://127.0.0.1:{port}/lab?token="  # it masks a token it was given
        wait_until(lambda: printed in log_path.read_text(), 60, what="make lab printing its URL")
        wait_for_http(url, server, log_path, what="make lab", timeout=30)
        page = httpx.get(url, timeout=10).text
        assert '"name": "copilot-nb"' in page or '"name":"copilot-nb"' in page, page[-2000:]
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def test_the_first_install_says_how_long_it_takes_and_shows_pip(tmp_path):
    """`make -n` on a machine with no venv: what the install will print and run, running nothing."""
    planned = subprocess.run(
        ["make", "-n", "--no-print-directory", f"VENV={tmp_path / 'fresh'}", "venv"],
        cwd=ROOT,
        # Under `make test` this runs as a sub-make, which prints "Entering directory" first.
        env={k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    first = planned.splitlines()[0]
    assert first.startswith("echo") and "2-3 minutes the first time" in first, planned
    assert "Node 20" in planned
    install = next(line for line in planned.splitlines() if "install" in line and "-e" in line)
    assert "--quiet" not in install, install
