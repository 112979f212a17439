"""The kernel's end of the live-notebook channel: the notebooks open in this kernel's front ends.

copilot_nb's front-end extension (`frontend/src/index.ts`) opens one comm per open notebook
document to the target `copilot_nb.live`, saying which notebook it is (its path and the server
root), which kernel connection it uses, and which application it is. The kernel then asks it for
a snapshot of the cells and to apply checked changes. Requests and replies are comm messages, which
the kernel handles while a `%%copilot` cell awaits (DESIGN.md fact 3). Nothing here asks the
front end to *execute* anything: an execute request would queue behind the running cell and
never run, so `run_cell` runs code in the kernel itself and only sends the outputs.

How a front end finds out that copilot_nb is loaded: a silent comm registered here under the
target `copilot_nb.beacon` (never opened towards the front end) answers its comm-info probe, which
it sends when it connects and each time the kernel goes idle until attached; and at load time
the kernel opens a `copilot_nb.hello` comm, so a notebook whose first cell loads the extension
is attached before its first tool call. A page with copilot_nb's extension answers by attaching (the
kernel then closes the hello); a Jupyter front end without it closes a comm of a target it does not
know (JupyterLab's, Notebook 7's), which tells a waiting tool that no page is coming.

Several views: one comm per document, so a notebook open twice in one JupyterLab (two views of
one document) is one live notebook. The same notebook open in two browser tabs is two; the one
that sent the request running now wins, else the one attached last. Two notebooks on one kernel
are told apart by path, and a request's own notebook by its kernel connection.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..kernel_bridge import call_on, request_header
from ..text import counted
from .block_runs import PageRuns
from .live_view import LiveView, next_id

if TYPE_CHECKING:  # only types: %load_ext imports this module, and stays light
    from ..tools.review.ledger import ReviewBook
    from ..workspace.restore import Action

TARGET = "copilot_nb.live"
BEACON = "copilot_nb.beacon"
HELLO = "copilot_nb.hello"
_T = TypeVar("_T")
ATTACH_WAIT = 10.0
"""Seconds a tool (or a reviewing turn) waits for a front end to attach after saying hello,
where one may exist. The page answers a hello in tens of milliseconds when idle, but a busy
machine took 3.5 s ("Run All" with every core taken); a front end without the extension
declines at once, so the wait is paid in full only where a Jupyter server started the kernel and
no front end answers at all, once per HELLO_AGAIN_AFTER."""
DECLINED_GRACE = 1.0
"""Seconds a tool still waits after a front end declined the hello: another connection of the
same page (a console, a second view) may decline while the notebook's own one attaches."""
HELLO_AGAIN_AFTER = 30.0
"""Seconds before a tool says hello again after nobody answered."""
INSTALL_HINT = (
    "this kernel was started by a Jupyter server, but no open notebook answered. If the notebook "
    "is open in JupyterLab or Notebook 7, the agent's changes went to the file behind it: use "
    "File > Reload Notebook from Disk before you edit it again. For live editing, install "
    "copilot_nb in the environment Jupyter itself runs from (`pip install copilot_nb`) and "
    "reload the page"
)
NO_EXTENSION_HINT = (
    "the notebook's front end has no copilot_nb extension, so the agent's changes went to the file "
    "behind it: use File > Reload Notebook from Disk before you edit it again. For live editing, "
    "install copilot_nb in the environment Jupyter itself runs from (`pip install copilot_nb`) "
    "and reload the page"
)

_log = logging.getLogger(__name__)


