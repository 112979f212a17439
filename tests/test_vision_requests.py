"""A model that accepts images sees a cell's plot; every other model reads the text it reads today.

Each provider is asked over loopback in its real wire format, and the request bodies that carry
images are pinned and checked against the official SDKs' request types."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from anthropic.types import ImageBlockParam, TextBlockParam, ToolResultBlockParam
from mcp_types import CallToolResult, ImageContent, TextContent
from openai.types.chat import ChatCompletionToolMessageParam, ChatCompletionUserMessageParam
from openai.types.responses.response_input_item_param import FunctionCallOutput
from pydantic import TypeAdapter

from copilot_nb import Agent
from copilot_nb.messages import AssistantMessage, Image, ToolCall, ToolResult, UserMessage
from copilot_nb.models.anthropic.chat import AnthropicChat
from copilot_nb.models.capabilities import MAX_IMAGE_BYTES
from copilot_nb.models.openai.responses import OpenAIResponses
from copilot_nb.testing import call, reply
from copilot_nb.tools.mcp.results import tool_output
from copilot_nb.tools.views.outputs import output_images
from copilot_nb.workspace.workspace import Workspace
from tests.notebook_samples import JPEG_B64, PNG_B64, make_notebook, png, sample_tools

REAL_COPILOT_MODELS = (
    Path(__file__).parent / "data" / "conformance" / "responses" / "copilot" / "models.json"
)
PLOT_TEXT = "[image/png 640x480]"


def b64png(width: int, height: int) -> str:
    return base64.b64encode(png(width, height)).decode()


def conversation(*images: Image, call_id: str = "call_plot") -> list[Any]:
    """A turn in which the model ran a cell whose outputs are `images`."""
    return [
        UserMessage(content="what does the plot show?"),
        AssistantMessage(
            tool_calls=(
                ToolCall.from_raw(id=call_id, name="run_cell", raw_arguments='{"cell_id": "#2"}'),
            )
        ),
        ToolResult(
            tool_call_id=call_id,
            name="run_cell",
            content=f"ran cell plot (#2):\n[display]\n{PLOT_TEXT}",
            images=images,
        ),
    ]


PLOT = Image(media_type="image/png", data=PNG_B64)


def valid(typed_dict: Any, value: Any) -> None:
    TypeAdapter(typed_dict).validate_python(value)


# --- the tools attach the images ---------------------------------------------------------------


@pytest.fixture
def ws(root: Path) -> Workspace:
    make_notebook(root / "analysis.ipynb")
    return Workspace(root)


async def test_read_cell_attaches_the_plots_it_describes(ws: Workspace) -> None:
    out = await sample_tools(ws).call_tool("read_cell", {"cell_id": "#3"})
    assert "[image/png 640x480]" in out.content and "[image/jpeg 1024x768]" in out.content
    assert PNG_B64 not in out.content, "the text never holds base64"
    assert out.images == (
        Image(media_type="image/png", data=PNG_B64),
        Image(media_type="image/jpeg", data=JPEG_B64),
    )


class Shell:
    """The parts of IPython's shell run_cell uses: where displays go, and the cell transform."""

    def __init__(self) -> None:
        from IPython.core.displaypub import DisplayPublisher

        self.display_pub: Any = DisplayPublisher()

    def transform_cell(self, source: str) -> str:
        return source


async def test_run_cell_attaches_the_figure_it_put_into_the_file(root: Path) -> None:
    from copilot_nb.tools.context import ToolContext
    from copilot_nb.tools.notebook.run_cell import cell_run_toolset

    dot = b64png(3, 2)
    source = f"_ = shell.display_pub.publish(data={{'image/png': '{dot}'}}, metadata={{}})"
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source)]
    nbformat.write(notebook, root / "figure.ipynb")
    shell = Shell()
    namespace = {"shell": shell}
    ctx = ToolContext(
        workspace=Workspace(root),
        current_notebook=lambda: "figure.ipynb",
        namespace=lambda: namespace,
        shell=shell,
    )
    out = await cell_run_toolset(ctx).call_tool("run_cell", {"cell_id": "#1"})
    assert "[image/png 3x2]" in out.content and not out.is_error, out.content
    assert out.images == (Image(media_type="image/png", data=dot),)
    (shown,) = nbformat.read(root / "figure.ipynb", as_version=4).cells[0].outputs
    assert shown.data["image/png"].replace("\n", "") == dot


