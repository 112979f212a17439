"""The `%%copilot` cell re-renders its whole answer as safe HTML at every update (at most four a
second): a 20 KB answer must stay cheap to render, and the safe renderer is compared with
markdown-it rendering the same text with raw HTML on (the unsafe floor)."""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from copilot_nb.jupyter.safe_html import markdown_html
from tests.text_samples import PROSE, PYTHON

REPEATS = 9


def _answer() -> str:
    piece = f"## Part\n\n{PROSE[:600]}\n\n- a **b** `c`\n\n```python\n{PYTHON[:400]}\n```\n\n"
    return (piece * (20_000 // len(piece) + 1))[:20_000]


def _median_ms(render: object, answer: str) -> float:
    times = []
    for n in range(REPEATS):
        text = answer + " " * n  # a different text each time: no cache
        started = time.perf_counter()
        render(text)  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> float:
    from markdown_it import MarkdownIt

    answer = _answer()
    markdown_html("warm up")
    unsafe = MarkdownIt("commonmark", {"html": True})
    ours = _median_ms(markdown_html, answer)
    floor = _median_ms(unsafe.render, answer)
    print(f"\nrendering a {len(answer) // 1000} KB answer as the cell's HTML (median of {REPEATS})")
    print(f"{'safe renderer ms':>16}  {'markdown-it, raw HTML on ms':>27}  {'ratio':>5}  target")
    print(f"{ours:>16.1f}  {floor:>27.1f}  {ours / floor:>5.2f}  < 50 ms")
    return ours


if __name__ == "__main__":
    main()
