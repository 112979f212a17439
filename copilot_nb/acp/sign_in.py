"""Signing in over ACP: an API key the editor sets in the agent's environment, or Copilot's
device sign-in run in the editor's terminal (`copilot-nb acp --sign-in`). Neither is read or
stored by the protocol: a key stays in the environment, a GitHub token where `%copilot login`
keeps it."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping

from acp.schema import AuthEnvVar, AuthMethodAgent, EnvVarAuthMethod, TerminalAuthMethod

from ..agent.model_strings import PROVIDERS, split_spec
from ..errors import ConfigError
from ..models.copilot.github_sign_in import DeviceFlow, fetch_user
from ..models.copilot.github_tokens import GitHubHosts, find_github_token, save_github_token
from ..models.key_store import saved_key

COPILOT = "copilot-sign-in"
SIGN_IN_ARGS = ["acp", "--sign-in"]
KEYED = ("openai", "anthropic", "openrouter", "gemini")
"""Providers offered as an env-var method (those with a key of their own), in this order."""


def methods() -> list[EnvVarAuthMethod | TerminalAuthMethod | AuthMethodAgent]:
    """What `initialize` offers: a key per provider, and Copilot's sign-in in a terminal."""
    out: list[EnvVarAuthMethod | TerminalAuthMethod | AuthMethodAgent] = []
    for name in KEYED:
        row = PROVIDERS.get(name)
        if row is None or not row.key_env:
            continue
        out.append(
            EnvVarAuthMethod(
                type="env_var",
                id=f"{name}-api-key",
                name=f"{name} API key",
                description=row.sign_in,
                vars=[AuthEnvVar(name=row.key_env[0], label=f"{name} API key")],
            )
        )
    out.append(
        TerminalAuthMethod(
            type="terminal",
            id=COPILOT,
            name="GitHub Copilot",
            description="sign in to GitHub in the terminal (a code to enter at github.com)",
            args=SIGN_IN_ARGS,
        )
    )
    return out


def signed_in(method_id: str, environ: Mapping[str, str] | None = None) -> str:
    """'' when `method_id`'s credential is there; else what to do, in one sentence."""
    env = os.environ if environ is None else environ
    if method_id == COPILOT:
        if find_github_token(environ=env) is None:
            return "no GitHub sign-in found: run `copilot-nb acp --sign-in` in a terminal"
        return ""
    name = method_id.removesuffix("-api-key")
    row = PROVIDERS.get(name)
    if row is None or not method_id.endswith("-api-key"):
        raise ConfigError(f"unknown sign-in method {method_id!r}")
    if _has_key(row.key_env, env):
        return ""
    return f"{' or '.join(row.key_env)} is not set for the agent: {row.sign_in}"


def missing_provider(spec: str, environ: Mapping[str, str] | None = None) -> str:
    """What the session's model still needs before a turn can reach it ('' when nothing)."""
    env = os.environ if environ is None else environ
    name = split_spec(spec)[0]
    row = PROVIDERS.get(name)
    if row is None:
        return f"unknown provider {name!r} in the model {spec!r}: set COPILOT_NB_MODEL"
    if name == "copilot":
        return signed_in(COPILOT, env)
    local = bool(row.base_url_env and env.get(row.base_url_env))  # a local server may need none
    if row.key_env and not local and not _has_key(row.key_env, env):
        return f"the model {spec} needs {' or '.join(row.key_env)}: {row.sign_in}"
    return ""


def _has_key(names: tuple[str, ...], env: Mapping[str, str]) -> bool:
    """A key in the environment, or one saved in the Model form (as the endpoint reads them)."""
    return any(env.get(name) for name in names) or saved_key(*names) is not None


def sign_in_here() -> int:
    """Copilot's device sign-in in this terminal (the editor's terminal auth method runs it)."""
    hosts = GitHubHosts.from_env()

    async def flow() -> str:
        device = DeviceFlow(hosts)
        code = await device.start()
        print(f"To sign in to GitHub Copilot, open {code.verification_uri} and enter the code")
        print(f"    {code.user_code}")
        print("Waiting for GitHub (Ctrl-C to cancel)…", flush=True)
        token = await device.wait(code)
        user = await fetch_user(token, hosts)
        path = save_github_token(token, hosts=hosts, user=user, client_id=device.client_id)
        return f"Signed in to {hosts.host}{f' as {user}' if user else ''}; the token is in {path}."

    try:
        print(asyncio.run(flow()))
    except KeyboardInterrupt:
        print("Sign-in cancelled; nothing was stored.", file=sys.stderr)
        return 1
    return 0
