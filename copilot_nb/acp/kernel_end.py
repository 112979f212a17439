"""The kernel's end of an ACP session: a comm the agent process opens, over which it sends
prompts, answers and cancels, and receives the turn's events.

The turn is the kernel's own (`CopilotSession.turn()`, the stages a `%%copilot` cell runs) as an
asyncio task on the kernel's loop, so the shell stays free for comm messages while it runs: an
answer or a cancel arrives at once, as the chat panel's do.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from dataclasses import replace
from typing import Any

from ..events import ApprovalNeeded, Failed, Question
from ..kernel_bridge import running_loop
from .event_wire import wire_of

TARGET = "copilot_nb.acp"


def install(shell: Any) -> None:
    """Listen for the agent process's comm (called once it has loaded copilot_nb here)."""
    from comm import get_comm_manager

    def opened(comm: Any, msg: dict[str, Any]) -> None:
        AcpEnd(shell, comm, msg["content"].get("data") or {})

    get_comm_manager().register_target(TARGET, opened)


class AcpEnd:
    """One agent process's session in this kernel: at most one turn at a time."""

    def __init__(self, shell: Any, comm: Any, data: dict[str, Any]) -> None:
        self.shell = shell
        self.comm = comm
        self.task: asyncio.Task[None] | None = None
        self._asking: dict[str, ApprovalNeeded] = {}
        comm.on_msg(self._message)
        self._session().mcp.given = dict(data.get("mcp") or {})
        try:
            conversation = self._conversation(data.get("conversation"))
        except Exception as exc:  # a file this version cannot read, an unknown id: said there
            comm.send({"op": "ready", "error": str(exc)})
            return
        session = self._session()
        comm.send(
            {
                "op": "ready",
                "model": session.current_model_spec(),
                "conversation": conversation,
                "saved": str(session.saved.file().path),
            }
        )

    def _conversation(self, wanted: str | None) -> str:
        """The saved conversation this ACP session is: `wanted` taken up again, else a new one
        (never the one `%load_ext` resumed: a new session starts afresh)."""
        from ..agent.conversations.recorder import Recorder

        session = self._session()
        saved = session.saved
        session.reset()  # as `%copilot resume` does: the next agent starts from what is loaded
        if wanted:
            if saved.resume(session.current_model_spec(), wanted) is None:
                raise LookupError(f"no saved conversation {wanted} in {saved.file().path}")
            return wanted
        if not saved.enabled:  # not saved here: a session of this kernel's life only
            return uuid.uuid4().hex
        if saved.recorder is None:
            saved.recorder = Recorder(saved.file())
        saved.recorder.start()
        return str(saved.recorder.conversation)

    def _session(self) -> Any:
        """The kernel's shared conversation: the one its cells and chat panel use too (the
        extension was loaded before the comm opened)."""
        return self.shell.magics_manager.registry["CopilotMagics"].session

    def _message(self, msg: dict[str, Any]) -> None:
        data = msg["content"]["data"]
        op = data.get("op")
        if op == "prompt":
            loop = running_loop() or asyncio.get_event_loop()
            self.task = loop.create_task(self._turn(data))
        elif op == "answer":
            self._answer(data)
        elif op == "cancel" and self.task is not None:
            self.task.cancel()

    async def _turn(self, data: dict[str, Any]) -> None:
        session = self._session()
        cwd = os.getcwd()
        status, error = "done", ""
        try:
            turn = session.turn(
                data["text"],
                approver=self,
                model=data.get("model") or None,
                mode=data.get("mode") or None,
            )
            async with contextlib.aclosing(turn) as events:
                async for event in events:
                    wired = wire_of(event, cwd)
                    if wired is not None and wired["type"] == "usage":
                        wired.update(self._context())
                    if wired is not None:
                        self.comm.send({"op": "event", "event": wired})
                    if isinstance(event, Failed):
                        status, error = "failed", event.error
        except asyncio.CancelledError:
            status = "cancelled"
        except Exception as exc:  # a user's mistake (an unknown model) or our bug: said there
            status, error = "failed", f"{type(exc).__name__}: {exc}"
        finally:
            self._asking.clear()  # the turn denied what was left unanswered
            self.comm.send({"op": "end", "status": status, "error": error})

    def _context(self) -> dict[str, int]:
        """The conversation's place in the window: the last request's prompt against the
        model's window (what the panel's meter shows)."""
        from ..agent.context.window import model_budget

        session = self._session()
        agent = session.agent
        window = model_budget(agent.active.model).window if agent is not None else 0
        return {"context": int(session.saved.usage.context), "window": int(window)}

    def answer(self, request: ApprovalNeeded) -> None:
        """The turn's `Approver`: the request went out as an event; the editor's answer settles it."""
        self._asking[request.call_id] = request

    def _answer(self, data: dict[str, Any]) -> None:
        request = self._asking.pop(str(data.get("call_id")), None)
        if request is None or request.answered:
            return
        if isinstance(request, Question):
            if data.get("approved"):
                request.reply(str(data.get("text", "")))
            else:
                request.deny(str(data.get("text") or "the user declined to answer"))
            return
        if not data.get("approved"):
            request.deny(str(data.get("text", "")))
            return
        if data.get("always"):
            session = self._session()  # later calls of this tool are allowed; the floors still hold
            tools = {**session.approvals.tools, request.name: "allow"}
            session.approvals = replace(session.approvals, tools=tools)
            request.approve()
        else:
            request.approve_once()
