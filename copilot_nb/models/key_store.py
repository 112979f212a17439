"""API keys the user saved in the chat panel's model form: kept outside the notebook, owner-only,
and read at each request as an environment variable is.

A key typed into a cell (`%env OPENAI_API_KEY=...`) is saved in the notebook with the cell. A
key saved here is filed by the variable it stands for (`OPENAI_API_KEY`) in the system keyring
where there is one (`system_keyring`), else in `<config dir>/keys.json`: written whole to a
0600 file in a 0700 folder, then renamed over the old one. The file is read only when it is
the user's own regular file that no one else can read or write, with one name; any other file
is not used, and `key_status` says why. The environment wins over a saved key: a model reads
its variables first (`env_settings.FromEnv`), and this store only when none is set. A key is
never written anywhere else, never returned to a page, and never in a message: errors name the
variable, not the value. A key in hand is redacted from every recording (`WITHHELD_VALUES`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import config_dir, home_relative, private_dir
from ..errors import ConfigError
from .recording_scrub import WITHHELD_VALUES
from .system_keyring import Keyring, system_keyring

KEYS_FILE = "keys.json"
MAX_KEY = 4096
"""Characters a key may have; a longer paste is a mistake (a whole file, a page)."""
MAX_FILE = 256 * 1024
"""Bytes of keys.json read at most: the file holds a few lines."""
_NAME = re.compile(r"[A-Z][A-Z0-9_]{0,99}")
_KEY = re.compile(r"[\x21-\x7e]+")
"""One line of printable ASCII without spaces: what an HTTP header can carry as it is."""
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
IN_KEYRING = "keyring"
"""An entry's `in` when the value is in the system keyring, not in the file."""


@dataclass(frozen=True, kw_only=True)
class KeyStatus:
    """What the form may say about one variable's key: never any character of it."""

    name: str
    saved: bool
    """A key is saved for it (in the file or the keyring) and can be read."""
    where: str = ""
    """Where it is kept, as the user would look for it: `~/.config/copilot_nb/keys.json`."""
    in_environment: bool = False
    """The variable is set in this process: it wins over the saved key."""
    problem: str = ""
    """Why a saved key is not used (the file is shared, the keyring is gone), or ""."""


def keys_path() -> Path:
    """Where the keys file is: `<config dir>/keys.json`."""
    return config_dir() / KEYS_FILE


def saved_key(*names: str) -> str | None:
    """The key saved for the first of `names` that has one, or None; never raises (a broken
    store is no key, and `key_status` tells the form why). Read at each request."""
    try:
        entries = _read(keys_path())
        for name in names:
            value = _value(name, entries.get(name))
            if value:
                _withhold(name, value)
                return value
    except Exception:  # the seam of every request: a problem of the store must not fail them
        return None
    return None


def save_key(name: str, value: str, *, keyring: Keyring | bool = True) -> str:
    """Keep `value` as the key of `name`; where it went, for the form to say. `keyring`: True
    for the system keyring where there is one, False for the file, or the keyring to use."""
    _check_name(name)
    value = value.strip()
    if not value:
        raise ConfigError(f"No key given for {name}: paste the key, then Save.")
    if len(value) > MAX_KEY or not _KEY.fullmatch(value):
        raise ConfigError(
            f"The key given for {name} is not one line of printable characters without spaces "
            f"(at most {MAX_KEY}): copy it again from the provider's page."
        )
    chosen = _chosen(keyring)
    path = keys_path()
    entries = _read_for_update(path)
    from datetime import datetime, timezone

    entry: dict[str, Any] = {"saved_at": datetime.now(timezone.utc).isoformat()}
    if chosen is not None:
        chosen.set(name, value)
        entry["in"] = IN_KEYRING
        where = chosen.name
    else:
        entry["value"] = value
        where = f"{home_relative(path)} (only you can read it)"
    entries[name] = entry
    _write(path, entries)
    _withhold(name, value)
    return where


def forget_key(name: str, *, keyring: Keyring | bool = True) -> bool:
    """Forget the key saved for `name` (in the file and the keyring); whether one was saved."""
    _check_name(name)
    path = keys_path()
    entries = _read_for_update(path)
    entry = entries.pop(name, None)
    if isinstance(entry, dict) and entry.get("in") == IN_KEYRING:
        chosen = _chosen(keyring)
        if chosen is not None:
            chosen.delete(name)
    if entry is not None:
        _write(path, entries)
    return entry is not None


def key_status(name: str) -> KeyStatus:
    """Whether a key is saved for `name`, where, whether the environment sets it (and wins),
    and why a saved one is not used."""
    in_environment = bool(os.environ.get(name))
    path = keys_path()
    try:
        entry = _read(path).get(name)
    except _Refused as refused:
        return KeyStatus(
            name=name, saved=False, in_environment=in_environment, problem=str(refused)
        )
    if not isinstance(entry, dict):
        return KeyStatus(name=name, saved=False, in_environment=in_environment)
    if entry.get("in") == IN_KEYRING:
        keyring = system_keyring()
        if keyring is None or not _value(name, entry):
            why = "is no longer there" if keyring is not None else "cannot be reached from here"
            return KeyStatus(
                name=name,
                saved=False,
                in_environment=in_environment,
                problem=f"The key for {name} was saved in the system keyring, which {why}: "
                "save it again.",
            )
        return KeyStatus(name=name, saved=True, where=keyring.name, in_environment=in_environment)
    saved = bool(_value(name, entry))
    where = f"{home_relative(path)} (only you can read it)" if saved else ""
    return KeyStatus(name=name, saved=saved, where=where, in_environment=in_environment)


