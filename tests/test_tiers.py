"""The suite's tiers hold by construction: a slow test without its tier's marker fails, so it
cannot slip into `make check`."""

from __future__ import annotations

import pytest

from tests.tiers import MARKER_EXPRESSIONS, TIERS, needed_tier

PLUGIN = 'pytest_plugins = ["tests.tiers"]'


def test_an_unmarked_test_that_starts_a_kernel_fails_before_the_kernel_starts(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(PLUGIN)
    pytester.makepyfile(
        """
        from jupyter_client.manager import start_new_kernel

        def test_a_quick_look_at_the_kernel():
            start_new_kernel(kernel_name="python3", startup_timeout=5)

        def test_in_process():
            pass
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:asyncio")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_a_quick_look_at_the_kernel starts a program of the kernel tier*without @pytest.mark.kernel*"
        ]
    )


def test_an_unmarked_test_asking_for_a_tier_fixture_fails_collection(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(PLUGIN)
    pytester.makepyfile(
        """
        import pytest

        @pytest.fixture
        def kernel_for():
            return None

        @pytest.fixture
        def page():
            return None

        def test_forgot_its_marker(kernel_for):
            pass

        @pytest.mark.kernel
        def test_in_the_wrong_tier(page):
            pass

        @pytest.mark.kernel
        def test_marked(kernel_for):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:asyncio")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*test_forgot_its_marker: kernel_for (needs @pytest.mark.kernel)*",
            "*test_in_the_wrong_tier: page (needs @pytest.mark.browser)*",
        ]
    )
    assert "test_marked" not in result.stderr.str()


def test_a_kernel_test_may_not_start_an_external_program_but_may_start_any_other(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(PLUGIN)
    pytester.makepyfile(
        """
        import subprocess, sys
        import pytest

        @pytest.mark.kernel
        def test_starts_llama_server():
            subprocess.run(["build/llama-server/bin/llama-server", "--version"])

        @pytest.mark.kernel
        def test_starts_python():
            subprocess.run([sys.executable, "-c", "pass"], check=True)

        @pytest.mark.external
        def test_external_may_start_a_kernel_program_too():
            with pytest.raises(FileNotFoundError):
                subprocess.run(["no-such-dir/ipykernel_launcher"])
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:asyncio")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*starts a program of the external tier*@pytest.mark.external*"])


@pytest.mark.parametrize(
    ("command", "tier"),
    [
        ("/venv/bin/python -m ipykernel_launcher -f /tmp/kernel-1.json", "kernel"),
        ("/venv/bin/python -m jupyterlab --no-browser", "browser"),
        ("node /venv/lib/playwright/driver/package/cli.js run-driver", "browser"),
        ("build/llama-server/bin/llama-server -m model.gguf", "external"),
        ("/venv/bin/jupyterhub -f hub.py", "external"),
        ("/venv/bin/python -m build --wheel --no-isolation", "external"),
        ("git status", None),
        ("/venv/bin/python -m mcp_server_time", "external"),
        ("/venv/bin/python -m tests.mcp_servers.behaviours", "external"),
        ("/venv/bin/python -c pass", None),
        ("node complete.js", None),
    ],
)
def test_each_program_belongs_to_one_tier(command: str, tier: str | None) -> None:
    assert needed_tier(command) == tier


def test_every_test_is_in_exactly_one_tier() -> None:
    """Each marker combination selects one tier's expression (evaluated as pytest does)."""
    from itertools import combinations

    from _pytest.mark.expression import Expression

    for size in range(len(TIERS) + 1):
        for markers in combinations(TIERS, size):
            chosen = [
                tier
                for tier, text in MARKER_EXPRESSIONS.items()
                if Expression.compile(text).evaluate(lambda name, m=markers, **_: name in m)
            ]
            assert len(chosen) == 1, (markers, chosen)


def test_a_test_that_catches_the_guards_error_still_fails(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(PLUGIN)
    pytester.makepyfile(
        """
        import subprocess, sys

        def test_retries_a_server_quietly():
            try:
                subprocess.run([sys.executable, "-m", "tests.mcp_servers.behaviours"])
            except Exception:
                pass  # a server that "did not start" is an outcome some tests expect
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:asyncio")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*starts a program of the external tier*"])
