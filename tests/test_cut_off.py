"""A reply cut off mid tool call, and a local server's window, against loopback servers (the
same cases against llama.cpp's real llama-server are in test_llama_server.py)."""

from __future__ import annotations

from pathlib import Path

from copilot_nb import Agent
from copilot_nb.events import Done, Failed, Notice, ToolStarted
from copilot_nb.models.server_props import (
    is_local,
    window_from_models,
    window_from_ollama_show,
    window_from_props,
)
from copilot_nb.testing import call, reply


async def test_a_call_cut_off_by_the_output_limit_is_not_run_nor_sent_back(serve, tmp_path: Path):
    (tmp_path / "a.txt").write_text("alpha\n")
    server = serve(
        [
            reply(
                "",
                call("read_file", id="call_ok", path="a.txt"),
                call("write_file", id="call_cut", raw='{"path": "b.txt", "content": "lorem ip'),
                finish_reason="length",
            ),
            reply("Done, in two parts."),
        ]
    )
    agent = Agent(model=server.model(), workspace=tmp_path)
    events = [e async for e in agent.run("copy it")]

    assert [e.name for e in events if isinstance(e, ToolStarted)] == ["read_file"]
    assert not (tmp_path / "b.txt").exists()
    assert any(isinstance(e, Notice) and "output limit" in e.text for e in events)
    assert isinstance(events[-1], Done) and events[-1].text == "Done, in two parts."
    second = server.requests[1].body["messages"]
    sent_calls = [c["id"] for m in second for c in m.get("tool_calls") or []]
    assert sent_calls == ["call_ok"]
    assert [m["tool_call_id"] for m in second if m["role"] == "tool"] == ["call_ok"]
    assert second[-1]["role"] == "user" and "cut off" in second[-1]["content"]
    assert "write_file" in second[-1]["content"]


async def test_a_reply_that_is_only_a_cut_off_call_asks_again_and_ends_cleanly(serve, tmp_path):
    cut = call("write_file", raw='{"path": "b.txt", "content": "lorem ip')
    server = serve([reply("", cut, finish_reason="length")] * 2)
    agent = Agent(model=server.model(), workspace=tmp_path, max_rounds=2)
    events = [e async for e in agent.run("write b.txt")]
    assert not any(isinstance(e, ToolStarted) for e in events)
    assert isinstance(events[-1], Failed) and "2 rounds" in events[-1].error
    for request in server.requests:
        assert all(not m.get("tool_calls") for m in request.body["messages"])
    server.assert_complete()


async def test_a_local_server_is_asked_its_window_and_requests_carry_a_reply_limit(serve, tmp_path):
    server = serve([reply("hi")])
    model = server.model()
    # the scripted server lists its model without a window and has no /props: nothing is known
    await Agent(model=model, workspace=tmp_path).ask("hello")
    assert "max_tokens" not in server.requests[0].body
    assert model.context_window is None

    server = serve([reply("hi")])
    model = server.model(context_window=8192)
    await Agent(model=model, workspace=tmp_path).ask("hello")
    assert server.requests[0].body["max_tokens"] == 1024
    assert not [line for line in server.received if line.startswith("GET")], "the user said"


async def test_the_users_window_setting_wins(serve, tmp_path, monkeypatch):
    monkeypatch.setenv("COPILOT_NB_CONTEXT_WINDOW", "4096")
    server = serve([reply("hi")])
    model = server.model()
    await Agent(model=model, workspace=tmp_path).ask("hello")
    assert model.context_window == 4096
    assert server.requests[0].body["max_tokens"] == 512


def test_each_servers_answer_gives_its_window():
    vllm = {"data": [{"id": "Qwen/Qwen2.5-7B", "max_model_len": 16384}]}
    assert window_from_models(vllm, "Qwen/Qwen2.5-7B") == 16384
    llama = {"data": [{"id": "smol.gguf", "meta": {"n_ctx": 4096, "n_ctx_train": 8192}}]}
    assert window_from_models(llama, "whatever-the-user-typed") == 4096
    assert window_from_models({"data": [{"id": "gpt-4o"}]}, "gpt-4o") is None
    assert window_from_props({"default_generation_settings": {"n_ctx": 8192}}) == 8192
    assert window_from_props({"n_ctx": "8192"}) is None
    show = {"parameters": 'stop "<|im_end|>"\nnum_ctx                        8192'}
    assert window_from_ollama_show(show) == 8192
    assert window_from_ollama_show({"model_info": {"llama.context_length": 131072}}) is None


def test_only_local_servers_are_asked():
    assert is_local("http://127.0.0.1:8080/v1") and is_local("http://localhost:11434/v1")
    assert is_local("http://192.168.1.20:8000/v1") and is_local("http://gpu-box.local/v1")
    assert not is_local("https://api.openai.com/v1")
    assert not is_local("https://openrouter.ai/api/v1")
