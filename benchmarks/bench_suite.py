"""The suite's time per tier beside last round's, from the tiers' last runs (`make test` or any
`make check` / `make test-<tier>` writes them to build/test-reports/), so a change that slows the
proof shows in `make bench` as any other slowdown does. It runs no test itself: a tier not run
yet reads "not run"."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scripts.test_tiers import TIERS, read_result

LAST_ROUND = {"all": 2323.0}
"""Last round's figure: the whole suite was one pytest process on 2 cores (the slower of its two
clean-clone runs; its tiers were not timed apart)."""
TARGETS = {"check": 180.0, "all": 1500.0}
"""Seconds: `make check`'s tests within the 3 minutes of the whole check, and the whole suite's
tests in well under half of last round's run."""


def main() -> None:
    print("\nThe suite per tier (wall seconds of each tier's last run; 2 cores)")
    print(
        f"{'tier':<10} {'last round':>10} {'this run':>9} {'tests':>6} {'failed':>6} {'target':>7}"
    )
    total, counted, tests = 0.0, 0, 0
    for name in TIERS:
        result = read_result(name)
        target = f"< {TARGETS[name]:.0f}" if name in TARGETS else ""
        if result is None:
            print(f"{name:<10} {'':>10} {'not run':>9} {'':>6} {'':>6} {target:>7}")
            continue
        total, counted = total + result.seconds, counted + 1
        tests += result.counts["passed"]
        print(
            f"{name:<10} {'':>10} {result.seconds:>9.0f} {result.counts['passed']:>6} "
            f"{result.counts['failed']:>6} {target:>7}"
        )
    whole = {0: "not run", len(TIERS): f"{total:.0f}"}.get(counted, f"{total:.0f}*")
    print(f"{'all':<10} {LAST_ROUND['all']:>10.0f} {whole:>9} {tests:>6} {'':>6} {'< 1500':>7}")
    if 0 < counted < len(TIERS):
        print("* only the tiers that have run")


if __name__ == "__main__":
    main()
