"""An error names who answered (issue 35, case 8): the provider at its own service, else the
server and address the user configured, so a local llama.cpp failure does not read as OpenAI's."""

from __future__ import annotations

import httpx
import pytest

from copilot_nb.errors import ModelHTTPError
from copilot_nb.models.openai.chat import OpenAIChat
from copilot_nb.models.speaker import who_answered
from copilot_nb.testing import fail


def _answered(url: str, server: str = "") -> httpx.Response:
    headers = {"server": server} if server else {}
    return httpx.Response(500, headers=headers, request=httpx.Request("POST", url))


@pytest.mark.parametrize(
    ("provider", "url", "server", "named"),
    [
        ("openai", "https://api.openai.com/v1/chat/completions", "", "openai"),
        ("copilot", "https://api.individual.githubcopilot.com/chat", "", "copilot"),
        (
            "openai",
            "http://127.0.0.1:8080/v1/chat/completions",
            "llama.cpp",
            "llama.cpp at http://127.0.0.1:8080",
        ),
        (
            "openai",
            "http://gpu-box:8000/v1/chat/completions",
            "uvicorn",
            "the OpenAI-compatible server at http://gpu-box:8000",
        ),
        (
            "ollama",
            "http://localhost:11434/v1/chat/completions",
            "",
            "ollama at http://localhost:11434",
        ),
    ],
)
def test_who_answered_is_the_provider_only_at_its_own_hosts(provider, url, server, named):
    assert who_answered(provider, _answered(url, server)) == named


async def test_a_local_servers_error_names_its_software_and_configured_address(serve):
    upstream = serve([fail(500, "llama_decode failed", headers={"server": "llama.cpp"})])
    model = OpenAIChat("smollm2", base_url=upstream.url, api_key="none", max_retries=0)
    try:
        with pytest.raises(ModelHTTPError) as failed:
            await model.complete([{"role": "user", "content": "hi"}])
    finally:
        await model.aclose()
    message = str(failed.value)
    assert message.startswith(f"llama.cpp at {upstream.url} answered HTTP 500"), message
    assert "llama_decode failed" in message and "openai" not in message.lower()
