"""Keys saved in the model form: owner-only outside the notebook, the environment first, and read
at each request, so a key saved after a model was built is in its next request."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from copilot_nb.errors import ConfigError
from copilot_nb.models.anthropic.chat import AnthropicChat
from copilot_nb.models.key_store import (
    forget_key,
    key_status,
    keys_path,
    save_key,
    saved_key,
)
from copilot_nb.models.openai.chat import OpenAIChat
from copilot_nb.models.recording_scrub import Scrubber
from copilot_nb.testing import fail, reply

KEY = "sk-saved-in-the-form-0123456789abcdef"
HELLO = [{"role": "user", "content": "hi"}]

posix_only = pytest.mark.skipif(os.name == "nt", reason="owners and mode bits are POSIX's")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """copilot_nb's config folder, not made yet (as on a new machine)."""
    folder = tmp_path / "config" / "copilot_nb"
    monkeypatch.setenv("COPILOT_NB_CONFIG_DIR", str(folder))
    return folder


def checks_the_key(expected: str) -> Any:
    """A loopback provider that answers only a request carrying `expected` as its bearer key."""

    def respond(request: Any) -> Any:
        if request.headers.get("Authorization") != f"Bearer {expected}":
            return fail(401, "Incorrect API key provided.")
        return reply("hello")

    return respond


@posix_only
def test_a_saved_key_is_an_owner_only_file_in_an_owner_only_folder(config: Path):
    old_umask = os.umask(0o000)  # the most permissive umask: the modes must not follow it
    try:
        where = save_key("OPENAI_API_KEY", KEY, keyring=False)
    finally:
        os.umask(old_umask)
    path = keys_path()
    assert path == config / "keys.json"
    assert (mode(path), mode(config), mode(config.parent)) == (0o600, 0o700, 0o700)
    assert "keys.json" in where and KEY not in where
    assert saved_key("OPENAI_API_KEY") == KEY
    assert [p.name for p in config.iterdir()] == ["keys.json"], "no temporary file is left"


def test_saving_replaces_the_file_whole_and_keeps_the_other_keys(config: Path):
    save_key("OPENAI_API_KEY", "sk-first-key-000000", keyring=False)
    save_key("ANTHROPIC_API_KEY", "sk-ant-other-000000", keyring=False)
    inode = keys_path().stat().st_ino
    save_key("OPENAI_API_KEY", "sk-second-key-00000", keyring=False)
    assert keys_path().stat().st_ino != inode, "a new file renamed over the old one"
    assert saved_key("OPENAI_API_KEY") == "sk-second-key-00000"
    assert saved_key("ANTHROPIC_API_KEY") == "sk-ant-other-000000"
    assert forget_key("OPENAI_API_KEY", keyring=False)
    assert saved_key("OPENAI_API_KEY") is None
    assert not forget_key("OPENAI_API_KEY", keyring=False), "nothing left to forget"
    assert saved_key("ANTHROPIC_API_KEY") == "sk-ant-other-000000"


def test_a_reader_never_sees_a_half_written_file(config: Path):
    """Readers during many saves see one whole file or the other, never a torn one."""
    save_key("OPENAI_API_KEY", "sk-a" + "a" * 2000, keyring=False)
    seen: set[str | None] = set()
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            seen.add(saved_key("OPENAI_API_KEY"))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for turn in range(60):
            save_key("OPENAI_API_KEY", "sk-" + "ab"[turn % 2] * 2001, keyring=False)
    finally:
        stop.set()
        reader.join()
    assert seen <= {"sk-" + "a" * 2001, "sk-" + "b" * 2001}


@posix_only
@pytest.mark.parametrize("shared", [0o620, 0o602, 0o640, 0o604], ids=oct)
def test_a_keys_file_others_can_read_or_write_is_not_used(config: Path, shared: int):
    save_key("OPENAI_API_KEY", KEY, keyring=False)
    keys_path().chmod(shared)
    assert saved_key("OPENAI_API_KEY") is None
    status = key_status("OPENAI_API_KEY")
    assert not status.saved
    assert f"mode {shared:04o}" in status.problem and "chmod 600" in status.problem
    assert KEY not in status.problem
    save_key("OPENAI_API_KEY", "sk-again-0000000000", keyring=False)  # the way out it names
    assert mode(keys_path()) == 0o600
    assert saved_key("OPENAI_API_KEY") == "sk-again-0000000000"


