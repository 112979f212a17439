"""The suite's tiers, kept honest: a test that starts a kernel, drives a browser or needs an
outside program carries that tier's marker, or the run fails.

`make check` runs every test with none of the markers (in-process, minutes); `make test-kernel`,
`make test-browser` and `make test-external` run the others. A marker a test forgets would put a
slow test into the fast tier, so two guards hold the line by construction, not by vigilance:

- at collection, a test that asks for a fixture of a tier (a kernel, a JupyterLab page, the
  project's wheel) without its marker fails the run, naming the test and the marker;
- while a test runs, every program it starts (`subprocess.Popen`, which `subprocess.run`,
  asyncio's subprocesses, jupyter_client's kernels and Playwright's driver all go through) is
  matched against the programs of each tier, and one its markers do not allow fails it.

A test with several markers belongs to the highest tier: external over browser over kernel.
The demo notebooks that nbval collects are external.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

TIERS = ("kernel", "browser", "external")
"""The markers, lowest tier first; a test with none of them is in `make check`."""

FIXTURES = {
    "kernel": frozenset({"kernel_for", "kernel", "front_end"}),
    "browser": frozenset({"lab", "page"}),
    "external": frozenset({"project_wheel", "hub", "closed_source", "inspector", "llama"}),
}
"""Fixtures that start a tier's programs, checked when the tests are collected."""

PROGRAMS = {
    "kernel": re.compile(r"ipykernel_launcher|-m ipykernel\b"),
    "browser": re.compile(r"-m jupyterlab\b|jupyter-lab\b|playwright|chromium"),
    "external": re.compile(
        r"llama-server|jupyterhub|configurable-http-proxy|inspector|-m build\b|pip install"
        r"|-m tests\.mcp_servers\b|-m mcp_server_(time|git)\b"
    ),
}
"""Programs a tier starts, matched against a command line while a test runs."""

MARKER_EXPRESSIONS = {
    "check": "not kernel and not browser and not external",
    "kernel": "kernel and not browser and not external",
    "browser": "browser and not external",
    "external": "external",
}
"""Each tier's `-m` expression: every test is in exactly one."""


@dataclass
class _Running:
    """The test whose programs the Popen guard is checking; None between tests."""

    nodeid: str | None = None
    allowed: frozenset[str] = frozenset()
    refused: list[str] = field(default_factory=list)


_running = _Running()


def allowed_tiers(item: pytest.Item) -> frozenset[str]:
    """The tiers whose programs `item` may start: its own and every lower one."""
    marked = [i for i, tier in enumerate(TIERS) if item.get_closest_marker(tier)]
    return frozenset(TIERS[: max(marked) + 1]) if marked else frozenset()


def needed_tier(command: str) -> str | None:
    """The tier a command line belongs to, or None for a program any test may start."""
    for tier in reversed(TIERS):
        if PROGRAMS[tier].search(command):
            return tier
    return None


def unmarked_fixtures(item: pytest.Item) -> list[str]:
    """`fixture (needs @pytest.mark.tier)` for each tier fixture `item` uses unmarked."""
    allowed = allowed_tiers(item)
    names = set(getattr(item, "fixturenames", ()))
    return [
        f"{name} (needs @pytest.mark.{tier})"
        for tier, fixtures in FIXTURES.items()
        if tier not in allowed
        for name in sorted(names & fixtures)
    ]


def pytest_configure(config: pytest.Config) -> None:
    _guard_popen()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Demo notebooks are external; a tier fixture without its marker fails collection."""
    for item in items:
        if type(item).__module__.startswith("nbval"):
            item.add_marker(pytest.mark.external)
    offenders = [
        f"{item.nodeid}: {', '.join(found)}" for item in items if (found := unmarked_fixtures(item))
    ]
    if offenders:
        raise pytest.UsageError(
            "these tests use a tier's fixture without its marker, so they would run in the fast "
            "tier; mark them (see tests/tiers.py):\n  " + "\n  ".join(offenders)
        )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """The Popen guard checks against this test's markers from its setup to its teardown."""
    _running.nodeid, _running.allowed = item.nodeid, allowed_tiers(item)
    _running.refused.clear()
    try:
        return (yield)
    finally:
        _running.nodeid, _running.allowed = None, frozenset()
        _running.refused.clear()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A test whose code caught the guard's error (a server start retried, an error shown as a
    result) still fails: a passing call that had a start refused is reported as failed."""
    report = yield
    if call.when == "call" and report.passed and _running.refused:
        report.outcome = "failed"
        report.longrepr = "\n".join(_running.refused)
    return report


def _command_line(args: object) -> str:
    """A Popen `args` as one line: a string, a path, or a sequence of either."""
    if isinstance(args, (str, bytes, os.PathLike)):
        return os.fsdecode(args)
    return " ".join(
        os.fsdecode(part) if isinstance(part, (bytes, os.PathLike)) else str(part) for part in args
    )  # type: ignore[attr-defined]


class TierError(RuntimeError):
    """A test started a program its tier's marker does not allow."""


def _guard_popen() -> None:
    """Wrap `Popen.__init__` once per process so a program outside the test's tier fails it."""
    if getattr(subprocess.Popen.__init__, "_tier_guard", False):
        return
    original = subprocess.Popen.__init__

    def guarded(self: subprocess.Popen[bytes], args: object, *rest: object, **kw: object) -> None:
        if _running.nodeid is not None:
            command = _command_line(args)
            tier = needed_tier(command)
            if tier is not None and tier not in _running.allowed:
                _running.refused.append(
                    f"{_running.nodeid} starts a program of the {tier} tier ({command[:120]}) "
                    f"without @pytest.mark.{tier}: mark the test so it runs in `make test-{tier}`"
                )
                raise TierError(_running.refused[-1])
        original(self, args, *rest, **kw)  # type: ignore[arg-type]

    guarded._tier_guard = True  # type: ignore[attr-defined]
    subprocess.Popen.__init__ = guarded  # type: ignore[method-assign]
