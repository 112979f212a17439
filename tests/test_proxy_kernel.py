"""`%copilot serve` in a real kernel: the kernel's model for the `openai` SDK, and the kernel's
own tools (its variables) for an MCP client, on the kernel's loop while the kernel is idle."""

from __future__ import annotations

import re

import openai
import pytest

from copilot_nb.testing import reply
from tests.helpers import button_ids

pytestmark = pytest.mark.kernel


def started(kernel, line: str = "%copilot serve --allow-execution") -> tuple[str, str]:
    shown = kernel.execute(line)
    assert shown.status == "ok", shown.reply["content"]
    url = re.search(r"serving at (http://\S+)", shown.stdout).group(1)
    token = re.search(r"token \(shown once\): (\S+)", shown.stdout).group(1)
    return url, token


def test_the_kernels_model_serves_the_openai_sdk(serve, kernel_for, tmp_path):
    upstream = serve([reply("Served by the kernel.")])
    kernel = kernel_for(upstream, COPILOT_NB_CONFIG_DIR=str(tmp_path / "config"))
    url, token = started(kernel, "%copilot serve")

    client = openai.OpenAI(base_url=f"{url}/v1", api_key=token)
    answer = client.chat.completions.create(
        model="openai:scripted", messages=[{"role": "user", "content": "hi"}]
    )
    assert answer.choices[0].message.content == "Served by the kernel."
    assert f"serving at {url}" in kernel.execute("%copilot").stdout
    assert "stopped" in kernel.execute("%copilot serve stop").stdout
    with pytest.raises(openai.APIConnectionError):
        openai.OpenAI(base_url=f"{url}/v1", api_key=token, max_retries=0).models.list()


async def test_an_mcp_client_reads_the_kernels_variables(serve, kernel_for, tmp_path):
    upstream = serve([])
    kernel = kernel_for(upstream, COPILOT_NB_CONFIG_DIR=str(tmp_path / "config"))
    assert kernel.execute("prices = [3, 1, 4, 1, 5]").status == "ok"
    url, token = started(kernel)
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {token}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):
        names = {t.name for t in (await client.list_tools()).tools}
        found = await client.call_tool("list_variables", {})
    assert {"list_variables", "inspect_variable", "read_file"} <= names
    assert "prices" in found.content[0].text and "list" in found.content[0].text


def test_serve_refuses_a_port_in_use_and_unknown_options(serve, kernel_for, tmp_path):
    import socket

    kernel = kernel_for(serve([]), COPILOT_NB_CONFIG_DIR=str(tmp_path / "config"))
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        busy = kernel.execute(f"%copilot serve --port {taken.getsockname()[1]}")
    finally:
        taken.close()
    assert busy.status == "error" and busy.reply["content"]["ename"] == "UsageError"
    assert "choose another --port" in busy.reply["content"]["evalue"]
    unknown = kernel.execute("%copilot serve --bogus")
    assert unknown.status == "error" and "--bogus" in unknown.reply["content"]["evalue"]


def test_a_server_side_edit_asks_under_the_serve_cell_and_runs_once_approved(
    serve, kernel_for, tmp_path
):
    import threading

    from copilot_nb.testing import call

    upstream = serve(
        [reply("", call("write_file", path="note.txt", content="hi\n")), reply("Written.")]
    )
    kernel = kernel_for(upstream, COPILOT_NB_CONFIG_DIR=str(tmp_path / "config"))
    msg_id = kernel.send(
        "%copilot serve --allow-execution", allow_stdin=True, metadata={"cellId": "serve-cell"}
    )
    shown = kernel.collect(msg_id)
    url = re.search(r"serving at (http://\S+)", shown.stdout).group(1)
    token = re.search(r"token \(shown once\): (\S+)", shown.stdout).group(1)
    answers: list[str] = []

    def ask() -> None:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key=token, timeout=60)
        answer = client.chat.completions.create(
            model="openai:scripted",
            messages=[{"role": "user", "content": "write a note"}],
            extra_body={"tool_execution": "auto", "use_notebook_tools": True},
        )
        answers.append(answer.choices[0].message.content)

    client = threading.Thread(target=ask)
    client.start()
    seen = kernel.wait_for(msg_id, "comm_open", timeout=30)
    while "Approve" not in button_ids(seen):
        seen += kernel.wait_for(msg_id, "comm_open", timeout=30)
    assert not (tmp_path / "note.txt").exists(), "nothing is written before the user approves"
    kernel.click(button_ids(seen)["Approve"])
    client.join(30)
    assert answers == ["Written."]
    assert (tmp_path / "note.txt").read_text() == "hi\n"
