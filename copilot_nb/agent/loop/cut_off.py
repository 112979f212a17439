"""A reply cut off by its output limit in the middle of a tool call.

The call the model was writing when the limit struck has arguments that end mid-way: running it
would act on half an argument, and sending it back as a call makes the server refuse the whole
conversation (llama-server answered 500 on every later request, and the turn died). So the call
is dropped from the reply, the calls before it (complete: the model had moved on) run as usual,
and the model is told in the next request what happened, so it can try again smaller.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...messages import AssistantMessage

LIMIT_REASONS = frozenset({"length", "max_tokens", "max_output_tokens"})
"""How providers say a reply stopped at its output limit (Chat Completions, Anthropic, Responses)."""


@dataclass(frozen=True, kw_only=True)
class CutOffCall:
    """The call a reply was writing when its output limit struck."""

    name: str
    characters: int
    """How much of its argument text had arrived."""

    @property
    def notice(self) -> str:
        """What the user is shown."""
        return (
            f"The reply reached its output limit in the middle of a call to {self.name}; "
            "that call was not run, and the model is asked to try again."
        )

    @property
    def to_model(self) -> str:
        """What the model is told in the next request."""
        return (
            f"[copilot_nb] Your last reply reached its output limit while you were writing a "
            f"call to {self.name} ({self.characters:,} characters of arguments had arrived), so "
            "that call was cut off and was not run. Make it again with shorter arguments (for "
            "a large file, write it in parts), or answer in text."
        )


def without_cut_off_call(message: AssistantMessage) -> tuple[AssistantMessage, CutOffCall | None]:
    """The reply without the call its output limit cut off, and that call (None: nothing was)."""
    if message.finish_reason not in LIMIT_REASONS or not message.tool_calls:
        return message, None
    last = message.tool_calls[-1]
    arguments = last.raw_arguments or (last.arguments if isinstance(last.arguments, str) else "")
    cut = CutOffCall(name=last.name or "a tool", characters=len(arguments))
    return replace(message, tool_calls=message.tool_calls[:-1]), cut
