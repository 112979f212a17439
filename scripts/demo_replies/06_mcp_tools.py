"""The model's side of `notebooks/06_mcp_tools.ipynb`: what the loopback server answers, in order.

The calls go to the reference git server (`mcp-server-git`), named `git__<tool>`; `repo_path` is
relative, so it means the same repository on every machine."""

from copilot_nb.testing import call, reply

PROVIDER = "openai-responses"
STEPS = [
    # What has changed since the last commit?
    reply(
        "",
        call("git__git_status", repo_path="repo"),
        call("git__git_diff_unstaged", repo_path="repo"),
    ),
    reply(
        "One file, **greet.py**, not yet staged: `greet()` gained a `punctuation` argument "
        '(default `"!"`), used in place of the fixed `!`. Calls without it behave as before.'
    ),
    # Who made the last two commits, when, and what did they change?
    reply("", call("git__git_log", repo_path="repo", max_count=2)),
    reply("", call("git__git_show", repo_path="repo", revision="cbe4f40")),
    reply(
        "Both are by Ada Lovelace:\n\n"
        "- `cbe4f40`, 3 March 2026 at 16:30 (+01:00), *Greet the world by default*: "
        '`greet()`\'s `name` now defaults to `"world"`, and a README.md was added.\n'
        "- `cb06050`, 2 March 2026 at 09:00 (+01:00), *Add greet()*: the first version of "
        "greet.py, `greet(name)` returning `Hello, {name}!`."
    ),
]
