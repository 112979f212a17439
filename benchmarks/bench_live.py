"""The live notebook in a real JupyterLab: how soon an agent's change shows, and what it costs.

Three measurements in JupyterLab and Debian's Chromium, started as the browser tests start them
(`tests/lab_server.py`):

1. `insert_cell` → visible: a cell in the open notebook awaits the real tool (the kernel's
   toolsets bound to its live channel) and records `time.time()` before each call and when the
   `apply` request leaves; in the page a MutationObserver records `Date.now()` when the new
   cell's text enters the notebook's DOM, and the frame after it. One machine, one clock.
2. `list_cells` on a live notebook of 2,000 small cells (every 10th with an output), timed in
   the kernel, and the `snapshot` request alone.
3. Page load of `/lab/tree/<small notebook>` with and without the extension: a second server
   whose labextensions path lacks `copilot-nb` (JupyterLab's `disabledExtensions` still fetches
   and runs a disabled extension's remoteEntry.js, so it would not measure the cost). Fresh
   browser context per load, the two servers alternating, until the first cell is rendered
   and the kernel idle.

Skips, saying so, where /usr/bin/chromium is missing.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.lab_server import (  # noqa: E402
    CHROMIUM,
    FLAGS,
    LONG,
    TOKEN,
    run_first_cell,
    running_lab,
    show_notebook,
    write_notebook,
)

INSERTS = 12
LISTS = 7
BIG_CELLS = 2_000
LOADS = 10
VISIBLE_TARGET = 250.0  # ms
LIST_TARGET = 300.0  # ms
LOAD_TARGET = 1.05  # with / without
EXTENSION = "copilot-nb"

LOADED = """
() => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const session = panel && panel.sessionContext;
  const kernel = session && session.session && session.session.kernel;
  const cell = panel && panel.content && panel.content.widgets[0];
  const ready = kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle'
    && cell && cell.node.querySelector('.cm-content');
  return ready ? performance.now() : false;
}
"""
"""ms since navigation began once the notebook's first cell is rendered and its kernel is
connected and idle (else false); polled every frame."""
EXTENSION_FILES = """
() => performance.getEntriesByType('resource')
  .filter(entry => entry.name.includes('/copilot-nb/'))
  .map(entry => entry.responseEnd - entry.startTime)
"""
"""How long each of the extension's files took to fetch (ms)."""
OBSERVE = """
() => {
  const seen = { dom: {}, frame: {} };
  window.__copilotBench = seen;
  const notebook = window.jupyterapp.shell.currentWidget.content;
  const found = text => {
    for (const match of (text || '').matchAll(/bench_marker_(\\d+)/g)) {
      const n = match[1];
      if (seen.dom[n] === undefined) {
        seen.dom[n] = Date.now();
        requestAnimationFrame(() => { seen.frame[n] = Date.now(); });
      }
    }
  };
  new MutationObserver(records => {
    for (const record of records) {
      for (const node of record.addedNodes) { found(node.textContent); }
      if (record.type === 'characterData') { found(record.target.textContent); }
    }
  }).observe(notebook.node, { childList: true, subtree: true, characterData: true });
}
"""


# --- in the kernel (the notebook's first cell imports this module and awaits these) ---------


async def _kernel_tools(root: str) -> tuple[Any, Any]:
    """The notebook tools as `%%copilot` gets them in this kernel, and its live channel, once
    the open notebook has attached (it answers the hello `%load_ext` sent)."""
    import asyncio

    from IPython import get_ipython

    from copilot_nb.jupyter.live_channel import live_channel
    from copilot_nb.tools.kernel_toolsets import kernel_toolsets
    from copilot_nb.tools.registry import ToolSet
    from copilot_nb.workspace.workspace import Workspace

    shell = get_ipython()
    channel = live_channel(shell)
    deadline = time.monotonic() + 30
    while not channel.attached():
        if time.monotonic() > deadline:
            raise RuntimeError("no open notebook attached to the kernel within 30 s")
        await asyncio.sleep(0.05)
    tools = ToolSet(t for ts in kernel_toolsets(shell, Workspace(root), live=channel) for t in ts)
    return tools, channel


