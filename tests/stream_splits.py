"""How the conformance tests feed a recorded stream to a decoder: whole, one byte at a time, and
at random splits; and the one feeding loop (after an error, `close()` gives what came before)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from copilot_nb.errors import StreamError
from copilot_nb.events import ModelEvent


def _random_splits(seed: int) -> Callable[[bytes], list[bytes]]:
    def split(data: bytes) -> list[bytes]:
        rng = random.Random(seed)
        cuts = sorted(rng.sample(range(1, len(data)), k=min(len(data) - 1, rng.randint(1, 80))))
        return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]

    return split


SPLITS: dict[str, Callable[[bytes], list[bytes]]] = {
    "whole": lambda data: [data],
    "bytewise": lambda data: [data[i : i + 1] for i in range(len(data))],
    **{f"random{seed}": _random_splits(seed) for seed in range(5)},
}


def feed_all(decoder: Any, pieces: list[bytes]) -> tuple[list[ModelEvent], StreamError | None]:
    """Feed every piece, then end the body; the events, and the error the stream raised if any."""
    events: list[ModelEvent] = []
    try:
        for piece in pieces:
            events.extend(decoder.feed(piece))
        events.extend(decoder.flush())
        decoder.close()
    except StreamError as exc:
        return events, exc
    return events, None
