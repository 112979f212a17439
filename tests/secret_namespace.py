"""A notebook's namespace with secrets in it, and the table of lookups the variable tools must get right.

The same setup runs in-process (tests/test_secret_masking.py) and in a real kernel
(tests/test_kernel_secrets.py), and each row is checked the same way in both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

OPENAI_KEY = "sk-proj-" + "A1b2C3d4" * 6
GITHUB_TOKEN = "ghp_" + "Zq8" * 12
HUGGING_FACE_TOKEN = "hf_" + "Kp4" * 11
SECRETS = (
    OPENAI_KEY,
    "plain-but-named",
    "hunter2-pw",
    "s3cr3t-value",
    "nested-pw-123",
    GITHUB_TOKEN,
    "pw-ann-0001",
    "tok-987654",
)
"""Strings that must never appear in what the tools show unless the user revealed them."""

SETUP = f"""\
import os, subprocess
import numpy as np
import pandas as pd
from dataclasses import dataclass
from typing import Any

@dataclass
class Settings:
    github_token: str
    region: str

class Model:
    def __init__(self):
        self.coef_ = np.array([0.5, 2.0])

api_key = "{OPENAI_KEY}"
OPENAI_API_KEY = "plain-but-named"
db_password = 'hunter2-pw'
env = os.environ
env_copy = dict(os.environ)
cfg = {{"secret": "s3cr3t-value", "host": "db.local", "nested": {{"password": "nested-pw-123", "port": 5432}}}}
notes = "deploy with {GITHUB_TOKEN} tomorrow"
accounts = pd.DataFrame({{"user": ["ann", "bob"], "password": ["pw-ann-0001", "pw-bob-0002"], "visits": [3, 5]}})
df = pd.DataFrame({{"a": [1, 2, 3]}})
settings = Settings(github_token="tok-987654", region="eu")
model = Model()
data = {{"x": [1, 2, 3]}}
def helper(n):
    return n + 1
gen = (i for i in range(3))
"""


NAMED_BY_TOKENS = f"""\
import types
import pandas as pd
cfg = {{"{GITHUB_TOKEN}": 1, "host": 2}}
frame = pd.DataFrame({{"{OPENAI_KEY}": [1], "price": [2.0]}})
series = pd.Series([1, 2], name="{HUGGING_FACE_TOKEN}")
obj = types.SimpleNamespace(**{{"{GITHUB_TOKEN}": 1, "port": 2}})
mod = types.ModuleType("{HUGGING_FACE_TOKEN}")
made = type("{GITHUB_TOKEN}", (), {{}})()
"""
"""A notebook whose dict key, DataFrame column, Series name, attribute, module and class are
named by tokens: names that must not reach a prompt any more than the values would."""


def named_by_tokens() -> dict[str, Any]:
    """NAMED_BY_TOKENS's variables, run here."""
    namespace: dict[str, Any] = {"__name__": "__main__"}
    exec(NAMED_BY_TOKENS, namespace)
    return {k: v for k, v in namespace.items() if k[0] != "_" and k not in ("types", "pd")}


def assert_no_token_named(wire: str) -> None:
    """None of NAMED_BY_TOKENS's tokens, nor a half of one split at 9 or 12, is in `wire`."""
    for token in (GITHUB_TOKEN, HUGGING_FACE_TOKEN, OPENAI_KEY):
        for part in (token, token[:12], token[12:], token[:9], token[9:]):
            assert part not in wire, f"{part!r} was sent"


@dataclass(frozen=True)
class Row:
    """One lookup and what must come of it: refused (an error), masked, or shown."""

    path: str
    outcome: str
    fragment: str = ""
    """Text the answer must contain."""


TABLE = (
    # escapes through modules, dunders, frames and IPython's names: refused
    Row("os", "refused", "os is a module"),
    Row("os.environ", "refused", "os is a module"),
    Row("subprocess.os.environ", "refused", "subprocess is a module"),
    Row("np.os.environ", "refused", "np is a module"),
    Row("pd.io.common.os.environ", "refused", "pd is a module"),
    Row("df.__class__.__init__.__globals__['os']", "refused", "df.__class__ is a dunder"),
    Row("helper.__globals__['os'].environ", "refused", "helper.__globals__ is a dunder"),
    Row("model.__dict__", "refused", "dunder attribute"),
    Row("gen.gi_frame.f_globals['os']", "refused", "gen.gi_frame is a frame"),
    Row("In", "refused", "'In' is IPython's or private"),
    Row("Out", "refused", "'Out' is IPython's or private"),
    Row("get_ipython", "refused", "'get_ipython' is IPython's or private"),
    Row("exit", "refused", "'exit' is IPython's or private"),
    Row("_", "refused", "'_' is IPython's or private"),
    Row("__builtins__", "refused", "'__builtins__' is IPython's or private"),
    Row("helper(1)", "refused", "no calls or expressions"),
    # secrets: masked by name, by type, by look, also inside containers
    Row("api_key", "masked", "<masked: str of 56 chars; ask to reveal>"),
    Row("OPENAI_API_KEY", "masked", "its name (OPENAI_API_KEY) says it holds a secret"),
    Row("db_password", "masked", "<masked: str of 10 chars"),
    Row("env", "masked", "the process environment (os.environ)"),
    Row("env['PATH']", "masked", "the process environment (os.environ)"),
    Row('cfg["secret"]', "masked", "<masked: str of 12 chars"),
    Row("cfg['nested']['password']", "masked", "its name (password)"),
    Row("cfg", "masked", "'secret': <masked: str of 12 chars>"),
    Row("notes", "masked", "'deploy with <masked: 40 chars> tomorrow'"),
    Row("accounts", "masked", "<masked: str of 11 chars>"),
    Row("accounts['password']", "masked", "its name (password)"),
    Row("accounts.iloc[0]", "masked", "password    <masked: str of 11 chars>"),
    Row("accounts.T", "masked", "<masked: str of 11 chars>"),
    Row("env_copy", "masked", "a copy of the process environment (os.environ)"),
    Row("settings", "masked", "github_token='<masked: 10 chars>'"),
    Row("settings.github_token", "masked", "<masked: str of 10 chars; ask to reveal>"),
    # the user's data: shown
    Row("df.shape", "shown", "(3, 1)"),
    Row("model.coef_", "shown", "array([0.5, 2. ])"),
    Row('data["x"]', "shown", "[1, 2, 3]"),
    Row("cfg['host']", "shown", "'db.local'"),
    Row("settings.region", "shown", "'eu'"),
    Row("accounts.visits", "shown", "describe():"),
    Row("helper", "shown", "signature: helper(n)"),
)


def check(row: Row, is_error: bool, content: str, environment: dict[str, str]) -> None:
    """Assert one lookup's answer: its outcome, its fragment, and no secret in it."""
    assert is_error == (row.outcome == "refused"), f"{row.path}: {content}"
    assert row.fragment in content, f"{row.path}: {content}"
    if row.outcome == "masked":
        assert "<masked: " in content and "reveal=True" in content, f"{row.path}: {content}"
    if row.outcome == "shown":
        assert "<masked" not in content, f"{row.path}: {content}"
    for secret in SECRETS:
        assert secret not in content, f"{row.path} leaked {secret!r}: {content}"
    for name, value in environment.items():
        if len(value) >= 8 and name in ("PATH", "HOME", "COPILOT_TEST_SECRET"):
            assert value not in content, f"{row.path} leaked ${name}: {content}"
