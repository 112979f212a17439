"""The model's side of `notebooks/03_dataframe.ipynb`: what the loopback server answers, in order."""

from copilot_nb.testing import call, reply

PROVIDER = "openai"
STEPS = [
    reply("", call("list_variables")),
    reply("", call("inspect_variable", name="sales")),
    reply(
        "`sales` has one row per month and region, and `revenue` is `units` × 12.5; "
        "the head shows only North, so I'll read the monthly units of every region.",
        call("inspect_variable", name="units"),
    ),
    reply(
        "**East** grew fastest: from 60 units (€750) in January to 130 (€1,625) in June, "
        "**+116.7%**. North grew 31.7% (120 → 158) and South 9.5% (95 → 104).\n\n"
        "Since revenue is units × 12.5 in every row, growth in revenue equals growth in units."
    ),
]
