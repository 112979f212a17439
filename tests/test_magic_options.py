"""`%%copilot` options are read exactly as written: a prefix of an option is not that option."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from copilot_nb.jupyter.magics import parse_options


def test_mode_plan_is_the_mode_not_a_model_named_plan() -> None:
    args = parse_options("--mode plan")
    assert (args.mode, args.model) == ("plan", None)
    assert parse_options("-m openai:gpt-4o --mode ask").mode == "ask"


@pytest.mark.parametrize("line", ["--mod x", "--mo", "--bogus", "--ne", "--max-round 3"])
def test_shortened_or_unknown_options_are_a_clear_usage_error(line: str) -> None:
    with pytest.raises(UsageError, match="never abbreviated") as caught:
        parse_options(line)
    assert line.split()[0] in str(caught.value)
    assert "--mode" in str(caught.value)


def test_an_unknown_mode_names_the_modes() -> None:
    with pytest.raises(UsageError, match=r"ask.*plan.*agent"):
        parse_options("--mode nope")


@pytest.mark.kernel
def test_in_a_kernel_a_shortened_option_fails_the_cell_and_asks_no_model(serve, kernel_for):
    server = serve([])
    kernel = kernel_for(server)
    for line in ("--mo plan", "--mod plan", "--bogus"):
        run = kernel.execute(f"%%copilot {line}\nhi")
        assert run.reply["content"]["ename"] == "UsageError", line
        assert "never abbreviated" in run.reply["content"]["evalue"]
    assert server.requests == []
