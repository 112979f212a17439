"""Images as images, at the size each family uses (issue 39, case 1): a plot larger than what a
model sees is scaled down before it is sent, on every wire, and never travels as text."""

from __future__ import annotations

import base64
import io
import json
import re
from typing import Any

import pytest
from anthropic.types.message_create_params import MessageCreateParamsStreaming
from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsStreaming
from PIL import Image as Pillow
from pydantic import TypeAdapter

from copilot_nb.messages import AssistantMessage, Image, ToolCall, ToolResult, UserMessage
from copilot_nb.models.anthropic.chat import AnthropicChat
from copilot_nb.models.capabilities import ImageLimits, images_to_send
from copilot_nb.models.image_fit import fit_image
from copilot_nb.models.openai.chat import OpenAIChat
from copilot_nb.models.openai.responses import OpenAIResponses
from copilot_nb.testing import reply
from tests.notebook_samples import plot_png

_URL = re.compile(r"data:(image/\w+);base64,([A-Za-z0-9+/=]+)")


def turn(image: Image) -> list[Any]:
    return [
        UserMessage(content="what does the plot show?"),
        AssistantMessage(
            tool_calls=(ToolCall.from_raw(id="c1", name="run_cell", raw_arguments="{}"),)
        ),
        ToolResult(
            tool_call_id="c1", name="run_cell", content="[image/png 3000x1800]", images=(image,)
        ),
    ]


def sizes(body: dict[str, Any]) -> list[tuple[int, int]]:
    """The pixel sizes of the images a request body carries, wherever its wire puts them."""
    text = json.dumps(body)
    found = [m.group(2) for m in _URL.finditer(text)]
    found += re.findall(r'"type": "base64", "media_type": "image/\w+", "data": "([^"]+)"', text)
    return [Pillow.open(io.BytesIO(base64.b64decode(data))).size for data in found]


@pytest.fixture(scope="module")
def big_plot() -> Image:
    return Image(media_type="image/png", data=plot_png(3000, 1800))


async def test_each_family_is_sent_the_plot_at_the_size_it_uses(serve, big_plot: Image) -> None:
    server = serve([reply("ok"), reply("ok"), reply("ok")])
    await AnthropicChat("claude-sonnet-4-5", api_key="k", base_url=server.base_url).complete(
        turn(big_plot)
    )
    await OpenAIChat("gpt-4o", api_key="k", base_url=server.url).complete(turn(big_plot))
    await OpenAIResponses("gpt-5", api_key="k", base_url=server.url).complete(turn(big_plot))
    claude, chat, responses = (r.body for r in server.requests)
    TypeAdapter(MessageCreateParamsStreaming).validate_python(claude)
    TypeAdapter(CompletionCreateParamsStreaming).validate_python(chat)
    TypeAdapter(ResponseCreateParamsStreaming).validate_python(responses)
    assert sizes(claude) == [(1568, 941)], "Anthropic's long side"
    assert sizes(chat) == sizes(responses) == [(1280, 768)], "OpenAI's short side"
    for body in (claude, chat, responses):
        sent = json.dumps(body)
        assert big_plot.data[:100] not in sent
        assert len(sent) < len(big_plot.data), "fewer bytes than the figure as drawn"


def test_an_image_is_scaled_once_and_a_small_one_is_left_as_it_is(big_plot: Image) -> None:
    small = Image(media_type="image/png", data=plot_png(640, 480))
    assert fit_image(small, max_side=1568, max_bytes=5_000_000) is small
    first = fit_image(big_plot, max_side=1000, max_bytes=5_000_000)
    again = fit_image(big_plot, max_side=1000, max_bytes=5_000_000)
    assert first is not None and again is not None and first.data is again.data, "cached"


def test_an_image_over_the_bytes_allowed_is_shrunk_until_it_fits(big_plot: Image) -> None:
    """Copilot lists `max_prompt_image_size` per model; an image over it is made smaller,
    not dropped."""
    limits = ImageLimits(max_bytes=40_000, max_side=3000)
    (_, _, result) = images_to_send(turn(big_plot), limits)
    assert isinstance(result, ToolResult)
    (sent,) = result.images
    assert sent.size <= 40_000 < big_plot.size


def test_an_image_that_cannot_be_read_and_is_too_large_is_not_sent() -> None:
    broken = Image(media_type="image/png", data=base64.b64encode(b"\x89PNG" + bytes(90)).decode())
    assert fit_image(broken, max_side=100, max_bytes=10) is None
    assert fit_image(broken, max_side=100, max_bytes=1000) is broken
