"""A proxy client's images reach the upstream as images (issue 39, case 1, the proxy's part).

The official `openai` SDK sends a plot as a Chat Completions `image_url` data URL or a Responses
`input_image`; the loopback upstream records what the proxy sent on, in each wire (Chat
Completions, Responses, Anthropic): the wire's own image block, at most the pixels the upstream
family uses (read back with Pillow), and never base64 in a text field. A model without vision
reads the image's one line; a remote URL is refused, naming the field, and nothing is fetched.
"""

from __future__ import annotations

import base64
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from anthropic.types.message_create_params import MessageCreateParamsStreaming
from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsStreaming
from PIL import Image as Pillow
from pydantic import TypeAdapter

from copilot_nb.agent.context.tokens import IMAGE_TOKENS, message_tokens
from copilot_nb.messages import Image, UserMessage
from copilot_nb.models.anthropic.chat import AnthropicChat
from copilot_nb.models.openai.chat import OpenAIChat
from copilot_nb.models.openai.responses import OpenAIResponses
from copilot_nb.testing import call, reply
from copilot_nb.tools.context_block import with_request_block
from tests.image_bombs import GIF_FRAME_BOMB, GIF_SCREEN_BOMB, PNG_13000, b64
from tests.notebook_samples import plot_png
from tests.proxy_fixtures import MODEL, proxy_for

__all__ = ["proxy_for"]

COPILOT_MODELS = Path(__file__).parent / "data/conformance/responses/copilot/models.json"
"""Copilot's real model list (`supports.vision`, `limits.vision`)."""
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{200,}")
_IMAGE_FIELDS = ("url", "image_url", "data")
"""Where a wire puts an image's bytes: Chat Completions' `image_url.url`, Responses'
`input_image.image_url`, Anthropic's `source.data`."""


@pytest.fixture(scope="module")
def plot() -> str:
    """A matplotlib figure drawn larger than any family uses, as a data URL."""
    return f"data:image/png;base64,{plot_png(3000, 1800)}"


def asking(url: str) -> list[dict[str, Any]]:
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What does this plot show?"},
                {"type": "image_url", "image_url": {"url": url, "detail": "high"}},
            ],
        }
    ]


