"""The administrator's budgets: how many tokens a user or a team may spend in a period.

Pure: a budget is parsed from a policy file's `budgets` list, and a budget's period, ledger key
and refusal are computed from the time and the counts given, so every edge is tested alone. The
counts themselves are kept by `ledger.py`. A budget only ever refuses: there is no setting of
the user's that adds to one, and every policy file's budgets apply, each on its own.
"""

from __future__ import annotations

import fnmatch
import getpass
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Literal

Scope = Literal["user", "team"]
Period = Literal["day", "week", "month"]
SCOPES: tuple[Scope, ...] = ("user", "team")
PERIODS: tuple[Period, ...] = ("day", "week", "month")
BUDGET_KEYS = ("scope", "period", "tokens", "team", "members")


class BudgetFormatError(ValueError):
    """A `budgets` entry the policy cannot mean: the file is refused whole (fail closed)."""


@dataclass(frozen=True, kw_only=True)
class Budget:
    """One cap: `tokens` per `period` (UTC) for each user, or for a team's members together."""

    scope: Scope
    period: Period
    tokens: int
    team: str = ""
    """The team's name, as the ledger and the messages name it (scope `team`)."""
    members: tuple[str, ...] = ("*",)
    """Shell patterns of the user names the team counts (scope `team`); `*`: everyone here."""
    source: str = ""

    def applies_to(self, user: str) -> bool:
        return self.scope == "user" or any(fnmatch.fnmatchcase(user, m) for m in self.members)

    def key(self, user: str) -> str:
        """Whose count it is in the ledger: `user:alice`, `team:data-science`."""
        return f"user:{user}" if self.scope == "user" else f"team:{self.team}"

    def describe(self) -> str:
        who = "each user" if self.scope == "user" else f"team {self.team}"
        return f"{self.tokens:,} tokens per {self.period} for {who}"


def period_of(period: Period, now: datetime) -> tuple[str, datetime]:
    """The period `now` falls in, as the ledger labels it, and when the next one starts (UTC)."""
    now = now.astimezone(timezone.utc)
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "day":
        return day.strftime("%Y-%m-%d"), day + timedelta(days=1)
    if period == "week":
        start = day - timedelta(days=day.weekday())
        year, week, _ = start.isocalendar()
        return f"{year}-W{week:02d}", start + timedelta(days=7)
    start = day.replace(day=1)
    following = (start + timedelta(days=32)).replace(day=1)
    return start.strftime("%Y-%m"), following


_user: list[str] = []


def current_user(environ: Mapping[str, str] | None = None) -> str:
    """Whose budget a turn spends: `JUPYTERHUB_USER` (a hub's user, whose containers may all
    run as one login), else the login name. The kernel's own is read once, at its first
    turn: a `%env JUPYTERHUB_USER=...` later does not make the kernel someone else."""
    if environ is not None:
        return environ.get("JUPYTERHUB_USER") or getpass.getuser()
    if not _user:
        _user.append(os.environ.get("JUPYTERHUB_USER") or getpass.getuser())
    return _user[0]


@dataclass(frozen=True, kw_only=True)
class Standing:
    """One budget as it stands for one user now: used, left, when it resets."""

    budget: Budget
    key: str
    period: str
    used: int
    resets: datetime

    @property
    def left(self) -> int:
        return max(0, self.budget.tokens - self.used)

    def line(self) -> str:
        """`team ds: 12,000 of 200,000 tokens this day (2026-12-07) used, 188,000 left; ...`"""
        return (
            f"{self.key}: {self.used:,} of {self.budget.tokens:,} tokens used this "
            f"{self.budget.period} ({self.period}), {self.left:,} left; resets "
            f"{self.resets:%Y-%m-%d %H:%M} UTC ({self.budget.source})"
        )

    def left_line(self) -> str:
        """`188,000 of 200,000 tokens left this day (user:alice)`: a turn's closing note."""
        return (
            f"{self.left:,} of {self.budget.tokens:,} tokens left this {self.budget.period} "
            f"({self.key})"
        )

    def refusal(self) -> str:
        """The pause: what was used, the limit, when it resets, whom to ask."""
        return (
            f"Budget reached: {self.key} has used {self.used:,} of {self.budget.tokens:,} tokens "
            f"this {self.budget.period} ({self.period}), so this request was not sent. "
            f"The limit is set by the administrator's policy ({self.budget.source}); it resets "
            f"{self.resets:%Y-%m-%d %H:%M} UTC. Ask your administrator to raise it, then run "
            "the cell again: the conversation continues where it stopped."
        )


def parse_budgets(value: Any) -> tuple[Budget, ...]:
    """A policy file's `budgets` list; anything unexpected is a BudgetFormatError naming it."""
    if not isinstance(value, list):
        raise BudgetFormatError("budgets must be a list of objects")
    return tuple(_budget(entry, index) for index, entry in enumerate(value))


def _budget(entry: Any, index: int) -> Budget:
    where = f"budgets[{index}]"
    if not isinstance(entry, dict):
        raise BudgetFormatError(f"{where} must be an object")
    unknown = sorted(set(entry) - set(BUDGET_KEYS))
    if unknown:
        raise BudgetFormatError(
            f"{where} has unknown key {', '.join(unknown)}; the keys are {', '.join(BUDGET_KEYS)}"
        )
    scope, period, tokens = entry.get("scope"), entry.get("period"), entry.get("tokens")
    if scope not in SCOPES:
        raise BudgetFormatError(f"{where}.scope is {scope!r}; use one of {', '.join(SCOPES)}")
    if period not in PERIODS:
        raise BudgetFormatError(f"{where}.period is {period!r}; use one of {', '.join(PERIODS)}")
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
        raise BudgetFormatError(f"{where}.tokens must be a whole number of tokens, 0 or more")
    team, members = entry.get("team", ""), entry.get("members", ["*"])
    if scope == "team" and (not isinstance(team, str) or not team.strip()):
        raise BudgetFormatError(f"{where} is a team budget: name the team in `team`")
    if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
        raise BudgetFormatError(f"{where}.members must be a list of user names or patterns")
    return Budget(scope=scope, period=period, tokens=tokens, team=team, members=tuple(members))
