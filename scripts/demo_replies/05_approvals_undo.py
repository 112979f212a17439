"""The model's side of `notebooks/05_approvals_undo.ipynb`: what the loopback server answers, in
order. The first edit is denied (nobody can approve it headless); the second request makes it."""

from copilot_nb.testing import call, reply

PROVIDER = "anthropic"

OLD = '''def total(prices):
    """The sum of the prices."""
    return sum(prices)'''
NEW = '''def total(prices, discount=0.0):
    """The sum of the prices, less `discount` (a fraction: 0.1 takes 10% off)."""
    if not 0 <= discount <= 1:
        raise ValueError(f"discount must be between 0 and 1, not {discount}")
    return sum(prices) * (1 - discount)'''
TEST = """import pytest

from prices import total


def test_total_without_discount():
    assert total([10, 20]) == 30


def test_total_with_discount():
    assert total([10, 20], discount=0.5) == 15


def test_discount_out_of_range():
    with pytest.raises(ValueError):
        total([10], discount=1.5)
"""

STEPS = [
    # %%copilot without --yes: read, then an edit that nobody can approve
    reply("I'll read prices.py first.", call("read_file", path="prices.py")),
    reply("", call("edit_file", path="prices.py", old_str=OLD, new_str=NEW)),
    reply(
        "I could not change **prices.py**: the edit needs your approval, and nobody could be "
        "asked (this notebook runs unattended), so it was denied. Nothing was changed and I did "
        "not write test_prices.py.\n\nTo let me make the change, rerun the request with "
        '`%%copilot --yes`, or allow edits with `%config CopilotMagics.approve_edit = "allow"`.'
    ),
    # "Go ahead." with approve_edit = "allow"
    reply(
        "",
        call("edit_file", path="prices.py", old_str=OLD, new_str=NEW),
        call("write_file", path="test_prices.py", content=TEST),
    ),
    reply(
        "Done:\n\n- `total(prices, discount=0.0)` in **prices.py** takes a fraction off the sum, "
        "and refuses a discount outside 0–1.\n- **test_prices.py** has three tests: no discount, "
        "half off, and a discount out of range."
    ),
]
