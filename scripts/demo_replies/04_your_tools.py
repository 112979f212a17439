"""The model's side of `notebooks/04_your_tools.ipynb`: what the loopback server answers, in order."""

from copilot_nb.testing import call, reply

PROVIDER = "openai"
STEPS = [
    reply("", call("stock_level", item="cake"), call("price_of", item="scone")),
    reply(
        "Not today: **cake** is out of stock (0 left). Scones are in stock at €1.75 each, "
        "so three cost **€5.25**."
    ),
    reply("I'll look for a length converter.", call("tool_search", pattern="mi_to")),
    reply("", call("mi_to_km", value=26.2)),
    reply("26.2 miles is **42.16 km** (42.164813 km, from `mi_to_km`)."),
]
