"""Keys in the system keyring, where the optional `keyring` package finds a real one: the file
holds only a note, the key is read per save (not per request), and a backend that is no system
keyring (the fail backend, a plaintext file) is never used."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from copilot_nb.models.key_store import forget_key, key_status, keys_path, save_key, saved_key
from copilot_nb.models.openai.chat import OpenAIChat
from copilot_nb.models.system_keyring import SERVICE, is_real, system_keyring

keyring = pytest.importorskip("keyring")
from keyring.backend import KeyringBackend  # noqa: E402
from keyring.backends import fail  # noqa: E402

KEY = "sk-in-the-keychain-0123456789"


class LockedBox(KeyringBackend):
    """A system keyring as `keyring` sees one: a backend with a positive priority, its secrets in
    memory; it counts reads, as an unlock prompt would be counted."""

    priority = 5  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.secrets: dict[tuple[str, str], str] = {}
        self.reads = 0

    def set_password(self, service: str, username: str, password: str) -> None:
        self.secrets[service, username] = password

    def get_password(self, service: str, username: str) -> str | None:
        self.reads += 1
        return self.secrets.get((service, username))

    def delete_password(self, service: str, username: str) -> None:
        from keyring.errors import PasswordDeleteError

        if self.secrets.pop((service, username), None) is None:
            raise PasswordDeleteError(username)


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LockedBox]:
    monkeypatch.setenv("COPILOT_NB_CONFIG_DIR", str(tmp_path / "copilot_nb"))
    before = keyring.get_keyring()
    chosen = LockedBox()
    keyring.set_keyring(chosen)
    yield chosen
    keyring.set_keyring(before)


def test_a_key_goes_to_the_system_keyring_and_the_file_holds_only_a_note(box: LockedBox):
    where = save_key("OPENAI_API_KEY", KEY)
    assert where.startswith("the system keyring")
    assert box.secrets == {(SERVICE, "OPENAI_API_KEY"): KEY}
    assert KEY not in keys_path().read_text()
    assert OpenAIChat("m").api_key == KEY
    status = key_status("OPENAI_API_KEY")
    assert status.saved and status.where == where


def test_the_keyring_is_asked_once_per_save_not_once_per_request(box: LockedBox):
    save_key("OPENAI_API_KEY", KEY)
    model = OpenAIChat("m")
    reads = box.reads
    for _ in range(20):
        assert model.api_key == KEY
    assert box.reads - reads <= 1
    save_key("OPENAI_API_KEY", "sk-renewed-in-the-keychain")
    assert model.api_key == "sk-renewed-in-the-keychain"


def test_forgetting_takes_the_key_out_of_the_keyring_too(box: LockedBox):
    save_key("OPENAI_API_KEY", KEY)
    assert forget_key("OPENAI_API_KEY")
    assert box.secrets == {}
    assert saved_key("OPENAI_API_KEY") is None
    assert not key_status("OPENAI_API_KEY").saved


def test_a_key_in_a_keyring_that_went_away_is_no_key_and_the_form_says_so(box: LockedBox):
    save_key("OPENAI_API_KEY", KEY)
    box.secrets.clear()  # deleted in the keychain's own app
    keyring.set_keyring(fail.Keyring())
    status = key_status("OPENAI_API_KEY")
    assert not status.saved and "save it again" in status.problem


@pytest.mark.parametrize(
    ("backend", "real"),
    [(lambda: fail.Keyring(), False), (lambda: LockedBox(), True)],
    ids=["fail", "a system keyring"],
)
def test_only_a_real_backend_is_a_system_keyring(backend: Any, real: bool):
    assert is_real(backend()) is real


def test_without_a_real_backend_keys_stay_in_the_owner_only_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COPILOT_NB_CONFIG_DIR", str(tmp_path / "copilot_nb"))
    before = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        assert system_keyring() is None
        assert "keys.json" in save_key("OPENAI_API_KEY", KEY)
        assert saved_key("OPENAI_API_KEY") == KEY
    finally:
        keyring.set_keyring(before)
