"""Who decides whether a tool call may run: a policy per tool category, and per tool.

Reads are harmless and run at once, except reads of secrets (`.env`, keys, credentials, masked
kernel variables), which ask: a hijacked model must not be able to read a token and put it in its
next request unseen. Edits and code execution change the user's world, so the surfaces (magic,
panel) ask by default. So do calls of MCP servers' tools (`external`): they run outside the
sandbox; approving one call trusts its server until its command or its tools change. A denial is not an error of ours: it becomes a result the
model reads ("the user denied ..."), and it can try another way or ask the user.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, cast

from ...errors import ConfigError
from ...events import APPROVED_ONCE
from ...policy import approval_floor, floor_source, tightened
from ..skills.scripts import ALWAYS, skill_script_in, skill_text_source, what_runs
from .edit_targets import acts_later

if TYPE_CHECKING:
    from ...events import ApprovalNeeded, CallPreview
    from ...tools.registry import Tool

Decision = Literal["allow", "ask", "deny"]
DECISIONS: tuple[Decision, ...] = ("allow", "ask", "deny")
EditDecision = Literal["allow", "ask", "deny", "review"]
EDIT_DECISIONS: tuple[EditDecision, ...] = (*DECISIONS, "review")
"""Edits may also be `review`: applied at once in a live notebook and reviewed there, cell by
cell (`tools/review.py`); the session resolves it per turn, and unresolved it asks."""


@dataclass(frozen=True, kw_only=True)
class ApprovalPolicy:
    """`allow`, `ask` or `deny` per category (read, read-secret, edit, execute, external), with
    per-tool overrides."""

    read: Decision = "allow"
    read_secret: Decision = "ask"
    edit: EditDecision = "ask"
    execute: Decision = "ask"
    external: Decision = "ask"
    tools: Mapping[str, Decision] = field(default_factory=dict)
    reviewing: bool = False
    """This turn's edits apply in a live notebook and wait there for review (set per turn by
    `modes/review.resolved`), which meets an administrator's `review` floor."""

    def __post_init__(self) -> None:
        for name, value in (
            ("read", self.read),
            ("read_secret", self.read_secret),
            ("edit", self.edit),
            ("execute", self.execute),
            ("external", self.external),
            *self.tools.items(),
        ):
            if value not in DECISIONS and not (name == "edit" and value == "review"):
                raise ConfigError(
                    f"approval for {name!r} must be one of {DECISIONS}, not {value!r}"
                )

    def decide(self, tool_name: str, category: str) -> Decision:
        """The decision for one call: a per-tool override wins over its category."""
        if tool_name in self.tools:
            return self.tools[tool_name]
        if category == "read":
            return self.read
        if category == "read-secret":
            return self.read_secret
        if category == "execute":
            return self.execute
        if category == "external":
            return self.external
        # "edit" and any category we do not know: changes ask; a review the session did not
        # resolve for a live notebook asks too
        return "ask" if self.edit == "review" else self.edit

    @classmethod
    def allow_all(cls) -> ApprovalPolicy:
        """Everything runs without asking, reading secrets too: for a script that owns its loop."""
        return cls(
            read="allow", read_secret="allow", edit="allow", execute="allow", external="allow"
        )

    def approve_changes(self) -> ApprovalPolicy:
        """The same policy with every edit, execution and MCP call allowed (`--yes`); secrets
        still ask."""
        return replace(
            self,
            edit="allow",
            execute="allow",
            external="allow",
            tools={k: v for k, v in self.tools.items() if v != "ask"},
        )

    def read_only(self) -> ApprovalPolicy:
        """The same policy with every change refused (`--read-only`): MCP tools too, since
        nothing says what they change."""
        return replace(
            self,
            edit="deny",
            execute="deny",
            external="deny",
            tools={k: v for k, v in self.tools.items() if v != "allow"},
        )


