"""An upstream error relayed by the proxy keeps the provider's words but never a credential.

The loopback upstream echoes what it was sent, as careless providers and gateways do: the
Authorization header carrying the server's API key, the key alone in a format no secret scanner
knows, a Copilot token, an OpenAI key, and the proxy's own token. Each path a failure takes to
the proxy's client (a JSON error, the first event of a stream, auto mode) shows none of them.
"""

from __future__ import annotations

import httpx
import pytest

from copilot_nb.testing import fail
from copilot_nb.testing.script import ScriptedRequest
from tests.proxy_fixtures import MODEL, RunningProxy, proxy_for

__all__ = ["proxy_for"]

API_KEY = "acme-7Qz81x7TT0pLmN3wq"
"""The server's own key to the upstream, in a format only the configured value reveals."""
COPILOT_TOKEN = "tid=0123456789abcdef0123;exp=1900000000;sku=free;proxy-ep=proxy.example;8kp:ab"
OPENAI_KEY = "sk-proj-" + "A1b2C3d4" * 5


def echoing(status: int, proxy_token: list[str]) -> object:
    """An upstream step that fails with `status`, repeating the credentials it saw."""

    def step(request: ScriptedRequest) -> object:
        sent = request.headers.get("Authorization") or request.headers.get("authorization")
        words = (
            f"Incorrect API key provided: {API_KEY}. You sent Authorization: {sent}; "
            f'{{"x-api-key": "{API_KEY}"}}; copilot {COPILOT_TOKEN}; other {OPENAI_KEY}; '
            f"client {proxy_token[0]}. See the docs."
        )
        return fail(status, words)

    return step


def started(proxy_for, status: int, count: int = 1, **options) -> RunningProxy:
    token: list[str] = []
    proxy = proxy_for([echoing(status, token)] * count, api_key=API_KEY, **options)
    token.append(proxy.token)
    return proxy


def ask(proxy: RunningProxy, **body) -> httpx.Response:
    messages = [{"role": "user", "content": "hi"}]
    return httpx.post(
        f"{proxy.url}/v1/chat/completions",
        json={"model": MODEL, "messages": messages, **body},
        headers={"authorization": f"Bearer {proxy.token}"},
        trust_env=False,
        timeout=20,
    )


def assert_masked(proxy: RunningProxy, text: str) -> None:
    secrets = (API_KEY, COPILOT_TOKEN, "0123456789abcdef0123", OPENAI_KEY, proxy.token)
    assert not [secret for secret in secrets if secret in text], text
    assert "<masked: " in text
    assert "Incorrect API key provided" in text and "See the docs." in text


@pytest.mark.parametrize("status", [400, 401, 429, 500])
def test_a_relayed_error_keeps_its_words_and_masks_every_credential(proxy_for, status):
    proxy = started(proxy_for, status)
    response = ask(proxy)
    assert proxy.upstream.requests[0].headers["Authorization"] == f"Bearer {API_KEY}"
    assert response.status_code == (502 if status == 401 else status)
    assert_masked(proxy, response.text)


def test_a_stream_that_fails_before_its_first_event_is_masked_too(proxy_for):
    proxy = started(proxy_for, 429)
    response = ask(proxy, stream=True)
    assert response.status_code == 429
    assert_masked(proxy, response.text)


def test_auto_mode_relays_the_agents_failure_masked(proxy_for):
    proxy = started(proxy_for, 400, count=2, allow_execution=True)
    response = ask(proxy, tool_execution="auto")
    assert response.status_code == 502
    assert_masked(proxy, response.text)
    streamed = ask(proxy, tool_execution="auto", stream=True)
    assert streamed.status_code == 200
    assert_masked(proxy, streamed.text)
