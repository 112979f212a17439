"""Whose cassette is this: an HMAC with the user's own key, as Jupyter signs the notebooks it trusts.

A cassette is a file a user can get from anywhere, and a recorded "yes" to an approval would run
code, read a secret or call an MCP tool on a replay. So what a recording writes is signed with a
key only this user holds (`<config dir>/cassette-key`, created 0600 on first use, never written to
a cassette): a replay answers an approval from the recording only when its signature is this
user's own (or the user said `--trust` after seeing what it will do). A cassette from elsewhere,
or one changed by hand, carries no valid signature and every such call asks again.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any

from ...config import config_dir, private_dir

KEY_FILE = "cassette-key"


def key_path() -> Path:
    return config_dir() / KEY_FILE


def signing_key(*, create: bool = False) -> bytes | None:
    """This user's key (made the first time a recording needs one), None when there is none."""
    path = key_path()
    try:
        return bytes.fromhex(path.read_text("ascii").strip())
    except FileNotFoundError:
        if not create:
            return None
    except ValueError:
        return None
    private_dir(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another kernel made it first
        return signing_key(create=False)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(secrets.token_hex(32) + "\n")
    return signing_key(create=False)


def signature(key: bytes, parts: Any) -> str:
    """The HMAC-SHA256 of `parts` in one canonical JSON form."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).hexdigest()


def signed_by(key: bytes | None, parts: Any, sig: str) -> bool:
    """True when `sig` is `parts` signed with `key` (compared in constant time)."""
    return bool(key and sig) and hmac.compare_digest(signature(key, parts), sig)  # type: ignore[arg-type]


def new_cassette_id() -> str:
    """A random id for one recording: signatures name it, so an answer signed for one cassette
    does not approve anything when copied into another."""
    return secrets.token_hex(12)