# --- the file ------------------------------------------------------------------------------


class _Refused(Exception):
    """The keys file is not one this user made: its keys are not used."""


_cache: tuple[tuple[int, ...], dict[str, Any]] | None = None
"""The last file read, by its identity and change time: a request reads it again only after
it changed (a stat, not a parse)."""


def _read(path: Path) -> dict[str, Any]:
    """The entries of the keys file (empty when it is missing); _Refused when it is not the
    user's own owner-only regular file."""
    global _cache
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        if os.path.islink(path):
            raise _Refused(_refusal(path, "is a symbolic link")) from None
        raise _Refused(_refusal(path, f"cannot be read ({exc.strerror})")) from None
    try:
        found = os.fstat(fd)
        why = _not_private(found)
        if why:
            raise _Refused(_refusal(path, why))
        stamp = (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)
        if _cache is not None and _cache[0] == stamp:
            return _cache[1]
        with os.fdopen(os.dup(fd), "rb") as file:
            data = file.read(MAX_FILE + 1)
    finally:
        os.close(fd)
    entries = _parse(data, path)
    _cache = (stamp, entries)
    return entries


def _parse(data: bytes, path: Path) -> dict[str, Any]:
    if len(data) > MAX_FILE:
        raise _Refused(_refusal(path, f"is larger than {MAX_FILE // 1024} KB"))
    try:
        parsed = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise _Refused(_refusal(path, "is not the JSON copilot_nb writes")) from None
    keys = parsed.get("keys") if isinstance(parsed, dict) else None
    if not isinstance(keys, dict):
        raise _Refused(_refusal(path, "is not the JSON copilot_nb writes"))
    return dict(keys)


def _read_for_update(path: Path) -> dict[str, Any]:
    """The entries to keep when the file is written again: none from a file that is not the
    user's own (others could have written it), which the new file replaces."""
    try:
        return dict(_read(path))
    except _Refused:
        return {}


def _not_private(found: os.stat_result) -> str:
    if not stat.S_ISREG(found.st_mode):
        return "is not a regular file"
    if os.name == "nt":  # no owners or mode bits to compare
        return ""
    if found.st_uid != os.geteuid():
        return f"belongs to another user (uid {found.st_uid})"
    if found.st_mode & 0o077:
        return f"can be read or written by other users (mode {stat.S_IMODE(found.st_mode):04o})"
    if found.st_nlink > 1:
        return f"has {found.st_nlink} names (hard links)"
    return ""


def _refusal(path: Path, why: str) -> str:
    return (
        f"{home_relative(path)} {why}, so the keys in it are not used: save the key again in "
        f"the chat panel's model form (which writes a new owner-only file), or run "
        f"`chmod 600 {home_relative(path)}` if the file is yours."
    )


def _write(path: Path, entries: dict[str, Any]) -> None:
    """The whole file anew: a 0600 temporary file in the same 0700 folder, synced, renamed."""
    import tempfile

    global _cache
    private_dir(path.parent)
    text = json.dumps({"version": 1, "keys": entries}, indent=2, sort_keys=True) + "\n"
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            if hasattr(os, "fchmod"):
                os.fchmod(file.fileno(), 0o600)  # mkstemp's mode already, whatever the umask
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    _cache = None


# --- entries -------------------------------------------------------------------------------

_from_keyring: dict[tuple[str, str], str] = {}
"""Keys read from the keyring, by name and the entry's `saved_at`: one keyring call per save,
not one per request (a keyring may ask the user to unlock it)."""


def _value(name: str, entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return None
    if entry.get("in") == IN_KEYRING:
        stamp = (name, str(entry.get("saved_at", "")))
        if stamp not in _from_keyring:
            keyring = system_keyring()
            found = keyring.get(name) if keyring is not None else None
            if not found:
                return None
            _from_keyring[stamp] = found
        return _from_keyring[stamp]
    value = entry.get("value")
    return value if isinstance(value, str) and value else None


def _withhold(name: str, value: str) -> None:
    """Redact the key from every recording made from now on, wherever it would appear."""
    WITHHELD_VALUES.add(f"{name}={value}")  # as a `KEY=VALUE` line: the value whole, `=`s kept


def _chosen(keyring: Keyring | bool) -> Keyring | None:
    """True: the system keyring where there is one; False: none (the file); else that one."""
    if isinstance(keyring, bool):
        return system_keyring() if keyring else None
    return keyring


def _check_name(name: str) -> None:
    if not _NAME.fullmatch(name):
        raise ConfigError(f"{name!r} is not the name of a key variable (like OPENAI_API_KEY).")


__all__ = [
    "KEYS_FILE",
    "KeyStatus",
    "forget_key",
    "key_status",
    "keys_path",
    "save_key",
    "saved_key",
]
