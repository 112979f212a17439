"""The ACP agent: sessions are kernels, prompts are the kernel's turns, answers are the editor's.

Each method maps one ACP request onto what copilot_nb already does; none re-implements a turn.
The editor's permission answers settle the kernel's approval requests (the administrator's
floors were applied before anything was asked); `session/cancel` cancels the kernel's turn task,
which denies what was unanswered and stops the run where a cell's Stop would.
"""

from __future__ import annotations

import asyncio
import logging
import os
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    AuthenticateResponse,
    CloseSessionResponse,
    ConfigOptionUpdate,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    Usage,
)

from ..agent.conversations.store import ConversationFile
from ..agent.model_strings import default_model_spec
from ..agent.modes.names import MODES
from ..errors import ConfigError
from . import saved, sign_in, updates
from .kernel_link import KernelLink
from .mcp_given import entries_of
from .model_choice import MODEL, listed, model_option
from .prompt_text import prompt_text

_log = logging.getLogger(__name__)

MODE_NAMES = {
    "ask": "Ask: answers and reads; changes nothing",
    "plan": "Plan: proposes a plan to approve before any change",
    "agent": "Agent: reads, edits and runs, each change as your approvals say",
}


@dataclass
class Session:
    """One ACP session: its kernel, its mode, and the turn running now."""

    id: str
    cwd: str
    link: KernelLink
    mode: str = "agent"
    model: str = ""
    cancelled: bool = False
    said_failure: bool = False
    choices: list[str] = field(default_factory=list)
    last_call: str = ""
    usage: dict[str, int] = field(default_factory=lambda: {"input": 0, "output": 0})


