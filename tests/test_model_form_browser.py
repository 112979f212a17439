"""The chat panel's model form in a real JupyterLab (headless Chromium): a provider, a model and
a key typed into the form make the next turn work; the key is never shown again, not in the
panel reopened after a reload, not in the page, not in the saved notebook; the provider and
model land in JupyterLab's settings (the Settings Editor shows them), which new kernels read."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from copilot_nb.testing import ScriptedServer, fail, reply
from tests.browser_lab import LONG, Replies, ask, open_notebook, shot
from tests.lab_server import CHROMIUM, TOKEN, run_first_cell, running_lab, show_notebook
from tests.patience import patient

pytestmark = pytest.mark.browser

KEY = "sk-typed-in-the-browser-7a6b5c4d3e2f"
PANEL = ".jp-Notebook .jp-OutputArea .cnb-root"
SHOTS = "settings-form"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, shared_replies: Replies) -> Iterator[dict]:
    """A JupyterLab whose kernels have no key and no model set: only the form can give them."""
    if not CHROMIUM.exists():
        pytest.skip(f"needs Debian's Chromium at {CHROMIUM}")
    home = tmp_path_factory.mktemp("form-lab")
    server = ScriptedServer(responder=shared_replies).start()
    env = {"OPENAI_BASE_URL": server.url, "COPILOT_NB_CONFIG_DIR": str(home / "copilot_nb")}
    try:
        with running_lab(home, env=env) as running:
            yield {**running, "server": server}
    finally:
        server.stop()


def only_with_the_key(text: str) -> Any:
    def step(request: Any) -> Any:
        if request.headers.get("Authorization") != f"Bearer {KEY}":
            return fail(401, "Incorrect API key provided.")
        return reply(text)

    return step


def no_key_in(html: str) -> None:
    for piece in (KEY, KEY[:10], KEY[-10:]):
        assert piece not in html, "a piece of the key is in the page"


def wait_for_file(path: Path, holding: str) -> str:
    deadline = time.monotonic() + patient(20)
    while time.monotonic() < deadline:
        if path.exists() and holding in (text := path.read_text()):
            return text
        time.sleep(0.1)
    raise AssertionError(f"{path.name} never held {holding!r}")


def test_the_form_sets_up_the_model_and_never_shows_the_key_again(page, lab, replies):
    replies.queue.extend([only_with_the_key("Hello from the form's key.")])
    open_notebook(page, lab, "setup.ipynb", "import copilot_nb\ncopilot_nb.chat(sidebar=False)")
    panel = page.locator(PANEL)
    panel.wait_for(timeout=LONG)
    panel.locator(".cnb-setup").click()
    form = panel.locator(".cnb-form")
    form.locator(".cnb-form-provider option").first.wait_for(state="attached")
    form.locator(".cnb-form-provider").select_option("openai")
    form.get_by_text("No key saved for OPENAI_API_KEY").wait_for()
    form.locator(".cnb-form-model").fill("scripted")
    secret = form.locator(".cnb-form-secret")
    assert secret.get_attribute("type") == "password"
    secret.fill(KEY)
    shot(form, f"{SHOTS}/1-filled.png")
    form.locator(".cnb-form-save").click()
    said = form.locator(".cnb-form-said")
    said.filter(has_text="openai:scripted is the model now").wait_for()
    assert "Key saved in" in said.inner_text()
    assert secret.input_value() == "", "the field is emptied as the key is sent"
    form.locator(".cnb-form-key").filter(has_text="Key saved in").wait_for()
    no_key_in(page.content())
    shot(form, f"{SHOTS}/2-saved.png")

    # JupyterLab keeps the provider and model (never the key) for new kernels
    settings = Path(lab["home"]) / "settings" / "copilot-nb" / "model.jupyterlab-settings"
    kept = wait_for_file(settings, "scripted")
    assert '"provider": "openai"' in kept and KEY not in kept

    ask(panel, "hi")
    panel.get_by_text("Hello from the form's key.").wait_for(timeout=LONG)
    assert panel.locator("select.cnb-model").input_value() == "openai:scripted"
    shot(panel, f"{SHOTS}/3-turn.png")

    # a reload: a new view of the panel, whose form says "saved" and holds no key characters
    page.keyboard.press("Control+s")
    show_notebook(page, lab, "setup.ipynb")
    run_first_cell(page)
    panel = page.locator(PANEL)
    panel.wait_for(timeout=LONG)
    panel.locator(".cnb-setup").click()
    form = panel.locator(".cnb-form")
    form.locator(".cnb-form-key").filter(has_text="Key saved in").wait_for()
    assert form.locator(".cnb-form-provider").input_value() == "openai"
    assert form.locator(".cnb-form-model").input_value() == "scripted"
    assert form.locator(".cnb-form-secret").input_value() == ""
    assert "paste a new key" in (
        form.locator(".cnb-form-secret").get_attribute("placeholder") or ""
    )
    no_key_in(page.content())
    assert (
        form.locator(".cnb-form-listed").inner_text() == "1 model listed by openai; or type a name."
    )
    shot(form, f"{SHOTS}/4-reopened.png")
    panel.evaluate("el => { el.style.width = '250px'; }")  # the narrowest sidebar
    assert form.evaluate("el => el.scrollWidth <= el.clientWidth"), "nothing sticks out"
    shot(panel, f"{SHOTS}/5-reopened-250px.png")
    panel.evaluate("el => { el.style.width = ''; }")
    # saved as Ctrl+S saves it, awaited: the notebook with whatever widget state it keeps
    page.evaluate("() => window.jupyterapp.shell.currentWidget.context.save()")
    notebook = lab["root"] / "setup.ipynb"
    assert KEY not in notebook.read_text() and KEY[:10] not in notebook.read_text()
    assert KEY in (Path(lab["home"]) / "copilot_nb" / "keys.json").read_text()
    assert not replies.queue


def test_the_settings_editor_shows_the_model_and_points_to_the_form_for_the_key(page, lab):
    open_lab(page, lab)
    page.evaluate(
        "window.jupyterapp.commands.execute('settingeditor:open', {query: 'copilot_nb: model'})"
    )
    editor = page.locator(".jp-SettingsPanel, .jp-SettingsEditor").first
    editor.wait_for(timeout=LONG)
    page.get_by_text("copilot_nb: model").first.click()
    page.get_by_text("enter a key in the chat panel's Model form", exact=False).first.wait_for()
    shot(page, f"{SHOTS}/6-settings-editor.png")


def open_lab(page: Any, lab: dict) -> None:
    """JupyterLab open, with no notebook needed."""
    page.goto(f"{lab['base']}/lab?reset&token={TOKEN}", timeout=LONG)
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.commands", timeout=LONG)
    page.wait_for_selector(".jp-LabShell", timeout=LONG)
