"""`%copilot conversations`, `resume ID`, `export [--markdown PATH] [ID]` and `usage`: the
notebook's saved conversations, browsed and managed; and the resume `%load_ext` does.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError

from ...agent.conversations.format import SUFFIX
from ...agent.conversations.store import ConversationFile, Summary
from ...agent.conversations.transcript import markdown
from ...agent.conversations.usage import UsageRow, amount, rows
from ...agent.session import CopilotSession
from ...errors import ConfigError
from ...text import counted
from ..safe_html import Rendered, escape, table_html


def resume_on_load(session: CopilotSession, settings: Any) -> None:
    """At `%load_ext`: take up the notebook's newest conversation and say so in one line, or
    why its file is not used (not when `CopilotMagics.resume` is off, a cassette decides every
    cell, or a conversation is already under way in this kernel). Never raises: a file that
    cannot be read must not stop Run All at the `%load_ext` cell."""
    if not bool(getattr(settings, "resume", True)) or bool(getattr(settings, "cassette", "")):
        return
    if session.agent is not None or session.saved.resumed is not None:
        return
    resumed, problem = None, ""
    try:
        resumed = session.saved.resume(session.current_model_spec())
    except (ConfigError, OSError) as exc:  # an unreadable file: said in one line
        problem = "copilot: " + " ".join(str(exc).splitlines())
    for said in (session.saved.refusal(), problem, resumed.describe() if resumed else ""):
        if said:
            print(said)


def conversations(session: CopilotSession, args: argparse.Namespace, settings: Any) -> None:
    file = _file(session)
    found = _summaries(file)
    if not found:
        print(f"copilot: no saved conversation in {file.path.name} yet")
        return
    current = _current(session)
    table = [
        (
            ("▸ " if s.conversation == current else "") + s.conversation,
            s.started[:16].replace("T", " "),
            s.last[:16].replace("T", " "),
            s.turns,
            s.usage.text(),
            s.first_request[:80],
        )
        for s in found
    ]
    header = ("id", "started (UTC)", "last turn", "turns", "tokens", "first request")
    text = "\n".join("  ".join(str(c) for c in row) for row in table)
    from IPython.display import display

    note = (
        f"{file.path.name}: %copilot resume ID takes one up again, %copilot reset starts a new one"
    )
    display(
        Rendered(
            html=table_html(header, table, align="lllrrl") + f"<p>{_esc(note)}</p>",
            text=text + "\n" + note,
        )
    )


def resume_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "id", metavar="ID", help="a saved conversation, or the start of its id (see conversations)"
    )


def resume(session: CopilotSession, args: argparse.Namespace, settings: Any) -> None:
    if session.busy:
        raise UsageError("%copilot resume: a request is running; wait for it, or stop it, first")
    chosen = _match(_summaries(_file(session)), args.id)
    session.reset()
    try:
        resumed = session.saved.resume(session.current_model_spec(), chosen.conversation)
    except ConfigError as exc:
        raise UsageError(f"%copilot resume: {exc}") from None
    print(
        resumed.describe() if resumed else f"copilot: conversation {chosen.conversation} is empty"
    )


def export_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "id", nargs="?", metavar="ID", help="the conversation (default: the current one)"
    )
    parser.add_argument(
        "--markdown",
        metavar="PATH",
        help="the file to write (default: name.copilot-chat-ID.md beside the notebook)",
    )


def export(session: CopilotSession, args: argparse.Namespace, settings: Any) -> None:
    target = Path(args.markdown).expanduser() if args.markdown else None
    file = _file(session)
    found = _summaries(file)
    if not found:
        raise UsageError(f"%copilot export: no saved conversation in {file.path.name} yet")
    chosen = (
        _match(found, args.id)
        if args.id
        else next((s for s in found if s.conversation == _current(session)), found[-1])
    )
    if target is None:
        target = file.path.with_name(
            file.path.name[: -len(SUFFIX)] + f".copilot-chat-{chosen.conversation}.md"
        )
    title = f"{file.path.name[: -len(SUFFIX)]}: conversation {chosen.conversation}"
    text = markdown(file.records(chosen.conversation), title=title)
    target.write_text(text, encoding="utf-8")
    turns = counted(chosen.turns, "turn")
    print(f"copilot: wrote {turns} of conversation {chosen.conversation} to {target}")


def usage(session: CopilotSession, args: argparse.Namespace, settings: Any) -> None:
    from ...policy import budget_lines
    from ..ghost_text import usage_lines

    budgets = budget_lines()
    if budgets:  # what the administrator's budgets leave, before any saved turn
        print("copilot: budgets of the administrator's policy:\n  " + "\n  ".join(budgets))
    completions = usage_lines(session.shell)
    if completions:  # counted apart: they are no turn of the conversation
        print("copilot: completions while typing, this kernel:\n  " + "\n  ".join(completions))
    file = _file(session)
    turns = [
        r for s in _summaries(file) for r in file.records(s.conversation) if r.get("kind") == "turn"
    ]
    if not turns:
        print(f"copilot: no saved turns in {file.path.name} yet")
        return
    prices = dict(getattr(settings, "prices", {}) or {})
    from IPython.display import display

    parts_html, parts_text = [], []
    for by in ("conversation", "day"):
        found = rows(turns, by=by, prices=prices)
        premium = any(row.premium is not None for row in found)  # Copilot's multipliers only
        table = [_row(row, premium=premium) for row in found]
        header = (by, "turns", "tokens in", "cached", "tokens out", "reasoning")
        header += (*(("premium requests",) if premium else ()), "cost")
        parts_html.append(table_html(header, table, align="l" + "r" * (len(header) - 1)))
        lines = [header, *table]  # a console reads the columns' names as the page does
        parts_text += [f"by {by}:", *("  ".join(str(c) for c in row) for row in lines)]
    unpriced = sorted({m for row in rows(turns, by="day", prices=prices) for m in row.unpriced})
    if unpriced:
        note = (
            f"no price set for {', '.join(unpriced) or 'an unnamed model'}: cost unknown; set "
            "CopilotMagics.prices = {'MODEL': {'input': USD, 'output': USD, 'cached': USD, "
            "'cache_write': USD}} (dollars per million tokens; cached and cache_write are "
            "charged as input when left out)"
        )
        parts_html.append(f"<p>{_esc(note)}</p>")
        parts_text.append(note)
    display(Rendered(html="".join(parts_html), text="\n".join(parts_text)))


def _row(row: UsageRow, *, premium: bool = False) -> tuple[Any, ...]:
    """One line of the table; `premium`: the table has the column (some turn was Copilot's)."""
    t = row.usage
    cost = "unknown" if row.cost is None else f"${row.cost:,.4f}"
    about = row.estimated  # a server sent no usage: our estimate, not its count
    premiums = ("" if row.premium is None else f"{row.premium:g}",) if premium else ()
    return (
        row.key,
        row.turns,
        amount(t.input, about),
        f"{t.cached:,}",
        amount(t.output, about),
        f"{int(t.tokens.get('reasoning', 0)):,}",
        *premiums,
        cost,
    )


def _file(session: CopilotSession) -> ConversationFile:
    return session.saved.file()


def _current(session: CopilotSession) -> str:
    recorder = session.saved.recorder
    return recorder.conversation if recorder is not None else ""


def _summaries(file: ConversationFile) -> list[Summary]:
    try:
        return file.summaries()
    except ConfigError as exc:
        raise UsageError(f"%copilot: {exc}") from None


def _match(found: list[Summary], prefix: str) -> Summary:
    matches = [s for s in found if s.conversation.startswith(prefix)]
    if len(matches) != 1:
        listed = ", ".join(s.conversation for s in found[-10:])
        what = "no" if not matches else "more than one"
        raise UsageError(
            f"%copilot: {what} saved conversation starts with {prefix!r}; saved: {listed}"
        )
    return matches[0]


def _esc(text: str) -> str:
    return escape(text)


__all__ = ["conversations", "export", "resume", "resume_on_load", "usage"]
