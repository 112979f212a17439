"""A real JupyterHub on loopback for the team tests: configurable-http-proxy (from npm), the
local-process spawner, the dummy authenticator, and real Unix users, one server each.

Needs root (the spawner switches to each user) and Node for the proxy. The users' servers run
a venv of their own in the hub's folder (`hub_packages`): copies of the installed packages they
need and the project's wheel, so it works when the checkout is under a folder no other user can
enter. Its interpreter is the `.venv`'s, or `/usr/bin/python3` of the same version when that one
lives under such a folder. That venv's `etc/jupyter` is the servers' environment config folder,
where the administrator's policy goes, as on a real hub. Users are made idempotently and removed
afterwards.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.helpers import free_port
from tests.hub_packages import Source, install

ROOT = Path(__file__).resolve().parent.parent
PROXY_DIR = ROOT / "build" / "hub-proxy"
PROXY = PROXY_DIR / "node_modules" / ".bin" / "configurable-http-proxy"
PROXY_PACKAGE = "configurable-http-proxy@4"
SYSTEM_PYTHON = Path("/usr/bin/python3")


def missing() -> str:
    """Why a hub cannot run here, or ''."""
    if os.geteuid() != 0:
        return "needs root: the local-process spawner starts each user's server as that user"
    if shutil.which("npm") is None or shutil.which("node") is None:
        return "needs Node and npm for configurable-http-proxy"
    if shutil.which("useradd") is None:
        return "needs useradd"
    if users_python() is None:
        real = Path(os.path.realpath(sys.executable))
        return (
            f"needs a Python {sys.version_info.major}.{sys.version_info.minor} other users can "
            f"run: {real} is under {closed_folder(real)}, which they cannot enter, and "
            f"{SYSTEM_PYTHON} is missing or another version: `chmod o+x` that folder, or make "
            f"the .venv from a Python outside it (`make venv PYTHON=...`)"
        )
    return ""


def closed_folder(path: Path) -> Path | None:
    """The first folder above `path` that other users cannot enter, or None."""
    for folder in reversed(path.parents):
        if not os.stat(folder).st_mode & 0o001:
            return folder
    return None


def users_python() -> Path | None:
    """An interpreter of this Python's version that other users can run: this one, unless it
    lives under a folder they cannot enter (a home), else the system's."""
    real = Path(os.path.realpath(sys.executable))
    if closed_folder(real) is None:
        return real
    if SYSTEM_PYTHON.exists():
        version = subprocess.run(
            [str(SYSTEM_PYTHON), "-c", "import sys; print(sys.version_info[:2])"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        if version == str(tuple(sys.version_info[:2])):
            return SYSTEM_PYTHON
    return None


def ensure_proxy() -> Path:
    """configurable-http-proxy in build/ (as `make` installs it), installed now if missing."""
    if not PROXY.exists():
        subprocess.run(
            [
                "npm",
                "install",
                "--prefix",
                str(PROXY_DIR),
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                PROXY_PACKAGE,
            ],
            check=True,
            capture_output=True,
        )
    return PROXY


def ensure_user(name: str) -> pwd.struct_passwd:
    """A Unix user with an empty home (made if missing, its home emptied if it exists)."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", name], check=True)
        entry = pwd.getpwnam(name)
    home = Path(entry.pw_dir)
    for child in home.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
    return entry


def remove_user(name: str) -> None:
    subprocess.run(["userdel", "--remove", name], check=False, capture_output=True)


def users_venv(folder: Path, source: Source) -> Path:
    """A venv the users can run, holding its own copies of what their servers need."""
    venv = folder / "users-venv"
    python = users_python()
    assert python is not None, missing()
    subprocess.run([str(python), "-m", "venv", "--without-pip", str(venv)], check=True)
    install(source, venv)
    (venv / "etc" / "jupyter").mkdir(parents=True, exist_ok=True)
    return venv


def check_users_can_run(venv: Path, user: str) -> None:
    """Fail now, with the reason, if `user` cannot import what their server runs, rather than
    after the spawn's timeout in the browser."""
    run = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import jupyterhub.singleuser, jupyterlab, copilot_nb",
        ],
        user=user,
        cwd="/",
        env={"PATH": f"{venv / 'bin'}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    if run.returncode:
        raise RuntimeError(f"{user} cannot run the users' venv {venv}:\n{run.stderr[-2000:]}")


@contextmanager
def _hub_folder() -> Iterator[Path]:
    """The hub's own folder, which the users can enter (their servers run the venv inside it)."""
    folder = Path(tempfile.mkdtemp(prefix="copilot_nb-hub-", dir="/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def running_hub(
    users: list[str], environment: Mapping[str, str], source: Source
) -> Iterator[dict[str, object]]:
    """Start JupyterHub for these users, their servers running what `source` holds; yields its
    URL, folder and the users' venv."""
    with _hub_folder() as folder:
        venv = users_venv(folder, source)
        check_users_can_run(venv, users[0])
        port, api_port, hub_port = free_port(), free_port(), free_port()
        # JupyterLab, the front-end extensions and the servers' config come from the venv's own prefix
        env = {"PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin", **environment}
        config = folder / "jupyterhub_config.py"
        config.write_text(
            "\n".join(
                [
                    f"c.JupyterHub.bind_url = 'http://127.0.0.1:{port}'",
                    "c.JupyterHub.hub_ip = '127.0.0.1'",
                    f"c.JupyterHub.hub_port = {hub_port}",
                    f"c.ConfigurableHTTPProxy.api_url = 'http://127.0.0.1:{api_port}'",
                    f"c.ConfigurableHTTPProxy.command = [{str(ensure_proxy())!r}]",
                    f"c.JupyterHub.db_url = 'sqlite:///{folder / 'hub.sqlite'}'",
                    f"c.JupyterHub.cookie_secret_file = {str(folder / 'cookie_secret')!r}",
                    f"c.JupyterHub.pid_file = {str(folder / 'hub.pid')!r}",
                    "c.JupyterHub.authenticator_class = 'dummy'",
                    f"c.Authenticator.allowed_users = {set(users)!r}",
                    "c.JupyterHub.spawner_class = 'localprocess'",
                    f"c.Spawner.cmd = [{str(venv / 'bin' / 'python')!r}, '-m', 'jupyterhub.singleuser']",
                    "c.Spawner.default_url = '/lab'",
                    "c.Spawner.args = ['--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate',"
                    " '--LabApp.extension_manager=readonly']",
                    "c.Spawner.notebook_dir = '~'",
                    "c.Spawner.start_timeout = 90",
                    "c.Spawner.http_timeout = 90",
                    f"c.Spawner.environment = {env!r}",
                    "c.JupyterHub.cleanup_servers = True",
                    "c.JupyterHub.cleanup_proxy = True",
                ]
            ),
            encoding="utf-8",
        )
        log = (folder / "hub.log").open("wb")
        process = subprocess.Popen(
            [str(Path(sys.prefix) / "bin" / "jupyterhub"), "-f", str(config)],
            cwd=folder,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            _wait_for(base, process, folder / "hub.log")
            yield {"base": base, "folder": folder, "venv": venv, "log": folder / "hub.log"}
        finally:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
            log.close()


def _wait_for(base: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterHub exited:\n{log.read_text()[-4000:]}")
        try:
            if httpx.get(f"{base}/hub/api/", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"JupyterHub did not start within 60 s:\n{log.read_text()[-4000:]}")
