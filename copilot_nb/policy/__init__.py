"""The administrator's policy: limits a team's JupyterHub sets that users can only tighten.

Each choice the policy limits is checked here, at the one place copilot_nb makes it (building a
model and sending to it, deciding a tool call's approval, starting an MCP server, starting the
proxy, writing a cassette or a saved conversation, offering completions or a skill), so no
user setting, `%config`, magic option or environment variable reaches around it. `loading.py` finds and reads
the files; `rules.py` holds one file's rules.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import PolicyError
from .loading import EXTRA_VARIABLE, Policy, load_policy, policy_paths
from .rules import FILE_NAME, KEYS, STRICTNESS, Rules, tighten

__all__ = [
    "EXTRA_VARIABLE",
    "FILE_NAME",
    "KEYS",
    "Policy",
    "approval_floor",
    "budget_left",
    "budget_lines",
    "budget_refusal",
    "check_cassette_writing",
    "check_model",
    "check_serve",
    "completions_allowed",
    "conversations_allowed",
    "count_tokens",
    "describe",
    "floor_source",
    "load_policy",
    "mcp_refusal",
    "policy_paths",
    "skill_refusal",
    "telemetry_rules",
    "tightened",
]


def check_model(provider: str, model: str, base_url: str | None = None) -> None:
    """Raise PolicyError unless data may go to this provider, model and endpoint. The offline
    demo model sends nothing anywhere and is always allowed."""
    if provider in ("offline", "demo"):
        return
    refusal = _refusal(
        f"model {provider}:{model}", lambda r: r.check_model(provider, model, base_url)
    )
    if refusal:
        raise PolicyError(refusal)


def approval_floor(category: str) -> str | None:
    """The strictest floor any policy file sets for this category (deny while one is broken)."""
    policy = load_policy()
    if policy.broken and category != "read":
        return "deny"
    floors = [f for r in policy.rules if (f := r.floor(category)) is not None]
    return max(floors, key=STRICTNESS.__getitem__, default=None)


def tightened(category: str, decision: str, supported: tuple[str, ...]) -> str:
    """The decision a user's settings made, raised to the policy's floor for its category."""
    return tighten(decision, approval_floor(category), supported)


def floor_source(category: str) -> str | None:
    """`/etc/jupyter/copilot_nb_policy.json: approval_floors.execute = "deny"`: the rule that
    set a category's floor, for a refusal to name."""
    policy = load_policy()
    if policy.broken and category != "read":
        return f"{policy.broken[0][0]} cannot be read"
    floor = approval_floor(category)
    for rules in policy.rules:
        if floor is not None and rules.floor(category) == floor:
            return f'{rules.source}: approval_floors.{category} = "{floor}"'
    return None


def mcp_refusal(
    command_line: str, url: str, *, resolved: str = "", env: tuple[str, ...] = ()
) -> str | None:
    """Why an MCP server (a stdio command line, or a URL) may not start, or None. `resolved` is
    the command line as it will run, `env` the names of the variables its entry sets."""
    return _refusal(
        f"MCP server {command_line or url}",
        lambda r: r.check_mcp(command_line, url, resolved=resolved, env=env),
    )


def check_serve(host: str) -> None:
    """Raise PolicyError unless the OpenAI-compatible proxy may listen on `host`."""
    refusal = _refusal("starting the proxy", lambda r: r.check_serve(host))
    if refusal:
        raise PolicyError(refusal)


def check_cassette_writing() -> None:
    """Raise PolicyError unless cassettes may be recorded (a replay writes nothing)."""
    refusal = _write_refusal("cassettes", "recording a cassette")
    if refusal:
        raise PolicyError(refusal)


def conversations_allowed() -> str | None:
    """None when conversations may be saved, else why not (said once, where saving stops)."""
    return _write_refusal("conversations", "saving conversations")


def completions_allowed() -> bool:
    """Whether inline completions may be offered (off while a policy file cannot be read)."""
    policy = load_policy()
    return not policy.broken and all(r.completions is not False for r in policy.rules)


def skill_refusal(name: str, package: str = "") -> str | None:
    """Why a skill may not be offered (an allow-list that leaves it out, package skills
    switched off, a policy file that cannot be read), or None."""
    return _refusal(f"skill {name!r}", lambda r: r.check_skill(name, package))


def _write_refusal(key: str, what: str) -> str | None:
    return _refusal(what, lambda r: r.check_write(key, what))


def _refusal(what: str, check: Callable[[Rules], str | None]) -> str | None:
    """Why `what` is refused: a broken policy file, else the first file whose `check` refuses."""
    policy = load_policy()
    refusal = policy.broken_refusal(what)
    for rules in policy.rules:
        refusal = refusal or check(rules)
    return refusal


def budget_refusal() -> str | None:
    """Why the next model request may not be sent (a budget spent), or None."""
    from .spending import budget_refusal as refusal  # the load path reads no budget

    return refusal()


def count_tokens(tokens: int) -> None:
    """Count one request's tokens against every budget that applies."""
    from .spending import count_tokens as count

    count(tokens)


def budget_left() -> str:
    """What the budgets leave, in one line for the end of a turn ("" without budgets)."""
    from .spending import budget_left as left

    return left()


def budget_lines() -> list[str]:
    """What is left of each budget, for `%copilot usage`."""
    from .spending import budget_lines as lines

    return lines()


def telemetry_rules() -> tuple[str, bool | None]:
    """The collector the policy sends traces to ("" for none) and whether it lets message
    content be exported (None: it says nothing; False in any file wins)."""
    endpoint, content = "", None
    for rules in load_policy().rules:
        if rules.telemetry is not None:
            endpoint = endpoint or rules.telemetry.get("endpoint", "")
            said = rules.telemetry.get("content")
            if said is not None:
                content = said if content is None else content and said
    return endpoint, content


def describe() -> list[str]:
    """The policy in force and where it came from, as lines for `%copilot policy`."""
    policy = load_policy()
    lines: list[str] = []
    for path, problem in policy.broken:
        lines.append(f"{path}: cannot be read ({problem}); every limited choice is refused")
    for rules in policy.rules:
        lines.append(f"{rules.source}:")
        lines.extend(f"  {line}" for line in rules.summary() or ["(no rules)"])
    if not lines:
        lines.append("no administrator's policy (looked for " + ", ".join(policy.searched) + ")")
    return lines