def strings(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """Every string of a JSON body with the key it sits under."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from strings(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v, key)
    elif isinstance(value, str):
        yield key, value


def image_sizes(body: dict[str, Any]) -> list[tuple[int, int]]:
    """The pixel sizes of the images in a request body, wherever its wire puts them."""
    sizes = []
    for key, value in strings(body):
        if key in _IMAGE_FIELDS:
            data = value.split(",", 1)[1] if value.startswith("data:") else value
            sizes.append(Pillow.open(io.BytesIO(base64.b64decode(data))).size)
    return sizes


def texts(body: dict[str, Any]) -> str:
    """Every text field of a request body (all its strings but the images' bytes)."""
    return "\n".join(value for key, value in strings(body) if key not in _IMAGE_FIELDS)


def no_base64_text(body: dict[str, Any]) -> None:
    found = _BASE64_RUN.search(texts(body))
    assert found is None, f"base64 in a text field: {found and found.group()[:40]}..."


def openai_chat(model: str):
    return lambda up: OpenAIChat(model, base_url=up.url, api_key="k", max_retries=0)


def openai_responses(model: str):
    return lambda up: OpenAIResponses(model, base_url=up.url, api_key="k", max_retries=0)


def anthropic(model: str):
    return lambda up: AnthropicChat(model, base_url=up.base_url, api_key="k", max_retries=0)


FAMILIES = [
    pytest.param(openai_chat("gpt-4o"), CompletionCreateParamsStreaming, (1280, 768), id="chat"),
    pytest.param(
        openai_responses("gpt-5"), ResponseCreateParamsStreaming, (1280, 768), id="responses"
    ),
    pytest.param(
        anthropic("claude-sonnet-4-5"), MessageCreateParamsStreaming, (1568, 941), id="anthropic"
    ),
]


@pytest.mark.parametrize(("model", "wire", "size"), FAMILIES)
def test_a_chat_clients_plot_reaches_each_family_as_its_image_at_its_size(
    proxy_for, plot, model, wire, size
):
    proxy = proxy_for([reply("A rising line.")], model=model)
    answer = proxy.openai().chat.completions.create(model=MODEL, messages=asking(plot))
    assert answer.choices[0].message.content == "A rising line."
    (sent,) = proxy.upstream.requests
    TypeAdapter(wire).validate_python(sent.body)
    assert image_sizes(sent.body) == [size], "the family's long and short sides, not 3000x1800"
    assert "What does this plot show?\n[image/png 3000x1800]" in texts(sent.body)
    no_base64_text(sent.body)


def test_a_model_without_vision_reads_the_images_line_and_no_base64(proxy_for, plot):
    proxy = proxy_for([reply("I cannot see images.")])  # "scripted": no vision
    proxy.openai().chat.completions.create(model=MODEL, messages=asking(plot))
    (sent,) = proxy.upstream.requests
    assert image_sizes(sent.body) == []
    assert sent.body["messages"][0]["content"] == "What does this plot show?\n[image/png 3000x1800]"
    no_base64_text(sent.body)


def test_a_responses_client_sends_an_image_and_a_function_output_with_one(proxy_for, plot):
    """`input_image` in a user message and in a `function_call_output` (a client's own tool
    that draws), both to a Chat Completions upstream as its image parts."""
    proxy = proxy_for([reply("Two plots.")], model=openai_chat("gpt-4.1"))
    result = proxy.openai().responses.create(
        model=MODEL,
        input=[
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "Compare them."},
                    {"type": "input_image", "image_url": plot, "detail": "auto"},
                ],
            },
            {"type": "function_call", "call_id": "c1", "name": "draw", "arguments": "{}"},
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": [
                    {"type": "input_text", "text": "drawn:"},
                    {"type": "input_image", "image_url": plot},
                ],
            },
        ],
    )
    assert result.output_text == "Two plots."
    (sent,) = proxy.upstream.requests
    TypeAdapter(CompletionCreateParamsStreaming).validate_python(sent.body)
    assert image_sizes(sent.body) == [(1280, 768), (1280, 768)]
    roles = [m["role"] for m in sent.body["messages"]]
    assert roles == ["user", "assistant", "tool", "user"], "the output's image follows its tool"
    assert sent.body["messages"][2]["content"] == "drawn:\n[image/png 3000x1800]"
    no_base64_text(sent.body)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("https://example.com/plot.png", "remote URL"),
        ("data:image/svg+xml;base64,PHN2Zy8+", "image/svg+xml"),
        ("data:image/png;base64,aGVsbG8gd29ybGQ=", "not a readable image/png"),
        ("plot.png", "not a data URL"),
    ],
)
def test_an_image_the_proxy_cannot_send_is_a_400_naming_its_field(proxy_for, url, why):
    proxy = proxy_for([])
    with pytest.raises(openai.BadRequestError) as refused:
        proxy.openai().chat.completions.create(model=MODEL, messages=asking(url))
    error = refused.value.body
    assert error["param"] == "messages[0].content[1].image_url.url"
    assert why in error["message"]
    assert proxy.upstream.received == [], "nothing went upstream, nothing was fetched"


BOMBS = [
    pytest.param(PNG_13000, "image/png", "13000x13000", id="png"),
    pytest.param(GIF_SCREEN_BOMB, "image/gif", "65535x65535", id="gif"),
]


@pytest.mark.parametrize(("data", "mime", "size"), BOMBS)
def test_an_image_declaring_too_many_pixels_is_a_400_before_anything_decodes_it(
    proxy_for, data, mime, size
):
    """The PNG's pixels are garbage: a decoder that reached them would fail otherwise (and a
    real one would take seconds and gigabytes); the GIF made Pillow raise, and the proxy 500."""
    proxy = proxy_for([], model=openai_chat("gpt-4o"))
    url = f"data:{mime};base64,{b64(data)}"
    with pytest.raises(openai.BadRequestError) as refused:
        proxy.openai().chat.completions.create(model=MODEL, messages=asking(url))
    error = refused.value.body
    assert error["param"] == "messages[0].content[1].image_url.url"
    assert f"{mime} of {size} pixels" in error["message"], error["message"]
    with pytest.raises(openai.BadRequestError) as refused:
        proxy.openai().responses.create(
            model=MODEL,
            input=[{"role": "user", "content": [{"type": "input_image", "image_url": url}]}],
        )
    assert refused.value.body["param"] == "input[0].content[0].image_url"
    assert size in refused.value.body["message"]
    assert proxy.upstream.received == []


def test_an_image_pillow_refuses_past_its_header_is_no_500(proxy_for):
    """A GIF whose 1x1 screen holds a 10000x10000 frame passes the header's check; Pillow's
    lazy size refuses it, and the model reads its line."""
    proxy = proxy_for([reply("Nothing to see.")], model=openai_chat("gpt-4o"))
    url = f"data:image/gif;base64,{b64(GIF_FRAME_BOMB)}"
    answer = proxy.openai().chat.completions.create(model=MODEL, messages=asking(url))
    assert answer.choices[0].message.content == "Nothing to see."
    (sent,) = proxy.upstream.requests
    assert image_sizes(sent.body) == []
    assert "What does this plot show?\n[image/gif 1x1]" in texts(sent.body)


