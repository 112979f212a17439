"""Running tasks through `%%copilot` in a real kernel, and what each run cost.

One kernel serves the whole run (starting one per task would cost more than most tasks); each
task still starts clean: a folder of its own made the working directory (the agent's workspace
follows it), the user namespace reset, a new conversation and a cassette of its own.

`%reset` ends in two full garbage collections, and nearly all of the kernel's heap is long-lived
(IPython, pandas, matplotlib, copilot_nb: some 150,000 objects, 0.2 s a collection here). So once
a reset has collected what the last task left, the survivors are frozen (`gc.freeze()`): the next
reset walks only what was made since, the last task's objects and cycles among them (0.5 s less
a task). Only a cycle that was alive at a freeze and dies later waits for the kernel's end.

The harness approves as a user at the keyboard would, through the kernel's own prompts, never with
`--yes`: recording, it answers each approval yes (never a secret read), and the cassette keeps
each answer signed with the user's key. Replaying, it answers nothing: exactly as
`%copilot replay`, only the recording's signed answers (or, with `trust`, its answers whatever
their signature) approve the very calls they were given for, and any other call is denied, so a
cassette changed by someone else runs none of its own code.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from .kernel import Kernel
from .metrics import rounds_and_premium
from .task import Outcome, Task


@dataclass(frozen=True, kw_only=True)
class Result:
    """One task's row of the table."""

    task: str
    kind: str
    ok: bool
    reason: str
    rounds: int
    tokens_in: int | None
    """None: the server reported no usage (unknown, not 0)."""
    tokens_out: int | None
    premium: float
    tokens_cached: int | None = None
    """Input tokens the provider read from its prompt cache (None: usage unknown)."""
    seconds: float
    tool_calls: tuple[str, ...] = ()
    stopped: bool = False
    """The run stopped (its time limit, a signal) before this task ran to its end."""

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "tool_calls": list(self.tool_calls)}


def _cell(code: str) -> str:
    return code.strip() + "\n"


def _unsigned(notice: str) -> str:
    """Why a replayed task may have failed: `%copilot replay` said the cassette is not the
    user's own, so its recorded approvals were not used."""
    said = [line for line in notice.splitlines() if line.startswith("Not signed by you")]
    return f" ({said[0]})" if said else ""


class Harness:
    """Runs tasks in one kernel. `before_task(task)` lets a caller change what the model will
    say (the scripted runs load each task's script into the loopback server there)."""

    def __init__(
        self,
        *,
        env: dict[str, str],
        model: str | None = None,
        record: Path | None = None,
        replay: Path | None = None,
        before_task: Callable[[Task], None] | None = None,
        timeout: float = 600,
        trust: bool = False,
    ) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="copilot_nb_eval_"))
        self.model = model
        self.record = record
        self.replay = replay
        self.before_task = before_task
        self.timeout = timeout
        self.trust = trust
        """Replay with `--trust`: the user chose to let the cassettes' answers approve their calls
        although they did not record them."""
        self.kernel = Kernel(self.root, env)
        loaded = self.kernel.execute("%load_ext copilot_nb")
        if loaded.status != "ok":
            self.close()
            raise RuntimeError(f"%load_ext copilot_nb failed: {loaded.error}")

    def run(self, tasks: Iterable[Task]) -> list[Result]:
        return [self.run_task(task) for task in tasks]

    def run_task(self, task: Task) -> Result:
        workdir = self.root / task.name
        workdir.mkdir()
        task.setup(workdir)
        cassette = self._cassette(task)
        if self.before_task is not None:
            self.before_task(task)
        replaying = self.replay is not None
        mode = "replay" if replaying else "record"
        trust = " --trust" if replaying and self.trust else ""
        prepared = self.kernel.execute(
            _cell(
                f"%reset -f\n__import__('gc').freeze()\nimport os\nos.chdir({str(workdir)!r})\n"
                f"__session__ = {str(workdir / 'analysis.ipynb')!r}\n"
                f"%copilot {mode} {cassette}{trust}"
            )
        )
        if prepared.status != "ok":
            return not_run(task, f"could not prepare the kernel: {prepared.error}")
        options = "--new" + (f" --model {self.model}" if self.model else "")
        started = time.monotonic()
        try:
            turn = self.kernel.execute(
                _cell(f"%%copilot {options}\n{task.request}"),
                timeout=self.timeout,
                answers=list(task.user_answers) if task.user_answers else None,
                approve=not replaying,
            )
        except TimeoutError as exc:  # the kernel is idle again: what the turn sent is recorded
            seconds = time.monotonic() - started
            self.kernel.execute("%copilot cassette off")
            rounds, _ = rounds_and_premium(cassette, "")
            return replace(not_run(task, str(exc), seconds=seconds), rounds=rounds)
        seconds = time.monotonic() - started
        self.kernel.execute("%copilot cassette off")
        text, provenance = turn.copilot_output()
        calls = tuple(str(c.get("tool", "")) for c in provenance.get("tool_calls", []))
        usage = provenance.get("usage")
        if usage and usage.get("estimated"):  # our estimate, not the provider's count: unknown
            usage = None
        used = (provenance.get("cassette") or {}).get("entries")
        rounds, premium = rounds_and_premium(
            cassette, str(provenance.get("provider", "")), used if self.replay else None
        )
        failed = str(provenance.get("error") or "")
        if turn.status != "ok":
            ok, reason = False, f"the cell failed: {turn.error}"
        elif failed:  # the cell ran to its end, but the turn did not: the answer is not to blame
            ok, reason = False, f"the turn ended in an error: {failed}"
        else:
            try:
                ok, reason = task.check(Outcome(workdir=workdir, answer=text, tool_calls=calls))
            except Exception as exc:  # a checker meeting a mangled file: the task failed
                ok, reason = False, f"checker: {type(exc).__name__}: {exc}"
        if not ok and replaying:
            reason += _unsigned(prepared.stdout)
        return Result(
            task=task.name,
            kind=task.kind,
            ok=ok,
            reason=reason,
            rounds=rounds,
            tokens_in=int(usage["input_tokens"]) if usage else None,
            tokens_out=int(usage["output_tokens"]) if usage else None,
            tokens_cached=int(usage.get("cached_tokens", 0)) if usage else None,
            premium=premium,
            seconds=round(seconds, 2),
            tool_calls=calls,
        )

    def _cassette(self, task: Task) -> Path:
        folder = self.replay or self.record or self.root / "cassettes"
        folder.mkdir(parents=True, exist_ok=True)
        path = (folder / f"{task.name}.copilot.jsonl").resolve()
        if any(c.isspace() for c in str(path)):  # `%copilot record` splits its line on spaces
            raise SystemExit(f"cassette folders may not have spaces in their path: {folder}")
        return path

    def close(self) -> None:
        self.kernel.close()


