"""A streamed answer's output grown in place by the page: every growth, applied as the page
applies it (lengths in UTF-16 code units), gives exactly the HTML a whole update would have
sent; only a page that says it can grow gets growths; the last update is always whole."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest

from copilot_nb.events import Done, TextDelta, ToolFinished, ToolStarted
from copilot_nb.jupyter.cell_growth import PageGrowth, common_prefix, page_for_request
from copilot_nb.jupyter.cell_view import PAGE_GROWTH, PAGE_STALE, CellRenderer
from copilot_nb.jupyter.live_channel import LiveChannel
from copilot_nb.jupyter.live_view import LiveView


class Page:
    """What `outputGrowth.ts` does with a growth, on a string of UTF-16 code units."""

    def __init__(self) -> None:
        self.html = b""
        self.growths: list[dict[str, Any]] = []

    def show(self, html: str) -> None:
        self.html = html.encode("utf-16-le")

    def grow(self, data: dict[str, Any]) -> None:
        self.growths.append(data)
        assert data["op"] == "grow"
        assert len(self.html) // 2 == data["from"], "the page shows what the kernel thinks"
        self.html = self.html[: 2 * data["keep"]] + data["add"].encode("utf-16-le")

    @property
    def text(self) -> str:
        return self.html.decode("utf-16-le")


class Display:
    """IPython's display and its handle, keeping what was sent whole."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.whole: list[tuple[str, Any]] = []

    def __call__(self, rendered: Any, display_id: bool, metadata: Any = None) -> Display:
        self.update(rendered, metadata)
        return self

    def update(self, rendered: Any, metadata: Any = None) -> None:
        self.whole.append((rendered.html, metadata))
        self.page.show(rendered.html)


def test_every_growth_gives_the_html_a_whole_update_would_have() -> None:
    page = Page()
    display = Display(page)
    now = [0.0]
    growth = PageGrowth(page.grow)
    renderer = CellRenderer(display=display, clock=lambda: now[0], page=growth)
    assert display.whole[0][1] == growth.metadata, "the output carries its mark"
    pieces = ["# Title\n\n", "Some 🐍 text", " and café", "\n\n```python\nx = 1", "\n```\n", "end"]
    for piece in pieces * 5:
        now[0] += PAGE_STALE  # each piece is due
        renderer.handle(TextDelta(text=piece))
        assert page.text == renderer.transcript.html(), "the page shows the kernel's HTML"
    renderer.handle(
        ToolStarted(call_id="c", name="read_file", summary="a.py", arguments={"path": "a.py"})
    )
    renderer.handle(
        ToolFinished(call_id="c", name="read_file", ok=True, summary="12 lines", content="x")
    )
    assert page.text == renderer.transcript.html()
    renderer.handle(Done(text=""))
    renderer.finish({"model": "m"})
    assert len(display.whole) == 2, "the first words' display, and the last update: whole"
    assert display.whole[-1][0] == renderer.transcript.html()
    assert "stream" not in display.whole[-1][1]["copilot_nb"]
    sent = sum(len(g["add"]) for g in page.growths)
    assert sent < 2 * len(renderer.transcript.html()), "each piece of HTML goes about once"


def test_a_growth_waits_for_enough_new_text_or_for_its_time() -> None:
    page = Page()
    now = [0.0]
    renderer = CellRenderer(display=Display(page), clock=lambda: now[0], page=PageGrowth(page.grow))
    renderer.handle(TextDelta(text="x" * 10_000))
    assert len(page.growths) == 1, "the first words at once"
    for _ in range(8):  # a slow model: a token every 0.26 s
        now[0] += 0.26
        renderer.handle(TextDelta(text="y"))
    assert len(page.growths) == 3, "then once a second"
    now[0] += 0.26
    renderer.handle(TextDelta(text="z" * PAGE_GROWTH))
    assert len(page.growths) == 4, "enough new text goes at once, however long the answer"


@pytest.mark.parametrize("seed", range(20))
def test_common_prefix_is_the_shared_start(seed: int) -> None:
    rng = random.Random(seed)
    a = "".join(rng.choice("ab🐍") for _ in range(rng.randrange(0, 60)))
    b = a[: rng.randrange(0, len(a) + 1)] + "".join(rng.choice("ab🐍") for _ in range(5))
    expected = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
    assert common_prefix(a, b) == (expected if expected is not None else min(len(a), len(b)))


class Comm:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def send(self, data: dict[str, Any]) -> None:
        self.sent.append(data)


def _shell(session: str, *views: LiveView) -> Any:
    kernel = SimpleNamespace(get_parent=lambda: {"header": {"session": session}})
    shell = SimpleNamespace(kernel=kernel)
    channel = LiveChannel(shell)
    channel.views.extend(views)
    shell._copilot_nb_live = channel
    return shell


def _view(client: str, protocol: int | None) -> LiveView:
    data = {"path": "a.ipynb", "server_root": "/srv", "client": client}
    if protocol is not None:
        data["protocol"] = protocol
    return LiveView(Comm(), data)


def test_only_the_requesting_page_that_can_grow_gets_growths() -> None:
    assert page_for_request(SimpleNamespace()) is None, "no live channel: whole updates"
    assert page_for_request(_shell("me", _view("me", 1))) is None, "an older page"
    assert page_for_request(_shell("me", _view("me", None))) is None
    assert page_for_request(_shell("me", _view("other", 2))) is None, "another page's request"
    mine = _view("me", 2)
    growth = page_for_request(_shell("me", _view("other", 2), mine))
    assert growth is not None
    growth.grow("<p>hi</p>")
    assert mine.comm.sent[0]["op"] == "grow" and mine.comm.sent[0]["output"] == growth.output
    mine.closed = True
    assert page_for_request(_shell("me", mine)) is None, "a page that closed"
