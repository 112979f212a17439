"""A one-call profile of a DataFrame: per column its dtype, missing values and distinct values,
and the number of duplicate rows."""

import pandas as pd


def profile(df: pd.DataFrame) -> pd.DataFrame:
    """One row per column: dtype, missing (count and share), distinct values."""
    summary = pd.DataFrame(
        {
            "dtype": df.dtypes.astype(str),
            "missing": df.isna().sum(),
            "missing_share": df.isna().mean().round(3),
            "distinct": df.nunique(dropna=True),
        }
    )
    print(f"{len(df):,} rows, {df.duplicated().sum():,} duplicate rows")
    return summary
