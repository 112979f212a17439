"""A task's cost, read from its cassette: rounds (model requests) and premium requests.

Every run records (or replays) a cassette, so the counts come from the requests actually sent,
whatever the provider: each model request is one entry, and a retry (the same request sent again
after a failed answer) is the same round, not another; GitHub Copilot bills one premium request
per request the user started (`X-Initiator: user`) times the model's multiplier, which the
recorded model list gives.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

MODEL_PATHS = ("/chat/completions", "/responses", "/messages")


def read_entries(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[1:] if line.strip()]


def rounds_and_premium(
    cassette: Path, provider: str, used: Iterable[int] | None = None
) -> tuple[int, float]:
    """Model requests of this turn (the entries it used, on a replay) and premium requests."""
    entries = read_entries(cassette)
    if used is not None:
        wanted = set(used)
        entries = [e for e in entries if e.get("n") in wanted] or entries
    model_requests = rounds_of([e for e in entries if _path(e).endswith(MODEL_PATHS)])
    if provider != "copilot":
        return len(model_requests), 0.0
    started = [e for e in model_requests if _header(e, "x-initiator") == "user"]
    model = next((str(_body(e).get("model", "")) for e in model_requests), "")
    return len(model_requests), len(started) * _multiplier(read_entries(cassette), model)


def rounds_of(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per round: a request that failed and was sent again as it was (a retry of the
    transport) is dropped in favour of the attempt after it."""
    kept: list[dict[str, Any]] = []
    for entry in requests:
        if kept and _failed(kept[-1]) and _same_request(kept[-1], entry):
            kept[-1] = entry
        else:
            kept.append(entry)
    return kept


def _failed(entry: dict[str, Any]) -> bool:
    status = entry.get("response", {}).get("status", 200)
    return not isinstance(status, int) or status >= 400


def _same_request(one: dict[str, Any], other: dict[str, Any]) -> bool:
    return _path(one) == _path(other) and one.get("request", {}).get("body") == other.get(
        "request", {}
    ).get("body")


def _path(entry: dict[str, Any]) -> str:
    return str(entry.get("request", {}).get("path", "")).rstrip("/")


def _header(entry: dict[str, Any], name: str) -> str:
    headers = entry.get("request", {}).get("headers", {}) or {}
    return str({k.lower(): v for k, v in headers.items()}.get(name, ""))


def _body(entry: dict[str, Any]) -> dict[str, Any]:
    body = entry.get("request", {}).get("body", {})
    return body if isinstance(body, dict) else {}


def _multiplier(entries: list[dict[str, Any]], model: str) -> float:
    """The model's premium multiplier from a recorded model list; 1 when none says."""
    for entry in entries:
        if not _path(entry).endswith("/models"):
            continue
        response = entry.get("response", {})
        raw = response.get("json") or response.get("text") or response.get("body") or "{}"
        try:
            listed = raw if isinstance(raw, dict) else json.loads(raw)
        except (TypeError, json.JSONDecodeError):
            continue
        for item in listed.get("data", []) if isinstance(listed, dict) else []:
            if isinstance(item, dict) and item.get("id") == model:
                billing = item.get("billing") or {}
                return float(billing.get("multiplier", 1.0))
    return 1.0
