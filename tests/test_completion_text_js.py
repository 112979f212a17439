"""The front end's pure completion text (frontend/src/completionText.ts) under Node: which cells
above go with a request, what is left of an answer the user typed along, which edits cancel a
request, the cache by (prefix, suffix), and the next word or line of a ghost text that partial
accept takes. Compiled from the TypeScript source as it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.typescript_under_node import compile_module, run_cases

RUN = r"""
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
import(process.argv[1]).then((m) => {
  const out = cases.map(([name, args]) => {
    if (name === "cache") {
      const cache = new m.AnswerCache(args.size);
      args.put.forEach((answer) => cache.put(answer));
      return args.get.map(([prefix, suffix]) => cache.get(prefix, suffix));
    }
    return m[name](...args);
  });
  process.stdout.write(JSON.stringify(out));
});
"""
"""Each case called on the module, and `cache` cases on an AnswerCache."""


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_module("completionText", tmp_path_factory.mktemp("completion-text"))


def run(module: Path, cases: list[Any]) -> list[Any]:
    return run_cases(module, cases, RUN)


def test_cells_above_go_nearest_first_and_the_one_that_does_not_fit_keeps_its_end(module):
    cells = ["first", "second", "third"]
    got = run(
        module,
        [
            ["cellsAbove", [cells, 100]],
            ["cellsAbove", [cells, 11]],  # third (5) + second (6)
            ["cellsAbove", [cells, 8]],  # third + the end of second
            ["cellsAbove", [cells, 0]],
            ["cellsAbove", [[], 10]],
            ["cellsAbove", [["x" * 30_000]]],  # the default limit: 20,000
        ],
    )
    assert got[:5] == [
        ["third", "second", "first"],
        ["third", "second"],
        ["third", "ond"],
        [],
        [],
    ]
    assert got[5] == ["x" * 20_000]


def test_what_is_left_of_an_answer_the_user_typed_along(module):
    answer = {"prefix": "df.", "suffix": "\nprint(1)", "text": "revenue.mean()"}
    got = run(
        module,
        [
            ["rest", [answer, "df.", "\nprint(1)"]],
            ["rest", [answer, "df.rev", "\nprint(1)"]],
            ["rest", [answer, "df.revenue.mean()", "\nprint(1)"]],
            ["rest", [answer, "df.x", "\nprint(1)"]],  # typed something else
            ["rest", [answer, "df.rev", ""]],  # the suffix changed
            ["rest", [answer, "df", "\nprint(1)"]],  # deleted back before the request
        ],
    )
    assert got == ["revenue.mean()", "enue.mean()", "", None, None, None]


def test_which_edits_still_continue_a_request(module):
    answer = {"prefix": "x = df.", "suffix": ")", "text": "units"}
    got = run(
        module,
        [
            ["stillContinues", [answer, "x = df.)"]],
            ["stillContinues", [answer, "x = df.un)"]],
            ["stillContinues", [answer, "x = df.units)"]],
            ["stillContinues", [answer, "x = df.unitsX)"]],  # typed past the answer
            ["stillContinues", [answer, "x = df.a)"]],
            ["stillContinues", [answer, "x = df"]],  # the suffix went
            ["stillContinues", [answer, "y = df.)"]],  # an edit before the cursor
        ],
    )
    assert got == [True, True, True, False, False, False, False]


def test_the_cache_answers_a_place_again_and_typed_along_and_forgets_the_oldest(module):
    a = {"prefix": "df.", "suffix": "", "text": "price"}
    b = {"prefix": "s.", "suffix": "", "text": "upper()"}
    c = {"prefix": "df.", "suffix": "", "text": "qty"}  # the same place again: replaces a
    got = run(
        module,
        [
            ["cache", {"size": 2, "put": [a, b], "get": [["df.", ""], ["df.pr", ""], ["q", ""]]}],
            ["cache", {"size": 2, "put": [a, b, c], "get": [["df.", ""], ["s.up", ""]]}],
            ["cache", {"size": 1, "put": [a, b], "get": [["df.", ""], ["s.", ""]]}],
            ["cache", {"size": 2, "put": [a], "get": [["df.", "x"]]}],
        ],
    )
    assert got == [["price", "ice", None], ["qty", "per()"], [None, "upper()"], [None]]


def test_partial_accept_takes_the_next_word_or_the_rest_of_the_line(module):
    got = run(
        module,
        [
            ["nextWord", ["revenue_eur.mean()"]],
            ["nextWord", [".mean()"]],
            ["nextWord", ["  x = 1"]],
            ["nextWord", ["()\n"]],
            ["nextWord", ["\n    return x"]],
            ["nextWord", [" "]],
            ["nextLine", ["a = 1\nb = 2"]],
            ["nextLine", ["\nreturn x"]],
            ["nextLine", ["only"]],
        ],
    )
    assert got == [
        "revenue_eur",
        ".",
        "  x",
        "()",
        "\n    return",
        " ",
        "a = 1\n",
        "\n",
        "only",
    ]
