"""Saved conversations from elsewhere: a transcript that is a link (or another user's, or shared)
receives nothing and a private one is started; a crafted file is reported in one line and never
breaks `%load_ext`, a listing, a resume, the panel or an export; an export stays inert in any
Markdown viewer, raw HTML and every link scheme allowed."""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from copilot_nb.agent.conversations.format import SUFFIX, encode, header, record
from copilot_nb.agent.conversations.keeper import Keeper
from copilot_nb.agent.conversations.records import parse_record
from copilot_nb.agent.conversations.resume import history
from copilot_nb.agent.conversations.store import ConversationFile
from copilot_nb.agent.conversations.transcript import markdown
from copilot_nb.agent.conversations.usage import rows
from copilot_nb.agent.session import CopilotSession
from copilot_nb.events import Notice
from copilot_nb.jupyter.panel.saved import saved_ops
from copilot_nb.testing import reply
from copilot_nb.workspace.own_files import NotOwnFile
from tests.helpers import Answering
from tests.html_safety import payloads, violations
from tests.kernel_session import KernelSession, scripted_env

NOTEBOOK = "analysis.ipynb"
SAVED = "analysis" + SUFFIX
AT = "2025-03-01T09:12:00+00:00"


def session_in(folder: Path, server: Any) -> CopilotSession:
    session = CopilotSession(SimpleNamespace(user_ns={"__session__": str(folder / NOTEBOOK)}))
    session.model_spec = "openai:scripted"
    os.environ["OPENAI_BASE_URL"] = server.url
    return session


async def run(session: CopilotSession, prompt: str) -> list:
    return [e async for e in session.turn(prompt, approver=Answering())]


def private_files() -> list[Path]:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "copilot_nb" / "conversations"
    return sorted(folder.glob("*" + SUFFIX)) if folder.is_dir() else []


def write_saved(path: Path, lines: Iterable[bytes]) -> Path:
    """A conversation file as copilot_nb makes it (0600), holding these lines after the header."""
    path.write_bytes(encode(header()) + b"".join(lines))
    path.chmod(0o600)
    return path


# --- case 2: a transcript the user did not create -------------------------------------------


@pytest.mark.parametrize("dangling", [False, True], ids=["link", "dangling-link"])
async def test_a_linked_transcript_receives_nothing_and_a_private_one_is_started(
    serve, tmp_path, monkeypatch, dangling
):
    monkeypatch.chdir(tmp_path)
    elsewhere = tmp_path / "elsewhere" / "victim.txt"
    elsewhere.parent.mkdir()
    if not dangling:
        elsewhere.write_text("the user's own file\n")
    (tmp_path / SAVED).symlink_to(elsewhere)
    server = serve([reply("One."), reply("Two.")])
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    first = session_in(tmp_path, server)
    notices = [e.text for e in await run(first, "first question") if isinstance(e, Notice)]
    assert len(notices) == 1 and f"{SAVED} is a symbolic link" in notices[0], notices
    if dangling:
        assert list(elsewhere.parent.iterdir()) == []  # nothing made where the link points
    else:
        assert elsewhere.read_text() == "the user's own file\n"
    assert os.readlink(tmp_path / SAVED) == str(elsewhere)  # the link itself is left alone
    (private,) = private_files()
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert "first question" in private.read_text()
    # the next kernel resumes from the private file, and says why once more
    second = session_in(tmp_path, server)
    resumed = second.saved.resume(second.current_model_spec())
    assert resumed is not None and resumed.turns == 1
    assert "symbolic link" in second.saved.refusal()
    await run(second, "second question")
    assert private_files() == [private] and "second question" in private.read_text()


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda p: p.chmod(0o644), "can be read or written by other users (mode 0644)"),
        (lambda p: p.chmod(0o620), "can be read or written by other users (mode 0620)"),
        (lambda p: os.chown(p, 65534, 65534), "belongs to another user (uid 65534)"),
        (lambda p: os.link(p, p.with_name("copy")), "has 2 names (hard links)"),
    ],
    ids=["world-readable", "group-writable", "other-owner", "hard-link"],
)
async def test_a_transcript_the_user_did_not_create_is_neither_resumed_nor_appended_to(
    serve, tmp_path, monkeypatch, make, said
):
    if "uid" in said and os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    monkeypatch.chdir(tmp_path)
    planted = [
        record("start", "c0ffee00", at=AT),
        record("message", "c0ffee00", turn="t", message={"role": "user", "content": "INJECTED"}),
        record("turn", "c0ffee00", turn="t", at=AT),
    ]
    path = write_saved(tmp_path / SAVED, (encode(r) for r in planted))
    make(path)
    before = path.read_bytes()
    server = serve([reply("Fresh.")])
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    session = session_in(tmp_path, server)
    assert session.saved.resume(session.current_model_spec()) is None  # not read
    told = session.saved.refusal()
    assert said in told and "neither read nor written" in told and "saved to" in told
    await run(session, "a new question")
    assert path.read_bytes() == before  # not appended to
    sent = server.requests[-1].messages
    assert not any("INJECTED" in str(m.get("content")) for m in sent)
    (private,) = private_files()
    assert "a new question" in private.read_text()