async def _call(tools: Any, name: str, arguments: dict[str, Any]) -> str:
    result = await tools.call_tool(name, arguments)
    if result.is_error or "live: open in" not in result.content:
        raise RuntimeError(f"{name} did not work on the live notebook: {result.content}")
    return str(result.content)


async def kernel_inserts(root: str, notebook: str, runs: int) -> list[dict[str, float]]:
    """Insert `runs` cells through the live channel: when each call began, sent its apply
    request and returned (time.time(), seconds)."""
    import asyncio

    from copilot_nb.jupyter.live_view import LiveView

    tools, _channel = await _kernel_tools(root)
    await _call(tools, "list_cells", {"notebook": notebook})  # attach and warm up
    sent: list[float] = []
    original = LiveView.request

    async def timed(self: LiveView, op: str, **fields: Any) -> dict[str, Any]:
        if op == "apply":
            sent.append(time.time())
        return await original(self, op, **fields)

    LiveView.request = timed  # type: ignore[method-assign]
    rows = []
    try:
        for n in range(runs):
            began = time.time()
            arguments = {"after_cell_id": "#0", "cell_type": "code", "notebook": notebook}
            await _call(tools, "insert_cell", {**arguments, "source": f"bench_marker_{n} = {n}"})
            rows.append({"began": began, "apply": sent[-1], "returned": time.time()})
            await asyncio.sleep(0.15)  # let the page settle between inserts
    finally:
        LiveView.request = original  # type: ignore[method-assign]
    return rows


async def kernel_lists(root: str, notebook: str, runs: int) -> dict[str, Any]:
    """Time list_cells and the snapshot request alone on the open notebook (seconds)."""
    tools, channel = await _kernel_tools(root)
    listing = await _call(tools, "list_cells", {"notebook": notebook})  # attach and warm up
    view = await channel.find(Path(root) / notebook)
    lists, snapshots = [], []
    for _ in range(runs):
        began = time.perf_counter()
        await _call(tools, "list_cells", {"notebook": notebook})
        lists.append(time.perf_counter() - began)
    for _ in range(runs):
        began = time.perf_counter()
        snapshot = await view.request("snapshot")
        snapshots.append(time.perf_counter() - began)
    size = len(json.dumps(snapshot))
    header = listing.splitlines()[0]
    return {"list": lists, "snapshot": snapshots, "bytes": size, "header": header}


# --- in the bench ----------------------------------------------------------------------------


def _runner_cell(function: str, lab: dict[str, Any], notebook: str, out: Path, runs: int) -> str:
    """The cell that awaits `function` in the kernel and writes its result to `out` as JSON."""
    arguments = f"{str(lab['root'])!r}, {notebook!r}, {runs}"
    return (
        "%load_ext copilot_nb\n"
        f"import json, pathlib, sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from benchmarks import bench_live\n"
        f"result = await bench_live.{function}({arguments})\n"
        f"partial = pathlib.Path({str(out) + '.part'!r})\n"
        f"partial.write_text(json.dumps(result)); partial.rename({str(out)!r})"
    )


