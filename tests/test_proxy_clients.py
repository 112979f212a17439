"""The programs users point at the proxy, driven over loopback (issue 35, "real clients as
tests"): the `openai-agents` SDK with its Chat Completions and its default Responses model,
each running a tool of its own through the proxy, and simonw's `llm` with the proxy in its
`extra-openai-models.yaml`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from copilot_nb.testing import call, reply
from tests.proxy_fixtures import MODEL, proxy_for

pytestmark = pytest.mark.external

__all__ = ["proxy_for"]


@pytest.mark.parametrize("api", ["chat_completions", "responses"])
async def test_the_openai_agents_sdk_runs_its_own_tool_through_the_proxy(proxy_for, api):
    """Both of the SDK's models: Chat Completions, and its default, the Responses API (the call
    comes back as a `function_call` item, its result goes up as a `function_call_output`)."""
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        OpenAIResponsesModel,
        Runner,
        function_tool,
        set_tracing_disabled,
    )

    set_tracing_disabled(True)  # its traces would go to OpenAI: nothing leaves this machine
    proxy = proxy_for([reply("", call("city_weather", city="Oslo")), reply("Rainy, 8°C.")])
    asked: list[str] = []

    @function_tool
    def city_weather(city: str) -> str:
        """The weather in a city."""
        asked.append(city)
        return "rain, 8°C"

    kind = OpenAIResponsesModel if api == "responses" else OpenAIChatCompletionsModel
    model = kind(model=MODEL, openai_client=proxy.async_openai(max_retries=0))
    agent = Agent(name="weather", instructions="Answer briefly.", model=model, tools=[city_weather])
    result = await Runner.run(agent, "Weather in Oslo?")
    assert result.final_output == "Rainy, 8°C."
    assert asked == ["Oslo"]
    first, second = (request.body for request in proxy.upstream.requests)
    assert first["messages"][0] == {"role": "system", "content": "Answer briefly."}
    assert [t["function"]["name"] for t in first["tools"]] == ["city_weather"]
    assert second["messages"][-1]["role"] == "tool"
    assert second["messages"][-1]["content"] == "rain, 8°C"


def test_llm_answers_through_the_proxy_from_its_models_file(proxy_for, tmp_path: Path):
    proxy = proxy_for([reply("Hello from the proxy.")])
    home = tmp_path / "llm"
    home.mkdir()
    (home / "extra-openai-models.yaml").write_text(
        "- model_id: copilot-nb\n"
        f"  model_name: {MODEL}\n"
        f"  api_base: {proxy.url}/v1\n"
        "  api_key_name: copilot-nb\n"
    )
    (home / "keys.json").write_text(json.dumps({"copilot-nb": proxy.token}))
    llm = Path(sys.executable).parent / "llm"
    done = subprocess.run(
        [str(llm), "-m", "copilot-nb", "Say hello"],
        env={**os.environ, "LLM_USER_PATH": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hello from the proxy."
    assert proxy.upstream.requests[0].messages[-1]["content"] == "Say hello"


async def test_the_offline_model_behind_the_proxy_calls_no_tool_the_agent_lacks(proxy_for, root):
    """The agent declares its own tool only: the offline model, which would read a file,
    answers in words instead of a call the SDK could not run."""
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        Runner,
        function_tool,
        set_tracing_disabled,
    )

    from copilot_nb.offline import offline_reply

    set_tracing_disabled(True)
    (root / "a.py").write_text("x = 1\n")
    proxy = proxy_for([offline_reply])

    @function_tool
    def city_weather(city: str) -> str:
        """The weather in a city."""
        return "rain"

    model = OpenAIChatCompletionsModel(model=MODEL, openai_client=proxy.async_openai())
    agent = Agent(name="files", model=model, tools=[city_weather])
    result = await Runner.run(agent, "read a.py")
    assert "`read_file`" in result.final_output and "none was offered" in result.final_output
