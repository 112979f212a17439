"""A run's outputs as a notebook shows them, in HTML nothing can run or load from: printed text,
a DataFrame's table, a figure, an error; and what run_code's model and user are given is the
same, secrets masked in both."""

from __future__ import annotations

import base64

import pandas as pd
import pytest

from copilot_nb.jupyter.html_allowlist import allowed_html
from copilot_nb.jupyter.output_html import outputs_html, outputs_summary, outputs_text
from copilot_nb.tools.kernel.execute import CodeRun, shown_once
from copilot_nb.tools.kernel.run_outputs import run_code_output
from tests.html_safety import payloads, table_rows, violations
from tests.notebook_samples import png

PAYLOADS = payloads()
PNG = base64.b64encode(png(4, 3)).decode()
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2


def test_a_dataframe_shows_as_its_table_without_its_style_or_classes():
    frame = pd.DataFrame({"group": ["a", "<b>"], "mean": [2.0, 3.5]})
    shown = outputs_html([{"output_type": "execute_result", "data": {
        "text/html": frame._repr_html_(), "text/plain": repr(frame)}}])  # fmt: skip

    assert table_rows(shown) == [["", "group", "mean"], ["0", "a", "2.0"], ["1", "<b>", "3.5"]]
    assert "<style" not in shown and "class=" not in shown and "vertical-align" not in shown
    assert "&lt;b&gt;" in shown


def test_a_figure_shows_from_its_own_bytes_and_a_fake_one_does_not():
    figure = {"output_type": "display_data", "data": {"image/png": PNG, "text/plain": "<Figure>"}}
    fake = {
        "output_type": "display_data",
        "data": {"image/png": base64.b64encode(b"GIF89a").decode()},
    }

    shown = outputs_html([figure, fake])

    assert shown.count("<img ") == 1
    assert f'src="data:image/png;base64,{PNG}"' in shown
    assert "[image/png" in shown and ": not shown]" in shown
    assert outputs_summary([figure]) == "image/png 4x3"
    assert outputs_text([figure]) == "[display]\n[image/png 4x3]\n<Figure>"


def test_printed_text_and_an_error_show_as_text():
    shown = outputs_html(
        [
            {"output_type": "stream", "name": "stdout", "text": "group | mean\n\x1b[31ma\x1b[0m | 2\n"},
            {"output_type": "error", "ename": "ValueError", "evalue": "bad",
             "traceback": ["ValueError: bad", "  <module>"]},
        ]
    )  # fmt: skip

    assert "group | mean\na | 2</pre>" in shown, "colour codes go, as a notebook shows them"
    assert "ValueError: bad\n  &lt;module&gt;" in shown


def test_html_cannot_close_the_surface_around_it():
    rebuilt = allowed_html("<b>x</details></div></td></table></b><table><tr><td>y")

    assert rebuilt == "<b>x</b><table><tr><td>y</td></tr></table>", "each tag it opened closed"


@pytest.mark.parametrize("payload", PAYLOADS, ids=[p["id"] for p in PAYLOADS])
def test_no_payload_becomes_live_html_in_a_runs_output(payload):
    text = payload["payload"]
    shown = outputs_html(
        [
            {"output_type": "stream", "name": "stdout", "text": text},
            {"output_type": "display_data", "data": {"text/html": text, "text/plain": text}},
            {"output_type": "display_data", "data": {"text/markdown": text}},
            {"output_type": "display_data", "data": {"image/png": text, "text/plain": text}},
            {"output_type": "execute_result", "data": {"text/plain": text}},
            {"output_type": "error", "ename": text, "evalue": text, "traceback": [text]},
        ]
    )
    assert violations(shown) == [], f"{payload['id']}:\n{shown}"


def test_the_flush_at_the_end_does_not_show_a_displayed_figure_again():
    figure = {"data": {"image/png": PNG}, "metadata": {}}
    other = {"data": {"image/png": PNG[:-8] + "AAAAAAA="}, "metadata": {"width": 4}}

    assert shown_once([figure, figure, other], displayed=1) == [figure, other]
    assert shown_once([figure, figure], displayed=2) == [figure, figure], "the code's own"


def test_run_code_gives_the_model_and_the_user_the_same_masked_output():
    table = f"<table><tr><td>{TOKEN}</td></tr></table>"
    run = CodeRun(
        stdout=f"key {TOKEN}\nrows 3\n",
        displays=(
            {"data": {"image/png": PNG, "text/plain": "<Figure>"}, "metadata": {}},
            {"data": {"text/html": table, "text/plain": f"frame {TOKEN}"}, "metadata": {}},
        ),
        value={"api_key": "hunter2-hunter2", "n": 3},
        has_value=True,
    )

    output = run_code_output(run, None, 30, "Undo puts back n")

    assert output.content.startswith("stdout:\nkey <masked")
    assert "display:\n[image/png 4x3]\n<Figure>" in output.content
    assert output.content.endswith("kernel: Undo puts back n")
    assert [image.data for image in output.images] == [PNG]
    stdout, figure, frame, result = output.outputs
    assert stdout["text"].startswith("key <masked") and stdout["text"].endswith("rows 3\n")
    assert figure["data"]["image/png"] == PNG
    assert "text/html" not in frame["data"], "HTML with a secret in it shows as masked text"
    assert TOKEN not in frame["data"]["text/plain"]
    assert "hunter2" not in str(result["data"]) and "<masked" in result["data"]["text/plain"]
    assert TOKEN not in outputs_html(output.outputs) and "hunter2" not in outputs_html(
        output.outputs
    )
