"""The kernel's idioms, each in one place: a callback reaches its loop's thread, synchronous code
awaits a coroutine (inside a running loop too) and an interrupt cancels it, the user's namespace
is read the same way with or without IPython."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from types import SimpleNamespace

import pytest

from copilot_nb.kernel_bridge import (
    call_on,
    hidden_names,
    run_blocking,
    running_loop,
    user_namespace,
)


def test_a_callback_from_another_thread_runs_on_the_loops_thread() -> None:
    async def main() -> tuple[int, int]:
        loop = asyncio.get_running_loop()
        ran: asyncio.Future[int] = loop.create_future()
        worker = threading.Thread(
            target=call_on, args=(loop, lambda: ran.set_result(threading.get_ident()))
        )
        worker.start()
        worker.join()
        return await ran, threading.get_ident()

    on, loop_thread = asyncio.run(main())
    assert on == loop_thread


def test_a_callback_on_its_own_loop_or_without_one_runs_at_once() -> None:
    seen: list[str] = []

    async def main() -> None:
        call_on(asyncio.get_running_loop(), seen.append, "on the loop")
        assert seen == ["on the loop"], "not deferred to a later turn of the loop"

    asyncio.run(main())
    call_on(None, seen.append, "no loop")
    closed = asyncio.new_event_loop()
    closed.close()
    call_on(closed, seen.append, "closed loop")
    assert seen == ["on the loop", "no loop", "closed loop"]


def test_synchronous_code_awaits_a_coroutine_with_or_without_a_running_loop() -> None:
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert running_loop() is None
    assert run_blocking(answer()) == 42


def test_synchronous_code_inside_the_kernels_loop_awaits_a_coroutine_on_it() -> None:
    """A line magic inside the kernel's running loop. In a process of its own: entering a
    running loop again patches asyncio for the whole process (`nest_asyncio`), as in a kernel."""
    script = (
        "import asyncio\n"
        "from copilot_nb.kernel_bridge import run_blocking\n"
        "async def answer():\n"
        "    await asyncio.sleep(0)\n"
        "    return 42\n"
        "async def inside_the_kernel():\n"
        "    return run_blocking(answer())\n"
        "print(asyncio.run(inside_the_kernel()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stdout.strip() == "42", done.stderr


def test_an_interrupt_cancels_the_coroutine_and_is_raised_again() -> None:
    unwound: list[str] = []

    async def polls_forever() -> None:
        loop = asyncio.get_running_loop()
        loop.call_soon(_interrupt)
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            unwound.append("cancelled")
            raise

    with pytest.raises(KeyboardInterrupt):
        run_blocking(polls_forever())
    assert unwound == ["cancelled"]


def _interrupt() -> None:
    raise KeyboardInterrupt


def test_the_namespace_reads_the_same_with_or_without_ipython() -> None:
    ns = {"df": 1}
    shell = SimpleNamespace(user_ns=ns, user_ns_hidden={"In": []})
    assert user_namespace(shell) is ns
    assert hidden_names(shell) == {"In": []}
    assert user_namespace(None) == {} and hidden_names(None) == {}
    empty: dict[str, object] = {}
    assert user_namespace(SimpleNamespace(user_ns=empty)) is empty, "the kernel's own dict"