def not_run(task: Task, reason: str, seconds: float = 0.0, *, stopped: bool = False) -> Result:
    """A task's row when it did not run to its end: failed, costs unmeasured."""
    return Result(
        task=task.name,
        kind=task.kind,
        ok=False,
        reason=reason,
        rounds=0,
        tokens_in=None,
        tokens_out=None,
        premium=0.0,
        seconds=round(seconds, 2),
        stopped=stopped,
    )


def summary(results: list[Result]) -> dict[str, Any]:
    """The whole run in numbers: success rate and totals."""
    count = len(results)
    passed = sum(r.ok for r in results)
    return {
        "tasks": count,
        "passed": passed,
        "not_run": sum(r.stopped for r in results),
        "success_rate": round(passed / count, 3) if count else 0.0,
        "rounds": sum(r.rounds for r in results),
        "tokens_in": sum(r.tokens_in or 0 for r in results),
        "tokens_out": sum(r.tokens_out or 0 for r in results),
        "tokens_cached": sum(r.tokens_cached or 0 for r in results),
        "tokens_unknown": sum(r.tokens_in is None for r in results),
        "premium": sum(r.premium for r in results),
        "seconds": round(sum(r.seconds for r in results), 2),
    }


def table(results: list[Result]) -> str:
    """A Markdown table: one row per task, then the totals."""
    rows = ["| task | kind | ok | rounds | tokens in | cached | tokens out | premium | s | why |"]
    rows.append("|---|---|---|---:|---:|---:|---:|---:|---:|---|")
    for r in results:
        why = r.reason.replace("|", "\\|").replace("\n", " ")[:70]
        rows.append(
            f"| {r.task} | {r.kind} | {'✓' if r.ok else '✗'} | {r.rounds} | {_count(r.tokens_in)} "
            f"| {_count(r.tokens_cached)} | {_count(r.tokens_out)} | {r.premium:g} | {r.seconds:.1f} | {why} |"
        )
    s = summary(results)
    rows.append(
        f"| **all {s['tasks']}** | | **{s['passed']}/{s['tasks']} ({s['success_rate']:.0%})** "
        f"| {s['rounds']} | {s['tokens_in']:,} | {s['tokens_cached']:,} | {s['tokens_out']:,} | {s['premium']:g} "
        f"| {s['seconds']:.1f} | |"
    )
    return "\n".join(rows)


def _count(tokens: int | None) -> str:
    return "unknown" if tokens is None else f"{tokens:,}"


def report(results: list[Result], **about: Any) -> dict[str, Any]:
    """The run as JSON: what ran it, every task and the summary."""
    return {**about, "summary": summary(results), "tasks": [r.as_json() for r in results]}


def dumps(results: list[Result], **about: Any) -> str:
    return json.dumps(report(results, **about), indent=2)
