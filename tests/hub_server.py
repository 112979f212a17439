"""A real JupyterHub on loopback for the team tests: configurable-http-proxy (from npm), the
local-process spawner, the dummy authenticator, and real Unix users, one server each.

Needs root (the spawner switches to each user) and Node for the proxy. The users' servers run
a small venv that reads this checkout's `.venv` packages, made from the `.venv`'s interpreter,
or from `/usr/bin/python3` of the same version when that one lives under a home no other user
can enter. That
venv's `etc/jupyter` is the servers' environment config folder, where the administrator's
policy goes, as on a real hub. Users are made idempotently and removed afterwards.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx

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
        return (
            f"needs a Python {sys.version_info.major}.{sys.version_info.minor} other users can "
            f"run: this one is under a folder they cannot enter, and {SYSTEM_PYTHON} is another"
        )
    return ""


def users_python() -> Path | None:
    """An interpreter of this Python's version that other users can run: this one, unless it
    lives under a folder they cannot enter (a home), else the system's."""
    real = Path(os.path.realpath(sys.executable))
    if all(os.stat(folder).st_mode & 0o001 for folder in real.parents):
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


def users_venv(folder: Path) -> Path:
    """A venv the users can run that sees this checkout's packages (and copilot_nb, editable)."""
    venv = folder / "users-venv"
    python = users_python()
    assert python is not None, missing()
    subprocess.run([str(python), "-m", "venv", "--without-pip", str(venv)], check=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    packages = sysconfig.get_paths()["purelib"]
    site = venv / "lib" / version / "site-packages"
    (site / "copilot_nb_checkout.pth").write_text(
        f"import site; site.addsitedir({packages!r})\n", encoding="utf-8"
    )
    (venv / "etc" / "jupyter").mkdir(parents=True)
    return venv


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def running_hub(users: list[str], environment: Mapping[str, str]) -> Iterator[dict[str, object]]:
    """Start JupyterHub for these users; yields its URL, folder and the users' venv."""
    folder = Path(tempfile.mkdtemp(prefix="copilot_nb-hub-", dir="/tmp"))
    folder.chmod(0o755)  # the users' servers run the venv inside it
    venv = users_venv(folder)
    port, api_port, hub_port = _free_port(), _free_port(), _free_port()
    data = Path(sysconfig.get_paths()["data"]) / "share" / "jupyter"
    env = {
        "PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "JUPYTER_PATH": str(data),  # JupyterLab's and copilot_nb's front-end extensions
        "JUPYTERLAB_DIR": str(data / "lab"),
        "JUPYTER_CONFIG_PATH": str(Path(sys.prefix) / "etc" / "jupyter"),
        **environment,
    }
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
        shutil.rmtree(folder, ignore_errors=True)


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
