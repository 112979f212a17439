"""The review's line diff (frontend/src/lineDiff.ts) under Node, compiled from its TypeScript
source as it is: the removed and added lines of an agent's change to a cell, always a true
account of both texts, as short as a longest common subsequence makes it, and unchanged runs
folded around the changes."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.typescript_under_node import compile_module, run_cases


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_module("lineDiff", tmp_path_factory.mktemp("line-diff"))


run = run_cases


def lcs(a: list[str], b: list[str]) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            table[i][j] = (
                table[i + 1][j + 1] + 1 if a[i] == b[j] else max(table[i + 1][j], table[i][j + 1])
            )
    return table[0][0]


def as_lines(text: str) -> list[str]:
    """As lineDiff.lines: a final newline makes no extra empty line."""
    split = text.split("\n") if text else []
    return split[:-1] if split and split[-1] == "" else split


def side(diff: list[dict[str, str]], kind: str) -> list[str]:
    return [line["text"] for line in diff if line["kind"] in ("same", kind)]


def test_a_diff_is_both_texts_and_as_short_as_the_longest_common_subsequence(module):
    rng = random.Random(25)
    pairs = []
    for _ in range(300):
        words = ["x = 1", "y = 2", "print(x)", "", "return y", "# note"][: rng.randint(1, 6)]
        a = [rng.choice(words) for _ in range(rng.randint(0, 12))]
        b = [rng.choice(words) for _ in range(rng.randint(0, 12))]
        pairs.append((a, b))
    texts = [("\n".join(a), "\n".join(b)) for a, b in pairs]
    diffs = run(module, [["diffLines", [a, b]] for a, b in texts])
    for (text_a, text_b), diff in zip(texts, diffs, strict=True):
        a, b = as_lines(text_a), as_lines(text_b)
        assert side(diff, "removed") == a and side(diff, "added") == b, (a, b, diff)
        assert sum(line["kind"] == "same" for line in diff) == lcs(a, b), (a, b, diff)


def test_edges_empty_texts_a_trailing_newline_and_no_change(module):
    results = run(
        module,
        [
            ["diffLines", ["", ""]],
            ["diffLines", ["", "a = 1\n"]],
            ["diffLines", ["a = 1\n", ""]],
            ["diffLines", ["a = 1\nb = 2\n", "a = 1\nb = 2"]],
            ["lines", ["one\ntwo\n"]],
            ["lines", ["one\n\n"]],
        ],
    )
    assert results[0] == []
    assert results[1] == [{"kind": "added", "text": "a = 1"}]
    assert results[2] == [{"kind": "removed", "text": "a = 1"}]
    assert {line["kind"] for line in results[3]} == {"same"}, "a final newline is no change"
    assert results[4] == ["one", "two"]
    assert results[5] == ["one", ""]


def test_a_change_too_large_for_the_table_is_all_removed_then_all_added_and_still_true(module):
    a = [f"old_{n}" for n in range(1500)]
    b = [f"new_{n}" for n in range(1500)]
    text_a = "head\n" + "\n".join(a) + "\ntail"
    text_b = "head\n" + "\n".join(b) + "\ntail"
    (diff,) = run(module, [["diffLines", [text_a, text_b]]])
    kinds = [line["kind"] for line in diff]
    assert kinds == ["same"] + ["removed"] * 1500 + ["added"] * 1500 + ["same"]
    assert side(diff, "removed") == text_a.split("\n")
    assert side(diff, "added") == text_b.split("\n")


def test_long_unchanged_runs_fold_around_the_changes(module):
    before = "\n".join(f"line {n}" for n in range(20))
    after = before.replace("line 10", "line ten")
    diff, nothing = run(module, [["diffLines", [before, after]], ["diffLines", [before, before]]])
    shown, all_same = run(module, [["withContext", [diff, 2]], ["withContext", [nothing, 2]]])
    assert shown == [
        {"kind": "fold", "count": 8},
        {"kind": "same", "text": "line 8"},
        {"kind": "same", "text": "line 9"},
        {"kind": "removed", "text": "line 10"},
        {"kind": "added", "text": "line ten"},
        {"kind": "same", "text": "line 11"},
        {"kind": "same", "text": "line 12"},
        {"kind": "fold", "count": 7},
    ]
    assert all_same == [{"kind": "fold", "count": 20}]
    (short,) = run(module, [["withContext", [diff[7:15], 2]]])
    assert [line.get("text") for line in short] == [
        "line 7",
        "line 8",
        "line 9",
        "line 10",
        "line ten",
        "line 11",
        "line 12",
        "line 13",
    ], "a run no longer than the context and one line is shown whole"
