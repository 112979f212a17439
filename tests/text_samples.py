"""Realistic text for token-estimate and context tests: code, prose and random bytes."""

import hashlib

PYTHON = '''\
class LoopBoundClient:
    """One httpx.AsyncClient per event loop, created when first needed."""

    def __init__(self, *, timeout: httpx.Timeout, client: httpx.AsyncClient | None = None) -> None:
        self._timeout = timeout
        self._given = client
        self._clients: dict[int, httpx.AsyncClient] = {}

    def get(self) -> httpx.AsyncClient:
        if self._given is not None:
            return self._given
        loop = asyncio.get_running_loop()
        client = self._clients.get(id(loop))
        if client is None or client.is_closed:
            client = httpx.AsyncClient(timeout=self._timeout, follow_redirects=True)
            self._clients[id(loop)] = client
        return client
'''
PROSE = (
    "The kernel runs an asyncio loop, so a cell that awaits its run lets the kernel handle "
    "widget messages while it waits: a Stop button or an Approve button works during the run. "
    "Tasks created in a cell keep running while the kernel is idle, and output printed by such "
    "a task is routed to the cell that created it. Nothing here downloads a tokenizer; the "
    "estimate errs high, and the provider's own count corrects it after every reply.\n"
) * 3


def numbered(text: str) -> str:
    return "\n".join(f"{n:6d}\t{line}" for n, line in enumerate(text.splitlines(), 1))


def digests(count: int) -> list[bytes]:
    return [hashlib.sha256(str(i).encode()).digest() for i in range(count)]
