"""What an MCP server answers is what the model reads: text as it is, everything else summarised
(never base64), structured content once, errors marked, and never more than the limit."""

from __future__ import annotations

import base64
import json

import pytest
from mcp.server.mcpserver import MCPServer
from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolUseContent,
)

from copilot_nb.tools.mcp.results import MAX_RESULT_CHARS, tool_output
from copilot_nb.tools.registry import ToolOutput
from tests.image_bombs import GIF_SCREEN_BOMB, PNG_13000
from tests.notebook_samples import png


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


BYTES_3K = bytes(range(256)) * 12  # 3,072 bytes: "3.0 KB", base64 without padding


def read(*blocks, **fields) -> ToolOutput:
    return tool_output(CallToolResult(content=list(blocks), **fields), label="files__read")


def test_text_blocks_reach_the_model_as_they_are_one_per_line():
    out = read(TextContent(text="total 2"), TextContent(text="a.csv\nb.csv"))
    assert out == ToolOutput(content="total 2\na.csv\nb.csv", summary="total 2")


def test_an_image_is_its_type_and_size_and_never_its_base64():
    data = b64(png(3, 2))
    out = read(ImageContent(data=data, mime_type="image/png"))
    assert out.content == out.summary == "[image/png 3x2]"
    assert data not in out.content and data[:16] not in out.content
    assert read(ImageContent(data=b64(png(640, 480)), mime_type="image/png")).content == (
        "[image/png 640x480]"
    )


def test_an_image_that_cannot_be_measured_is_its_type_and_size_in_bytes():
    out = read(ImageContent(data=b64(BYTES_3K), mime_type="image/webp"))
    assert out.content == "[image/webp 3.0 KB]"


def test_an_image_declaring_too_many_pixels_is_a_line_and_is_not_attached():
    out = read(
        ImageContent(data=b64(PNG_13000), mime_type="image/png"),
        ImageContent(data=b64(GIF_SCREEN_BOMB), mime_type="image/gif"),
        EmbeddedResource(
            type="resource",
            resource=BlobResourceContents(
                uri="file:///huge.png", mime_type="image/png", blob=b64(PNG_13000)
            ),
        ),
    )
    assert out.content == (
        "[image/png 13000x13000: too large to show]\n"
        "[image/gif 65535x65535: too large to show]\n"
        "[image/png 13000x13000: too large to show]"
    )
    assert out.images == () and not out.is_error


def test_audio_is_its_type_and_size():
    out = read(AudioContent(data=b64(BYTES_3K), mime_type="audio/wav"))
    assert out.content == "[audio/wav audio, 3.0 KB]"
    assert read(AudioContent(data=b64(b"RIFF12"), mime_type="audio/wav")).content == (
        "[audio/wav audio, 6 B]"
    )


def test_a_resource_link_is_its_uri_and_name():
    link = ResourceLink(uri="file:///data/report.csv", name="report.csv")
    assert read(link).content == "[resource file:///data/report.csv (report.csv)]"
    nameless = ResourceLink(uri="s3://bucket/key", name="")
    assert read(nameless).content == "[resource s3://bucket/key]"


def test_an_embedded_text_resource_is_its_text():
    contents = TextResourceContents(uri="file:///notes.md", mime_type="text/markdown", text="# Hi")
    assert read(EmbeddedResource(resource=contents)).content == "# Hi"


@pytest.mark.parametrize(
    ("mime", "blob", "shown"),
    [
        ("application/pdf", b64(BYTES_3K), "[application/pdf 3.0 KB at file:///r/doc]"),
        (None, b64(BYTES_3K), "[application/octet-stream 3.0 KB at file:///r/doc]"),
        ("image/png", b64(png(16, 9)), "[image/png 16x9]"),
    ],
)
def test_an_embedded_blob_is_its_type_and_size_never_its_data(mime, blob, shown):
    out = read(
        EmbeddedResource(
            resource=BlobResourceContents(uri="file:///r/doc", mime_type=mime, blob=blob)
        )
    )
    assert out.content == shown
    assert blob[:16] not in out.content


def test_every_kind_of_block_in_one_result_keeps_its_order():
    out = read(
        TextContent(text="found 4 things:"),
        ImageContent(data=b64(png(2, 2)), mime_type="image/png"),
        AudioContent(data=b64(BYTES_3K), mime_type="audio/ogg"),
        ResourceLink(uri="file:///a.txt", name="a"),
        EmbeddedResource(resource=TextResourceContents(uri="file:///b.txt", text="b's text")),
    )
    assert out.content.splitlines() == [
        "found 4 things:",
        "[image/png 2x2]",
        "[audio/ogg audio, 3.0 KB]",
        "[resource file:///a.txt (a)]",
        "b's text",
    ]
    assert out.is_error is False


def test_a_block_kind_this_client_does_not_know_is_named_not_dropped():
    unknown = ToolUseContent(name="search", id="call_1", input={})
    result = CallToolResult.model_construct(content=[TextContent(text="see:"), unknown])
    assert tool_output(result, label="x__y").content == "see:\n[tool_use content]"


