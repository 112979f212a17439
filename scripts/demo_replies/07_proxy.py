"""The model's side of `notebooks/07_proxy.ipynb`: what the loopback server answers, in order.

Every request comes through the proxy from the `openai` client in the notebook, passed through
to the kernel's model: a plain question, then a round trip through the client's own tool."""

from copilot_nb.testing import call, reply

PROVIDER = "openai"
STEPS = [
    reply(
        "A Jupyter kernel is the process that runs a notebook's code and keeps its state "
        "(variables, imports) between cells."
    ),
    reply("", call("word_count", text="the quick brown fox jumps")),
    reply("There are 5 words in 'the quick brown fox jumps'."),
]
