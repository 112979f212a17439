"""What a turn's model requests carry and must pass as they leave: the budget, the trace.

`TurnWatch` is what the turn's `watched` stage hands the model's endpoint for the turn
(`Endpoint.outgoing_with`): before each request leaves it checks the administrator's budgets
(a spent one stops the request, `BudgetExceeded`) and opens the request's `chat` span; each
request carries LiteLLM's `x-litellm-trace-id` (the conversation, so a gateway's per-session
budgets apply) and, while tracing, the W3C `traceparent`. After each reply it counts the tokens
in the ledger.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from ..errors import BudgetExceeded
from ..events import AgentEvent, UsageReported
from ..policy import budget_refusal, count_tokens

if TYPE_CHECKING:
    from .spans import TurnTrace

TRACE_HEADER = "x-litellm-trace-id"
"""LiteLLM's session id header: requests that share it are one session to its budgets."""


class TurnWatch:
    """One turn's budget and trace, seen from the requests it sends and the events it shows."""

    def __init__(
        self,
        *,
        conversation: str,
        trace: TurnTrace | None,
        tokens_of: Callable[[UsageReported], Mapping[str, int]],
    ) -> None:
        self.conversation = conversation
        self.trace = trace
        self._tokens_of = tokens_of

    def refusal(self) -> str | None:
        """Why no request may leave now (a budget spent), or None; the trace says so."""
        refusal = budget_refusal()
        if refusal and self.trace is not None:
            self.trace.fail(BudgetExceeded.__name__)
        return refusal

    def check(self) -> None:
        """Before a request leaves: raise BudgetExceeded if a budget is spent; open its span."""
        if self.trace is not None:
            self.trace.request()
        refusal = self.refusal()
        if refusal:
            raise BudgetExceeded(refusal)

    def headers(self) -> dict[str, str]:
        """What each request carries: the conversation for LiteLLM, the trace context."""
        found = {TRACE_HEADER: self.conversation}
        if self.trace is not None:
            self.trace.request()
            found.update(self.trace.traceparent())
        return found

    def before(self, event: AgentEvent) -> tuple[()]:
        """Count a reply's tokens; feed the trace."""
        if isinstance(event, UsageReported):
            count_tokens(sum(self._tokens_of(event).get(k, 0) for k in ("input", "output")))
        if self.trace is not None:
            self.trace.observe(event)
        return ()

    def end(self) -> None:
        if self.trace is not None:
            self.trace.end()
