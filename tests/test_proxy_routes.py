"""What real OpenAI clients met at the proxy beyond its chat route (issue 35, case 7): every
route it does not serve answers OpenAI's JSON error (a stored response: the proxy stores none), a
model is found by its id, and the offline model never calls a tool the client did not declare.
The Responses API itself is served: tests/test_proxy_responses_api.py."""

from __future__ import annotations

import httpx
import openai
import pytest

from copilot_nb.offline import offline_reply
from tests.proxy_fixtures import MODEL, proxy_for

__all__ = ["proxy_for"]


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("GET", "/v1/nothing-here", 404, "unknown_url"),
        ("POST", "/v1/embeddings", 404, "unknown_url"),
        ("DELETE", "/v1/models", 405, "method_not_allowed"),
        ("GET", "/v1/responses/resp_1", 404, "not_stored"),
        ("GET", "/v1/responses", 405, "method_not_allowed"),
    ],
)
def test_a_route_not_served_answers_openais_json_error(proxy_for, method, path, status, code):
    proxy = proxy_for([])
    answer = httpx.request(
        method, proxy.url + path, headers={"Authorization": f"Bearer {proxy.token}"}, json={}
    )
    assert answer.status_code == status
    assert answer.headers["content-type"].startswith("application/json")
    error = answer.json()["error"]
    assert error["code"] == code and error["type"] == "invalid_request_error"
    assert path in error["message"]


def test_the_openai_sdk_finds_a_model_by_id_and_is_told_of_one_missing(proxy_for):
    client = proxy_for([]).openai(max_retries=0)
    assert client.models.retrieve(MODEL).id == MODEL
    with pytest.raises(openai.NotFoundError) as missing:
        client.models.retrieve("gpt-unknown")
    assert missing.value.code == "model_not_found"
    assert MODEL in missing.value.message


@pytest.mark.parametrize("tools", [None, ["get_weather"]])
def test_the_offline_model_calls_only_the_tools_the_client_declared(proxy_for, root, tools):
    (root / "a.py").write_text("x = 1\n")
    proxy = proxy_for([offline_reply])
    declared = [
        {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
        for n in tools or []
    ]
    answer = proxy.openai(max_retries=0).chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": "read a.py"}],
        **({"tools": declared} if declared else {}),
    )
    message = answer.choices[0].message
    assert not message.tool_calls and answer.choices[0].finish_reason == "stop"
    assert "`read_file`" in (message.content or ""), message.content