def test_structured_content_alone_is_shown_as_json():
    out = read(structured_content={"rows": 3, "city": "Zürich"})
    assert out.content == 'structured content:\n{\n "rows": 3,\n "city": "Zürich"\n}'
    assert out.summary == "structured content:"


def test_structured_content_beside_other_text_is_shown_after_it():
    out = read(TextContent(text="3 rows"), structured_content={"rows": 3})
    assert out.content == '3 rows\nstructured content:\n{\n "rows": 3\n}'


@pytest.mark.parametrize(
    ("text", "structured"),
    [
        ('{"rows": 3, "cols": 2}', {"rows": 3, "cols": 2}),
        (json.dumps({"cols": 2, "rows": 3}, indent=2), {"rows": 3, "cols": 2}),
        ("hello", {"result": "hello"}),  # the SDK's wrapping of a returned str
        ("42", {"result": 42}),
        ('{\n  "a": [1, 2]\n}', {"result": {"a": [1, 2]}}),
        ('["a", "b"]', {"result": ["a", "b"]}),
        ('{"result": "hello"}', {"result": "hello"}),
    ],
)
def test_structured_content_a_text_block_already_carries_is_not_repeated(text, structured):
    assert read(TextContent(text=text), structured_content=structured).content == text


def greeting() -> str:
    return "hello"


def stats() -> dict[str, int]:
    return {"rows": 3, "cols": 2}


def count() -> int:
    return 42


def files() -> list[str]:
    return ["a.csv", "b.csv"]


async def from_sdk(function) -> CallToolResult:
    """What the SDK's own MCPServer answers for a tool returning this function's value."""
    server = MCPServer("sdk")
    server.tool()(function)
    return await server.call_tool(function.__name__, {})


@pytest.mark.parametrize("function", [greeting, stats, count])
async def test_what_the_sdk_sends_for_a_returned_value_is_read_once(function):
    result = await from_sdk(function)
    assert result.structured_content is not None  # the SDK sent both: text and structured
    out = tool_output(result, label="sdk__x")
    assert "structured content" not in out.content
    assert out.content == result.content[0].text


async def test_a_returned_list_the_sdk_splits_into_blocks_is_read_once():
    out = tool_output(await from_sdk(files), label="sdk__files")
    assert out.content == "a.csv\nb.csv"


@pytest.mark.parametrize(
    ("text", "structured"),
    [
        ("hello!", {"result": "hello"}),
        ('{"rows": 4}', {"rows": 3}),
        ("hello", {"result": "hello", "more": 1}),
        ("rows: 3", {"rows": 3}),
    ],
)
def test_structured_content_that_says_more_than_the_text_is_shown(text, structured):
    out = read(TextContent(text=text), structured_content=structured)
    assert out.content == f"{text}\nstructured content:\n{json.dumps(structured, indent=1)}"


def test_an_error_result_is_an_error_the_model_reads_with_the_tool_named():
    out = read(TextContent(text="permission denied: /etc/shadow\nerrno 13"), is_error=True)
    assert out == ToolOutput(
        content="files__read failed: permission denied: /etc/shadow\nerrno 13",
        is_error=True,
        summary="files__read failed: permission denied: /etc/shadow",
    )


def test_an_empty_result_says_so_and_an_empty_error_too():
    assert read() == ToolOutput(
        content="(the tool returned nothing)", summary="(the tool returned nothing)"
    )
    failed = read(is_error=True)
    assert (failed.content, failed.is_error) == (
        "files__read failed: (the tool returned nothing)",
        True,
    )


def test_a_huge_result_is_clipped_with_a_marker_saying_how_much_was_left_out():
    out = read(TextContent(text="x" * 300_000))
    assert out.content == "x" * MAX_RESULT_CHARS + "\n… [200,000 more characters]"
    assert len(out.summary) <= 80


def test_the_limit_can_be_set_and_a_result_at_it_is_not_clipped():
    result = CallToolResult(content=[TextContent(text="y" * 300_000)], is_error=True)
    clipped = tool_output(result, label="s__t", limit=50)
    assert clipped.content == ("s__t failed: " + "y" * 37) + "\n… [299,963 more characters]"
    assert clipped.is_error is True
    exact = tool_output(CallToolResult(content=[TextContent(text="z" * 50)]), label="s", limit=50)
    assert exact.content == "z" * 50


def test_a_number_in_the_text_is_not_taken_for_a_boolean_in_the_structured_content():
    out = read(TextContent(type="text", text="1"), structured_content={"result": True})
    assert out.content == '1\nstructured content:\n{\n "result": true\n}'


def test_audio_size_counts_the_bytes_not_the_padding():
    out = read(AudioContent(type="audio", data=b64(bytes(1000)), mime_type="audio/wav"))
    assert out.content == "[audio/wav audio, 1000 B]"
