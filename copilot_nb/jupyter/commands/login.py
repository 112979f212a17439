"""`%copilot login` and `%copilot models`: GitHub sign-in and model lists for the line magic.

A line magic is synchronous inside the kernel's running loop, so these run their coroutines
through `kernel_bridge.run_blocking`, as a synchronous `%%copilot` does. The wait stays
interruptible: a kernel interrupt cancels the coroutine (the device-flow polling stops at once)
and is re-raised, so the cell ends as interrupted and nothing half-done is stored.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

from ...agent.model_strings import PROVIDERS, resolve_model, split_spec
from ...kernel_bridge import run_blocking
from ...models.copilot.catalog import PREFERENCE as SPOKEN
from ...models.copilot.catalog import CopilotModelInfo, endpoint_label
from ...models.copilot.github_sign_in import DeviceCode, DeviceFlow, fetch_user
from ...models.copilot.github_tokens import GitHubHosts, GitHubToken, save_github_token
from ...models.provider import Registry
from ..safe_html import escape, link_html, table_html

T = TypeVar("T")


def login(hosts: GitHubHosts | None = None) -> GitHubToken:
    """Sign in to GitHub with the device flow, show the code, wait, and store the token."""
    hosts = hosts or GitHubHosts.from_env()
    flow = DeviceFlow(hosts)
    code = run_blocking(flow.start())
    try:  # an interrupt while the code is being shown cancels the sign-in as well
        show_device_code(code)
        token = run_blocking(flow.wait(code))
    except KeyboardInterrupt:
        print("copilot: sign-in cancelled; nothing was stored")
        raise
    user = run_blocking(fetch_user(token, hosts))
    path = save_github_token(token, hosts=hosts, user=user, client_id=flow.client_id)
    who = f" as {user}" if user else ""
    print(
        f"copilot: signed in to {hosts.host}{who}; the token is in {path} (delete it to sign "
        "out). Use it with `%copilot model copilot:gpt-4o` or `%%copilot --model copilot:gpt-4o`."
    )
    return GitHubToken(value=token, source=str(path), user=user)


def show_device_code(code: DeviceCode) -> None:
    """The code and the URL to type it in at: a clickable link in a notebook, text elsewhere."""
    text = (
        f"copilot: to sign in to GitHub, open {code.verification_uri} and enter the code "
        f"{code.user_code} (waiting for GitHub; interrupt the kernel to cancel)"
    )
    uri = code.verification_uri
    markup = (
        f"<p>To sign in to GitHub Copilot, open {link_html(uri, uri)} and enter the code "
        f"<code style='font-size:1.3em;font-weight:bold'>{escape(code.user_code)}</code></p>"
        "<p>Waiting for GitHub… interrupt the kernel to cancel.</p>"
    )
    _show({"text/plain": text, "text/html": markup})


def show_models(spec: str, *, registry: Registry = PROVIDERS) -> None:
    """List what the provider of `spec` offers: its catalog as a table where it has one (Copilot),
    else its model ids (OpenAI-compatible servers); its entry in `registry` says which."""
    provider = spec.partition(":")[0].lower()
    if ":" not in spec and provider in registry:
        spec = f"{provider}:models"  # a provider alone: any model name will do for listing
    model = resolve_model(spec, registry=registry)
    entry = registry.get(split_spec(spec)[0])
    if entry is not None and entry.catalog is not None:
        infos = run_blocking(_closing(model, entry.catalog(model)))
        _show(copilot_table(infos, getattr(model, "spoken", SPOKEN)))
    elif entry is not None and entry.list_models is not None:
        ids = run_blocking(_closing(model, entry.list_models(model)))
        _show(model_list(entry.name, model.endpoint.base_url if model.endpoint else "", ids))
    else:
        print(
            f"copilot: {getattr(model, 'name', spec)} has no model list to show here; "
            "name a model as provider:model (e.g. anthropic:claude-sonnet-4-5)"
        )


async def _closing(model: Any, work: Awaitable[T]) -> T:
    try:
        return await work
    finally:
        await model.aclose()


async def model_choices(spec: str, model: Any, *, registry: Registry = PROVIDERS) -> list[str]:
    """Model strings a picker can offer for this provider (`copilot:gpt-4o`, ...), best effort."""
    provider = spec.partition(":")[0]
    entry = registry.get(split_spec(spec)[0])
    if entry is None or entry.list_models is None:
        return []
    return [f"{provider}:{model_id}" for model_id in await entry.list_models(model)]


def model_list(provider: str, base_url: str, ids: Sequence[str]) -> dict[str, str]:
    """An OpenAI-compatible server's model ids as a list (HTML escaped: a server names them)."""
    plain = [f"{provider} models at {base_url}:", *(f"  {i}" for i in ids)]
    markup = (
        f"<p><strong>{escape(provider)}</strong> models at <code>{escape(base_url)}</code>:</p><ul>"
        + "".join(f"<li><code>{escape(f'{provider}:{i}')}</code></li>" for i in ids)
        + "</ul>"
    )
    return {"text/plain": "\n".join(plain), "text/html": markup}


def copilot_table(
    infos: Sequence[CopilotModelInfo], spoken: Sequence[str] = SPOKEN
) -> dict[str, str]:
    """Copilot's chat models as a table (and plain text): window, output, tools, the endpoint
    copilot_nb asks each through, and what one request costs in premium requests."""
    chat = sorted((m for m in infos if m.kind == "chat"), key=lambda m: not m.picker_enabled)
    rows = [
        (
            m.id,
            m.name,
            m.vendor,
            _tokens(m.context_window),
            _tokens(m.max_output_tokens),
            "✓" if m.tool_calls else "—",
            endpoint_label(m, spoken),
            _premium(m.premium_multiplier),
            ", ".join(_notes(m)),
        )
        for m in chat
    ]
    header = (
        "model",
        "name",
        "vendor",
        "context",
        "max output",
        "tools",
        "endpoint",
        "premium",
        "notes",
    )
    title = f"GitHub Copilot: {len(rows)} chat models; use one as copilot:<model>"
    markup = f"<p>{escape(title)}</p>" + table_html(header, rows, align="lllrrclrl")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    plain = [title] + [
        "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        for r in [header, *rows]
    ]
    return {"text/plain": "\n".join(plain), "text/html": markup}


def _premium(multiplier: float | None) -> str:
    """`1x`, `0.33x`; `0x` means included in the plan; `?` when the list does not say."""
    return "?" if multiplier is None else f"{multiplier:g}x"


def _notes(model: CopilotModelInfo) -> list[str]:
    notes = []
    if model.preview:
        notes.append("preview")
    if not model.enabled:
        notes.append("disabled: enable it in your GitHub Copilot settings")
    if not model.picker_enabled:
        notes.append("not in the editors' picker")
    return notes


def _tokens(count: int | None) -> str:
    if not count:
        return "?"
    return f"{count / 1000:.0f}k" if count >= 1000 else str(count)


def _show(bundle: dict[str, str]) -> None:
    """A rich display in IPython (a link, a table), plain text anywhere else."""
    from IPython import get_ipython
    from IPython.display import display

    if get_ipython() is None:
        print(bundle["text/plain"])
    else:
        display(bundle, raw=True)
