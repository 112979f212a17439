"""`copilot_nb.chat()`: the agent as a chat panel, in JupyterLab's sidebar or inline.

Each turn runs as a task on the kernel's event loop, so the kernel stays usable while the agent
works and Stop/Approve messages are handled at once (DESIGN.md facts 2-5). JupyterLab 4.4+ sends
comm messages to kernel subshells (ipykernel 7): their handlers run on another thread with its
own loop, so every message from the front end is handed to the panel's home loop (the kernel's
main loop) before it touches the turn. The task catches everything and shows it in the panel: a
task started from a comm handler would otherwise print into whichever cell happens to be
running. The front end (`front.js`) keeps the transcript; the kernel sends it only small
ops (`feed.py`).
"""

from __future__ import annotations

import asyncio
import sys
import traceback
from collections.abc import Callable
from contextlib import aclosing
from pathlib import Path
from typing import Any

import anywidget
import httpx
import traitlets
from IPython.core.error import UsageError

if sys.version_info >= (3, 11):
    from typing import assert_never
else:  # pragma: no cover
    from typing_extensions import assert_never

from ...agent.approvals.policy import ApprovalPolicy
from ...agent.modes.names import MODES, TurnMode
from ...agent.session import CopilotSession, TurnEvent
from ...errors import CopilotError
from ...events import ApprovalNeeded, Failed, Question, UsageReported
from ...kernel_bridge import call_on, running_loop
from .feed import UPDATE_INTERVAL, Outbox, end_op, error_op, event_ops, note_op
from .mentions import MAX_QUERY, Completer, session_context
from .wire import (
    Answer,
    Approve,
    Complete,
    CompletionsMessage,
    Deny,
    Fix,
    Form,
    FromPage,
    NewChat,
    Ping,
    Prompt,
    Ready,
    Revise,
    Run,
    Stop,
    StopRun,
    Undo,
    WireError,
    read_message,
)

_HERE = Path(__file__).parent
MAX_CELL_REFERENCE = 100
"""Characters of a cell id a view may send (nbformat ids are at most 64)."""
STALE_PAGE = (
    "The page and the kernel run different versions of copilot_nb: reload the page, or run "
    "copilot_nb.chat() again."
)
_USER_ERRORS = (CopilotError, UsageError)
"""Problems the user can fix (a bad model name, a missing key): shown without a traceback."""


class ChatWidget(anywidget.AnyWidget):
    """The panel's front end: state that views share is in traits; the transcript goes by ops."""

    _esm = "\n".join(
        (_HERE / name).read_text(encoding="utf-8")
        for name in (
            "markdown.js",
            "complete.js",
            "blocks.js",
            "cards.js",
            "link.js",
            "form.js",
            "runs.js",
            "front.js",
        )
    )
    _css = "\n".join(
        (_HERE / name).read_text(encoding="utf-8")
        for name in ("panel.css", "transcript.css", "form.css")
    )

    title = traitlets.Unicode("Copilot").tag(sync=True)
    models = traitlets.List(traitlets.Unicode()).tag(sync=True)
    model = traitlets.Unicode("").tag(sync=True)
    mode = traitlets.Unicode("agent").tag(sync=True)
    """The mode of the next turn sent from the panel (ask, plan or agent)."""
    busy = traitlets.Bool(False).tag(sync=True)
    tokens_in = traitlets.Int(0).tag(sync=True)
    """The conversation's input: every request's whole prompt, summed (what a bill counts)."""
    tokens_out = traitlets.Int(0).tag(sync=True)
    estimated = traitlets.Bool(False).tag(sync=True)
    """Some request's server sent no usage: the counts hold our estimate, shown as `~`."""
    context = traitlets.Int(0).tag(sync=True)
    """The window's fill: the last request's whole prompt (shown against `budget`)."""
    budget = traitlets.Int(0).tag(sync=True)
    usage_note = traitlets.Unicode("").tag(sync=True)
    """Premium requests and cost of the conversation (or why no cost): the meter's tooltip."""
    kernel = traitlets.Unicode("").tag(sync=True)
    """The id of the kernel the panel runs on: after its restart the extension reopens the panel."""


