"""`%copilot snapshot`: chosen variables saved beside the notebook, so a restart can bring them
back without running anything.

Variables are saved with pickle, and loading a pickle can run any code its maker chose. So a
file is loaded only when this user made it: it must be the user's own regular file, owner-only
and not a link (`workspace/own_files.py`), and its contents must carry an HMAC made with the
user's own key (the cassettes' key, `models/cassettes/signing.py`), which a file from
elsewhere (a cloned repository, a colleague's folder, a file edited by hand) cannot have. Such a
file is refused, with why, and nothing in it is unpickled; its header (names, sizes, when) is
plain JSON and may be shown. Secrets are never saved (`snapshots.py`'s rules).

A file is checked before its body is read: its size first (a snapshot is at most
`MAX_SNAPSHOT_BYTES`, and `save` makes none bigger), then its signature, over the body read in
chunks. Only a file that passes is read whole, its digest checked again as it is read (the one
unpickled is the one whose signature was checked).
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO

from ...errors import SandboxError
from ...models.cassettes.signing import signature, signed_by, signing_key
from ...text import human_bytes
from ...workspace.own_files import open_own
from .snapshots import not_keepable

SUFFIX = ".copilot-vars.pkl"
FORMAT = 1
MAX_HEADER = 64 * 1024
MAX_SNAPSHOT_BYTES = 1024 * 1024 * 1024
"""The biggest snapshot file `save` writes and `load` reads."""
_CHUNK = 1024 * 1024


@dataclass(frozen=True, kw_only=True)
class Saved:
    """What a save wrote or a load found: the names, and those left out with why."""

    path: Path
    names: tuple[str, ...]
    left: dict[str, str]
    at: str = ""


def path_for(notebook: str | os.PathLike[str]) -> Path:
    """`analysis.copilot-vars.pkl` beside `analysis.ipynb`."""
    found = Path(notebook)
    return found.with_name(found.stem + SUFFIX)


def save(
    path: Path,
    namespace: Mapping[str, Any],
    names: Iterable[str],
    *,
    max_bytes: int = MAX_SNAPSHOT_BYTES,
) -> Saved:
    """Pickle the named variables into `path` (owner-only, signed with the user's key)."""
    values: dict[str, Any] = {}
    left: dict[str, str] = {}
    for name in dict.fromkeys(names):
        if name not in namespace:
            left[name] = "not defined"
        elif why := not_keepable(name, namespace[name]):
            left[name] = why
        else:
            try:
                pickle.dumps(namespace[name])
            except Exception as exc:  # a value pickle cannot save says why
                left[name] = f"cannot be pickled: {type(exc).__name__}"
            else:
                values[name] = namespace[name]
    payload = pickle.dumps(values, protocol=pickle.HIGHEST_PROTOCOL)
    key = signing_key(create=True)
    assert key is not None
    at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    header = {"format": FORMAT, "names": sorted(values), "at": at}
    header["sig"] = signature(key, _parts(header, hashlib.sha256(payload).hexdigest()))
    data = json.dumps(header).encode() + b"\n" + payload
    if len(data) > max_bytes:
        raise SandboxError(
            f"{path.name} would be {human_bytes(len(data))}, over the "
            f"{human_bytes(max_bytes)} a snapshot may be; save fewer or smaller variables"
        )
    _write(path, data)
    return Saved(path=path, names=tuple(sorted(values)), left=left, at=at)


def load(path: Path, *, max_bytes: int = MAX_SNAPSHOT_BYTES) -> tuple[Saved, dict[str, Any]]:
    """The variables saved at `path`; SandboxError, with nothing unpickled, when the file is
    not one this user saved (or was changed since), or is bigger than any snapshot `save` makes.
    """
    fd = open_own(path)  # NotOwnFile (a SandboxError) for a link, a shared or another's file
    with os.fdopen(fd, "rb") as found:
        size = os.fstat(found.fileno()).st_size
        if size > max_bytes:
            raise SandboxError(
                f"{path.name} is {human_bytes(size)}, over the {human_bytes(max_bytes)} a "
                "snapshot may be: no snapshot you saved is that big, so nothing in it was loaded"
            )
        header = _header(path, found.readline(MAX_HEADER))
        start = found.tell()
        sig = header.pop("sig", "")
        digest = _digest(found)
        if not signed_by(signing_key(), _parts(header, digest), str(sig)):
            raise SandboxError(
                f"{path.name} was not saved by you (its signature is not your key's): loading "
                "a pickle can run any code, so nothing in it was loaded"
            )
        found.seek(start)
        payload = found.read(max_bytes)
    if hashlib.sha256(payload).hexdigest() != digest:
        raise SandboxError(f"{path.name} changed while it was read; nothing in it was loaded")
    values = pickle.loads(payload)  # signed with the user's own key: checked above
    names = tuple(str(name) for name in header.get("names", []))
    return Saved(path=path, names=names, left={}, at=str(header.get("at", ""))), values


def _header(path: Path, line: bytes) -> dict[str, Any]:
    """A snapshot's first line, its plain JSON header; SandboxError when it is not one."""
    try:
        header = json.loads(line)
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise SandboxError(f"{path.name} is not a copilot_nb snapshot (or of a newer format)")
    return header


def _digest(found: BinaryIO) -> str:
    """The sha256 of the rest of an open file, read in chunks (none of it kept)."""
    digest = hashlib.sha256()
    while chunk := found.read(_CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


def _parts(header: Mapping[str, Any], digest: str) -> list[Any]:
    """What a snapshot's signature covers: its header and the payload's sha256."""
    return ["copilot_nb.vars", dict(header), digest]


def _write(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically, owner-only (a link at `path` is replaced, not followed)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:  # mkstemp made it 0600
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
