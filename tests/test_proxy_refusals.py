"""The proxy's refusals reach the user worded for where it was started (issue 35, case 7): a
shell user is told `copilot-nb serve ...`, never `%copilot serve`; at `/mcp` a missing token is a
JSON-RPC error the MCP client shows, and OAuth discovery finds no authorization server."""

from __future__ import annotations

import httpx
import openai
import pytest

from copilot_nb.serve.http.surface import SHELL
from tests.proxy_fixtures import MODEL, proxy_for

__all__ = ["proxy_for"]


def test_a_shell_servers_refusals_name_the_shell_command(proxy_for):
    proxy = proxy_for([], surface=SHELL)
    client = proxy.openai(max_retries=0)
    with pytest.raises(openai.PermissionDeniedError) as refused:
        client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "hi"}],
            extra_body={"tool_execution": "auto"},
        )
    assert "copilot-nb serve --allow-execution" in refused.value.message
    with pytest.raises(openai.AuthenticationError) as unknown:
        openai.OpenAI(base_url=f"{proxy.url}/v1", api_key="wrong", max_retries=0).models.list()
    for message in (refused.value.message, unknown.value.message):
        assert "%copilot" not in message


def _leaves(error: BaseException) -> list[BaseException]:
    """The errors an exception group holds, however deep; the error itself otherwise."""
    inner = getattr(error, "exceptions", None)  # an ExceptionGroup (or its backport's)
    if isinstance(inner, tuple):
        return [leaf for each in inner for leaf in _leaves(each)]
    return [error]


async def _mcp_client(url: str, headers: dict[str, str]):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):
        return (await client.call_tool("read_file", {"path": "a.txt"})).content[0].text


async def test_an_mcp_client_without_the_token_is_told_to_pass_it(proxy_for, root):
    from mcp import MCPError

    (root / "a.txt").write_text("alpha\n")
    proxy = proxy_for([], surface=SHELL)
    with pytest.raises(BaseException) as raised:  # the client's task group wraps it
        await _mcp_client(proxy.url, {})
    [refused] = _leaves(raised.value)
    assert isinstance(refused, MCPError), repr(refused)
    assert "No API key was sent" in str(refused)
    assert "Authorization: Bearer <token>" in str(refused)
    assert "copilot-nb serve prints it" in str(refused)
    denied = await _mcp_client(proxy.url, {"Authorization": f"Bearer {proxy.token}"})
    assert "copilot-nb serve --allow-execution" in denied and "%copilot" not in denied


@pytest.mark.parametrize(
    "path",
    [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ],
)
def test_oauth_discovery_finds_no_authorization_server(proxy_for, path):
    """What an MCP client asks after a 401: the answer is that there is none (404 without a
    token), not another 401 that starts a sign-in."""
    proxy = proxy_for([])
    answer = httpx.get(proxy.url + path)
    assert answer.status_code == 404
    error = answer.json()["error"]
    assert error["code"] == "oauth_not_supported"
    assert "Authorization: Bearer <token>" in error["message"]
    unauthorized = httpx.post(proxy.url + "/mcp", json={})
    assert unauthorized.status_code == 401
    assert "resource_metadata" not in unauthorized.headers.get("www-authenticate", "")