class ChatPanel:
    """A chat on a session: prompts from the widget become its turns, events become transcript ops.

    In a kernel the session is the one `%%copilot` cells use, so both continue one conversation.
    The panel is its turns' `Approver`: a question waits for a view's Approve or Deny.
    """

    def __init__(
        self,
        session: CopilotSession,
        *,
        models: list[str] | None = None,
        model: str | None = None,
        mode: TurnMode | None = None,
        approvals: ApprovalPolicy | None = None,
        budget: int = 0,
        max_rounds: int | None = None,
        title: str = "Copilot",
        interval: float = UPDATE_INTERVAL,
    ) -> None:
        spec = model or session.current_model_spec()
        choices = list(dict.fromkeys([spec, *(models or []), "offline"]))
        self.widget = ChatWidget(
            title=title, models=choices, model=spec, mode=mode or session.mode, budget=budget
        )
        self.outbox = Outbox(self.widget.send, interval=interval, call_later=_call_later)
        self._show_saved(session)
        self.session = session
        self.approvals = approvals
        """The panel's own policy for its turns; None: the session's at each turn."""
        self.max_rounds = max_rounds
        self.task: asyncio.Task[None] | None = None
        self._asking: dict[str, ApprovalNeeded] = {}
        self._shown_at: int | None = None
        self._loop = running_loop()
        """The loop turns run on: the kernel's main loop when made in a cell, else the first one."""
        self.completer = Completer(lambda: session_context(self.session))
        self._completing: asyncio.Task[None] | None = None
        self._blocks: set[asyncio.Task[None]] = set()
        from ..block_runs import BlockUndos

        self.undos = BlockUndos()
        """The Undo of each code block's Run shown here, by its card's id."""
        from .model_form import ModelForm

        self.form = ModelForm(session, self.widget.send, self._model_chosen)
        """The model form: provider, model and key (the key only in a message, never a trait)."""
        from .run_list import RunList

        self.run_list = RunList(
            session.shell, self.widget.send, live=lambda: self.widget.comm is not None
        )
        """The agent's runs going on, each with its own Stop (the turn's Stop leaves them)."""
        self.widget.on_msg(self._on_msg)
        from ..turn_mirrors import mirror_turns
        from .cell_turns import CellTurns

        self.cell_turns = CellTurns(self)
        """`%%copilot` turns of the same session, shown here as they happen."""
        mirror_turns(session, self.cell_turns)

    def _show_saved(self, session: CopilotSession) -> None:
        """Open on the conversation so far (saved, e.g. before a kernel restart), as it was shown
        live, with its tokens on the meter."""
        from .saved import conversation_ops

        ops, self._turns = conversation_ops(session.saved)
        self.outbox.seed(ops)
        self._meter(session)
        self._note_usage()

    def _meter(self, session: CopilotSession) -> None:
        """The meter shows the session's count of the conversation (`saved.usage`): the one
        that cells' footers and `%copilot usage` show too."""
        ledger = session.saved.usage
        total = ledger.total
        with self.widget.hold_sync():
            self.widget.tokens_in, self.widget.tokens_out = total.input, total.output
            self.widget.estimated = total.estimated > 0
            self.widget.context = ledger.context

    def _note_usage(self) -> None:
        from ..extension import copilot_magics
        from .saved import usage_note

        try:
            prices = dict(copilot_magics().prices)
        except Exception:  # no IPython here (a script's panel): no prices
            prices = {}
        self.widget.usage_note = usage_note(list(self._turns), prices)

    # --- what the user (or a test) does -----------------------------------------------------

    def send(self, prompt: str, *, shown: str = "") -> asyncio.Task[None] | None:
        """Start a turn for this prompt on the running loop; None if it was not started.
        `shown`: what the transcript shows as the user's request, where the prompt carries
        data besides their words (a failing cell and its error)."""
        prompt = prompt.strip()
        if not prompt:
            return None
        if self.busy or self.session.busy:
            wait = "press Stop first" if self.busy else "a %%copilot cell runs; wait for its end"
            self.outbox.put(note_op(f"Still working on the last request: {wait}."))
            return None
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        self.outbox.put({"op": "user", "text": shown.strip() or prompt})
        self.run_list.forget_ended()
        self.widget.busy = True
        self.task = self._loop.create_task(self._turn(prompt))
        return self.task

    def stop(self) -> None:
        """Cancel the running turn; the agent keeps a conversation the provider accepts."""
        if self.task is not None and not self.task.done():
            self.task.cancel()

    def new_chat(self) -> None:
        """Stop what runs, forget the conversation (shared with `%%copilot` cells) and the meter."""
        task = self.task
        if task is not None and not task.done():
            task.cancel()
            task.add_done_callback(lambda _: self._reset())
        else:
            self._reset()

    def discover_models(self) -> asyncio.Task[None] | None:
        """Fill the model picker from the provider's model list, in the background."""
        if self._loop is None:
            return None
        return self._loop.create_task(self._discover_models(self.widget.model))

    def _model_chosen(self, spec: str) -> None:
        """The form saves a model: the kernel's model now, by `%copilot model`'s own code (the
        magics' trait, so cells follow), and this panel's picker. CopilotError when it cannot
        be used, and nothing changes."""
        from IPython import get_ipython

        from ..commands.dispatch import use_model

        shell = get_ipython()
        magics = shell.magics_manager.registry.get("CopilotMagics") if shell is not None else None
        settings = magics if magics is not None and magics.session is self.session else None
        use_model(self.session, settings or _SessionModel(self.session), spec)
        self.widget.models = list(dict.fromkeys([spec, *self.widget.models]))
        self.widget.model = spec

    async def _discover_models(self, spec: str) -> None:
        from ..commands.login import model_choices

        try:
            found = await model_choices(spec, self.session.model(spec))
        except (CopilotError, httpx.HTTPError, ValueError):
            return  # not signed in, no /models, unreachable: the picker keeps what it has
        self.widget.models = list(dict.fromkeys([*self.widget.models, *found]))

    def run_block(self, code: str) -> asyncio.Task[None] | None:
        """A code block's Run: a `run_code` card, asking here where the policy asks."""
        if not code.strip() or self._loop is None:
            return None
        task = self._loop.create_task(self._run_block(code))
        self._blocks.add(task)
        task.add_done_callback(self._blocks.discard)
        return task

    async def _run_block(self, code: str) -> None:
        from ..block_runs import block_call_id, run_block

        call_id = block_call_id()
        try:
            async for event in run_block(
                self.session, code, self, call_id=call_id, undos=self.undos
            ):
                self.show(event)
            undoable = self.undos.get(call_id)
            if undoable is not None:  # its card says what Undo puts back, beside the button
                self.outbox.put({"op": "undoable", "id": call_id, "note": undoable.note})
        except Exception as exc:  # a bug of ours: shown here, not in a cell
            self.outbox.put(error_op(f"{type(exc).__name__}: {exc}", traceback.format_exc()))
        self.outbox.flush()

    def fix(self, cell: str) -> asyncio.Task[None] | None:
        """Fix with Copilot from the page: the turn for the failing cell `cell` (its id; empty:
        the last that failed), whose source and error the kernel reads itself."""
        if self._loop is None:
            return None
        task = self._loop.create_task(self._fix(cell))
        self._blocks.add(task)
        task.add_done_callback(self._blocks.discard)
        return task

    async def _fix(self, cell: str) -> None:
        from ..commands.fix import fix_prompt

        try:
            prompt, shown = await fix_prompt(self.session, cell)
        except _USER_ERRORS as exc:  # no such cell, or it shows no error: said here
            self.outbox.put(error_op(str(exc)))
            self.outbox.flush()
            return
        self.send(prompt, shown=shown)

    def undo_block(self, call_id: str) -> None:
        """A Run's Undo in its card: the variables put back, and the card says how it went."""
        ok, text = self.undos.undo(call_id)
        self.outbox.put({"op": "undone", "id": call_id, "ok": ok, "text": text})
        self.outbox.flush()

    async def wait(self) -> None:
        """Wait for the running turn, if any, to end."""
        if self.task is not None:
            await asyncio.wait([self.task])

    @property
    def busy(self) -> bool:
        return self.task is not None and not self.task.done()

    # --- the turn ---------------------------------------------------------------------------

    async def _turn(self, prompt: str) -> None:
        status = "failed"
        try:
            status = await self._run(prompt)
        except (asyncio.CancelledError, KeyboardInterrupt):
            status = "stopped"
        except _USER_ERRORS as exc:
            self.outbox.put(error_op(str(exc)))
        except BaseException as exc:  # a bug of ours or a tool's: show it here, not in a cell
            detail = "".join(traceback.format_exception(exc))
            self.outbox.put(error_op(f"{type(exc).__name__}: {exc}", detail))
        finally:
            self._end(status)

    async def _run(self, prompt: str) -> str:
        turn = self.session.turn(
            prompt,
            approver=self,
            model=self.widget.model,
            approvals=self.approvals,
            max_rounds=self.max_rounds,
            mode=self.mode,
        )
        status = "done"
        async with aclosing(turn) as events:
            async for event in events:
                self.show(event)
                if isinstance(event, Failed):
                    status = "failed"
        return status

    def answer(self, request: ApprovalNeeded) -> None:
        """The turn's `Approver`: the ask op is out; a view's Approve or Deny answers it."""
        self._asking[request.call_id] = request

    def show(self, event: TurnEvent) -> None:
        """One event of a turn: usage to the meter (the session has counted it already), the
        rest as transcript ops."""
        if isinstance(event, UsageReported):
            self._meter(self.session)
        if isinstance(event, ApprovalNeeded) and event.category == "plan":
            event.decision.add_done_callback(self._plan_answered)
        for op in event_ops(event):
            self.outbox.put(op)

    def _plan_answered(self, decision: asyncio.Future[tuple[bool, str]]) -> None:
        """An approved plan runs in agent mode, and the picker follows it there: the next
        request goes on with the work, not planning it again (a denied or revised plan leaves
        the user planning)."""
        if not decision.cancelled() and decision.result()[0]:
            self.widget.mode = "agent"

    def _end(self, status: str) -> None:
        self._asking.clear()  # the session denied what was left unanswered
        recorder = self.session.saved.recorder
        if recorder is not None and recorder.last_turn is not None:
            self._turns.append(recorder.last_turn)
            recorder.last_turn = None
            self._note_usage()
        self.outbox.put(end_op(status))
        self.widget.busy = False

    def _decide(self, call_id: str, approved: bool) -> None:
        request = self._asking.pop(call_id, None)
        if request is None or request.answered:
            return
        if approved:
            request.approve()
        else:
            request.deny()
        if request.category == "plan":  # no tool runs under its card: the outcome is final
            outcome = "approved" if approved else "not carried out"
            state = "ok" if approved else "error"
            self.outbox.put(
                {
                    "op": "asked",
                    "id": call_id,
                    "approved": approved,
                    "outcome": outcome,
                    "state": state,
                }
            )
        else:
            self.outbox.put({"op": "asked", "id": call_id, "approved": approved})

    def _revise(self, call_id: str, text: str) -> None:
        """A view's Revise of a plan: the words go to the model, which plans again."""
        request = self._asking.get(call_id)
        if request is None or request.answered or request.category != "plan" or not text.strip():
            return
        del self._asking[call_id]
        request.revise(text)
        self.outbox.put(
            {
                "op": "asked",
                "id": call_id,
                "approved": False,
                "outcome": f"revising: {text}",
                "state": "ok",
            }
        )

    def _reply(self, call_id: str, text: str) -> None:
        """A view's answer to the model's question (`ask_user`)."""
        request = self._asking.pop(call_id, None)
        if not isinstance(request, Question) or request.answered:
            return
        request.reply(text)
        self.outbox.put({"op": "asked", "id": call_id, "approved": True})

    @property
    def mode(self) -> TurnMode:
        """The picker's mode (a view can set any text: anything else is the default, agent)."""
        chosen = self.widget.mode
        return next((m for m in MODES if m == chosen), "agent")

    def _reset(self) -> None:
        self.session.reset()
        self._turns = []
        self._meter(self.session)
        self._note_usage()
        self.outbox.clear()

    # --- messages from the front end --------------------------------------------------------

    def _on_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """Take a message from a view, on whichever thread the kernel handles comms."""
        if self._loop is None:
            self._loop = running_loop()
        call_on(self._loop, self._dispatch, content)

    def _dispatch(self, content: Any) -> None:
        """Act on one message from a view, on the home loop; never raise into the kernel."""
        try:
            self._act(read_message(content))
        except WireError as exc:  # a page of another version: said in the transcript
            self.outbox.put(error_op(f"The panel's page sent {exc}. {STALE_PAGE}"))
            self.outbox.flush()
        except Exception as exc:
            self.outbox.put(error_op(f"{type(exc).__name__}: {exc}", traceback.format_exc()))

    def _act(self, message: FromPage) -> None:
        match message:
            case Prompt(text=text):
                self.send(text)
            case Stop():
                self.stop()
            case Approve(id=call_id) | Deny(id=call_id):
                self._decide(call_id, isinstance(message, Approve))
            case Answer(id=call_id, text=text):
                self._reply(call_id, text)
            case Revise(id=call_id, text=text):
                self._revise(call_id, text)
            case NewChat():
                self.new_chat()
            case Ready(view=view):
                self.outbox.replay(view)
                self.run_list.replay()
            case Complete():
                self.complete(message)
            case Ping(seq=seq):  # a view asks whether its kernel still answers (link.js)
                self.widget.send({"kind": "pong", "seq": seq})
            case Run(code=code):
                self.run_block(code)
            case Undo(id=call_id):
                self.undo_block(call_id)
            case StopRun(handle=handle):
                self.run_list.stop(handle)
            case Fix(cell=cell):  # Fix with Copilot: only the cell's id comes from the page
                self.fix(cell[:MAX_CELL_REFERENCE])
            case Form():  # never raises: a key it carries stays out of the error op
                self.form.handle(message)
            case _:
                assert_never(message)

    def complete(self, query: Complete) -> asyncio.Task[None] | None:
        """Answer a view's `@` query in a task (the newest query only: an older one is dropped);
        the answer names the view and echoes its `seq`, so a view shows only its latest."""
        if self._loop is None:
            self._loop = running_loop()
        if self._loop is None:
            return None
        if self._completing is not None:
            self._completing.cancel()
        answer = self._answer(query.query[:MAX_QUERY], query.seq, query.view)
        self._completing = self._loop.create_task(answer)
        return self._completing

    async def _answer(self, query: str, seq: int, view: str) -> None:
        answer: CompletionsMessage = {"kind": "completions", "seq": seq, "view": view, "items": []}
        try:
            answer["items"] = [c.wire() for c in await self.completer.candidates(query)]
        except Exception as exc:  # a bug of ours: an empty popup, the reason in the console
            answer["error"] = f"{type(exc).__name__}: {exc}"
        self.widget.send(answer)

    # --- display ----------------------------------------------------------------------------

    def _ipython_display_(self) -> None:
        """Show the panel inline, unless `chat()` already showed it for this same cell."""
        from IPython.display import display

        if self._shown_at is not None and self._shown_at == execution_count():
            self._shown_at = None
            return
        display(self.widget)

    def __repr__(self) -> str:
        return f"<ChatPanel model={self.widget.model!r} busy={self.busy}>"


class _SessionModel:
    """Where `use_model` writes for a panel on a session of its own (no magics): the session."""

    def __init__(self, session: CopilotSession) -> None:
        self._session = session

    @property
    def model(self) -> str:
        return self._session.current_model_spec()

    @model.setter
    def model(self, spec: str) -> None:
        self._session.model_spec = spec


def _call_later(delay: float, callback: Callable[[], None]) -> Any:
    loop = running_loop()
    if loop is None:
        return None  # no loop (plain script): the next op or the end of the turn flushes
    return loop.call_later(delay, callback)


def execution_count() -> int | None:
    """The kernel's execution count now (None outside IPython)."""
    from IPython import get_ipython

    shell = get_ipython()
    return shell.execution_count if shell is not None else None