def test_images_too_large_broken_or_of_other_types_stay_text() -> None:
    big = base64.b64encode(png(10, 10) + bytes(MAX_IMAGE_BYTES)).decode()
    lines = "\n".join(PNG_B64[i : i + 76] for i in range(0, len(PNG_B64), 76))
    outputs = [
        {"output_type": "display_data", "data": {"image/png": big}},
        {"output_type": "display_data", "data": {"image/png": "bm90IGFuIGltYWdl"}},
        {"output_type": "display_data", "data": {"image/svg+xml": "<svg/>"}},
        {"output_type": "stream", "name": "stdout", "text": "x"},
        {"output_type": "execute_result", "data": {"image/png": [lines]}, "metadata": {}},
    ]
    assert output_images(outputs) == (PLOT,), "nbformat's line-split base64 is joined"
    many = [
        {"output_type": "display_data", "data": {"image/png": b64png(n, n)}} for n in range(1, 7)
    ]
    assert [i.data for i in output_images(many)] == [b64png(n, n) for n in range(3, 7)]


def test_an_mcp_servers_image_travels_beside_its_summary() -> None:
    result = CallToolResult(
        content=[
            TextContent(text="screenshot taken"),
            ImageContent(data=PNG_B64, mime_type="image/png"),
        ]
    )
    out = tool_output(result, label="browser__screenshot")
    assert out.content == "screenshot taken\n[image/png 640x480]"
    assert out.images == (PLOT,)


# --- OpenAI Chat Completions ---------------------------------------------------------------------


async def test_a_vision_model_sees_the_plot_read_cell_returned(serve, ws: Workspace) -> None:
    """The story: gpt-4o reads the plot cell; its next request shows it the plot."""
    server = serve(
        [reply("", call("read_cell", id="call_1", cell_id="#3")), reply("A rising line.")],
        model_name="gpt-4o",
    )
    agent = Agent(model=server.model(), workspace=ws, tools=sample_tools(ws))
    assert await agent.ask("what does the plot show?") == "A rising line."

    tool, images = server.requests[1].body["messages"][-2:]
    assert tool["role"] == "tool" and "[image/png 640x480]" in tool["content"]
    assert images == {
        "role": "user",
        "content": [
            {"type": "text", "text": "2 images from the read_cell call call_1:"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}},
            {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{JPEG_B64}"}},
        ],
    }
    valid(ChatCompletionToolMessageParam, tool)
    valid(ChatCompletionUserMessageParam, images)


async def test_a_model_without_vision_gets_the_same_text_and_no_images(
    serve, ws: Workspace
) -> None:
    server = serve(
        [reply("", call("read_cell", id="call_1", cell_id="#3")), reply("A plot.")],
        model_name="gpt-3.5-turbo",
    )
    agent = Agent(model=server.model(), workspace=ws, tools=sample_tools(ws))
    await agent.ask("what does the plot show?")

    messages = server.requests[1].body["messages"]
    assert messages[-1]["role"] == "tool" and "[image/png 640x480]" in messages[-1]["content"]
    assert "base64" not in json.dumps(server.requests[1].body)
    result = agent.messages[-2]
    assert isinstance(result, ToolResult) and result.images == (), "the history keeps no images"


async def test_the_images_follow_all_the_tool_messages_of_their_round(serve) -> None:
    server = serve([reply("ok")])
    history = [
        UserMessage(content="compare the plots"),
        AssistantMessage(
            tool_calls=(
                ToolCall.from_raw(id="a", name="read_cell", raw_arguments="{}"),
                ToolCall.from_raw(id="b", name="list_cells", raw_arguments="{}"),
                ToolCall.from_raw(id="c", name="read_cell", raw_arguments="{}"),
            )
        ),
        ToolResult(tool_call_id="a", name="read_cell", content="a", images=(PLOT,)),
        ToolResult(tool_call_id="b", name="list_cells", content="b"),
        ToolResult(tool_call_id="c", name="read_cell", content="c", images=(PLOT,)),
    ]
    await server.model(vision=True).complete(history)
    roles = [m["role"] for m in server.requests[0].body["messages"]]
    assert roles == ["user", "assistant", "tool", "tool", "tool", "user"]
    texts = [p["text"] for p in server.requests[0].body["messages"][-1]["content"] if "text" in p]
    assert texts == ["Image from the read_cell call a:", "Image from the read_cell call c:"]


