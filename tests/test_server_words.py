"""A model server's words reach the user as plain text of a bounded size, on every path.

A hostile server (or one serving what a prompt injection wrote) puts terminal escapes in what it
says: an OSC 52 clipboard write, an OSC 0 window title, a screen clear, a right-to-left override.
Printed raw, in a cell's text/plain, a traceback, or a model list, the terminal obeys them. So
every error body, mid-stream error event, model id and name is made plain and cut to size where
it enters, and each surface shows only that.
"""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import httpx
import pytest

from copilot_nb.agent.model_strings import PROVIDERS
from copilot_nb.agent.session import CopilotSession
from copilot_nb.errors import AuthError, ModelHTTPError, StreamError
from copilot_nb.events import Failed
from copilot_nb.jupyter.cell_view import CellRenderer
from copilot_nb.jupyter.commands.login import show_models
from copilot_nb.models.anthropic.chat import AnthropicChat
from copilot_nb.models.copilot.auth import CopilotAuth
from copilot_nb.models.copilot.github_sign_in import DeviceFlow
from copilot_nb.models.copilot.github_tokens import GitHubHosts, GitHubToken
from copilot_nb.models.fim import FillRequest
from copilot_nb.models.openai.chat import OpenAIChat
from copilot_nb.models.openai.fim_completions import OpenAICompletions
from copilot_nb.models.openai.ollama_generate import OllamaFill
from copilot_nb.models.openai.responses import OpenAIResponses
from copilot_nb.models.provider import Provider
from copilot_nb.models.providers import OPENAI_CHAT
from copilot_nb.models.transport import RetryPolicy
from copilot_nb.testing import fail
from copilot_nb.testing.copilot_catalog import COPILOT_MODELS
from copilot_nb.text import server_text
from tests.helpers import events_of
from tests.hostile_server import TERMINAL_ATTACK, Answer, HostileServer, hostile, json_bytes
from tests.proxy_fixtures import MODEL, proxy_for

