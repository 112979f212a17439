"""Reviewing the agent's changes in JupyterLab: how soon a change's diff and bar show, and what
a notebook full of pending review costs the user's typing.

Two measurements in JupyterLab and Debian's Chromium, started as the browser tests start them
(`tests/lab_server.py`, every cell in the DOM: the worst case for the review's drawing):

1. apply → diff and bar visible: the kernel sends an `apply` of one review-mode edit over the
   live comm (`tests/review_page.py`, as the agent's tools send it) and records `time.time()`
   when it leaves; in the page a MutationObserver records `Date.now()` when the cell's review
   bar, holding the new line in its diff, enters the DOM, and the frame after it. One machine,
   one clock.
2. Typing in a notebook of 200 cells all under review, against the same notebook with no
   review: keystrokes in a cell of the user's own at the end, each timed in the page from the
   key event to the editor's DOM updated (the work a keystroke costs) and to the next frame.
   The two notebooks alternate in rounds, so drift of the machine falls on both.

Skips, saying so, where /usr/bin/chromium is missing.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.lab_server import (  # noqa: E402
    CHROMIUM,
    FLAGS,
    LONG,
    run_first_cell,
    running_lab,
    show_notebook,
    write_notebook,
)
from tests.review_page import SIGN, edit, in_kernel, send  # noqa: E402

EDITS = 15
CELLS = 200
ROUNDS = 4
KEYS = 60
VISIBLE_TARGET = 100.0  # ms
TYPING_TARGET = 1.10  # under review / without

OBSERVE = """
() => {
  const seen = { dom: {}, frame: {} };
  window.__reviewBench = seen;
  const notebook = window.jupyterapp.shell.currentWidget.content;
  new MutationObserver(records => {
    for (const record of records) {
      for (const node of record.addedNodes) {
        if (!(node instanceof HTMLElement) || !node.classList.contains('cnb-review')) continue;
        const found = /review_marker_(\\d+)/.exec(node.textContent || '');
        if (found && seen.dom[found[1]] === undefined) {
          seen.dom[found[1]] = Date.now();
          requestAnimationFrame(() => { seen.frame[found[1]] = Date.now(); });
        }
      }
    }
  }).observe(notebook.node, { childList: true, subtree: true });
}
"""
TIME_KEYS = """
() => {
  const times = { dom: [], frame: [] };
  window.__typing = times;
  const editor = document.querySelector('.jp-Notebook .jp-Cell:last-child .cm-content');
  let began = null;
  new MutationObserver(() => {
    if (began === null) return;
    const t0 = began;
    began = null;
    times.dom.push(performance.now() - t0);
    requestAnimationFrame(() => setTimeout(() => times.frame.push(performance.now() - t0), 0));
  }).observe(editor, { childList: true, subtree: true, characterData: true });
  window.addEventListener('keydown', event => { began = event.timeStamp; }, true);
}
"""


def _notebook_under_review(path: Path, *, review: bool) -> None:
    """CELLS cells the agent changed (each with its record when `review`), then the user's."""
    import nbformat

    from copilot_nb.tools.review import proof as review_proof

    cells = []
    for n in range(CELLS):
        cell = nbformat.v4.new_code_cell(f"value_{n} = {n} * 3\nvalue_{n} += 1\nvalue_{n}")
        if review:
            before: dict[str, Any] = {
                "cell_type": "code",
                "source": f"value_{n} = {n} * 2\nvalue_{n}",
                "metadata": {},
                "outputs": [],
                "execution_count": None,
            }
            record = {"turn": "t1", "kind": "edit", "before": before, "ran": False}
            record = review_proof.sign_cell(cell.id, record)  # as the kernel signs (same key)
            cell.metadata["copilot_nb"] = {"change": "edited", "review": record}
        cells.append(cell)
    cells.append(nbformat.v4.new_code_cell("mine = 0"))
    write_notebook(path, cells=cells)


def measure_visible(page: Any, lab: dict[str, Any]) -> dict[str, list[float]]:
    """ms from the apply request leaving the kernel to the bar and diff in the DOM / next frame."""
    name = "visible.ipynb"
    path = lab["root"] / name
    write_notebook(path, "%load_ext copilot_nb", *[f"x_{n} = {n}" for n in range(EDITS)])
    show_notebook(page, lab, name)
    run_first_cell(page)
    page.evaluate(OBSERVE)
    send(page, path, "snapshot")  # attached, and the channel warm
    cells = page.evaluate(
        "(() => { const m = window.jupyterapp.shell.currentWidget.content.model;"
        " const out = []; for (let i = 0; i < m.cells.length; i++) out.push(m.cells.get(i).toJSON());"
        " return out; })()"
    )
    sent = []
    for n in range(EDITS):
        change = edit(cells[n + 1], f"x_{n} = {n}\nreview_marker_{n} = True")
        code = SIGN + (
            "import json as _j, time as _t\n"
            "from pathlib import Path as _P\n"
            "from copilot_nb.jupyter.live_channel import live_channel as _lc\n"
            f"_v = await _lc(get_ipython()).find(_P({str(path)!r}))\n"
            f"_c = _signed({{'changes': [_j.loads({json.dumps(change)!r})]}})\n"
            "_sent = _t.time()\n"
            "await _v.request('apply', **_c)\n"
            "print(_sent)"
        )
        sent.append(float(in_kernel(page, code).strip().splitlines()[-1]))
        page.wait_for_timeout(150)  # let the page settle between changes
    page.wait_for_function(f"Object.keys(window.__reviewBench.frame).length >= {EDITS}")
    seen = page.evaluate("window.__reviewBench")
    return {
        "dom": [seen["dom"][str(n)] - sent[n] * 1000 for n in range(EDITS)],
        "frame": [seen["frame"][str(n)] - sent[n] * 1000 for n in range(EDITS)],
    }


