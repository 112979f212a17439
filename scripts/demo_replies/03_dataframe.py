"""The model's side of `notebooks/03_dataframe.ipynb`: what the loopback server answers, in order."""

from copilot_nb.testing import call, reply

PROVIDER = "openai"
GROWTH = """\
monthly = sales.pivot(index="month", columns="region", values="units")
growth = (monthly.iloc[-1] / monthly.iloc[0] - 1).sort_values(ascending=False)
for region, rate in growth.items():
    print(f"{region}: {monthly[region].iloc[0]} -> {monthly[region].iloc[-1]} units, {rate:+.1%}")"""
STEPS = [
    reply("I'll compute each region's growth in the kernel.", call("run_code", code=GROWTH)),
    reply(
        "East grew the most. Now the chart:",
        call("run_cell", cell_id="plot", notebook="report.ipynb"),
    ),
    reply(
        "**East** grew fastest: from 60 units in January to 130 in June, **+116.7%**. "
        "North grew 31.7% (120 → 158) and South 9.5% (95 → 104); revenue is units × 12.5 "
        "in every row, so it grew by the same rates.\n\n"
        "The `plot` cell of **report.ipynb** ran and now holds the chart of units per month. "
        "I was told only that it is a 600×300 PNG (`[image/png 600x300]`), not what it shows."
    ),
]