def _wait_for_file(path: Path, page: Any, seconds: float = 60) -> Any:
    """The JSON the kernel writes at the end of its cell (or the cell's outputs, if it fails)."""
    cell = page.locator(".jp-Notebook .jp-Cell").first
    deadline = time.monotonic() + seconds
    while not path.exists():
        if re.fullmatch(r"\[\d+\]:", cell.locator(".jp-InputPrompt").inner_text().strip()):
            outputs = cell.locator(".jp-OutputArea").inner_text()
            raise RuntimeError(f"the benchmark cell ended without a result:\n{outputs}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"the kernel did not write {path.name} within {seconds:g} s")
        page.wait_for_timeout(100)
    return json.loads(path.read_text())


def measure_inserts(page: Any, lab: dict[str, Any]) -> dict[str, list[float]]:
    """ms from the tool call (and from its apply request) to the cell in the DOM / next frame."""
    name, out = "insert.ipynb", lab["root"] / "insert.json"
    write_notebook(lab["root"] / name, _runner_cell("kernel_inserts", lab, name, out, INSERTS))
    show_notebook(page, lab, name)
    page.evaluate(OBSERVE)
    run_first_cell(page)
    rows = _wait_for_file(out, page)
    page.wait_for_function(f"Object.keys(window.__copilotBench.frame).length >= {INSERTS}")
    seen = page.evaluate("window.__copilotBench")
    result: dict[str, list[float]] = {"call_dom": [], "apply_dom": [], "call_frame": []}
    for n, row in enumerate(rows):
        dom, frame = seen["dom"][str(n)], seen["frame"][str(n)]
        result["call_dom"].append(dom - row["began"] * 1000)
        result["apply_dom"].append(dom - row["apply"] * 1000)
        result["call_frame"].append(frame - row["began"] * 1000)
    result["call_return"] = [(r["returned"] - r["began"]) * 1000 for r in rows]
    return result


def measure_lists(page: Any, lab: dict[str, Any]) -> dict[str, Any]:
    """list_cells and snapshot on an open notebook of BIG_CELLS cells (ms), and its load (s)."""
    import nbformat

    name, out = "big.ipynb", lab["root"] / "big.json"
    cells = []
    for n in range(BIG_CELLS - 1):
        cell = nbformat.v4.new_code_cell(f"value_{n} = {n} * 2\nvalue_{n}")
        if n % 10 == 0:
            cell.execution_count = n + 1
            cell.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": str(n * 2)})]
        cells.append(cell)
    runner = _runner_cell("kernel_lists", lab, name, out, LISTS)
    write_notebook(lab["root"] / name, runner, cells=cells)
    began = time.monotonic()
    show_notebook(page, lab, name)
    loaded = time.monotonic() - began
    run_first_cell(page)
    result: dict[str, Any] = _wait_for_file(out, page, seconds=120)
    result["list"] = [s * 1000 for s in result["list"]]
    result["snapshot"] = [s * 1000 for s in result["snapshot"]]
    result["load"] = loaded
    return result


def measure_loads(browser: Any, labs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Seconds to load a small notebook in a fresh context, per lab, alternating; and whether
    each load fetched the extension's remoteEntry."""
    name = "small.ipynb"
    for lab in labs.values():
        write_notebook(lab["root"] / name, "x = 1\nx", "y = 2")
    times: dict[str, list[float]] = {key: [] for key in labs}
    fetched: dict[str, set[bool]] = {key: set() for key in labs}
    fetching: list[float] = []
    order = list(labs)
    for run in range(LOADS + 1):  # the first round starts the kernels and is not counted
        for key in order if run % 2 else reversed(order):
            context = browser.new_context(viewport={"width": 1440, "height": 900})
            page = context.new_page()
            entries: list[str] = []
            page.on("request", lambda r, seen=entries: _note_entry(r.url, seen))
            url = f"{labs[key]['base']}/lab/tree/{name}?reset&token={TOKEN}"
            page.goto(url, timeout=LONG)
            spent = page.wait_for_function(LOADED, timeout=LONG).json_value() / 1000
            files = page.evaluate(EXTENSION_FILES)
            context.close()
            if run:
                times[key].append(spent)
                fetched[key].add(bool(entries))
                fetching += [sum(files)] if files else []
    return {"times": times, "fetched": fetched, "fetching": fetching}


def _note_entry(url: str, seen: list[str]) -> None:
    if f"/{EXTENSION}/" in url and "remoteEntry" in url:
        seen.append(url)


def _extensions_folder(home: Path, *, ours: bool) -> str:
    """A labextensions folder of symlinks to every installed extension, with or without ours:
    both servers are built the same way and differ by copilot-nb alone."""
    from jupyter_core.paths import jupyter_path

    folder = home / "labextensions"
    folder.mkdir(parents=True)
    for base in map(Path, jupyter_path("labextensions")):
        if not base.is_dir():
            continue
        for entry in base.iterdir():
            target = folder / entry.name
            if (ours or entry.name != EXTENSION) and not target.exists():
                target.symlink_to(entry)
    return str(folder)


def _row(name: str, measured: str, target: str, ok: bool | None) -> None:
    verdict = "info" if ok is None else ("ok" if ok else "OVER TARGET")
    print(f"{name:<44}  {measured:>22}  {target:>9}  {verdict}")


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values):.0f} ms (max {max(values):.0f})"