def _type_in(page: Any, lab: dict[str, Any], name: str) -> dict[str, list[float]]:
    show_notebook(page, lab, name)
    in_kernel(page, "%load_ext copilot_nb")  # attached (the kernel vouches for its records)
    if name.startswith("review"):
        page.locator(".jp-Notebook .jp-Cell > .cnb-review").nth(CELLS - 1).wait_for(timeout=LONG)
    page.evaluate(TIME_KEYS)
    page.wait_for_timeout(300)
    if page.locator(".jp-Dialog").count():
        raise RuntimeError(f"a dialog: {page.locator('.jp-Dialog').inner_text()}")
    last = page.locator(".jp-Notebook .jp-Cell").last.locator(".cm-content")
    last.click()
    page.keyboard.press("End")
    for _ in range(KEYS):
        page.keyboard.press("a")
        page.wait_for_timeout(30)
    page.wait_for_timeout(200)
    times: dict[str, list[float]] = page.evaluate("window.__typing")
    page.keyboard.press("Control+s")  # saved, so leaving the page asks nothing
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.content.model.dirty")
    return times


def measure_typing(page: Any, lab: dict[str, Any]) -> dict[str, dict[str, list[float]]]:
    """Per notebook (under review / without): ms per keystroke, to the DOM and to the frame."""
    names = {"review": "review_200.ipynb", "plain": "plain_200.ipynb"}
    for key, name in names.items():
        _notebook_under_review(lab["root"] / name, review=key == "review")
    result: dict[str, dict[str, list[float]]] = {k: {"dom": [], "frame": []} for k in names}
    for run in range(ROUNDS + 1):  # the first round warms the page and is not counted
        for key in names if run % 2 else reversed(list(names)):
            times = _type_in(page, lab, names[key])
            if run:
                result[key]["dom"] += times["dom"]
                result[key]["frame"] += times["frame"]
    review_cells = page.locator(".jp-Notebook .jp-Cell > .cnb-review").count()
    result["review"]["shown"] = [float(review_cells)]
    return result


def _row(name: str, measured: str, target: str, ok: bool | None) -> None:
    verdict = "info" if ok is None else ("ok" if ok else "OVER TARGET")
    print(f"{name:<50}  {measured:>22}  {target:>9}  {verdict}")


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} ms (max {max(values):.0f})"


def main() -> dict[str, Any] | None:
    print("\nReviewing the agent's changes in JupyterLab (real server, Debian Chromium)")
    if not CHROMIUM.exists():
        print(f"skipped: needs Debian's Chromium at {CHROMIUM} (apt-get install chromium)")
        return None
    from playwright.sync_api import sync_playwright

    with (
        tempfile.TemporaryDirectory(prefix="bench-review-") as scratch,
        running_lab(Path(scratch)) as lab,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=FLAGS
        )
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.set_default_timeout(LONG)
        began = time.monotonic()
        visible = measure_visible(page, lab)
        print(f"  (apply -> visible: {time.monotonic() - began:.1f} s)", file=sys.stderr)
        began = time.monotonic()
        typing = measure_typing(page, lab)
        print(f"  (typing: {time.monotonic() - began:.1f} s)", file=sys.stderr)
        browser.close()
    _report(visible, typing)
    return {"visible": visible, "typing": typing}


def _report(visible: dict[str, list[float]], typing: dict[str, dict[str, list[float]]]) -> None:
    print(f"{'(verdicts on the median)':<50}  {'median (max)':>22}  {'target':>9}")
    _row(
        f"apply sent -> diff and bar in DOM ({EDITS} edits)",
        _ms(visible["dom"]),
        f"< {VISIBLE_TARGET:.0f} ms",
        statistics.median(visible["dom"]) < VISIBLE_TARGET,
    )
    _row("  apply sent -> next frame painted", _ms(visible["frame"]), "", None)
    review, plain = typing["review"], typing["plain"]
    count = len(review["dom"])
    _row(f"keystroke -> editor updated, {CELLS} under review", _ms(review["dom"]), "", None)
    _row(f"keystroke -> editor updated, no review ({count} keys)", _ms(plain["dom"]), "", None)
    ratio = statistics.median(review["dom"]) / statistics.median(plain["dom"])
    _row(
        "  typing under review / without (medians)",
        f"{ratio:.3f}x",
        f"<= {TYPING_TARGET:.2f}x",
        ratio <= TYPING_TARGET,
    )
    frames = statistics.median(review["frame"]) / statistics.median(plain["frame"])
    _row("keystroke -> next frame, under review", _ms(review["frame"]), "", None)
    _row("keystroke -> next frame, no review", _ms(plain["frame"]), "", None)
    _row("  next frame under review / without (medians)", f"{frames:.3f}x", "", None)


if __name__ == "__main__":
    main()
