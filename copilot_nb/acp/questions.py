"""`ask_user` over ACP: the editor's elicitation form where the client offers one, else the
question is declined with the reason, and the model reads it and carries on."""

from __future__ import annotations

from typing import Any

from acp.schema import (
    AcceptElicitationResponse,
    ElicitationFormSessionMode,
    ElicitationSchema,
    ElicitationStringPropertySchema,
)

NO_ELICITATION = (
    "this editor cannot answer questions (its ACP client offers no elicitation form); "
    "go on without the answer, or say in your reply what you need to know"
)


async def ask(
    client: Any, capabilities: Any, session_id: str, event: dict[str, Any]
) -> dict[str, Any]:
    """The answer to the kernel's question: `approved` with the user's `text`, or declined."""
    elicitation = getattr(capabilities, "elicitation", None)
    if elicitation is None or elicitation.form is None:
        return {"approved": False, "text": NO_ELICITATION}
    answer = ElicitationStringPropertySchema(type="string", title="Answer")
    if event.get("options"):
        answer = ElicitationStringPropertySchema(
            type="string", title="Answer", enum=list(event["options"])
        )
    who = f"{event['asker']} asks: " if event.get("asker") else ""
    response = await client.create_elicitation(
        message=who + event["question"],
        mode=ElicitationFormSessionMode(
            session_id=session_id,
            tool_call_id=event["call_id"],
            requested_schema=ElicitationSchema(properties={"answer": answer}, required=["answer"]),
        ),
    )
    if isinstance(response, AcceptElicitationResponse):
        return {"approved": True, "text": str((response.content or {}).get("answer", ""))}
    return {"approved": False, "text": "the user declined to answer"}
