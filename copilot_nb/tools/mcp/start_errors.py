"""Why an MCP server did not start, in words the user can act on: the command that is not
installed, the URL that refused (and whether it wants a token), each cause once, from inside the
exception groups the `mcp` SDK's task groups raise."""

from __future__ import annotations

from collections.abc import Iterator

from .config import ServerConfig


def start_error(config: ServerConfig, exc: BaseException, refusal: str) -> str:
    """The sentence for a server that failed to start with `exc`;
    `refusal` is what its URL answered, if anything."""
    found = list(leaves(exc))
    if any(isinstance(leaf, FileNotFoundError) for leaf in found):
        return (
            f"MCP server {config.name!r}: command {config.command!r} not found; "
            f"install it or fix {config.source}"
        )
    reason = "; ".join(dict.fromkeys(f"{type(e).__name__}: {e}".rstrip(": ") for e in found))
    if refusal:
        reason += f"; {config.url} answered {refusal}"
        if refusal.startswith(("HTTP 401", "HTTP 403")):
            reason += ' (does it need a token in "headers"?)'
    return f"MCP server {config.name!r} did not start ({reason})"


def leaves(exc: BaseException) -> Iterator[BaseException]:
    """The exceptions inside (nested) exception groups."""
    inner = getattr(exc, "exceptions", None)  # an exception group
    if isinstance(inner, tuple) and inner:
        for each in inner:
            yield from leaves(each)
    else:
        yield exc
