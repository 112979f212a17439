"""What a local server says about the model it runs: its context window, and so the reply limit.

A hosted model's window is known by its name; a local one is whatever the server was started
with (llama.cpp's `-c 8192`, Ollama's `num_ctx`, vLLM's `--max-model-len`), whatever the weights
allow. Assuming one (32,768) where the server had 8,192 let the conversation grow past the window,
and with no output limit a small model filled the whole window with one reply. So a local server
is asked once, before the first request: its model list (vLLM's `max_model_len`, llama.cpp's
`meta.n_ctx`), else llama.cpp's `/props` (`default_generation_settings.n_ctx`); Ollama's
`/api/show` answers for Ollama (`num_ctx`). The user's own setting wins over all of them:
`COPILOT_NB_CONTEXT_WINDOW`, or `context_window=` in code.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx

from .lookups import LookupLimits, lookup

CONTEXT_WINDOW_ENV = "COPILOT_NB_CONTEXT_WINDOW"
PROPS_TIMEOUT = httpx.Timeout(10.0)
"""How long a server may take to say its settings: a lookup, not a generation."""
MAX_REPLY_TOKENS = 16_384


def reply_limit(window: int) -> int:
    """The tokens a reply may take in a `window`: an eighth of it, at most 16,384. The context
    budget keeps the same room free, so a request that fits leaves room for its reply."""
    return min(window // 8, MAX_REPLY_TOKENS)


def configured_window(environ: Mapping[str, str] | None = None) -> int | None:
    """`COPILOT_NB_CONTEXT_WINDOW` as a number of tokens; None when unset, ValueError if not one."""
    value = (os.environ if environ is None else environ).get(CONTEXT_WINDOW_ENV, "").strip()
    if not value:
        return None
    window = int(value.replace("_", "").replace(",", ""))
    if window <= 0:
        raise ValueError(f"{CONTEXT_WINDOW_ENV} must be a number of tokens above 0, not {value!r}")
    return window


def is_local(base_url: str) -> bool:
    """Whether `base_url` is a server on this machine or its network (loopback, a private or
    link-local address, `localhost`, a `.local` name): the servers run with a window of their
    own. A hosted API is known by its model names and is not asked."""
    host = (urlsplit(base_url).hostname or "").lower()
    if host == "localhost" or host.endswith((".localhost", ".local")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def native_root(base_url: str) -> str:
    """The server's root from its OpenAI-compatible base (`http://h:8080/v1` -> `http://h:8080`)."""
    return re.sub(r"/v1/?$", "", base_url.rstrip("/"))


def window_from_models(payload: Any, name: str) -> int | None:
    """The window a `/v1/models` answer gives for `name` (or its only model): vLLM's
    `max_model_len`, llama.cpp's `meta.n_ctx` (the context it runs with, not `n_ctx_train`)."""
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return None
    models = [m for m in data if isinstance(m, dict)]
    chosen = [m for m in models if m.get("id") == name] or (models if len(models) == 1 else [])
    for model in chosen:
        meta = model.get("meta")
        for value in (
            model.get("max_model_len"),
            meta.get("n_ctx") if isinstance(meta, dict) else None,
        ):
            if (tokens := token_count(value)) is not None:
                return tokens
    return None


def window_from_props(payload: Any) -> int | None:
    """llama.cpp's `/props`: `default_generation_settings.n_ctx`, the context of one slot."""
    settings = payload.get("default_generation_settings") if isinstance(payload, dict) else None
    return token_count(settings.get("n_ctx")) if isinstance(settings, dict) else None


def window_from_ollama_show(payload: Any) -> int | None:
    """Ollama's `/api/show`: the `num_ctx` the model was made with (its Modelfile's
    `PARAMETER num_ctx`); without one Ollama runs a default of its own, not `context_length`."""
    parameters = payload.get("parameters") if isinstance(payload, dict) else None
    if not isinstance(parameters, str):
        return None
    found = re.search(r"^\s*num_ctx\s+(\d+)\s*$", parameters, re.MULTILINE)
    return int(found.group(1)) if found and int(found.group(1)) > 0 else None


async def ask_window(
    client: httpx.AsyncClient,
    base_url: str,
    name: str,
    headers: Mapping[str, str],
    limits: LookupLimits,
) -> int | None:
    """The window a local OpenAI-compatible server runs `name` with, or None when it does not
    say (a 404, not JSON, not reachable: the chat request reports a connection problem);
    `LookupFailed` when an answer is too slow or too large (`lookups.py`)."""
    asks = (
        (f"{base_url.rstrip('/')}/models", lambda p: window_from_models(p, name)),
        (f"{native_root(base_url)}/props", window_from_props),
    )
    for url, read in asks:
        asked = client.build_request("GET", url, headers=dict(headers), timeout=PROPS_TIMEOUT)
        try:
            response = await lookup(client, asked, limits=limits, what=f"the server's {url}")
        except httpx.TransportError:
            return None
        if response.status_code != 200:
            continue
        try:
            window = read(response.json())
        except (ValueError, RecursionError):
            continue
        if window:
            return window
    return None


def token_count(value: Any) -> int | None:
    """`value` if it is a count of tokens (an int above 0, not a bool), else None."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None