async def test_only_the_newest_images_of_the_current_turn_are_sent(serve) -> None:
    earlier = conversation(Image(media_type="image/png", data=b64png(1, 1)), call_id="old")
    now = conversation(*(Image(media_type="image/png", data=b64png(n, n)) for n in range(2, 8)))
    server = serve([reply("ok")])
    await server.model(vision=True).complete([*earlier, AssistantMessage(text="a dot"), *now])
    sent = [
        part["image_url"]["url"].removeprefix("data:image/png;base64,")
        for message in server.requests[0].body["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for part in message["content"]
        if part["type"] == "image_url"
    ]
    assert sent == [b64png(n, n) for n in range(4, 8)], "the last 4; the earlier turn's none"


async def test_vision_false_overrides_the_name_table(serve) -> None:
    server = serve([reply("ok")], model_name="gpt-4o")
    await server.model(vision=False).complete(conversation(PLOT))
    assert server.requests[0].body["messages"][-1]["role"] == "tool"


# --- OpenAI Responses ----------------------------------------------------------------------------


async def test_responses_puts_the_images_in_the_function_call_output(serve) -> None:
    server = serve([reply("ok"), reply("ok")])
    seeing = OpenAIResponses("gpt-5", base_url=server.url, api_key="k")
    await seeing.complete(conversation(PLOT))
    blind = OpenAIResponses("gpt-3.5-turbo", base_url=server.url, api_key="k")
    await blind.complete(conversation(PLOT))

    output = server.requests[0].body["input"][-1]
    assert output == {
        "type": "function_call_output",
        "call_id": "call_plot",
        "output": [
            {"type": "input_text", "text": f"ran cell plot (#2):\n[display]\n{PLOT_TEXT}"},
            {"type": "input_image", "image_url": f"data:image/png;base64,{PNG_B64}"},
        ],
    }
    valid(FunctionCallOutput, output)
    assert server.requests[1].body["input"][-1] == {
        "type": "function_call_output",
        "call_id": "call_plot",
        "output": f"ran cell plot (#2):\n[display]\n{PLOT_TEXT}",
    }


# --- Anthropic Messages --------------------------------------------------------------------------


async def test_anthropic_puts_image_blocks_in_the_tool_result(serve) -> None:
    server = serve([reply("ok"), reply("ok")])
    await AnthropicChat("claude-sonnet-4-5", api_key="k", base_url=server.base_url).complete(
        conversation(PLOT)
    )
    await AnthropicChat("claude-2.1", api_key="k", base_url=server.base_url).complete(
        conversation(PLOT)
    )

    (block,) = server.requests[0].body["messages"][-1]["content"]
    assert block == {
        "type": "tool_result",
        "tool_use_id": "call_plot",
        "content": [
            {"type": "text", "text": f"ran cell plot (#2):\n[display]\n{PLOT_TEXT}"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64},
            },
        ],
        "cache_control": {"type": "ephemeral"},
    }
    valid(ToolResultBlockParam, block)
    valid(TextBlockParam, block["content"][0])
    valid(ImageBlockParam, block["content"][1])
    assert server.requests[1].body["messages"][-1]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "call_plot",
            "content": f"ran cell plot (#2):\n[display]\n{PLOT_TEXT}",
            "cache_control": {"type": "ephemeral"},
        }
    ]


# --- GitHub Copilot ------------------------------------------------------------------------------


@pytest.fixture
def copilot(github, copilot_home: None):
    """A fake Copilot that lists the real model list (`supports.vision`, `limits.vision`)."""
    models = json.loads(REAL_COPILOT_MODELS.read_text())["data"]
    return lambda steps: github(steps, models=models)


async def test_copilot_sends_the_vision_header_with_images_and_keeps_the_models_limit(
    copilot,
) -> None:
    fake = copilot([reply("ok"), reply("ok")])
    model = fake.model("gpt-4o")
    two = conversation(PLOT, Image(media_type="image/png", data=b64png(8, 8)))
    await model.complete(two)
    await model.complete([UserMessage(content="hi")])

    first, second = fake.chat_requests
    assert first.headers["Copilot-Vision-Request"] == "true"
    parts = first.body["messages"][-1]["content"]
    images = [p for p in parts if p["type"] == "image_url"]
    assert images == [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64png(8, 8)}"}}
    ], "Copilot lists max_prompt_images 1 for gpt-4o: the newest one"
    assert "Copilot-Vision-Request" not in second.headers
    await model.aclose()


async def test_copilot_sends_no_images_to_a_model_its_list_says_cannot_see(copilot) -> None:
    fake = copilot([reply("ok")])
    model = fake.model("gpt-4o-mini")
    await model.complete(conversation(PLOT))
    (request,) = fake.chat_requests
    assert "Copilot-Vision-Request" not in request.headers
    assert request.body["messages"][-1]["role"] == "tool"
    await model.aclose()


async def test_copilot_claude_gets_image_blocks_through_messages(copilot) -> None:
    fake = copilot([reply("ok")])
    model = fake.model("claude-sonnet-4")
    await model.complete(conversation(PLOT))
    (request,) = fake.chat_requests
    assert request.path.endswith("/v1/messages")
    assert request.headers["Copilot-Vision-Request"] == "true"
    (block,) = request.body["messages"][-1]["content"]
    assert block["content"][1]["source"]["data"] == PNG_B64
    valid(ToolResultBlockParam, block)
    await model.aclose()