def test_the_file_is_opened_without_following_a_link_even_after_the_choice(tmp_path):
    """The check at open time, not only at the choice: a link swapped in later gets nothing."""
    target = tmp_path / "target.txt"
    target.write_text("x\n")
    link = tmp_path / SAVED
    file = ConversationFile(link)  # chosen while nothing was there
    link.symlink_to(target)
    with pytest.raises(NotOwnFile, match="is a symbolic link"):
        file.append([record("start", "c1", at=AT)])
    with pytest.raises(NotOwnFile):
        list(file.records("c1"))
    assert target.read_text() == "x\n"


def test_a_fifo_under_the_name_is_refused_without_hanging(tmp_path):
    os.mkfifo(tmp_path / SAVED, 0o600)
    keeper = Keeper({"__session__": str(tmp_path / NOTEBOOK)}, enabled=True)
    assert keeper.resume("openai:scripted") is None
    assert "is not a regular file" in keeper.refusal()


def test_a_new_transcript_is_created_owner_only_whatever_the_umask(tmp_path):
    old = os.umask(0)
    try:
        ConversationFile(tmp_path / SAVED).append([record("start", "c1", at=AT)])
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / SAVED).stat().st_mode) == 0o600


# --- case 9: crafted lines --------------------------------------------------------------------

