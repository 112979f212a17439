"""The model's side of `notebooks/08_long_run.ipynb`: what the loopback server answers, in order."""

from copilot_nb.testing import call, reply

PROVIDER = "openai"
TRAIN = """\
import time
print("fitting 3 folds", flush=True)
time.sleep(3.6)  # the slow part: a model fitting, a query scanning a table
scores = [0.91, 0.93, 0.92]
print("done")
sum(scores) / len(scores)"""
STEPS = [
    reply("I'll start the fit; it takes a while.", call("run_code", code=TRAIN, timeout=60)),
    reply(
        "It is still fitting, so meanwhile I looked at what the kernel holds.",
        call("list_variables"),
    ),
    reply("Now I wait for the fit.", call("wait_run", handle="run-1", timeout=60)),
    reply(
        "The fit finished: the three folds scored **0.91**, **0.93** and **0.92**, a mean of "
        "**0.92**. `scores` is defined in your kernel."
    ),
]
