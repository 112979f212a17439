"""Big outputs in proportion (issue 39, case 2): a tool result over its budget is cut where a
reader would cut it, says how much was left out and how to see more, and never cuts through a
drawn character or a base64 block."""

from __future__ import annotations

import base64
import json
import re
from typing import Any

import numpy as np
import pandas as pd
import pytest
from anthropic.types.message_create_params import MessageCreateParamsStreaming
from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsStreaming
from pydantic import TypeAdapter

from copilot_nb import Agent
from copilot_nb.models.anthropic.chat import AnthropicChat
from copilot_nb.models.openai.responses import OpenAIResponses
from copilot_nb.testing import call as model_calls
from copilot_nb.testing import reply
from copilot_nb.tools.kernel.tools import kernel_tools
from copilot_nb.tools.redaction.masking import redact_and_cut
from copilot_nb.tools.views.outputs import describe_output
from copilot_nb.tools.views.reader_cut import cut_for_reader
from tests.helpers import call

FIGURE = base64.b64encode(bytes(range(256)) * 300).decode()


def _frame_text(rows: int) -> str:
    frame = pd.DataFrame(np.arange(rows * 3).reshape(rows, 3), columns=["a", "b", "c"])
    with pd.option_context("display.max_rows", rows + 1, "display.show_dimensions", True):
        return repr(frame)


def test_a_dataframe_keeps_its_header_first_and_last_rows_and_shape() -> None:
    text = _frame_text(1000)
    cut = cut_for_reader(text, 800)
    assert len(text) > 20_000 and len(cut) <= 900
    lines = cut.splitlines()
    assert lines[0].split() == ["a", "b", "c"]
    assert lines[1].split() == ["0", "0", "1", "2"], "the first rows"
    assert lines[-2].split() == ["999", "2997", "2998", "2999"], "the last rows"
    assert lines[-1] == "[1000 rows x 3 columns]"
    (marker,) = [line for line in lines if line.startswith("…")]
    assert "rows cut" in marker and ".iloc[" in marker, "says how to see the rest"


def test_a_traceback_keeps_its_last_frames_and_the_error() -> None:
    frames = "".join(
        f'  File "/work/step{i}.py", line {i}, in step{i}\n    step{i + 1}()\n' for i in range(200)
    )
    text = f"Traceback (most recent call last):\n{frames}KeyError: 'price'\n"
    cut = cut_for_reader(text, 600)
    assert len(cut) <= 600
    assert cut.startswith("Traceback (most recent call last):\n… [")
    assert "earlier frames cut" in cut and "print_exc" in cut
    assert cut.rstrip().endswith("KeyError: 'price'")
    assert 'File "/work/step199.py"' in cut, "the frame where it happened"
    assert 'File "/work/step0.py"' not in cut


def test_an_ipython_traceback_keeps_its_header_line() -> None:
    frames = "".join(f"Cell In[{i}], line 3\n----> 3     g{i}()\n\n" for i in range(80))
    header = (
        "-" * 75 + "\nZeroDivisionError                         Traceback (most recent call last)\n"
    )
    cut = cut_for_reader(header + frames + "ZeroDivisionError: division by zero", 500)
    assert "Traceback (most recent call last)" in cut.splitlines()[1]
    assert "Cell In[79]" in cut and "Cell In[0]," not in cut
    assert cut.endswith("ZeroDivisionError: division by zero")


def test_a_long_stream_keeps_its_start_and_end_at_line_ends() -> None:
    text = "".join(f"epoch {i}: loss {1 / (i + 1):.4f}\n" for i in range(5000))
    cut = cut_for_reader(text, 900)
    head, _, rest = cut.partition("\n… [")
    marker, tail = rest.split("\n", 1)
    assert head.startswith("epoch 0:") and head.endswith(tuple("0123456789"))
    assert tail.rstrip().endswith("epoch 4999: loss 0.0002")
    assert "lines," in marker and "characters cut] … (print a slice of it to see it)" in marker
    for line in head.splitlines() + tail.splitlines():
        assert line.startswith("epoch "), f"no line cut in half: {line!r}"


def test_base64_is_never_cut_through_and_never_shown() -> None:
    text = f"saved figure\ndata:image/png;base64,{FIGURE}\n" + "done\n" * 50
    cut = cut_for_reader(text, 400)
    assert "[image/png base64, 75.0 KB left out]" in cut
    assert FIGURE[:60] not in cut and len(cut) < 400
    wrapped = "\n".join(FIGURE[i : i + 76] for i in range(0, len(FIGURE), 76))
    assert cut_for_reader(f"b64:\n{wrapped}\nend", 300) == "b64:\n[base64, 75.0 KB left out]\nend"
    short_hash = "d41d8cd98f00b204e9800998ecf8427e"
    assert cut_for_reader(short_hash * 40, 100).startswith(short_hash[:50]), "a hash is text"


