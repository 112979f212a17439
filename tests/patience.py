"""How long a test may wait for what it can observe: limits that scale with the run.

A wait ends as soon as what it waits for shows, so a generous limit costs a passing test nothing;
it only has to outlast a busy machine: parallel workers (each with its kernels, JupyterLab and
Chromium) and whatever else runs beside them. `COPILOT_NB_TEST_SLOWDOWN` sets the factor."""

from __future__ import annotations

import os


def _slowdown() -> float:
    """How many times longer than on an idle machine a wait may take."""
    if override := os.environ.get("COPILOT_NB_TEST_SLOWDOWN"):
        return max(1.0, float(override))
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
    load = os.getloadavg()[0] / (os.cpu_count() or 1)
    return min(6.0, max(2.0, workers, load))


SLOWDOWN = _slowdown()


def patient(seconds: float) -> float:
    """A wait's limit on this run: `seconds` on an idle machine, scaled by SLOWDOWN."""
    return seconds * SLOWDOWN
