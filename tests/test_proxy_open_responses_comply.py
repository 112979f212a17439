"""`llm-comply` (PyPI), an outside compliance suite, runs its Open Responses checks against the
proxy's `/v1/responses`: every whole Response and every streamed event validated against the
Open Responses specification it ships (offline, no network), plus its own checks of status,
usage, tool calls and the stream's order, through its own HTTP client, against a proxy over a
scripted upstream.

It runs in this process, as its command line runs it (its runner, its tests, its bundled spec),
with one step before: its validators are built first. The first one takes seconds (over 5 s on
a loaded machine), longer than a server keeps an idle connection open, and the suite's client
sends the next request on that closed connection without noticing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from copilot_nb.messages import Usage
from copilot_nb.testing import call, reply
from tests.proxy_fixtures import MODEL, proxy_for

__all__ = ["proxy_for"]

pytestmark = pytest.mark.external  # an outside program: the llm-comply suite

comply = pytest.importorskip("llm_comply", reason="llm-comply (the test extra) is not installed")

USED = Usage(input_tokens=12, output_tokens=3)


def test_llm_comply_finds_the_proxys_responses_compliant(proxy_for):
    from llm_comply.config import ComplianceConfig
    from llm_comply.runner import TestRunner
    from llm_comply.schema import SSE_EVENT_TO_SCHEMA, SpecLoader
    from llm_comply.tests import get_tests

    said = reply("Hello there, friend.", usage=USED)
    asked = [said] * 3 + [reply("", call("get_weather", location="San Francisco"), usage=USED)]
    asked += [said] * 5  # the suite's requests that reach the model, in its order
    proxy = proxy_for(asked)
    spec = SpecLoader(str(Path(comply.__file__).parent / "specs" / "openresponses.json"))
    for schema in ("ResponseResource", *SSE_EVENT_TO_SCHEMA.values()):
        spec.validate({}, schema)
    config = ComplianceConfig(base_url=f"{proxy.url}/v1", api_key=proxy.token, model=MODEL)

    suite = TestRunner(config=config, test_cases=get_tests("open-responses"), spec_loader=spec)
    results = suite.run_all().results

    failed = {r.id: r.errors for r in results if r.status.value == "failed"}
    assert failed == {}
    passed = {r.id for r in results if r.status.value == "passed"}
    assert {"basic-response", "tool-calling", "streaming-response", "streaming-usage"} <= passed
    assert len(proxy.upstream.requests) == len(asked), "each scripted reply was asked for"