@posix_only
def test_a_symlink_or_a_hard_link_in_place_of_the_keys_file_is_not_used(config: Path, tmp_path):
    elsewhere = tmp_path / "planted.json"
    elsewhere.write_text('{"version": 1, "keys": {"OPENAI_API_KEY": {"value": "sk-planted-0000"}}}')
    elsewhere.chmod(0o600)
    config.mkdir(parents=True)
    keys_path().symlink_to(elsewhere)
    assert saved_key("OPENAI_API_KEY") is None
    assert "symbolic link" in key_status("OPENAI_API_KEY").problem
    keys_path().unlink()
    os.link(elsewhere, keys_path())
    assert saved_key("OPENAI_API_KEY") is None
    assert "hard links" in key_status("OPENAI_API_KEY").problem


def test_a_broken_keys_file_is_no_key_and_the_form_says_why(config: Path):
    config.mkdir(parents=True)
    keys_path().write_text("not json")
    keys_path().chmod(0o600)
    assert saved_key("OPENAI_API_KEY") is None
    assert "not the JSON copilot_nb writes" in key_status("OPENAI_API_KEY").problem


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("OPENAI_API_KEY", "   ", "No key given for OPENAI_API_KEY"),
        ("OPENAI_API_KEY", "sk-two words", "not one line of printable characters"),
        ("OPENAI_API_KEY", "sk-line\nbreak", "not one line of printable characters"),
        ("OPENAI_API_KEY", "sk-" + "x" * 5000, "at most 4096"),
        ("openai key", "sk-fine", "not the name of a key variable"),
    ],
)
def test_a_key_that_cannot_be_a_header_is_refused_without_repeating_it(config, name, value, says):
    with pytest.raises(ConfigError, match=says) as refused:
        save_key(name, value, keyring=False)
    assert value.strip() not in str(refused.value) or not value.strip()
    assert not keys_path().exists()


def test_the_environment_wins_over_a_saved_key_and_the_status_says_both(config, monkeypatch):
    save_key("OPENAI_API_KEY", KEY, keyring=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    model = OpenAIChat("m", base_url="http://127.0.0.1:9/v1")
    assert model.api_key == "sk-from-the-environment"
    status = key_status("OPENAI_API_KEY")
    assert status.saved and status.in_environment
    monkeypatch.delenv("OPENAI_API_KEY")
    assert model.api_key == KEY
    assert OpenAIChat("m", api_key="given-in-code").api_key == "given-in-code", "code first"


def test_a_base_url_is_never_read_from_the_key_store(config, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    save_key("OPENAI_BASE_URL", "http://planted.test/v1", keyring=False)
    assert OpenAIChat("m").base_url == "https://api.openai.com/v1"


async def test_a_key_saved_after_the_model_was_built_is_in_its_next_request(config, serve):
    server = serve(responder=checks_the_key(KEY))
    model = OpenAIChat("scripted", base_url=server.url)  # no key anywhere yet
    with pytest.raises(Exception, match="Incorrect API key"):
        await model.complete(HELLO)
    save_key("OPENAI_API_KEY", KEY, keyring=False)
    assert (await model.complete(HELLO)).text == "hello"
    assert server.requests[-1].headers["Authorization"] == f"Bearer {KEY}"
    forget_key("OPENAI_API_KEY", keyring=False)
    with pytest.raises(Exception, match="Incorrect API key"):
        await model.complete(HELLO)


def test_each_wire_reads_its_own_saved_variable(config):
    save_key("ANTHROPIC_API_KEY", "sk-ant-saved-0000000", keyring=False)
    assert AnthropicChat("m").api_key == "sk-ant-saved-0000000"
    assert OpenAIChat("m").api_key is None


def test_a_saved_key_is_redacted_from_every_recording_made_after(config):
    key = "sk-proj-ends-in-equals-0000=="
    save_key("OPENAI_API_KEY", key, keyring=False)
    scrubbed = Scrubber.here().text(f"the key is {key}, said the model")
    assert key not in scrubbed and "[redacted]" in scrubbed