class LiveChannel:
    """Every open notebook attached to this kernel; what the notebook tools ask for one."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.views: list[LiveView] = []
        self._news = asyncio.Event()
        """Set when a front end attaches or declines a hello: a waiting tool looks again."""
        self._last_hello = 0.0
        self._hello: Any = None
        self._declined_at: float | None = None
        self._beacon: Any = None
        self._review: ReviewBook | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.runs = PageRuns()
        """Code blocks of cells that the page runs (`block_runs.py`)."""
        self.tasks: set[asyncio.Task[None]] = set()

    @property
    def review(self) -> ReviewBook:
        """The kernel's review ledger (`tools/review.py`), made on first use."""
        if self._review is None:
            from ..tools.review.ledger import ReviewBook

            self._review = ReviewBook()
        return self._review

    # --- the comm target ---------------------------------------------------------------------

    def install(self) -> bool:
        """Listen for front ends (in a kernel only); False where there is no comm manager."""
        manager = _comm_manager(self.shell)
        if manager is None:
            return False
        manager.register_target(TARGET, self._open)
        try:  # events from a subshell's thread are handled on the kernel's own loop
            self._loop = asyncio.get_event_loop()
        except RuntimeError:
            self._loop = None
        if self._beacon is None:
            from comm import create_comm

            self._beacon = create_comm(target_name=BEACON, primary=False)
            manager.register_comm(self._beacon)
        self.say_hello()
        return True

    def uninstall(self) -> None:
        manager = _comm_manager(self.shell)
        if manager is None:
            return
        manager.unregister_target(TARGET, self._open)
        if self._beacon is not None:
            manager.unregister_comm(self._beacon)
            self._beacon = None
        for view in self.views:
            view.close()
            view.comm.close()
        self.views.clear()

    def say_hello(self) -> None:
        """Tell the front ends copilot_nb is loaded: a comm opened and closed at once."""
        from comm import create_comm

        self._close_hello()
        self._last_hello = time.monotonic()
        self._declined_at = None
        try:
            hello = create_comm(target_name=HELLO, data={})
        except Exception:  # no front end listens: nothing to tell
            _log.debug("hello not sent", exc_info=True)
            return
        hello.on_close(lambda _msg: self._decline(hello))
        self._hello = hello

    def _decline(self, hello: Any) -> None:
        """A front end closed the hello: it does not know copilot_nb's target (no extension)."""
        if hello is self._hello:
            self._hello = None
            self._declined_at = time.monotonic()
            self._news.set()

    def _close_hello(self) -> None:
        hello, self._hello = self._hello, None
        if hello is not None:
            try:
                hello.close()
            except Exception:  # the kernel is shutting down
                _log.debug("hello not closed", exc_info=True)

    def _open(self, comm: Any, msg: dict[str, Any]) -> None:
        view = LiveView(comm, msg.get("content", {}).get("data") or {}, self._event)
        if not view.server_root:  # Notebook 7 does not say where its server's root is
            view.server_root = _root_from_session(view.path)
        comm.on_msg(view.receive)
        comm.on_close(lambda _msg: self._forget(view))
        _route_by_header(comm)
        comm.send({"event": "kernel", "instance": _instance(self.shell)})
        self.views = [v for v in self.views if not _same_document(v, view)] + [view]
        self._close_hello()
        self._news.set()

    def _event(self, view: LiveView, data: dict[str, Any]) -> None:
        """What a front end says unasked, handed to its entry in `EVENTS` on the kernel's loop."""
        handler = EVENTS.get(str(data.get("event")))
        if handler is None:
            _log.debug("unknown event from the front end: %r", data.get("event"))
            return
        call_on(self._loop, _handle, handler, self, view, data)

    def _forget(self, view: LiveView) -> None:
        view.close()
        self.views = [v for v in self.views if v is not view]

    # --- what the tools ask (tools.context.LiveNotebooks) -------------------------------------

    async def find(self, path: Path) -> LiveView | None:
        """The open notebook at `path`; where one may be coming (a Jupyter server started this
        kernel), waits for it up to `ATTACH_WAIT` after the last hello, saying hello again when
        the last one is old."""
        return await self._awaited(lambda: self._match(path))

    async def attach_soon(self) -> bool:
        """Whether a notebook front end is attached, waiting for one as `find` does: a turn that
        "Run All" starts right after `%load_ext` reviews in the page that is about to attach."""
        return bool(await self._awaited(lambda: self.views or None))

    async def _awaited(self, look: Callable[[], _T | None]) -> _T | None:
        """`look()`, or where a front end may be coming, its first answer that is not None
        within `ATTACH_WAIT` of the last hello (saying hello again when the last one is old),
        unless a front end declined that hello."""
        found = look()
        if found is not None or not self._front_end_expected():
            return found
        since = time.monotonic() - self._last_hello
        if not self._last_hello or since > HELLO_AGAIN_AFTER:
            self.say_hello()
            since = 0.0
        deadline = time.monotonic() + max(0.0, ATTACH_WAIT - since)
        while found is None:
            if self._declined_at is not None:
                deadline = min(deadline, self._declined_at + DECLINED_GRACE)
            if time.monotonic() >= deadline:
                break
            self._news.clear()
            try:
                await asyncio.wait_for(self._news.wait(), deadline - time.monotonic())
            except asyncio.TimeoutError:
                break
            found = look()
        return found

    def current_path(self) -> Path | None:
        """The notebook of the kernel connection that sent the request running now."""
        client = _request_client(self.shell)
        for view in reversed(self.views):
            if view.client and view.client == client and view.absolute is not None:
                return view.absolute
        return None

    def request_view(self) -> LiveView | None:
        """The open notebook of the kernel connection that sent the request running now."""
        client = _request_client(self.shell)
        mine = [view for view in self.views if client and view.client == client]
        return mine[-1] if mine else None

    def take_back(self, path: Path, changes: list[dict[str, Any]]) -> tuple[Action, str]:
        """`%copilot undo` in an open notebook: send the changes that take the agent's back.

        The magic runs synchronously, so the kernel cannot read the reply while it waits: the
        front end applies the changes (all or, if the user edited those cells since, none) and
        shows a notification when it cannot."""
        view = self._match(path)
        if view is None or view.closed:
            return "not restored", "it is not open in a front end attached to this kernel"
        changes = self.review.skip_undone(changes)
        if not changes:
            return "restored", "you had undone all of them in review already"
        view.comm.send({"id": next_id(), "op": "apply", "changes": changes, "notify": True})
        return "restored", (
            f"{counted(len(changes), 'cell change')} taken back in the notebook open in {view.app} "
            "(unless you edited those cells since: it then changes nothing and says so)"
        )

    def fallback_note(self) -> str:
        if self.extension_missing():
            return NO_EXTENSION_HINT
        return INSTALL_HINT if self._front_end_expected() else ""

    def extension_missing(self) -> bool:
        """A Jupyter server's front end closed the last hello and none is attached: it lacks
        the extension."""
        declined = self._declined_at is not None and not self.views
        return declined and self._front_end_expected()

    def attached(self) -> bool:
        """Whether a notebook front end (which draws widgets) is attached to this kernel."""
        return bool(self.views)

    def _match(self, path: Path) -> LiveView | None:
        wanted = os.path.realpath(path)
        client = _request_client(self.shell)
        found = [v for v in self.views if v.absolute and os.path.realpath(v.absolute) == wanted]
        own = [v for v in found if v.client == client]
        chosen = own or found
        return chosen[-1] if chosen else None

    @staticmethod
    def _front_end_expected() -> bool:
        """A Jupyter server started this kernel for a notebook, which may be open in a browser."""
        return str(os.environ.get("JPY_SESSION_NAME", "")).endswith(".ipynb")