class CopilotAgent:
    """copilot_nb over ACP: `acp.run_agent(CopilotAgent())` serves it on stdio."""

    def __init__(
        self,
        env: dict[str, str] | None = None,
        *,
        notebook: str | None = None,
        connection_file: str | None = None,
    ) -> None:
        self.client: Any = None
        self.sessions: dict[str, Session] = {}
        self.env = env
        self.notebook = notebook
        """The notebook sessions work on unless one names its own (`_meta.notebook`)."""
        self.connection_file = connection_file
        """A running kernel to attach to instead of starting one (`_meta.connectionFile`)."""
        self.client_capabilities: Any = None

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self.client_capabilities = client_capabilities
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(),
                ),
            ),
            auth_methods=sign_in.methods(),
            agent_info=Implementation(name="copilot-nb", title="copilot_nb", version=_version()),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        """Check the method's credential is there (the editor set the key, or the user signed
        in in its terminal); else say what to do."""
        try:
            missing = sign_in.signed_in(method_id)
        except ConfigError as exc:
            raise RequestError.invalid_params({"methodId": str(exc)}) from None
        if missing:
            raise RequestError.auth_required({"message": missing})
        return AuthenticateResponse()

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        """A kernel in `cwd` (or the one named), on a new saved conversation: its id is the
        session's."""
        session = await self._start(cwd, None, kwargs, mcp_servers)
        return NewSessionResponse(
            session_id=session.id, modes=self._modes(session), config_options=self._options(session)
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        """The saved conversation taken up in a new kernel, its history replayed as updates."""
        session = await self._start(cwd, session_id, kwargs, mcp_servers)
        for update in saved.replay(ConversationFile(session.link.saved).records(session_id)):
            await self._update(session, update)
        return LoadSessionResponse(
            modes=self._modes(session), config_options=self._options(session)
        )

    async def resume_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> ResumeSessionResponse:
        """The saved conversation taken up in a new kernel, without replaying it."""
        if session_id not in self.sessions:
            await self._start(cwd, session_id, kwargs, mcp_servers)
        session = self.sessions[session_id]
        return ResumeSessionResponse(
            modes=self._modes(session), config_options=self._options(session)
        )

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """The saved conversations of the notebook sessions work on (else the console's)."""
        notebook = kwargs.get("notebook") or self.notebook
        where = cwd or os.getcwd()
        if notebook:
            notebook = os.path.join(where, notebook)
        found = await asyncio.to_thread(saved.sessions, saved.conversation_file(notebook), where)
        return ListSessionsResponse(sessions=found)

    async def _start(
        self,
        cwd: str,
        conversation: str | None,
        meta: dict[str, Any],
        mcp_servers: list[Any] | None = None,
    ) -> Session:
        if not await asyncio.to_thread(os.path.isdir, cwd):
            raise RequestError.invalid_params({"cwd": f"{cwd} is not a folder"})
        notebook = meta.get("notebook") or self.notebook
        if missing := sign_in.missing_provider(default_model_spec()):
            raise RequestError.auth_required({"message": missing})
        link = KernelLink(cwd, self.env, notebook)
        try:
            await link.start(
                meta.get("connectionFile") or self.connection_file,
                conversation,
                entries_of(mcp_servers or []),
            )
        except LookupError as exc:
            await link.stop()
            raise RequestError.resource_not_found(str(exc)) from None
        except BaseException:
            await link.stop()
            raise
        session = Session(id=link.conversation, cwd=cwd, link=link, model=link.model)
        self.sessions[session.id] = session
        return session

    def _modes(self, session: Session) -> SessionModeState:
        return SessionModeState(
            current_mode_id=session.mode,
            available_modes=[
                SessionMode(id=mode, name=mode.capitalize(), description=MODE_NAMES[mode])
                for mode in MODES
            ],
        )

    def _options(self, session: Session) -> list[Any]:
        """The session's config options (its model); the provider's other models follow in a
        `config_option_update` once listed."""
        asyncio.get_running_loop().create_task(self._offer_models(session))
        return [model_option(session.model, session.choices)]

    async def _offer_models(self, session: Session) -> None:
        if session.choices:
            return
        session.choices = await listed(session.model)
        if session.choices:
            update = ConfigOptionUpdate(
                session_update="config_option_update",
                config_options=[model_option(session.model, session.choices)],
            )
            await self._update(session, update)

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        """The model for the session's next turns (an unknown one fails that turn, saying so)."""
        session = self._session(session_id)
        if config_id != MODEL or not isinstance(value, str) or not value.strip():
            raise RequestError.invalid_params(
                {"configId": f"{config_id}: only {MODEL!r} is set here"}
            )
        session.model = value.strip()
        return SetSessionConfigOptionResponse(
            config_options=[model_option(session.model, session.choices)]
        )

    def _session(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": f"no session {session_id}"})
        return session

    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        if mode_id not in MODES:
            raise RequestError.invalid_params({"modeId": f"{mode_id}: one of {', '.join(MODES)}"})
        self._session(session_id).mode = mode_id
        return SetSessionModeResponse()

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        session.cancelled = False
        session.said_failure = False
        session.usage = {"input": 0, "output": 0}
        link = session.link
        link.send(
            {
                "op": "prompt",
                "text": prompt_text(prompt, session.cwd),
                "mode": session.mode,
                "model": session.model,
            }
        )
        try:
            while True:
                message = await link.next()
                if message.get("op") == "end":
                    return await self._ended(session, message)
                if message.get("op") == "event":
                    await self._event(session, message["event"])
        except BaseException:
            link.send({"op": "cancel"})  # nothing waits in the kernel for an answer never sent
            raise

    async def _ended(self, session: Session, message: dict[str, Any]) -> PromptResponse:
        """The turn's stop reason and usage; a failure the turn did not show as a `Failed`
        event (our bug in the kernel, a dead kernel) is said as the reply's last text."""
        if message["status"] == "failed" and message.get("error") and not session.said_failure:
            text = f"\n{message['error']}"
            await self._update(session, updates.update_agent_message_text(text))
        usage = Usage(
            input_tokens=session.usage["input"],
            output_tokens=session.usage["output"],
            total_tokens=session.usage["input"] + session.usage["output"],
        )
        if session.cancelled or message["status"] == "cancelled":
            return PromptResponse(stop_reason="cancelled", usage=usage)
        return PromptResponse(stop_reason="end_turn", usage=usage)

    async def _event(self, session: Session, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "approval":
            await self._ask(session, event)
        elif kind == "question":
            await self._question(session, event)
        elif kind == "diff":
            if session.last_call:
                await self._update(session, updates.diff_update(event, session.last_call))
        elif kind == "usage":
            session.usage["input"] += event["input"]
            session.usage["output"] += event["output"]
            used = event.get("context") or event["input"]
            await self._update(session, updates.usage_update(used, event.get("window") or used))
        elif kind == "failed":
            session.said_failure = True
            await self._update(session, updates.update_agent_message_text(f"\n{event['error']}"))
        else:
            if kind == "tool_started":
                session.last_call = event["call_id"]
            update = updates.update_of(event)
            if update is not None:
                await self._update(session, update)

    async def _update(self, session: Session, update: Any) -> None:
        await self.client.session_update(session_id=session.id, update=update)

    async def _ask(self, session: Session, event: dict[str, Any]) -> None:
        """An approval: the editor's permission dialog; its answer goes back to the kernel."""
        plan = event["category"] == "plan"
        if plan:
            await self._update(session, updates.plan_of(str(event["arguments"].get("plan", ""))))
        answer: dict[str, Any] = {"op": "answer", "call_id": event["call_id"], "approved": False}
        if session.cancelled:
            session.link.send(answer)
            return
        response = await self.client.request_permission(
            session_id=session.id,
            tool_call=updates.permission_call(event),
            options=updates.PLAN_OPTIONS if plan else updates.PERMISSION_OPTIONS,
        )
        outcome = response.outcome
        if isinstance(outcome, AllowedOutcome) and outcome.option_id in (
            updates.ALLOW_ONCE,
            updates.ALLOW_ALWAYS,
        ):
            answer["approved"] = True
            answer["always"] = outcome.option_id == updates.ALLOW_ALWAYS
            if plan:
                session.mode = "agent"  # an approved plan is carried out, and work goes on there
        else:
            answer["text"] = "the user rejected this call in the editor"
        session.link.send(answer)

    async def _question(self, session: Session, event: dict[str, Any]) -> None:
        """`ask_user`: the editor's elicitation where it offers one; else declined, saying why."""
        from .questions import ask

        answer = await ask(self.client, self.client_capabilities, session.id, event)
        session.link.send({"op": "answer", "call_id": event["call_id"], **answer})

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is None:
            return
        session.cancelled = True
        session.link.send({"op": "cancel"})

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """The session's kernel shut down (an attached one is left running); its conversation
        stays saved, for `session/load`."""
        session = self.sessions.pop(session_id, None)
        if session is not None:
            session.link.send({"op": "cancel"})
            await session.link.stop()
        return CloseSessionResponse()

    async def close(self) -> None:
        """Shut every session's kernel down (the editor closed the connection)."""
        await asyncio.gather(*(s.link.stop() for s in self.sessions.values()))
        self.sessions.clear()


def _version() -> str:
    """The installed package's version (the package itself is not imported: it loads Jupyter)."""
    from importlib.metadata import PackageNotFoundError, version

    with suppress(PackageNotFoundError):
        return version("copilot_nb")
    return "unknown"
