"""Who answered a request, in an error's words: the provider for its own service, else the
server the user configured, by its address (and its software, where it says).

An `openai:` model pointed at a local llama.cpp server used to fail with "openai answered HTTP
500", which sent users to OpenAI's status page; the address they configured is what they can
check.
"""

from __future__ import annotations

import httpx

PROVIDER_HOSTS: dict[str, tuple[str, ...]] = {
    "openai": ("api.openai.com",),
    "openai-responses": ("api.openai.com",),
    "anthropic": ("api.anthropic.com",),
    "copilot": ("githubcopilot.com",),
    "deepseek": ("api.deepseek.com",),
    "mistral": ("api.mistral.ai", "codestral.mistral.ai"),
}
"""Each hosted provider's own hosts (and their subdomains): there, the provider's name says it."""

SERVER_SOFTWARE = {"llama.cpp": "llama.cpp", "ollama": "Ollama", "vllm": "vLLM"}
"""Words in a `Server` header that name the program answering."""

COMPATIBLE = {"openai": "the OpenAI-compatible server", "openai-responses": "the server"}
"""How a server another program runs behind a provider's wire is named, when it says nothing."""


def who_answered(provider: str, response: httpx.Response, where: str = "") -> str:
    """The provider at its own hosts; elsewhere the server's software (or kind) and the
    address (`where`, the configured base URL, else the request's origin)."""
    try:
        url = response.request.url
    except RuntimeError:  # a response built without a request: nothing to name
        return provider
    host = url.host.lower()
    if any(host == h or host.endswith("." + h) for h in PROVIDER_HOSTS.get(provider, ())):
        return provider
    server = response.headers.get("server", "").lower()
    software = next((name for word, name in SERVER_SOFTWARE.items() if word in server), "")
    address = where or f"{url.scheme}://{url.netloc.decode('ascii', 'replace')}"
    return f"{software or COMPATIBLE.get(provider, provider)} at {address}"
