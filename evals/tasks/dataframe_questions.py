"""Closed-form questions about a DataFrame, in the manner of DABStep and InfiAgent-DABench: one
value per question, checked against the data in the task's folder, not against the reply's
reasoning. The wrong scripts make the mistakes people make (no filter, mean for sum, rows with
missing values counted)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from copilot_nb.testing import call, reply

from ..task import Outcome, Task, close
from .data import read_sales, write_sales

FORMAT = "End your reply with one line `ANSWER: <value>` holding the value alone."


@dataclass(frozen=True)
class Question:
    name: str
    text: str
    right: Callable[[Any], Any]
    wrong: Callable[[Any], Any]
    code: str
    """What a careful analyst runs (the correct script runs it, so the scripted turn is real)."""
    tolerance: float | None = 0.01
    """None: a word, compared without case."""


def _revenue(df: Any) -> Any:
    return df.units * df.price


QUESTIONS = [
    Question(
        "total_revenue",
        "What is the total revenue (units times price) over all orders, rounded to 2 decimals?",
        lambda df: round(float(_revenue(df).sum()), 2),
        lambda df: round(float(df.units.sum() * df.price.mean()), 2),
        "print(round((df.units * df.price).sum(), 2))",
    ),
    Question(
        "top_region_units",
        "Which region sold the most units in total?",
        lambda df: df.groupby("region").units.sum().idxmax(),
        lambda df: df.groupby("region").units.mean().idxmax(),
        "print(df.groupby('region').units.sum().idxmax())",
        None,
    ),
    Question(
        "returned_orders",
        "How many orders were returned?",
        lambda df: int(df.returned.sum()),
        lambda df: int((~df.returned).sum()),
        "print(int(df.returned.sum()))",
        0,
    ),
    Question(
        "mean_price_beta",
        "What is the mean price of product `beta`, rounded to 2 decimals?",
        lambda df: round(float(df[df["product"] == "beta"].price.mean()), 2),
        lambda df: round(float(df.price.mean()), 2),
        "print(round(df[df['product'] == 'beta'].price.mean(), 2))",
    ),
    Question(
        "best_month",
        "Which month had the highest revenue? Answer as YYYY-MM.",
        lambda df: str(_revenue(df).groupby(df.date.dt.to_period("M")).sum().idxmax()),
        lambda df: str(df.groupby(df.date.dt.to_period("M")).units.sum().idxmax()),
        "print((df.units * df.price).groupby(df.date.dt.to_period('M')).sum().idxmax())",
        None,
    ),
    Question(
        "median_units_north",
        "What is the median number of units per order in the `north` region?",
        lambda df: float(df[df.region == "north"].units.median()),
        lambda df: float(df[df.region == "north"].units.mean()),
        "print(df[df.region == 'north'].units.median())",
    ),
    Question(
        "big_orders",
        "How many orders have more than 30 units?",
        lambda df: int((df.units > 30).sum()),
        lambda df: int((df.units >= 30).sum()),
        "print(int((df.units > 30).sum()))",
        0,
    ),
    Question(
        "units_price_corr",
        "What is the Pearson correlation between units and price, rounded to 3 decimals?",
        lambda df: round(float(df.units.corr(df.price)), 3),
        lambda df: round(float(df.units.corr(df.units * df.price)), 3),
        "print(round(df.units.corr(df.price), 3))",
        0.0015,
    ),
    Question(
        "returned_revenue_share",
        "What percentage of total revenue comes from returned orders? Round to 1 decimal.",
        lambda df: round(float(100 * _revenue(df)[df.returned].sum() / _revenue(df).sum()), 1),
        lambda df: round(float(100 * df.returned.mean()), 1),
        "r = df.units * df.price\nprint(round(100 * r[df.returned].sum() / r.sum(), 1))",
        0.05,
    ),
    Question(
        "lowest_mean_units_product",
        "Which product has the lowest average units per order?",
        lambda df: df.groupby("product").units.mean().idxmin(),
        lambda df: df.groupby("product").price.mean().idxmin(),
        "print(df.groupby('product').units.mean().idxmin())",
        None,
    ),
    Question(
        "missing_discounts",
        "How many orders have no discount recorded (a missing value, not zero)?",
        lambda df: int(df.discount.isna().sum()),
        lambda df: int((df.discount.fillna(0) == 0).sum()),
        "print(int(df.discount.isna().sum()))",
        0,
    ),
    Question(
        "price_p90",
        "What is the 90th percentile of price (pandas' default interpolation), rounded to 2 decimals?",
        lambda df: round(float(df.price.quantile(0.9)), 2),
        lambda df: round(float(df.price.quantile(0.9, interpolation="lower")), 2) + 0.5,
        "print(round(df.price.quantile(0.9), 2))",
    ),
]


def _check(question: Question) -> Callable[[Outcome], tuple[bool, str]]:
    def check(outcome: Outcome) -> tuple[bool, str]:
        expected = question.right(read_sales(outcome.workdir))
        found = outcome.final_answer()
        if question.tolerance is not None:
            return close(found, float(expected), question.tolerance)
        if found is not None and found.strip().lower() == str(expected).lower():
            return True, f"answer {found} is right"
        return False, f"answer {found}, expected {expected}"

    return check


def _task(question: Question) -> Task:
    frame = read_sales_frame()
    code = "import pandas as pd\ndf = pd.read_csv('sales.csv', parse_dates=['date'])\n"
    return Task(
        name=f"df_{question.name}",
        kind="dataframe-question",
        request=f"Using sales.csv in this folder: {question.text} {FORMAT}",
        setup=write_sales,
        check=_check(question),
        solution=[
            reply("Let me compute it.", call("run_code", code=code + question.code)),
            reply(f"Computed from sales.csv.\n\nANSWER: {question.right(frame)}"),
        ],
        wrong=[reply(f"From a quick look at the data:\n\nANSWER: {question.wrong(frame)}")],
    )


def read_sales_frame() -> Any:
    """The data as the task's folder will hold it (written and read back, as the CSV rounds)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        write_sales(Path(folder))
        return read_sales(Path(folder))


TASKS = [_task(q) for q in QUESTIONS]
