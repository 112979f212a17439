"""Whose review record is this: proof that this user's copilot_nb wrote it, checked before the
front end offers it as the agent's change.

A notebook is a file anyone can send, and its review records are plain metadata: a crafted
"deleted cell" or a cell whose `before` is a trusted code cell with a script in its HTML output
would otherwise be shown as the agent's change and put back by Undo. So the kernel signs each
record it writes with the user's own key (the cassettes' key, `models/cassettes/signing.py`),
over what the front end shows and what its Undo uses: the cell id, the turn, the kind, whether
it ran, and `before`'s type and source (a deleted cell's neighbour too; a file's path, kind and
diff). The front end cannot hold the key: it asks the kernel over the live comm
(`{event: 'review_verify'}`) and offers only records the kernel vouched for. Undo restores
source text only, so nothing else in a record needs a signature to be harmless.
"""

from __future__ import annotations

from typing import Any

from ...models.cassettes.signing import signature, signed_by, signing_key

SIG = "sig"
"""The key a record's signature goes under (the record's own dict)."""
VERIFIED_EVENT = "review_verified"


def _source(before: Any) -> str | None:
    """`before`'s source as one string (nbformat allows a list of lines); None for no cell."""
    if not isinstance(before, dict):
        return None
    source = before.get("source", "")
    return "".join(map(str, source)) if isinstance(source, list) else str(source)


def _type(before: Any) -> str | None:
    return str(before.get("cell_type", "")) if isinstance(before, dict) else None


def cell_parts(cell_id: str, review: dict[str, Any]) -> list[Any]:
    """What a changed, inserted or run cell's record is signed over (a run's note on what its
    Undo puts back in the kernel too, which the page shows, and the kernel process that holds
    it; a record without them is signed as records were before there were any)."""
    before = review.get("before")
    parts = [
        "copilot_nb.review.cell",
        str(cell_id),
        str(review.get("turn", "")),
        str(review.get("kind", "")),
        bool(review.get("ran")),
        _type(before),
        _source(before),
    ]
    kernel = review.get("kernel")
    if not kernel:
        return parts
    instance = review.get("instance")
    return [*parts, str(kernel), *([str(instance)] if instance else [])]


def deleted_parts(entry: dict[str, Any]) -> list[Any]:
    """What a deleted cell's record (`review_deleted`) is signed over."""
    before = entry.get("before")
    cell_id = before.get("id") if isinstance(before, dict) else None
    after = entry.get("after_id")
    return [
        "copilot_nb.review.deleted",
        str(cell_id or ""),
        str(entry.get("turn", "")),
        _type(before),
        _source(before),
        after if isinstance(after, str) else None,
    ]


def file_parts(entry: dict[str, Any]) -> list[Any]:
    """What a changed file's record (`review_files`) is signed over."""
    return [
        "copilot_nb.review.file",
        str(entry.get("turn", "")),
        str(entry.get("path", "")),
        str(entry.get("kind", "")),
        str(entry.get("diff", "")),
    ]


def _signed(record: dict[str, Any], parts: list[Any]) -> dict[str, Any]:
    key = signing_key(create=True)
    unsigned = {k: v for k, v in record.items() if k != SIG}
    return {**unsigned, SIG: signature(key, parts)} if key else unsigned


def sign_cell(cell_id: str, review: dict[str, Any]) -> dict[str, Any]:
    """The cell's record with this user's signature (a new dict)."""
    return _signed(review, cell_parts(cell_id, review))


def sign_deleted(entry: dict[str, Any]) -> dict[str, Any]:
    """A deleted cell's record with this user's signature (a new dict)."""
    return _signed(entry, deleted_parts(entry))


def sign_file(entry: dict[str, Any]) -> dict[str, Any]:
    """A changed file's record with this user's signature (a new dict)."""
    return _signed(entry, file_parts(entry))


def vouched(item: Any, key: bytes | None) -> bool:
    """Whether one record the front end asks about (`{kind: 'cell', cell_id, record}`,
    `{kind: 'deleted' | 'file', record}`) carries this user's signature; anything malformed
    is not."""
    if not isinstance(item, dict) or not isinstance(item.get("record"), dict):
        return False
    record = item["record"]
    sig = record.get(SIG)
    if not isinstance(sig, str):
        return False
    kind = item.get("kind")
    if kind == "cell" and isinstance(item.get("cell_id"), str):
        parts = cell_parts(item["cell_id"], record)
    elif kind == "deleted":
        parts = deleted_parts(record)
    elif kind == "file":
        parts = file_parts(record)
    else:
        return False
    return signed_by(key, parts, sig)


def verify(data: dict[str, Any]) -> dict[str, Any]:
    """The answer to a front end's `review_verify` event: for each record, whether it is ours."""
    items = data.get("records")
    key = signing_key(create=False)
    found = [vouched(item, key) for item in (items if isinstance(items, list) else [])]
    return {"event": VERIFIED_EVENT, "id": data.get("id"), "ok": found}
