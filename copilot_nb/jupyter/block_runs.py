"""A code block of an answer, run by its Run button: the model's own `run_code` tool, under the
same approval policy as when the model calls it, never run straight from the page.

The chat panel shows the run as a tool card (its Approve/Deny where the policy asks); a cell's
block asks through the live comm (`{event: 'run_block', id, code}`): the page shows the code in
a dialog when the policy asks (`run_block_ask`, answered by `run_block_answer`) and the result
under the block (`run_block_result`: the run's outputs as `output_html` renders them). The run
is the user's, not the model's: it is not added to the conversation.

Each Run is a checkpoint turn of its own, so `%copilot undo` takes back that Run alone, and
what its variables were before it is the Run's Undo: a button beside what it says it puts back
(`run_block_undo`, answered by `run_block_undone`; the panel's card the same). A Run that kept
nothing to put back promises nothing and has no button.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import OrderedDict
from collections.abc import AsyncGenerator, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # %load_ext imports this module (through live_channel): it stays light
    from ..agent.approvals.approver import Approver
    from ..agent.session import CopilotSession
    from ..events import ApprovalNeeded, ToolFinished, ToolStarted
    from ..workspace.checkpoints import Checkpoints
    from ..workspace.snapshots import Turn
    from .live_view import LiveView

TOOL = "run_code"
BUSY = "Copilot is still working on a request: run the block once it has finished"
KERNEL_NOTE = "\nkernel: "
"""How run_code's result says what Undo puts back in the kernel (`tools/kernel/run_outputs.py`)."""
MAX_UNDOS = 100
"""Runs whose Undo is remembered (the checkpoints keep fewer turns anyway)."""
_ids = itertools.count(1)


@dataclass(frozen=True, kw_only=True)
class Undoable:
    """What one Run's Undo puts back: the variables its run kept, in its own checkpoint turn."""

    checkpoints: Checkpoints
    turn: Turn
    note: str
    """What the run said Undo puts back ("Undo puts back df …")."""

    def undo(self) -> tuple[bool, str]:
        """Put the variables back, as `%copilot undo` takes back a run: (done, what happened).
        Refused, putting nothing back, when one was changed since the run or the turn is gone."""
        from ..errors import SandboxError

        if self.turn not in self.checkpoints.turns:
            return False, f"Not put back: {self.checkpoints.gone()}"
        changed = list(dict.fromkeys(n for o in self.turn.others for n in o.changed_since()))
        if changed:
            return False, (
                f"Not put back: {', '.join(changed)} changed since the run, and Undo would lose "
                "that change; set it again by hand if you want the earlier value"
            )
        try:
            restored = self.checkpoints.undo_turn(self.turn)
        except SandboxError as exc:  # changed in between
            return False, f"Not put back: {exc}"
        done = [r for r in restored if r.action == "restored"]
        said = "; ".join(f"{r.path} {r.action} ({r.detail})" for r in restored)
        return bool(done), ("Put back: " if done else "Not put back: ") + said


class BlockUndos:
    """The Runs whose Undo is still offered, by the id their surface gave them (newest kept)."""

    def __init__(self) -> None:
        self._undos: OrderedDict[Hashable, Undoable] = OrderedDict()

    def keep(self, key: Hashable, undoable: Undoable) -> None:
        self._undos[key] = undoable
        while len(self._undos) > MAX_UNDOS:
            self._undos.popitem(last=False)

    def get(self, key: Hashable) -> Undoable | None:
        return self._undos.get(key)

    def undo(self, key: Hashable) -> tuple[bool, str]:
        """Take one Run back (once: a second click is told so)."""
        undoable = self._undos.pop(key, None)
        if undoable is None:
            return False, "Not put back: this run has nothing to put back, or was put back already"
        return undoable.undo()


def block_call_id() -> str:
    """A call id no model call has (theirs come from the provider)."""
    return f"block-{next(_ids)}"


async def run_block(
    session: CopilotSession,
    code: str,
    approver: Approver,
    *,
    call_id: str,
    undos: BlockUndos | None = None,
    key: Hashable = None,
) -> AsyncGenerator[ToolStarted | ApprovalNeeded | ToolFinished, None]:
    """The events of one Run: the card starts, the approval where the policy asks, the result.
    What its Undo can put back goes into `undos` under `key` (else the call id), and the
    result's text then leaves out the promise the Undo's own line makes."""
    from ..agent.approvals.policy import answer_of, policy_refusal, rule_on
    from ..events import ApprovalNeeded, ToolFinished, ToolStarted
    from ..text import first_line

    arguments = {"code": code}
    yield ToolStarted(call_id=call_id, name=TOOL, arguments=arguments, summary=first_line(code))
    workspace = session.workspace()
    tools = session.tools_for(workspace)
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
    turn = workspace.begin_turn(f"a code block's Run: {first_line(code, 80)}")
    from ..tools.kernel.run_tools import to_the_end

    with to_the_end():  # the user's own Run shows its result under the block, however long
        output = await tools.call_tool(TOOL, arguments, timeout=session.tool_timeout)
    content = output.content
    if turn.others and undos is not None and KERNEL_NOTE in content:
        content, _, note = content.rpartition(KERNEL_NOTE)
        undoable = Undoable(checkpoints=workspace.checkpoints, turn=turn, note=note)
        undos.keep(key if key is not None else call_id, undoable)
    yield ToolFinished(
        call_id=call_id,
        name=TOOL,
        ok=not output.is_error,
        summary=output.summary or first_line(output.content),
        content=content,
        outputs=output.outputs,
    )


class PageApprover:
    """Asks the page a cell's block came from; its dialog's answer comes back as an event."""

    def __init__(self, view: LiveView, block: Any) -> None:
        self.view = view
        self.block = block
        self.request: ApprovalNeeded | None = None

    def answer(self, request: ApprovalNeeded) -> None:
        """The page's dialog asks as a cell would: its question and warning (`approval_prompt`)."""
        from .approval_prompt import question, warning

        self.request = request
        self.view.comm.send(
            {
                "event": "run_block_ask",
                "id": self.block,
                "category": request.category,
                "question": question(request),
                "warning": warning(request),
            }
        )


class PageRuns:
    """The blocks of cells that are running or asking, by the page's id for each, and the
    Undo of those that ran."""

    def __init__(self) -> None:
        self.asking: dict[tuple[int, Any], PageApprover] = {}
        self.undos = BlockUndos()

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
        from .output_html import outputs_html

        self.asking[key] = approver
        try:
            call_id = block_call_id()
            events = run_block(
                magics.session, code, approver, call_id=call_id, undos=self.undos, key=key
            )
            async for event in events:
                if isinstance(event, ToolFinished):
                    result.update(ok=event.ok, summary=event.summary, output=event.content)
                    result["html"] = outputs_html(event.outputs)
                    undoable = self.undos.get(key)
                    if undoable is not None:
                        result["undo"] = undoable.note
        except Exception as exc:  # a bug of ours: the page says so instead of waiting
            result["output"] = f"{type(exc).__name__}: {exc}"
        finally:
            self.asking.pop(key, None)
        view.comm.send(result)

    def undo(self, view: LiveView, data: dict[str, Any]) -> None:
        """`{event: 'run_block_undo', id}`: the Undo beside a Run's result; the answer is
        `{event: 'run_block_undone', id, ok, text}`."""
        ok, text = self.undos.undo((id(view), data.get("id")))
        view.comm.send({"event": "run_block_undone", "id": data.get("id"), "ok": ok, "text": text})

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
