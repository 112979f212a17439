"""Budgets as they stand: the policy's caps read against the ledger, before each request and
after each reply. A policy file that cannot be read refuses every request (fail closed)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from .budgets import Standing, current_user, period_of
from .ledger import BudgetLedger, default_folder
from .loading import load_policy


def ledger() -> BudgetLedger:
    """The ledger the policy names (the first file that names one), else the user's own."""
    for rules in load_policy().rules:
        if rules.ledger:
            return BudgetLedger(Path(rules.ledger).expanduser())
    return BudgetLedger(default_folder())


def standings(user: str | None = None, now: datetime | None = None) -> list[Standing]:
    """Every budget that applies to `user` (default: `current_user()`) as it stands now."""
    user = user or current_user()
    now = now or datetime.now(timezone.utc)
    budgets = [b for r in load_policy().rules for b in r.budgets or () if b.applies_to(user)]
    if not budgets:
        return []
    book = ledger()
    found = []
    for budget in budgets:
        period, resets = period_of(budget.period, now)
        key = budget.key(user)
        found.append(
            Standing(
                budget=budget, key=key, period=period, used=book.used(key, period), resets=resets
            )
        )
    return found


def budget_refusal(user: str | None = None, now: datetime | None = None) -> str | None:
    """Why the next request may not be sent (a budget spent, a broken policy), or None."""
    broken = load_policy().broken_refusal("sending a request")
    if broken:
        return broken
    spent = [s for s in standings(user, now) if s.used >= s.budget.tokens]
    return spent[0].refusal() if spent else None


def count_tokens(tokens: int, user: str | None = None, now: datetime | None = None) -> None:
    """Add one request's tokens to every budget that applies (nothing without a budget)."""
    found = standings(user, now)
    if found:
        ledger().add({s.key: s.period for s in found}, tokens)


def budget_lines(user: str | None = None) -> list[str]:
    """What is left of each budget, for `%copilot usage`; none without budgets."""
    return [s.line() for s in standings(user)]


def budget_left(user: str | None = None) -> str:
    """What the budgets leave, in one line (a turn's closing note); "" without budgets."""
    found = standings(user)
    return "Budget: " + "; ".join(s.left_line() for s in found) if found else ""