__all__ = ["hostile", "proxy_for"]

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What no server text may carry to a terminal: C0 but \\n and \\t, DEL, C1, bidi overrides."""
HI = [{"role": "user", "content": "hi"}]
NO_RETRY = RetryPolicy(max_retries=0)
HUGE = 20 * 2**20
"""A 20 MB error message: kept whole, it was a 20 MB exception and a 20 MB cell output."""


def assert_plain(text: str, limit: int = 6_000) -> None:
    """Nothing a terminal acts on, and no more than `limit` characters."""
    found = CONTROL.search(text)
    assert found is None, f"{found.group()!r} reached the user in {text[:300]!r}"
    assert len(text) <= limit, f"{len(text):,} characters reached the user"


CHAT = "POST /v1/chat/completions"


def chat_model(server: HostileServer) -> OpenAIChat:
    model = server.model()
    model.retry = NO_RETRY
    return model


# --- the one function every reader uses -----------------------------------------------------

PLAIN = {
    "CSI clear and colour": ("a\x1b[2J\x1b[1;31mb\x1b[0m", "ab"),
    "OSC 52 ended by BEL": ("a\x1b]52;c;cHduZWQ=\x07b", "ab"),
    "OSC 0 ended by ST": ("a\x1b]0;title\x1b\\b", "ab"),
    "OSC 8 link": ("\x1b]8;;https://x.example\x1b\\here\x1b]8;;\x1b\\", "here"),
    "DCS": ("a\x1bPq#0;2;0;0;0\x1b\\b", "ab"),
    "C1 CSI": ("a\x9b2Jb", "ab"),
    "two-character escape": ("a\x1bcb\x1b(Bc", "abc"),
    "OSC left open": ("a\x1b]0;title", "a0;title"),
    "C0, DEL and C1": ("a\x00\x07\x08\x7f\x85\x9db", "ab"),
    "bidi override and isolate": ("a\u202eb\u2066c\u2069", "abc"),
    "CR LF and a lone CR": ("a\r\nb\rc", "a\nbc"),
    "tab and newline kept": ("a\tb\nc", "a\tb\nc"),
    "lone surrogate": ("a\ud800b", "a\ufffdb"),
}


@pytest.mark.parametrize("case", PLAIN)
def test_server_text_leaves_nothing_a_terminal_acts_on(case: str) -> None:
    said, shown = PLAIN[case]
    assert server_text(said) == shown


def test_server_text_keeps_the_start_and_end_and_says_how_much_was_cut() -> None:
    said = "start " + "x" * 10_000 + " end"
    shown = server_text(said, 1_000)
    assert shown.startswith("start ") and shown.endswith(" end")
    assert "[9,010 characters cut]" in shown and len(shown) < 1_100


def test_a_name_is_one_line_of_bounded_length() -> None:
    assert server_text("gpt-4o\n  mini\t", 50, one_line=True) == "gpt-4o mini"
    assert server_text("m" * 1_000, 50, one_line=True) == "m" * 50 + "… [950 more characters]"


# --- HTTP error bodies ------------------------------------------------------------------------

ERROR_BODIES = {
    "error.message": Answer(
        status=400, body=json_bytes({"error": {"message": f"{TERMINAL_ATTACK}bad request"}})
    ),
    "detail": Answer(status=422, body=json_bytes({"detail": f"{TERMINAL_ATTACK}bad request"})),
    "plain text": Answer(
        status=500, body=f"{TERMINAL_ATTACK}bad request".encode(), content_type="text/plain"
    ),
}


@pytest.mark.parametrize("shape", ERROR_BODIES)
async def test_an_error_body_reaches_the_exception_plain(hostile, shape: str) -> None:
    server = hostile(**{CHAT: ERROR_BODIES[shape]})
    with pytest.raises(ModelHTTPError) as info:
        await chat_model(server).complete(HI)
    message = str(info.value)
    assert_plain(message)
    assert "evil" in message and "bad request" in message, "the words themselves are kept"


async def test_a_20_mb_error_message_is_cut_where_a_reader_would_and_not_read_whole(
    hostile,
) -> None:
    server = hostile(
        **{
            CHAT: Answer(
                status=400,
                head=b'{"error": {"message": "' + json.dumps(TERMINAL_ATTACK)[1:-1].encode(),
                body=b"A" * 2**16,
                repeat=HUGE // 2**16,
                tail=b'"}}',
            )
        }
    )
    with pytest.raises(ModelHTTPError) as info:
        await chat_model(server).complete(HI)
    message = str(info.value)
    assert_plain(message)
    assert "HTTP 400" in message and "AAAA" in message
    assert "not read" in message, "the message says that the rest was left out"
    assert len(str(info.value.body)) < 100_000, "the exception keeps no 20 MB body"
    assert server.sent[CHAT] < HUGE // 2, "reading stopped, and the server was hung up on"


# --- errors in the middle of a stream ---------------------------------------------------------

ATTACK_JSON = {"type": "invalid_request_error", "message": f"{TERMINAL_ATTACK}stream failed"}
MID_STREAM = {
    "chat, event: error": (
        "chat",
        CHAT,
        b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,'
        b'"delta":{"content":"Hi"}}]}\n\nevent: error\ndata: '
        + json_bytes({"error": ATTACK_JSON})
        + b"\n\n",
    ),
    "chat, data error": ("chat", CHAT, b"data: " + json_bytes({"error": ATTACK_JSON}) + b"\n\n"),
    "chat, not JSON": ("chat", CHAT, f"event: error\ndata: {TERMINAL_ATTACK}\n\n".encode()),
    "responses": (
        "responses",
        "POST /v1/responses",
        b"event: error\ndata: "
        + json_bytes({"type": "error", "code": "bad", "message": ATTACK_JSON["message"]})
        + b"\n\n",
    ),
    "anthropic": (
        "anthropic",
        "POST /v1/messages",
        b"event: error\ndata: " + json_bytes({"type": "error", "error": ATTACK_JSON}) + b"\n\n",
    ),
}


def wire_model(wire: str, server: HostileServer):
    if wire == "anthropic":
        model = AnthropicChat("m", base_url=server.base_url, api_key="k")
    elif wire == "responses":
        model = OpenAIResponses("m", base_url=server.url, api_key="k")
    else:
        model = OpenAIChat("m", base_url=server.url, api_key="k")
    model.retry = NO_RETRY
    return model


@pytest.mark.parametrize("case", MID_STREAM)
async def test_an_error_event_mid_stream_reaches_the_exception_plain(hostile, case: str) -> None:
    wire, route, stream = MID_STREAM[case]
    server = hostile(**{route: Answer(body=stream, content_type="text/event-stream")})
    with pytest.raises(StreamError) as info:
        await wire_model(wire, server).complete(HI)
    assert_plain(str(info.value))
    assert "evil" in str(info.value)


FILL = FillRequest(prefix="x = ", suffix="")


async def test_a_fill_wires_error_event_reaches_the_exception_plain(hostile) -> None:
    events = b"data: " + json_bytes({"error": ATTACK_JSON}) + b"\n\n"
    server = hostile(
        **{"POST /v1/completions": Answer(body=events, content_type="text/event-stream")}
    )
    model = OpenAICompletions("m", base_url=server.url, api_key="k")
    with pytest.raises(StreamError) as info:
        _ = [event async for event in model.fill(FILL)]
    assert_plain(str(info.value))


async def test_ollamas_error_line_reaches_the_exception_plain(hostile) -> None:
    line = json_bytes({"error": f"{TERMINAL_ATTACK}no such model"}) + b"\n"
    server = hostile(
        **{"POST /api/generate": Answer(body=line, content_type="application/x-ndjson")}
    )
    model = OllamaFill("m", base_url=server.url)
    with pytest.raises(StreamError) as info:
        _ = [event async for event in model.fill(FILL)]
    assert_plain(str(info.value))
    assert "no such model" in str(info.value)


# --- a turn in a cell -------------------------------------------------------------------------


async def test_a_failed_turn_shows_the_servers_words_plain_in_the_cell(
    hostile, tmp_path, monkeypatch
):
    server = hostile(**{CHAT: ERROR_BODIES["error.message"]})
    monkeypatch.chdir(tmp_path)
    session = CopilotSession(SimpleNamespace(user_ns={}), resolve=lambda spec: chat_model(server))
    session.toolset_factories = session.toolset_factories[:1]
    events = await events_of(session, "hello")
    (failed,) = [e for e in events if isinstance(e, Failed)]
    shown: list[dict[str, str]] = []
    handle = SimpleNamespace(update=lambda obj, **_: shown.append(obj._repr_mimebundle_()))
    renderer = CellRenderer(display=lambda obj, display_id: handle, interval=0)
    for event in events:
        renderer.handle(event)
    renderer.flush()
    assert "bad request" in shown[-1]["text/plain"]
    assert_plain(shown[-1]["text/plain"])
    assert_plain(failed.error)


# --- model lists: `%copilot models` -----------------------------------------------------------


def listing(url: str) -> dict[str, Provider]:
    hostile_provider = Provider(
        name="acme",
        chat=OPENAI_CHAT,
        base_url=url,
        sign_in="Set ACME_API_KEY.",
        list_models=lambda model: model.model_ids(),
        window="server",
    )
    return {**PROVIDERS, "acme": hostile_provider}


def test_model_ids_in_a_server_list_are_shown_plain_and_bounded(hostile, capsys) -> None:
    ids = [f"gpt{TERMINAL_ATTACK}-4", "x" * 100_000, "qwen3:8b"]
    server = hostile(
        **{"GET /v1/models": Answer(body=json_bytes({"data": [{"id": i} for i in ids]}))}
    )
    show_models("acme", registry=listing(server.url))
    out = capsys.readouterr().out
    assert_plain(out)
    assert "qwen3:8b" in out and "evil" in out


@pytest.mark.usefixtures("copilot_home")
def test_copilots_catalog_is_shown_plain(github, monkeypatch, capsys) -> None:
    hostile_entry = {
        **COPILOT_MODELS[0],
        "id": f"gpt{TERMINAL_ATTACK}-x",
        "name": f"Name{TERMINAL_ATTACK}",
        "vendor": f"Vendor{TERMINAL_ATTACK}" + "v" * 50_000,
    }
    fake = github(models=[hostile_entry, *COPILOT_MODELS])
    for name, value in {**fake.environ, "COPILOT_NB_GITHUB_TOKEN": fake.add_github_token()}.items():
        monkeypatch.setenv(name, value)
    show_models("copilot")
    out = capsys.readouterr().out
    assert_plain(out, limit=20_000)
    assert "gpt-4o" in out


# --- Copilot's token exchange -----------------------------------------------------------------


async def test_a_refused_token_exchange_says_why_plain(hostile) -> None:
    refusal = json_bytes({"message": f"{TERMINAL_ATTACK}no Copilot for you"})
    server = hostile(**{"GET /copilot_internal/v2/token": Answer(status=403, body=refusal)})
    hosts = GitHubHosts(github_url=server.base_url, api_url=server.base_url)
    token = GitHubToken(value="gho_x", source="a test")
    async with httpx.AsyncClient(trust_env=False) as client:
        auth = CopilotAuth(github_token=token, hosts=hosts, client=lambda: client)
        with pytest.raises(AuthError) as info:
            await auth.token()
    assert_plain(str(info.value))
    assert "no Copilot for you" in str(info.value)


async def test_github_sign_in_shows_its_code_and_refusals_plain(hostile) -> None:
    code = json_bytes(
        {
            "device_code": "d",
            "user_code": f"AB{TERMINAL_ATTACK}CD",
            "verification_uri": f"https://github.example/login{TERMINAL_ATTACK}",
        }
    )
    refusal = json_bytes({"error": "bad", "error_description": f"{TERMINAL_ATTACK}go away"})
    server = hostile(**{"POST /login/device/code": Answer(body=code)})
    flow = DeviceFlow(GitHubHosts(github_url=server.base_url, api_url=server.base_url))
    started = await flow.start()
    assert_plain(started.user_code + started.verification_uri)
    server.routes["POST /login/device/code"] = Answer(status=400, body=refusal)
    with pytest.raises(AuthError) as info:
        await flow.start()
    assert_plain(str(info.value))
    assert "go away" in str(info.value)


# --- the proxy relays the words it was given --------------------------------------------------


def test_the_proxy_relays_an_upstream_error_plain(proxy_for) -> None:
    proxy = proxy_for([fail(400, f"{TERMINAL_ATTACK}bad request")])
    answer = httpx.post(
        f"{proxy.url}/v1/chat/completions",
        json={"model": MODEL, "messages": HI},
        headers={"authorization": f"Bearer {proxy.token}"},
        trust_env=False,
        timeout=20,
    )
    message = answer.json()["error"]["message"]
    assert answer.status_code == 400 and "bad request" in message
    assert_plain(message)
