"""A change to a module and to its test. The checker calls the changed function itself, then runs
the test file with pytest: the behaviour must be right, and the test must cover it and pass."""

from __future__ import annotations

from pathlib import Path

from copilot_nb.testing import call, reply

from ..task import Outcome, Task, run_python

MODULE = '''"""Small statistics over text and numbers."""


def tokens(text):
    return text.split()


def count_words(text):
    counts = {}
    for word in tokens(text):
        counts[word] = counts.get(word, 0) + 1
    return counts


def mean(xs):
    return sum(xs) / len(xs)
'''

TEST = """from textstats import count_words, mean, tokens


def test_tokens():
    assert tokens("a b  c") == ["a", "b", "c"]


def test_count_words():
    assert count_words("a b a") == {"a": 2, "b": 1}


def test_mean():
    assert mean([1, 2, 3]) == 2
"""


def _setup(folder: Path) -> None:
    (folder / "textstats.py").write_text(MODULE)
    (folder / "test_textstats.py").write_text(TEST)


def _module_task(
    name: str,
    *,
    request: str,
    probe: str,
    test_mentions: str,
    module: str,
    test: str,
    wrong_module: str,
    wrong_test: str,
) -> Task:
    def check(outcome: Outcome) -> tuple[bool, str]:
        code, _, err = run_python(outcome.workdir, probe)
        if code != 0:
            return False, f"the function does not behave: {err.strip().splitlines()[-1:]}"
        test_file = outcome.workdir / "test_textstats.py"
        if test_mentions not in test_file.read_text():
            return False, f"test_textstats.py does not test `{test_mentions}`"
        runner = (  # the test file alone: no plugins of the environment, no cache
            "import os, sys, pytest; os.environ['PYTEST_DISABLE_PLUGIN_AUTOLOAD'] = '1'; "
            "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', 'test_textstats.py']))"
        )
        code, out, _ = run_python(outcome.workdir, runner, timeout=120)
        if code != 0:
            return False, f"the tests fail: {out.strip().splitlines()[-1:]}"
        return True, "behaves, and its tests cover it and pass"

    def script(module_text: str, test_text: str) -> list[object]:
        return [
            reply(
                "",
                call("read_file", path="textstats.py"),
                call("read_file", path="test_textstats.py"),
            ),
            reply(
                "",
                call("write_file", path="textstats.py", content=module_text),
                call("write_file", path="test_textstats.py", content=test_text),
            ),
            reply(
                "",
                call("run_code", code="import importlib, textstats\nimportlib.reload(textstats)"),
            ),
            reply("Changed textstats.py and its test."),
        ]

    return Task(
        name=f"module_{name}",
        kind="module-and-test",
        request=request + " Keep the existing tests passing.",
        setup=_setup,
        check=check,
        solution=script(module, test),
        wrong=script(wrong_module, wrong_test),
    )


TASKS = [
    _module_task(
        "ignore_case",
        request=(
            "Give `count_words` in textstats.py an optional `ignore_case=False` parameter that "
            "counts words case-insensitively (keys in lower case) when true, and add a test for "
            "it to test_textstats.py."
        ),
        probe=(
            "from textstats import count_words\n"
            "assert count_words('A a b', ignore_case=True) == {'a': 2, 'b': 1}\n"
            "assert count_words('A a') == {'A': 1, 'a': 1}"
        ),
        test_mentions="ignore_case",
        module=MODULE.replace(
            "def count_words(text):", "def count_words(text, ignore_case=False):"
        ).replace("in tokens(text):", "in tokens(text.lower() if ignore_case else text):"),
        test=TEST
        + '\n\ndef test_count_words_ignore_case():\n    assert count_words("A a", ignore_case=True) == {"a": 2}\n',
        wrong_module=MODULE.replace(
            "def count_words(text):", "def count_words(text, ignore_case=False):"
        ).replace("in tokens(text):", "in tokens(text.lower()):"),
        wrong_test=TEST
        + '\n\ndef test_count_words_ignore_case():\n    assert count_words("A a", ignore_case=True) == {"a": 2}\n',
    ),
    _module_task(
        "empty_mean",
        request=(
            "`mean([])` in textstats.py raises ZeroDivisionError. Make it raise "
            "`ValueError('mean of an empty list')` instead, and test that in test_textstats.py."
        ),
        probe=(
            "from textstats import mean\n"
            "try:\n    mean([])\nexcept ValueError:\n    pass\nelse:\n    raise SystemExit('no ValueError')\n"
            "assert mean([2, 4]) == 3"
        ),
        test_mentions="ValueError",
        module=MODULE.replace(
            "    return sum(xs) / len(xs)",
            "    if not xs:\n        raise ValueError('mean of an empty list')\n    return sum(xs) / len(xs)",
        ),
        test="import pytest\n"
        + TEST
        + "\n\ndef test_mean_empty():\n    with pytest.raises(ValueError):\n        mean([])\n",
        wrong_module=MODULE.replace(
            "    return sum(xs) / len(xs)",
            "    if not xs:\n        return 0\n    return sum(xs) / len(xs)",
        ),
        wrong_test=TEST
        + "\n\ndef test_mean_empty():\n    assert mean([]) == 0  # ValueError would be better\n",
    ),
    _module_task(
        "rename_tokens",
        request="Rename `tokens` to `words` in textstats.py and everywhere it is used, tests included.",
        probe=(
            "import textstats\n"
            "assert not hasattr(textstats, 'tokens'), 'tokens is still there'\n"
            "assert textstats.words('a  b') == ['a', 'b']\n"
            "assert textstats.count_words('a a') == {'a': 2}"
        ),
        test_mentions="words(",
        module=MODULE.replace("tokens", "words"),
        test=TEST.replace("tokens", "words"),
        wrong_module=MODULE.replace("def tokens", "def words"),
        wrong_test=TEST.replace("tokens", "words"),
    ),
    _module_task(
        "median",
        request=(
            "Add a `median(xs)` function to textstats.py (the middle value; the mean of the two "
            "middle values for an even count) and tests for odd and even counts."
        ),
        probe=(
            "from textstats import median\n"
            "assert median([3, 1, 2]) == 2\n"
            "assert median([4, 1, 3, 2]) == 2.5"
        ),
        test_mentions="median",
        module=MODULE
        + "\n\ndef median(xs):\n    s = sorted(xs)\n    mid = len(s) // 2\n    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2\n",
        test=TEST.replace("import count_words, mean", "import count_words, mean, median")
        + "\n\ndef test_median():\n    assert median([3, 1, 2]) == 2\n    assert median([4, 1, 3, 2]) == 2.5\n",
        wrong_module=MODULE + "\n\ndef median(xs):\n    return sorted(xs)[len(xs) // 2]\n",
        wrong_test=TEST.replace("import count_words, mean", "import count_words, mean, median")
        + "\n\ndef test_median():\n    assert median([3, 1, 2]) == 2\n",
    ),
]
