"""`ask_user`: the model asks the user a question in the middle of a turn, and waits.

The question is a `Question` event sent out of the running tool call (`Agent.emit`), so it takes
the approvals' path on every surface: buttons and a text box in the cell and the panel,
`input()` in a console, and a refusal where nobody is at the keyboard. The model reads the
answer, or the refusal, as the tool's result. (An MCP server's elicitation takes the same event:
`tools/mcp/elicitation.py`.)
"""

from __future__ import annotations

import asyncio
from typing import Any

from ...events import Question
from ...tools.registry import Tool, ToolOutput
from ...tools.schemas.check import own_schema

MAX_OPTIONS = 6
MAX_QUESTION = 2000
DESCRIPTION = (
    "Ask the user a question and wait for the answer: not for what the read tools can find, "
    "nor for permission (changing calls ask by themselves). Give short `options` when the "
    "answer is one of a few. If the user declines or nobody can answer, decide yourself, say "
    "what you assumed, and go on."
)


def question_event(
    text: str, options: list[str] | tuple[str, ...], *, call_id: str, name: str, parent: str = ""
) -> Question:
    """A question waiting for its answer, on the running loop."""
    future: asyncio.Future[tuple[bool, str]] = asyncio.get_running_loop().create_future()
    return Question(
        call_id=call_id,
        name=name,
        arguments={"question": text, "options": list(options)},
        summary=text.splitlines()[0][:120] if text.strip() else "a question",
        category="read",
        decision=future,
        question=text,
        options=tuple(options),
        parent=parent,
    )


async def asked(request: Question) -> tuple[bool, str]:
    """The answer (True, text), or (False, why) when refused or left unanswered."""
    return await request.decision


def ask_user_tool(agent: Any) -> Tool:
    """The `ask_user` tool of an agent (an `Agent`): its question goes out through the agent's
    run, whose surface asks the user."""

    async def ask_user(question: str, options: list[str] | None = None) -> ToolOutput:
        text = question.strip()
        if not text:
            return ToolOutput(content="ask_user: the question is empty; write it", is_error=True)
        choices = [o.strip() for o in (options or []) if isinstance(o, str) and o.strip()]
        if len(text) > MAX_QUESTION or len(choices) > MAX_OPTIONS:
            return ToolOutput(
                content=f"ask_user: keep the question under {MAX_QUESTION} characters and at "
                f"most {MAX_OPTIONS} options",
                is_error=True,
            )
        request = question_event(
            text, choices, call_id=agent.current_call_id or "ask_user", name="ask_user"
        )
        agent.emit(request)
        answered, answer = await asked(request)
        if not answered:
            why = f": {answer}" if answer else ""
            return ToolOutput(
                content=f"ask_user: the user did not answer{why}. Decide yourself, say which "
                "assumption you made, and go on.",
                is_error=True,
                summary="not answered",
            )
        return ToolOutput(
            content=f"The user answered: {answer}"
            if answer.strip()
            else "The user answered with nothing (an empty reply): decide yourself and say so.",
            summary=answer[:80],
        )

    return Tool(
        name="ask_user",
        description=DESCRIPTION,
        parameters=own_schema(
            {
                "type": "object",
                "properties": {
                    "question": {"type": "string", "description": "one clear question"},
                    "options": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": f"up to {MAX_OPTIONS} short suggested answers",
                    },
                },
                "required": ["question"],
                "additionalProperties": False,
            }
        ),
        function=ask_user,
        category="read",
        waits_for_user=True,
    )
