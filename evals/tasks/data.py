"""The tasks' data: generated from a fixed seed, so every run sees the same numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

REGIONS = ("north", "south", "east", "west")
PRODUCTS = ("alpha", "beta", "gamma", "delta")


def sales() -> Any:
    """240 orders over 2024: date, region, product, units, price, returned, discount (some NaN)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(20240)
    count = 240
    frame = pd.DataFrame(
        {
            "date": pd.to_datetime("2024-01-01")
            + pd.to_timedelta(rng.integers(0, 366, count), unit="D"),
            "region": rng.choice(REGIONS, count, p=[0.35, 0.25, 0.25, 0.15]),
            "product": rng.choice(PRODUCTS, count),
            "units": rng.integers(1, 40, count),
            "price": rng.uniform(2.0, 60.0, count).round(2),
            "returned": rng.random(count) < 0.12,
            "discount": rng.choice([0.0, 0.05, 0.1, np.nan], count, p=[0.5, 0.2, 0.2, 0.1]),
        }
    )
    return frame.sort_values("date", kind="stable").reset_index(drop=True)


def write_sales(folder: Path) -> None:
    sales().to_csv(folder / "sales.csv", index=False, date_format="%Y-%m-%d")


def read_sales(folder: Path) -> Any:
    import pandas as pd

    return pd.read_csv(folder / "sales.csv", parse_dates=["date"])