EventHandler = Callable[[LiveChannel, LiveView, dict[str, Any]], None]


def _renamed(channel: LiveChannel, view: LiveView, data: dict[str, Any]) -> None:
    """`{event: 'path', path}`: the notebook was renamed or moved."""
    if isinstance(data.get("path"), str):
        view.path = data["path"]


def _reviewed(channel: LiveChannel, view: LiveView, data: dict[str, Any]) -> None:
    """`{event: 'review', outcomes}`: cells the user kept or undid (queued while detached)."""
    channel.review.record(data)


def _file_reviewed(channel: LiveChannel, view: LiveView, data: dict[str, Any]) -> None:
    """`{event: 'review_file', id, turn, path, outcome}`: Keep or Undo of a listed file; the
    answer is `{event: 'review_file_result', id, ok, why?}`."""
    turn, path, outcome = data.get("turn"), data.get("path"), data.get("outcome")
    if isinstance(turn, str) and isinstance(path, str) and isinstance(outcome, str):
        ok, why = channel.review.file_outcome(turn, path, outcome)
    else:
        ok, why = False, "a review_file event needs turn, path and outcome"
    answer: dict[str, Any] = {"event": "review_file_result", "id": data.get("id"), "ok": ok}
    if why:
        answer["why"] = why
    view.comm.send(answer)


