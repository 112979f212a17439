"""The model form in a real kernel: a key sent in the panel's message reaches the next request of
a cell and of the panel, and appears nowhere else: not in what the kernel sent the page (outputs,
widget state, comm messages), the notebook, the saved conversation or the model's requests."""

from __future__ import annotations

import json
import queue
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest

from copilot_nb.testing import fail, reply
from tests.kernel_session import KernelSession
from tests.patience import patient

pytestmark = pytest.mark.kernel

KEY = "sk-form-in-a-kernel-5e4d3c2b1a09"


class Page:
    """Plays the page: sends the panel's messages, keeps everything the kernel published."""

    def __init__(self, kernel: KernelSession) -> None:
        self.kernel = kernel
        self.seen: list[dict[str, Any]] = []

    def run(self, code: str) -> Any:
        msg_id = self.kernel.send(code)
        done = self.kernel.collect(msg_id)
        self.seen.extend(done.messages)
        assert done.status == "ok", done.reply["content"]
        return done

    def say(self, model_id: str, **content: Any) -> None:
        data = {"method": "custom", "content": content}
        client = self.kernel.client
        client.shell_channel.send(
            client.session.msg("comm_msg", {"comm_id": model_id, "data": data})
        )

    def until(self, model_id: str, wanted: Any, timeout: float = 30) -> dict[str, Any]:
        """The first custom message of the widget that `wanted` accepts; every message kept."""
        deadline = time.monotonic() + patient(timeout)
        while time.monotonic() < deadline:
            try:
                message = self.kernel.client.get_iopub_msg(timeout=0.5)
            except queue.Empty:
                continue
            self.seen.append(message)
            content = message["content"]
            if message["msg_type"] == "comm_msg" and content.get("comm_id") == model_id:
                data = content["data"].get("content")
                if wanted(data):
                    return data  # type: ignore[no-any-return]
        raise TimeoutError("the panel did not answer")


def test_a_key_saved_through_the_panel_reaches_the_next_requests_and_nothing_else(
    serve, tmp_path: Path
):
    def respond(request: Any) -> Any:
        if request.headers.get("Authorization") != f"Bearer {KEY}":
            return fail(401, "Incorrect API key provided.")
        return reply("Answered with the saved key.")

    server = serve(responder=respond)
    config = tmp_path / "config"
    notebook = tmp_path / "analysis.ipynb"
    kernel = KernelSession(
        tmp_path,
        {
            "OPENAI_BASE_URL": server.url,
            "COPILOT_NB_CONFIG_DIR": str(config),
            "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "lab-settings"),
            "JPY_SESSION_NAME": str(notebook),
        },
    )
    page = Page(kernel)
    try:
        opened = page.run(
            "import copilot_nb\npanel = copilot_nb.chat(sidebar=False)\nprint(panel.widget.model_id)"
        )
        model_id = opened.stdout.strip().splitlines()[-1]  # after the "no provider" line
        page.say(
            model_id, kind="form", do="save", provider="openai", model="scripted", key=KEY, view="v"
        )
        saved = page.until(
            model_id, lambda d: isinstance(d, dict) and d.get("kind") == "form" and d["outcome"]
        )
        assert saved["outcome"] == "ok", saved["said"]
        assert saved["chosen"] == {"provider": "openai", "model": "scripted"}

        cell = page.run("%%copilot\nsay hello")
        assert "Answered with the saved key." in json.dumps(cell.final_displays("text/html"))
        page.say(model_id, kind="prompt", text="and from the panel?")
        ended = {"op": "end", "status": "done"}
        page.until(
            model_id, lambda d: isinstance(d, dict) and d.get("kind") == "ops" and ended in d["ops"]
        )
        assert [r.headers["Authorization"] for r in server.requests] == [f"Bearer {KEY}"] * 2

        state = page.run(
            "import json, ipywidgets\n"
            "print(json.dumps({i: w.get_state() for i, w in "
            "ipywidgets.Widget.widgets.items()}, default=str))"
        )
        model = page.run("%copilot model")
        assert "openai:scripted" in model.stdout, "the form switched it as %copilot model does"
    finally:
        kernel.close()

    assert KEY not in json.dumps(page.seen, default=str), "nothing the kernel sent holds it"
    assert KEY not in state.stdout, "no widget's state (what a notebook saves) holds it"
    notebook_json = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(outputs=[])],
        metadata={"widgets": {"application/vnd.jupyter.widget-state+json": state.stdout}},
    )
    nbformat.write(notebook_json, notebook)
    assert KEY not in notebook.read_text()
    conversation = tmp_path / "analysis.copilot-chat.jsonl"
    assert conversation.exists() and "and from the panel?" in conversation.read_text()
    for path in [*tmp_path.rglob("*")]:
        if path.is_file() and path.name != "keys.json":
            assert KEY.encode() not in path.read_bytes(), f"{path.name} holds the key"
    assert KEY in (config / "keys.json").read_text()
    for request in server.requests:
        assert KEY not in json.dumps(request.body), "the model is never told the key"