_CALL = {"id": "c", "name": "read_file", "arguments": '{"path": "a.py"}'}
_USAGE = {"input_tokens": 3, "output_tokens": 4, "raw": {}}
TEMPLATES: dict[str, dict[str, Any]] = {
    "start": record("start", "c1", at=AT, notebook=NOTEBOOK),
    "resume": record("resume", "c1", at=AT),
    "user": record("message", "c1", turn="t1", message={"role": "user", "content": "hi"}),
    "assistant": record(
        "message",
        "c1",
        turn="t1",
        message={
            "role": "assistant",
            "text": "[ok](https://example.org)",
            "tool_calls": [_CALL],
            "reasoning": "r",
            "reasoning_signature": "s",
            "reasoning_items": [{"type": "reasoning"}],
            "refusal": "",
            "finish_reason": "tool_calls",
            "usage": _USAGE,
        },
    ),
    "tool": record(
        "message",
        "c1",
        turn="t1",
        message={
            "role": "tool",
            "tool_call_id": "c",
            "name": "read_file",
            "content": "x = 1",
            "is_error": False,
            "images_left_out": 1,
        },
    ),
    "shown": record("shown", "c1", turn="t1", event="file", path="a.py", diff="+x\n"),
    "done": record("shown", "c1", turn="t1", event="done", call_id="c", summary="read"),
    "turn": record(
        "turn",
        "c1",
        turn="t1",
        at=AT,
        seconds=1.5,
        request="hi",
        model="scripted",
        provider="openai",
        requests=2,
        tokens={"input": 10, "output": 5, "cached": 0, "reasoning": 0},
        estimated=1,
        premium=1.0,
        tools=["read_file"],
        outcome="done",
        error="",
    ),
}
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=5,
)


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every field of a record, nested ones too (a message's, a call's, the token counts)."""
    found = [path] if path else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _places(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _places(item, (*path, index))
    return found


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replaced(value[path[0]], path[1:], new)  # type: ignore[index]
    return copy


@st.composite
def crafted_line(draw: st.DrawFn) -> bytes:
    """A record of any kind with one field (at any depth) given any JSON value, a line nested
    too deep, or bytes that are not JSON at all."""
    how = draw(st.sampled_from(["field", "field", "field", "deep", "bytes", "valid"]))
    if how == "deep":
        depth = draw(st.integers(65, 100_000))
        return b"[" * depth + b"]" * depth + b"\n"
    if how == "bytes":
        return draw(st.binary(max_size=40)).replace(b"\n", b"") + b"\n"
    template = TEMPLATES[draw(st.sampled_from(sorted(TEMPLATES)))]
    if how == "valid":
        return encode(template)
    path = draw(st.sampled_from(_places(template)))
    return (json.dumps(_replaced(template, path, draw(JSON))) + "\n").encode()


def every_reader(folder: Path) -> list[str]:
    """What each reader of a saved conversation makes of the file; raises if one breaks."""
    file = ConversationFile(folder / SAVED)
    said: list[str] = []
    for found in file.summaries():
        said.append(f"{found.conversation} {found.turns} {found.usage.text()}")
    loaded = file.load("c1", budget=10**6)
    history(loaded.messages, root=str(folder))
    said += file.problems
    keeper = Keeper({"__session__": str(folder / NOTEBOOK)}, enabled=True)
    resumed = keeper.resume("openai:scripted")
    if resumed is not None:
        said += resumed.describe().split("\n")
    ops, turns = saved_ops(file.records("c1"))
    json.dumps(ops)  # what the panel sends its view
    rows(turns, by="day", prices={"scripted": {"input": 1.0}})
    said.append(markdown(file.records("c1"), title="t"))
    return said


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(lines=st.lists(crafted_line(), min_size=1, max_size=6))
def test_every_reader_survives_crafted_lines_and_reports_them_in_one_line(tmp_path, lines):
    write_saved(tmp_path / SAVED, lines)
    every_reader(tmp_path)
    file = ConversationFile(tmp_path / SAVED)
    list(file.records("c1"))
    assert len(file.problems) <= 1
    assert all("\n" not in p and len(p) < 1000 for p in file.problems)


@given(line=crafted_line())
@settings(max_examples=300, deadline=None)
def test_a_line_the_reader_accepts_has_the_types_the_writer_gives(line):
    record_, why = parse_record(line)
    assert (record_ is None) == bool(why)
    if record_ is None:
        return
    for number in _numbers(record_.get("tokens") or {}):
        assert isinstance(number, int) and not isinstance(number, bool)
    if record_.get("kind") == "turn" and "seconds" in record_:
        assert math.isfinite(record_["seconds"])
    message = record_.get("message") or {}
    assert all(isinstance(call, dict) for call in message.get("tool_calls") or ())


def _numbers(tokens: Mapping[str, Any]) -> list[Any]:
    return list(tokens.values())


THE_ISSUES_LINES = {
    "nested 100,000 deep": b'{"kind":"message","conversation":"c1","message":'
    + b"[" * 100_000
    + b"]" * 100_000
    + b"}\n",
    "tool_calls as text": encode(
        _replaced(TEMPLATES["assistant"], ("message", "tool_calls"), "not a list")
    ),
    "a token count that is text": encode(_replaced(TEMPLATES["turn"], ("tokens", "input"), "many")),
}


@pytest.mark.parametrize("name", sorted(THE_ISSUES_LINES))
def test_the_issues_crafted_lines_are_skipped_and_named(tmp_path, name):
    good = [encode(TEMPLATES[k]) for k in ("start", "user", "turn")]
    write_saved(tmp_path / SAVED, [*good, THE_ISSUES_LINES[name], *good])
    said = every_reader(tmp_path)
    (problem,) = {line.removeprefix("copilot: ") for line in said if "skipped" in line}
    assert "1 line skipped (line 5 " in problem
    expected = {
        "nested 100,000 deep": "nests deeper than 64 levels",
        "tool_calls as text": "tool_calls is text, not a list of calls",
        "a token count that is text": "tokens is an object, not an object of token counts",
    }[name]
    assert expected in problem
    assert "c1 2 ~20 in · ~10 out" in said  # the two good turns still count, as estimated


@pytest.mark.kernel
def test_load_ext_succeeds_on_every_crafted_file_and_says_so_in_one_line(serve, tmp_path):
    """Run All after a clone: the `%load_ext` cell of a notebook whose saved conversation holds
    every crafted line above (and a header nested too deep, in a second notebook)."""
    server = serve([reply("Fine."), reply("Fine.")])
    lines = [encode(TEMPLATES[k]) for k in ("start", "user", "turn")]
    lines += THE_ISSUES_LINES.values()
    for template in TEMPLATES.values():  # every field of every kind given the wrong type
        for path in _places(template):
            lines.append(encode(_replaced(template, path, {"wrong": [1]})))
    write_saved(tmp_path / SAVED, lines)
    (tmp_path / ("deep" + SUFFIX)).write_bytes(b"[" * 100_000 + b"\n")
    (tmp_path / ("deep" + SUFFIX)).chmod(0o600)
    for notebook, said in ((NOTEBOOK, "lines skipped"), ("deep.ipynb", "is not a saved")):
        kernel = KernelSession(tmp_path, scripted_env(server, JPY_SESSION_NAME=notebook))
        try:
            loaded = kernel.execute("%load_ext copilot_nb")
            assert loaded.status == "ok", loaded.reply
            reported = [line for line in loaded.stdout.splitlines() if said in line]
            assert len(reported) == 1, loaded.stdout
            if notebook == NOTEBOOK:
                assert kernel.execute("%copilot conversations").status == "ok"
            assert kernel.execute("%%copilot\ngo on").status == "ok"
        finally:
            kernel.close()


# --- case 10: the export ----------------------------------------------------------------------


def _lax_renderer() -> Any:
    """A Markdown viewer at its most trusting: raw HTML rendered, every link target kept."""
    from markdown_it import MarkdownIt

    renderer = MarkdownIt("commonmark", {"html": True})
    renderer.validateLink = lambda url: True  # type: ignore[method-assign]
    return renderer


LINKS = [
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click]( \n javascript:alert(1))",
    "[click](java\tscript:alert(1))",
    "[click](javascript\\:alert(1))",
    "[click](vbscript:msgbox(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[click][r]\n\n[r]: javascript:alert(1)",
    "[r]\n\n[r]:\n  javascript:alert(1)",
    "[a\\\\](javascript:alert(1))",
    "[[nested](javascript:alert(1))](javascript:alert(2))",
    "[click](&#106;avascript:alert(1))",
]


@pytest.mark.parametrize("field", ["at", "seconds", "model", "provider", "error", "tokens"])
def test_every_field_of_a_turn_record_is_exported_inert(field):
    renderer = _lax_renderer()
    for item in payloads():
        text = item["payload"]
        turn = dict(TEMPLATES["turn"])
        turn[field] = {"input": text, "output": text} if field == "tokens" else text
        start = record("start", "c1", at=text)
        html = renderer.render(markdown([start, turn], title=text))
        assert violations(html) == [], (item["id"], html)


@pytest.mark.parametrize("link", LINKS)
def test_an_export_keeps_no_link_but_http_https_mailto_and_relative(link):
    renderer = _lax_renderer()
    records = [
        record("message", "c1", turn="t", message={"role": "user", "content": link}),
        record("message", "c1", turn="t", message={"role": "assistant", "text": link}),
        record("turn", "c1", turn="t", at=AT, model=link, error=link),
    ]
    html = renderer.render(markdown(records, title=link))
    assert violations(html) == [], html


def test_an_export_keeps_safe_links_as_links():
    text = "[docs](https://example.org/a?b=1) [mail](mailto:a@b.org) [rel](notes/a.md)"
    html = _lax_renderer().render(
        markdown([record("message", "c1", message={"role": "assistant", "text": text})], title="t")
    )
    for target in ("https://example.org/a?b=1", "mailto:a@b.org", "notes/a.md"):
        assert f'href="{target}"' in html


def test_the_xss_corpus_in_every_message_field_exports_inert():
    renderer = _lax_renderer()
    for item in payloads():
        text = item["payload"]
        records = [
            record("message", "c", turn="t", message={"role": "user", "content": text}),
            record(
                "message",
                "c",
                turn="t",
                message={
                    "role": "assistant",
                    "text": text,
                    "tool_calls": [{"id": "1", "name": text, "arguments": text}],
                },
            ),
            record(
                "message", "c", turn="t", message={"role": "tool", "name": text, "content": text}
            ),
        ]
        html = renderer.render(markdown(records, title=text))
        assert violations(html) == [], (item["id"], html)


@pytest.mark.kernel
def test_export_in_a_kernel_writes_no_live_link(serve, kernel_for, tmp_path):
    server = serve([reply("See [this](javascript:alert(document.cookie)) and [ok](https://a.org)")])
    kernel = kernel_for(server, JPY_SESSION_NAME=str(tmp_path / NOTEBOOK))
    assert kernel.execute("%%copilot\nlinks please").status == "ok"
    assert kernel.execute("%copilot export --markdown out.md").status == "ok"
    html = _lax_renderer().render((tmp_path / "out.md").read_text())
    assert violations(html) == [] and 'href="https://a.org"' in html
