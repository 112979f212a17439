"""A code block of an answer, run by its Run button: the model's own `run_code` tool, under the
same approval policy as when the model calls it, never run straight from the page.

The chat panel shows the run as a tool card (its Approve/Deny where the policy asks); a cell's
block asks through the live comm (`{event: 'run_block', id, code}`): the page shows the code in
a dialog when the policy asks (`run_block_ask`, answered by `run_block_answer`) and the result
under the block (`run_block_result`). The run is the user's, not the model's: it is not added to
the conversation.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # %load_ext imports this module (through live_channel): it stays light
    from ..agent.approvals.approver import Approver
    from ..agent.session import CopilotSession
    from ..events import ApprovalNeeded, ToolFinished, ToolStarted
    from .live_view import LiveView

TOOL = "run_code"
BUSY = "Copilot is still working on a request: run the block once it has finished"
_ids = itertools.count(1)


def block_call_id() -> str:
    """A call id no model call has (theirs come from the provider)."""
    return f"block-{next(_ids)}"


async def run_block(
    session: CopilotSession, code: str, approver: Approver, *, call_id: str
) -> AsyncGenerator[ToolStarted | ApprovalNeeded | ToolFinished, None]:
    """The events of one Run: the card starts, the approval where the policy asks, the result."""
    from ..agent.approvals.policy import answer_of, policy_refusal, rule_on
    from ..events import ApprovalNeeded, ToolFinished, ToolStarted
    from ..text import first_line

    arguments = {"code": code}
    yield ToolStarted(call_id=call_id, name=TOOL, arguments=arguments, summary=first_line(code))
    tools = session.tools_for(session.workspace())
    tool = tools.get(TOOL)
    ruling = await rule_on(session.approvals, TOOL, tool, arguments)
    category, decision = ruling.category, ruling.decision
    refusal = ""
    if tool is None:
        refusal = f"{TOOL} is not among this session's tools, so a block cannot run here"
    elif session.busy:
        refusal = BUSY
    elif decision == "deny":
        refusal = policy_refusal(TOOL, category)
    elif decision == "ask":
        request = ApprovalNeeded(
            call_id=call_id,
            name=TOOL,
            arguments=arguments,
            summary=first_line(code),
            category=category,
            decision=asyncio.get_running_loop().create_future(),
            note=ruling.note,
        )
        yield request
        approver.answer(request)
        refusal = await answer_of(request, None)
    if refusal:
        yield ToolFinished(call_id=call_id, name=TOOL, ok=False, summary="not run", content=refusal)
        return
    output = await tools.call_tool(TOOL, arguments, timeout=session.tool_timeout)
    summary = output.summary or first_line(output.content)
    yield ToolFinished(
        call_id=call_id, name=TOOL, ok=not output.is_error, summary=summary, content=output.content
    )


class PageApprover:
    """Asks the page a cell's block came from; its dialog's answer comes back as an event."""

    def __init__(self, view: LiveView, block: Any) -> None:
        self.view = view
        self.block = block
        self.request: ApprovalNeeded | None = None

    def answer(self, request: ApprovalNeeded) -> None:
        self.request = request
        self.view.comm.send(
            {"event": "run_block_ask", "id": self.block, "category": request.category}
        )


class PageRuns:
    """The blocks of cells that are running or asking, by the page's id for each."""

    def __init__(self) -> None:
        self.asking: dict[tuple[int, Any], PageApprover] = {}

    async def run(self, shell: Any, view: LiveView, data: dict[str, Any]) -> None:
        """Run one block for the page and send it the outcome; never raise into the kernel."""
        block, code = data.get("id"), data.get("code")
        magics = shell.magics_manager.registry.get("CopilotMagics")
        key = (id(view), block)
        approver = PageApprover(view, block)
        result: dict[str, Any] = {"event": "run_block_result", "id": block, "ok": False}
        if not isinstance(code, str) or not code.strip() or magics is None:
            result["output"] = "a run_block event needs the block's code and copilot_nb loaded"
            view.comm.send(result)
            return
        from ..events import ToolFinished

        self.asking[key] = approver
        try:
            events = run_block(magics.session, code, approver, call_id=block_call_id())
            async for event in events:
                if isinstance(event, ToolFinished):
                    result.update(ok=event.ok, summary=event.summary, output=event.content)
        except Exception as exc:  # a bug of ours: the page says so instead of waiting
            result["output"] = f"{type(exc).__name__}: {exc}"
        finally:
            self.asking.pop(key, None)
        view.comm.send(result)

    def answered(self, view: LiveView, data: dict[str, Any]) -> None:
        """`{event: 'run_block_answer', id, approved}`: the dialog's Run or Cancel."""
        approver = self.asking.get((id(view), data.get("id")))
        request = approver.request if approver is not None else None
        if request is None or request.answered:
            return
        if data.get("approved") is True:
            request.approve()
        else:
            request.deny()
