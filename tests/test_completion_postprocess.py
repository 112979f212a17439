"""Post-processing of completions, table by table: each step alone, then all of them."""

from __future__ import annotations

import pytest

from copilot_nb.agent.ghost_text.postprocess import (
    cap,
    drop_prefix_repeat,
    drop_suffix_repeat,
    keep_indentation,
    postprocess,
    stop_at_block_end,
    strip_fences,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sum()", "sum()"),
        ("```python\nsum()\n```", "sum()"),
        ("```\nsum()\n```\nThis sums the column.", "sum()"),
        ("Here you go:\n```py\nx = 1\ny = 2\n```", "x = 1\ny = 2"),
        ("```python\nsum()", "sum()"),
        ("~~~\na\n~~~", "a"),
        ("a ``` b", "a ``` b"),
    ],
)
def test_fences_are_taken_off(text, expected):
    assert strip_fences(text) == expected


@pytest.mark.parametrize(
    ("text", "prefix", "expected"),
    [
        ("sum()", "total = df.", "sum()"),
        ("total = df.sum()", "total = df.", "sum()"),
        ("import pandas\ntotal = df.sum()", "import pandas\ntotal = df.", "sum()"),
        ("    total = df.sum()", "    total = df.", "sum()"),
        ("df.sum()", "x = 1\ndf.", "sum()"),
        ("sum()", "total = df.su", "m()"),  # a chat model writes the word it was in again
        ("sum()", "total = df.s", "sum()"),
        ("x", "x", "x"),  # one typed character repeated is not taken for a repeat
        ("", "abc", ""),
    ],
)
def test_a_repeat_of_the_prefix_is_taken_off(text, prefix, expected):
    assert drop_prefix_repeat(text, prefix) == expected


@pytest.mark.parametrize(
    ("text", "prefix", "expected"),
    [
        ("    return x", "def f(x):\n    ", "return x"),
        ("return x", "def f(x):\n    ", "return x"),
        ("  y", "a = ", "  y"),
        ("    return x", "def f(x):\n", "    return x"),
    ],
)
def test_the_cursors_indentation_is_not_doubled(text, prefix, expected):
    assert keep_indentation(text, prefix) == expected


@pytest.mark.parametrize(
    ("text", "prefix", "suffix", "expected"),
    [
        # mid-line: one line
        ("sum(axis=0)\nprint(total)", "total = df.", ")\n", "sum(axis=0)"),
        # top level, a block opened: it ends at the next line at column 0
        (
            "for i in range(3):\n    print(i)\nprint('done')",
            "",
            "",
            "for i in range(3):\n    print(i)",
        ),
        # top level: a blank line ends the statement group
        ("x = 1\ny = 2\n\nz = 3", "", "", "x = 1\ny = 2"),
        # inside a block: a line indented less than the cursor's leaves it
        ("y = x * 2\n    return y\nprint(f(1))", "def f(x):\n    ", "", "y = x * 2\n    return y"),
        ("y = x\n\n    return y\n", "def f(x):\n    ", "", "y = x\n\n    return y"),
        ("a\n\n\n", "", "", "a"),
    ],
)
def test_the_completion_stops_at_the_end_of_the_block(text, prefix, suffix, expected):
    assert stop_at_block_end(text, prefix, suffix) == expected


@pytest.mark.parametrize(
    ("text", "suffix", "expected"),
    [
        ("sum()", ")", "sum("),
        ("sum())", "))", "sum("),
        ("['price']", "\nprint(total)", "['price']"),
        ("x = 1\nprint(total)", "\nprint(total)", "x = 1"),
        ("x = 1\n    print(total)\nmore", "\n    print(total)", "x = 1"),
        ("abc", "", "abc"),
        ("a  ", "  ", "a  "),  # whitespace alone is not a repeat
    ],
)
def test_a_repeat_of_the_suffix_is_taken_off(text, suffix, expected):
    assert drop_suffix_repeat(text, suffix) == expected


@pytest.mark.parametrize(
    ("prefix", "text", "suffix", "expected"),
    [
        ("print(", "foo(bar)", ")", "foo(bar)"),  # its ) closes foo(: the suffix's closes print(
        ("print(df.", "sum())", ")", "sum()"),
        ("df['", "price'])", "'])", "price"),
        ("x = [1, 2", ", 3]", "]", ", 3"),
        ("f(a, ", "g(b), c)", ")", "g(b), c"),
    ],
)
def test_a_closing_bracket_is_taken_off_only_when_it_is_one_too_many(
    prefix, text, suffix, expected
):
    assert drop_suffix_repeat(text, suffix, prefix) == expected


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [("abc", 5, "abc"), ("ab\ncd\nef", 7, "ab\ncd"), ("abcdef", 3, "abc")],
)
def test_a_long_completion_is_capped_at_a_line_end(text, limit, expected):
    assert cap(text, limit) == expected


@pytest.mark.parametrize(
    ("raw", "prefix", "suffix", "expected"),
    [
        (
            "```python\ntotal = df['price'].sum()\n```",
            "total = df",
            "\nprint(total)",
            "['price'].sum()",
        ),
        (
            "df.groupby('city')['price'].mean()",
            "means = df.",
            "",
            "groupby('city')['price'].mean()",
        ),
        ("    return a + b\n\nprint(add(1, 2))", "def add(a, b):\n    ", "", "return a + b"),
        ("```\n```", "x = ", "", ""),
        ("   \n", "x = ", "", ""),
        ("price'])", "df['", "'])", "price"),
    ],
)
def test_all_steps_together(raw, prefix, suffix, expected):
    assert postprocess(raw, prefix, suffix) == expected