def decide_call(
    policy: ApprovalPolicy, name: str, tool: Tool | None, arguments: Any, *, runs: str = ""
) -> tuple[str, Decision]:
    """The category and decision for one call as the model sent it. A call that cannot run
    (unknown tool, arguments that are not an object) needs nobody's approval: its error result
    is all it does. A tool whose source the user approved as a whole, unchanged since, runs
    where its category would ask; a skill's script never runs unasked (`skills/scripts.py`),
    judged on the arguments and on `runs`, the code the call will run where they do not hold it."""
    if tool is None or not isinstance(arguments, dict):
        return "read", "allow"
    category = tool.category_for(arguments)
    decision = policy.decide(name, category)
    if decision == "ask" and tool.trust is not None and tool.trust.granted():
        decision = "allow"
    if decision == "allow" and category == "execute" and skill_script_in(arguments, runs):
        decision = "ask"
    # The administrator's floor last: no setting, option or trust goes below it.
    reviewed = policy.reviewing and category == "edit" and decision == "allow"
    if reviewed and acts_later(arguments):  # applied before review, it could act unreviewed
        reviewed, decision = False, "ask"
    supported = EDIT_DECISIONS if reviewed else DECISIONS
    floored = tightened(category, decision, supported)
    return category, cast(Decision, "allow" if floored == "review" else floored)


@dataclass(frozen=True, kw_only=True)
class Ruling:
    """A call's category and decision, why it asks where its settings would not, and the
    preview read to decide (an execute call's code)."""

    category: str
    decision: Decision
    why: str = ""
    """Why it asks whatever the settings say: the skill whose code it runs."""
    note: str = ""
    """The same, as the question says it."""
    preview: CallPreview | None = None


async def rule_on(policy: ApprovalPolicy, name: str, tool: Tool | None, arguments: Any) -> Ruling:
    """`decide_call` on what the call will run: an execute call whose arguments do not hold its
    code (run_cell's `#6`, rebuild_names' names) is judged on its preview's code, read first."""
    preview = None
    if (
        tool is not None
        and isinstance(arguments, dict)
        and tool.category_for(arguments) == ("execute")
    ):
        preview = await call_preview(tool, arguments)
    runs = preview.text if preview is not None else ""
    category, decision = decide_call(policy, name, tool, arguments, runs=runs)
    why = skill_script_in(arguments, runs) if category == "execute" and decision == "ask" else ""
    note = f"{why}; {ALWAYS}" if why else ""
    if why and preview is None:
        preview = _skill_preview(arguments)
    return Ruling(category=category, decision=decision, why=why, note=note, preview=preview)


def _skill_preview(arguments: Any) -> CallPreview | None:
    """A call that runs a skill's script, named as that script (`run_code`'s first line would
    be the script's docstring), its code shown whole; None where no `code` holds the text."""
    from ...events import CallPreview

    code = arguments.get("code") if isinstance(arguments, dict) else None
    source = skill_text_source({"code": code}) if isinstance(code, str) else ""
    return CallPreview(summary=what_runs(source), text=code) if source and code else None


def policy_refusal(name: str, category: str) -> str:
    """What the model reads when the policy denies a call outright (naming the administrator's
    rule when it was theirs)."""
    if approval_floor(category) == "deny":
        return f"{name}: denied by the administrator's policy ({floor_source(category)})"
    return f"{name}: denied by the approval policy ({category} tools are not allowed here)"


async def call_preview(tool: Tool | None, arguments: Any) -> CallPreview | None:
    """What a call will do, for its approval, where the tool can say it better than its
    arguments; None when it cannot (the arguments are shown, and the call itself reports any
    problem, so a failing preview never stops the question)."""
    if tool is None or tool.describe is None or not isinstance(arguments, Mapping):
        return None
    try:
        return await tool.describe(arguments)
    except Exception:  # a cell that is gone, a notebook that cannot be read: the call says so
        return None


async def answer_of(request: ApprovalNeeded, trust: Any) -> str:
    """'' once the user approved (which trusts the tool's source, where it has one), else the
    refusal the model reads."""
    approved, reason = await request.decision
    if approved:
        if trust is not None and reason != APPROVED_ONCE:
            trust.grant()
        return ""
    return f"{request.name}: the user denied this call" + (f": {reason}" if reason else "")