def test_a_remote_input_image_and_a_file_id_are_refused_at_responses(proxy_for):
    proxy = proxy_for([])
    for part, param in [
        ({"image_url": "http://127.0.0.1:9/x.png"}, "input[0].content[0].image_url"),
        ({"file_id": "file-123"}, "input[0].content[0].file_id"),
    ]:
        content = [{"type": "input_image", "detail": "auto", **part}]
        with pytest.raises(openai.BadRequestError) as refused:
            proxy.openai().responses.create(
                model=MODEL, input=[{"role": "user", "content": content}]
            )
        assert refused.value.body["param"] == param
    assert proxy.upstream.received == []


def test_an_image_outside_a_user_message_is_refused(proxy_for, plot):
    proxy = proxy_for([])
    part = {"type": "image_url", "image_url": {"url": plot}}
    with pytest.raises(openai.BadRequestError) as refused:
        proxy.openai().chat.completions.create(
            model=MODEL, messages=[{"role": "system", "content": [part]}, *asking(plot)]
        )
    assert refused.value.body["param"] == "messages[0].content[0].type"
    assert plot[40:100] not in json.dumps(refused.value.body), "no base64 echoed back"


def test_a_users_image_is_kept_in_later_turns(proxy_for, plot):
    """A client sends its whole conversation each turn: the image it asked about in the first
    is still seen in the second (a tool's image of an earlier turn is not)."""
    proxy = proxy_for([reply("Sure.")], model=openai_chat("gpt-4o"))
    messages = [
        *asking(plot),
        {"role": "assistant", "content": "A rising line."},
        {"role": "user", "content": "And its slope?"},
    ]
    proxy.openai().chat.completions.create(model=MODEL, messages=messages)
    (sent,) = proxy.upstream.requests
    assert image_sizes(sent.body) == [(1280, 768)]


def test_a_server_side_run_sees_the_image_of_the_request_it_answers(proxy_for, plot):
    """With tool_execution "auto" the proxy's own agent loop asks the model; the image of the
    user's request goes with it, in the first request and in the one after a tool ran."""
    proxy = proxy_for(
        [reply("", call("list_directory", path=".")), reply("A rising line.")],
        model=openai_chat("gpt-4o"),
        allow_execution=True,
    )
    answer = proxy.openai().chat.completions.create(
        model=MODEL,
        messages=asking(plot),
        extra_body={"tool_execution": "auto", "use_notebook_tools": True},
    )
    assert answer.choices[0].message.content == "A rising line."
    first, second = proxy.upstream.requests
    assert image_sizes(first.body) == image_sizes(second.body) == [(1280, 768)]
    no_base64_text(second.body)


def test_the_context_block_put_before_a_request_keeps_its_images(plot) -> None:
    """In a kernel each request carries a context block; the request's images stay with it."""
    image = Image(media_type="image/png", data=plot.split(",", 1)[1])
    asked = UserMessage(content="What does this plot show?", images=(image,))
    (sent,) = with_request_block([asked], "<context>a notebook</context>")
    assert isinstance(sent, UserMessage) and sent.images == (image,)
    assert sent.content.startswith("<context>") and asked.content == "What does this plot show?"


def test_a_users_image_is_counted_in_the_context_window(plot) -> None:
    """A server-side run budgets its window: the request's image costs what a tool's does."""
    image = Image(media_type="image/png", data=plot.split(",", 1)[1])
    seen = UserMessage(content="What does this plot show?", images=(image,))
    plain = UserMessage(content="What does this plot show?")
    assert message_tokens(seen) == message_tokens(plain) + IMAGE_TOKENS


async def test_copilot_is_told_a_users_request_carries_an_image(github, copilot_home, plot):
    """Copilot refuses images without `Copilot-Vision-Request`; a user's image asks for it."""
    models = json.loads(COPILOT_MODELS.read_text())["data"]
    fake = github([reply("ok")], models=models)
    model = fake.model("gpt-4o")
    image = Image(media_type="image/png", data=plot.split(",", 1)[1])
    await model.complete([UserMessage(content="What does this show?", images=(image,))])
    (request,) = fake.chat_requests
    assert request.headers["Copilot-Vision-Request"] == "true"
    assert image_sizes(request.body) == [(1280, 768)]
    await model.aclose()