@pytest.mark.parametrize("char", ["é", "e\u0301", "👩\u200d🔬", "🇫🇷", "字"])
def test_no_cut_inside_a_drawn_character(char: str) -> None:
    text = char * 3000
    for limit in range(200, 240):
        head, _, rest = cut_for_reader(text, limit).partition("\n… [")
        tail = rest.split("\n", 1)[1]
        assert head == char * (len(head) // len(char)), (limit, head[-3:])
        assert tail == char * (len(tail) // len(char)), (limit, tail[:3])


def test_redacted_long_output_cuts_the_same_way() -> None:
    text = f"start\n{FIGURE * 20}\n" + "".join(f"row {i}\n" for i in range(50_000))
    shown, masked = redact_and_cut(text, 3000)
    assert masked == 0 and "base64, 1.5 MB left out]" in shown
    assert shown.rstrip().endswith("row 49999") and "characters cut] …" in shown
    assert all(not line.startswith("ow ") for line in shown.splitlines())


def test_a_streams_plot_printed_as_base64_reaches_read_cell_as_one_line() -> None:
    output = {
        "output_type": "stream",
        "name": "stdout",
        "text": ["<img src='data:image/png;base64,", FIGURE, "'>\n"],
    }
    shown = describe_output(output)
    assert "base64, 75.0 KB left out]" in shown and FIGURE[:80] not in shown


@pytest.fixture
def frame_namespace() -> dict[str, Any]:
    rng = np.random.default_rng(0)
    sales = pd.DataFrame(
        {
            "region": rng.choice(["north", "south", "east"], 5000),
            "units": rng.integers(0, 100, 5000),
            "price": rng.random(5000),
        }
    )
    return {"__name__": "__main__", "sales": sales}


async def test_run_code_describes_a_big_frame_from_the_object(frame_namespace) -> None:
    """With pandas set to show every row, the repr is 150 KB; the tool reads the object."""
    tools = kernel_tools(lambda: frame_namespace)
    code = "import pandas as pd\npd.set_option('display.max_rows', 10_000)\nsales"
    try:
        out = await call(tools, "run_code", code=code)
    finally:
        pd.reset_option("display.max_rows")
    assert len(out.content) < 3500, len(out.content)
    assert "5,000 rows x 3 columns" in out.content
    assert "region: object" in out.content or "region: str" in out.content
    assert "head(5):" in out.content and "tail(5):" in out.content
    assert "4999" in out.content, "the last row's index"


_B64_RUN = re.compile(r"[A-Za-z0-9+/]{200,}")


@pytest.mark.parametrize("wire", ["chat", "responses", "anthropic"])
async def test_each_wire_sends_the_cut_result_and_no_base64(serve, wire: str) -> None:
    """The story: the model runs code that prints an encoded figure and 5,000 log lines; its
    next request, on every wire, carries the cut text, valid for the SDK's request type."""
    code = (
        "import base64\nprint(base64.b64encode(bytes(range(256)) * 400).decode())\n"
        "for i in range(5000):\n    print('step', i, 'loss', 1 / (i + 1))"
    )
    server = serve([reply("", model_calls("run_code", id="c1", code=code)), reply("done")])
    namespace: dict[str, Any] = {"__name__": "__main__"}
    model = {
        "chat": lambda: server.model(),
        "responses": lambda: OpenAIResponses("gpt-5", api_key="k", base_url=server.url),
        "anthropic": lambda: AnthropicChat(
            "claude-sonnet-4-5", api_key="k", base_url=server.base_url
        ),
    }[wire]()
    agent = Agent(model=model, tools=kernel_tools(lambda: namespace))
    assert await agent.ask("train it") == "done"

    body = server.requests[1].body
    sent = json.dumps(body, ensure_ascii=False)
    assert not _B64_RUN.search(sent), "no base64 text in the request"
    assert "[base64, 100.0 KB left out]" in sent and "step 4999 loss" in sent
    assert "lines," in sent and "characters cut] …" in sent
    assert len(sent) < len(json.dumps(server.requests[0].body)) + 9000
    adapter = {
        "chat": CompletionCreateParamsStreaming,
        "responses": ResponseCreateParamsStreaming,
        "anthropic": MessageCreateParamsStreaming,
    }[wire]
    TypeAdapter(adapter).validate_python(body)
