"""Run the suite's tiers and keep their time in sight.

`python scripts/test_tiers.py check kernel` runs those tiers one after another (each one pytest
run, with the workers that tier is worth), writes each tier's JUnit report under
build/test-reports/, and ends with the table of every tier run so far: its wall time, its test
count and outcome, and the 20 slowest tests across them (also written to
build/test-reports/times.md). `--report` prints that table alone. The tiers' `-m` expressions
and the guard that keeps a test in its tier are in tests/tiers.py.

Exit status: the first failing tier's pytest status (a tier with no test to run is not a
failure: a `-k` may leave one empty).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORTS = ROOT / "build" / "test-reports"
sys.path.insert(0, str(ROOT))

from tests.tiers import MARKER_EXPRESSIONS  # noqa: E402

NBVAL = ["--nbval", "--nbval-sanitize-with", "notebooks/nbval_sanitize.cfg", "notebooks"]


@dataclass(frozen=True, kw_only=True)
class Tier:
    """How one tier runs: its pytest workers and any paths beyond tests/."""

    name: str
    workers: int
    extra: tuple[str, ...] = ()


TIERS = {
    # In-process tests: CPU-bound, so one worker per core.
    "check": Tier(name="check", workers=2),
    # Kernels and JupyterLab mostly wait on other processes: more workers than cores pays.
    "kernel": Tier(name="kernel", workers=3),
    # One JupyterLab and one Chromium at a time: on 2 cores a second pair saved a third of the
    # time (651 s against about 900 s) but put pages past their limits (a dialog, a reload).
    "browser": Tier(name="browser", workers=1),
    "external": Tier(name="external", workers=2, extra=tuple(NBVAL)),
}


def workers(tier: Tier) -> int:
    """The tier's workers, or `COPILOT_NB_TEST_WORKERS` (0 or 1 runs in one process)."""
    override = os.environ.get("COPILOT_NB_TEST_WORKERS")
    return int(override) if override else tier.workers


def pytest_command(tier: Tier, passthrough: list[str]) -> list[str]:
    """The one pytest command line of a tier."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-m",
        MARKER_EXPRESSIONS[tier.name],
        f"--junitxml={REPORTS / f'{tier.name}.xml'}",
        "--durations=10",
    ]
    if (n := workers(tier)) > 1:
        # A module's tests stay on one worker, so a module-scoped JupyterLab or kernel is shared.
        command += ["-n", str(n), "--dist", "loadfile"]
    return [*command, *passthrough, "tests", *tier.extra]


def run_tier(tier: Tier, passthrough: list[str]) -> int:
    """Run one tier; its wall time goes beside its JUnit report."""
    REPORTS.mkdir(parents=True, exist_ok=True)
    print(f"== tier {tier.name}: {' '.join(pytest_command(tier, passthrough)[3:])}", flush=True)
    started = time.monotonic()
    status = subprocess.call(pytest_command(tier, passthrough), cwd=ROOT)
    seconds = time.monotonic() - started
    (REPORTS / f"{tier.name}.json").write_text(json.dumps({"seconds": seconds, "status": status}))
    print(f"== tier {tier.name}: {seconds:.0f} s, pytest status {status}", flush=True)
    return 0 if status == 5 else status  # 5: no test selected


@dataclass(frozen=True, kw_only=True)
class TierResult:
    """What one tier's last run left: wall time, counts, and each test's time."""

    name: str
    seconds: float
    status: int
    counts: dict[str, int]
    tests: list[tuple[float, str]]


def read_result(name: str) -> TierResult | None:
    """A tier's last run, from its JUnit report and wall time; None if it has not run."""
    xml, wall = REPORTS / f"{name}.xml", REPORTS / f"{name}.json"
    if not (xml.exists() and wall.exists()):
        return None
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    tests = []
    for case in ET.parse(xml).getroot().iter("testcase"):
        tests.append((float(case.get("time") or 0), f"{case.get('classname')}::{case.get('name')}"))
        outcome = next((child.tag for child in case), "passed")
        key = {"failure": "failed", "error": "failed", "skipped": "skipped"}.get(outcome, "passed")
        counts[key] += 1
    timing = json.loads(wall.read_text())
    return TierResult(
        name=name, seconds=timing["seconds"], status=timing["status"], counts=counts, tests=tests
    )


def report() -> str:
    """The table of the tiers' last runs and the 20 slowest tests, as Markdown."""
    results = [r for name in TIERS if (r := read_result(name)) is not None]
    lines = [
        "| tier | wall time (s) | passed | failed | skipped |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in results:
        c = r.counts
        lines.append(
            f"| {r.name} | {r.seconds:.0f} | {c['passed']} | {c['failed']} | {c['skipped']} |"
        )
    total = sum(r.seconds for r in results)
    passed = sum(r.counts["passed"] for r in results)
    lines += [f"| **all** | **{total:.0f}** | **{passed}** | | |", "", "20 slowest tests:", ""]
    slowest = sorted(((t, name, r.name) for r in results for t, name in r.tests), reverse=True)
    lines += [f"- {t:6.1f} s  [{tier}] {name}" for t, name, tier in slowest[:20]]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tiers", nargs="*", help=f"tiers to run, in order: {', '.join(TIERS)}")
    parser.add_argument("--report", action="store_true", help="print the table of the last runs")
    args, passthrough = parser.parse_known_args()
    if unknown := [name for name in args.tiers if name not in TIERS]:
        parser.error(f"no tier {', '.join(unknown)}: the tiers are {', '.join(TIERS)}")
    status = 0
    for name in args.tiers:
        result = run_tier(TIERS[name], passthrough)
        status = status or result
    table = report()
    REPORTS.mkdir(parents=True, exist_ok=True)
    (REPORTS / "times.md").write_text(table)
    if args.report or not args.tiers or len(args.tiers) > 1:
        print(table)
    return status


if __name__ == "__main__":
    sys.exit(main())