def _labs(stack: ExitStack, scratch: Path) -> dict[str, dict[str, Any]]:
    """Two JupyterLab servers, with and without the extension, started in the same stack."""
    labs = {}
    for key, ours in (("with", True), ("without", False)):
        folder = _extensions_folder(scratch / key, ours=ours)
        labs[key] = stack.enter_context(
            running_lab(scratch / key, args=[f"--LabApp.labextensions_path={folder}"])
        )
    return labs


def _browser(stack: ExitStack) -> Any:
    from playwright.sync_api import sync_playwright

    playwright = stack.enter_context(sync_playwright())
    return playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=FLAGS)


def _timed(label: str, step: Callable[[], Any]) -> Any:
    began = time.monotonic()
    result = step()
    print(f"  ({label}: {time.monotonic() - began:.1f} s)", file=sys.stderr)
    return result


def main() -> dict[str, Any] | None:
    print("\nLive notebook in JupyterLab (real server, Debian Chromium)")
    if not CHROMIUM.exists():
        print(f"skipped: needs Debian's Chromium at {CHROMIUM} (apt-get install chromium)")
        return None
    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="bench-live-") as scratch:
        labs = _labs(stack, Path(scratch))
        browser = _browser(stack)
        # page loads first, while both servers are alike (no kernels left by the other runs)
        loads = _timed("page loads", lambda: measure_loads(browser, labs))
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.set_default_timeout(LONG)
        inserts = _timed("inserts", lambda: measure_inserts(page, labs["with"]))
        lists = _timed("list_cells", lambda: measure_lists(page, labs["with"]))
        page.close()
    _report(inserts, lists, loads)
    return {"inserts": inserts, "lists": lists, "loads": loads}


def _report(inserts: dict[str, list[float]], lists: dict[str, Any], loads: dict[str, Any]) -> None:
    print(f"{'(verdicts on the median)':<44}  {'median (max)':>22}  {'target':>9}")
    _row(
        f"insert_cell call -> cell in DOM ({INSERTS} runs)",
        _ms(inserts["call_dom"]),
        f"< {VISIBLE_TARGET:.0f} ms",
        statistics.median(inserts["call_dom"]) < VISIBLE_TARGET,
    )
    _row("  apply request sent -> cell in DOM", _ms(inserts["apply_dom"]), "", None)
    _row("  insert_cell call -> next frame painted", _ms(inserts["call_frame"]), "", None)
    _row("  insert_cell call -> tool returned", _ms(inserts["call_return"]), "", None)
    _row(
        f"list_cells, live {BIG_CELLS:,} cells ({LISTS} runs)",
        _ms(lists["list"]),
        f"< {LIST_TARGET:.0f} ms",
        statistics.median(lists["list"]) < LIST_TARGET,
    )
    _row(
        f"  snapshot request alone ({lists['bytes'] / 1e6:.1f} MB reply)",
        _ms(lists["snapshot"]),
        "",
        None,
    )
    _row(f"  opening the {BIG_CELLS:,}-cell notebook", f"{lists['load']:.1f} s", "", None)
    times, fetched = loads["times"], loads["fetched"]
    with_s, without_s = statistics.median(times["with"]), statistics.median(times["without"])
    ratio = with_s / without_s
    for key in ("with", "without"):
        values = [t * 1000 for t in times[key]]
        _row(f"page load {key} extension ({LOADS} loads)", _ms(values), "", None)
        print(f"{'':<46}(min {min(values):.0f})")
    _row(
        "page load with / without (medians)",
        f"{ratio:.3f}x",
        f"<= {LOAD_TARGET:.2f}x",
        ratio <= LOAD_TARGET,
    )
    fastest = min(times["with"]) / min(times["without"])
    _row("  with / without (fastest loads)", f"{fastest:.3f}x", "", None)
    _row(f"  fetching {EXTENSION}'s files (sum per load)", _ms(loads["fetching"]), "", None)
    print(
        f"(remoteEntry of {EXTENSION} fetched: with {sorted(fetched['with'])}, "
        f"without {sorted(fetched['without'])}; loads with "
        f"{' '.join(f'{t:.2f}' for t in times['with'])} s, without "
        f"{' '.join(f'{t:.2f}' for t in times['without'])} s)"
    )


if __name__ == "__main__":
    main()
