"""Requests only the user can settle: the agent must ask (`ask_user`) and do what the answer says.
The harness answers from the task's `user_answers` through the kernel's stdin, as a console
user would; the checker wants the question asked and the answer followed."""

from __future__ import annotations

import json

from copilot_nb.testing import call, reply

from ..task import Outcome, Task
from .data import read_sales, write_sales

LOAD = "import pandas as pd\ndf = pd.read_csv('sales.csv', parse_dates=['date'])\n"


def _asked(outcome: Outcome) -> tuple[bool, str]:
    if "ask_user" not in outcome.tool_calls:
        return False, "the agent did not ask the user"
    return True, ""


def _check_format(outcome: Outcome) -> tuple[bool, str]:
    asked, why = _asked(outcome)
    if not asked:
        return False, why
    path = outcome.workdir / "summary.json"
    if not path.exists():
        return False, "no summary.json (the user asked for JSON)"
    expected = read_sales(outcome.workdir).groupby("region").units.sum().to_dict()
    found = json.loads(path.read_text())
    if {k: int(v) for k, v in found.items()} != {k: int(v) for k, v in expected.items()}:
        return False, f"summary.json holds {found}, expected {expected}"
    return True, "asked, and wrote the JSON the user chose"


def _check_discount(outcome: Outcome) -> tuple[bool, str]:
    asked, why = _asked(outcome)
    if not asked:
        return False, why
    import pandas as pd

    path = outcome.workdir / "discounted.csv"
    if not path.exists():
        return False, "no discounted.csv"
    found = pd.read_csv(path)
    expected = (read_sales(outcome.workdir).price * 0.85).round(2)
    if "price" not in found or len(found) != len(expected):
        return False, "discounted.csv lacks a price column with every order"
    if ((found.price - expected).abs() > 0.006).any():
        return False, "the prices are not 15% lower, the rate the user gave"
    return True, "asked, and applied the user's 15%"


def _write(code: str) -> object:
    return reply("", call("run_code", code=LOAD + code))


FORMAT_CODE = "import json\njson.dump({k: int(v) for k, v in df.groupby('region').units.sum().items()}, open('summary.json', 'w'))"
DISCOUNT_CODE = (
    "df.assign(price=(df.price * {rate}).round(2)).to_csv('discounted.csv', index=False)"
)

TASKS = [
    Task(
        name="ask_summary_format",
        kind="ask-user",
        request=(
            "Write the total units per region from sales.csv to a summary file in the format my "
            "team uses (I will tell you which: csv or json), named summary.<format>."
        ),
        setup=write_sales,
        check=_check_format,
        solution=[
            reply(
                "", call("ask_user", question="Which format: csv or json?", options=["csv", "json"])
            ),
            _write(FORMAT_CODE),
            reply("Wrote summary.json, as you asked."),
        ],
        wrong=[
            _write(FORMAT_CODE.replace("summary.json", "summary.csv")),
            reply("Wrote summary.csv (assumed CSV)."),
        ],
        user_answers=("json",),
    ),
    Task(
        name="ask_discount_rate",
        kind="ask-user",
        request=(
            "Write discounted.csv: sales.csv with every price lowered by our standard discount "
            "rate, rounded to cents. Ask me the rate; I know it, you don't."
        ),
        setup=write_sales,
        check=_check_discount,
        solution=[
            reply("", call("ask_user", question="What is the standard discount rate?")),
            _write(DISCOUNT_CODE.format(rate=0.85)),
            reply("Wrote discounted.csv with 15% off."),
        ],
        wrong=[
            reply("", call("ask_user", question="What is the standard discount rate?")),
            _write(DISCOUNT_CODE.format(rate=0.9)),
            reply("Wrote discounted.csv with 10% off, the usual rate."),
        ],
        user_answers=("15%",),
    ),
]