def _verify(channel: LiveChannel, view: LiveView, data: dict[str, Any]) -> None:
    """`{event: 'review_verify', id, records}`: which of the notebook's review records this
    user's kernel wrote (signed with their key); the answer is `{event: 'review_verified', id,
    ok: [bool, ...]}`, one per record. The page offers no other record as the agent's change."""
    from ..tools.review.proof import verify

    view.comm.send(verify(data))


def _run_block(channel: LiveChannel, view: LiveView, data: dict[str, Any]) -> None:
    """`{event: 'run_block', id, code}`: a cell's code block's Run (`block_runs.py`)."""
    task = asyncio.get_running_loop().create_task(channel.runs.run(channel.shell, view, data))
    channel.tasks.add(task)
    task.add_done_callback(channel.tasks.discard)


def _block_answer(channel: LiveChannel, view: LiveView, data: dict[str, Any]) -> None:
    """`{event: 'run_block_answer', id, approved}`: the page's dialog answered a Run."""
    channel.runs.answered(view, data)


def _block_undo(channel: LiveChannel, view: LiveView, data: dict[str, Any]) -> None:
    """`{event: 'run_block_undo', id}`: the Undo beside a Run's result."""
    channel.runs.undo(view, data)


EVENTS: dict[str, EventHandler] = {
    "path": _renamed,
    "run_block": _run_block,
    "run_block_answer": _block_answer,
    "run_block_undo": _block_undo,
    "review": _reviewed,
    "review_file": _file_reviewed,
    "review_verify": _verify,
}
"""What a front end may say unasked, by its message's `event` key: one small handler each."""


def _handle(
    handler: EventHandler, channel: LiveChannel, view: LiveView, data: dict[str, Any]
) -> None:
    try:
        handler(channel, view, data)
    except Exception:  # a front end's message never takes the kernel down
        _log.exception("the front end's %r event could not be handled", data.get("event"))


def _route_by_header(comm: Any) -> None:
    """Each message from the page goes where its header says (a completion on a subshell while a
    cell runs), not where the kernel last sent on this comm.

    ipykernel 7 routes a comm's incoming messages to the subshell that last sent on it, so that
    a reply reaches a loop blocked waiting for it. Ours never block: a kernel request awaits on
    the kernel's loop and every handler hands its work there (`call_on`). Left as it is, the
    kernel's first word on the comm, sent from the main shell, sent every later message there,
    and ghost text waited behind the running cell."""
    if hasattr(comm, "_reply_subshell_for"):
        comm._reply_subshell_for = lambda _data, default: default


def _instance(shell: Any) -> str:
    """This kernel process's id: a ran cell's review names the one holding what its Undo puts
    back, so the page can tell when a restart took that away (`tools/kernel/state.py`)."""
    from ..tools.kernel.state import kernel_state  # imported late: %load_ext stays light

    return kernel_state(shell).instance


def _root_from_session(path: str) -> str:
    """The server root, from the kernel's own notebook: jupyter_server starts a kernel with
    `JPY_SESSION_NAME` = root + the notebook's path (DESIGN.md fact 6); "" if it does not fit."""
    session = os.environ.get("JPY_SESSION_NAME", "")
    tail = "/" + path.lstrip("/")
    if path and session.replace(os.sep, "/").endswith(tail):
        return session[: len(session) - len(tail)] or "/"
    return ""


def _same_document(a: LiveView, b: LiveView) -> bool:
    """The same document in the same front end, attached again (after a reload of its kernel)."""
    return a.client == b.client and a.path == b.path


def _comm_manager(shell: Any) -> Any:
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return None
    try:
        from comm import get_comm_manager

        return get_comm_manager()
    except Exception:
        return getattr(kernel, "comm_manager", None)


def _request_client(shell: Any) -> str:
    """The kernel-connection id (`header.session`) of the request running now, or ""."""
    return str(request_header(shell).get("session") or "")


def live_channel(shell: Any) -> LiveChannel:
    """This kernel's channel to the notebooks open in its front ends (one per shell)."""
    channel = getattr(shell, "_copilot_nb_live", None)
    if channel is None:
        channel = LiveChannel(shell)
        shell._copilot_nb_live = channel
    return channel
