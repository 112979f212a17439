"""Words from upstream, relayed to the proxy's client with the credentials in them masked.

A provider's error body is the provider's text, and some echo what they were sent: "Incorrect
API key provided: sk-...", a header dump with `Authorization: Bearer ...`, a Copilot token
`tid=...`. The proxy's client holds the proxy's token, not the user's key, so every upstream
failure is masked before it leaves: the credentials this server actually holds (the model's key,
the proxy's own token) wherever and however they appear, credential-named headers and fields,
and every well-known secret format the rest of copilot_nb masks (`text.SECRET_VALUE`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..tools.redaction.masking import redact_value
from .openai.api_errors import ApiError

MIN_KNOWN = 8
"""A configured credential shorter than this is not looked for verbatim: masking every `k` of a
message would hide the message, and a key that short guards nothing anyway."""
_CREDENTIAL_FIELD = re.compile(
    r"""(?ix)
    \b(?P<name>(?:proxy-)?authorization|x-api-key|api[-_]?key|access[-_]?token|auth[-_]?token)
    (?P<sep>["']?\s*[:=]\s*["']?)
    (?P<value>(?:(?:bearer|token|basic)\s+)?[^\s"',;&}\]]+)
    """
)
"""A header or field that names a credential, and its value: `Authorization: Bearer x`,
`"api_key": "x"`, `x-api-key=x`."""


def model_credentials(model: Any) -> tuple[str, ...]:
    """The credentials a model was configured with (`api_key`, `auth_token`), as set."""
    values = (getattr(model, name, None) for name in ("api_key", "auth_token"))
    return tuple(value for value in values if isinstance(value, str))


@dataclass(frozen=True)
class Relay:
    """Masks one request's upstream failures: `known` are the credentials to find verbatim."""

    known: tuple[str, ...] = ()

    @classmethod
    def of(cls, *credentials: Iterable[str] | str) -> Relay:
        """A relay for these credentials (strings or groups of them), short ones left out."""
        flat = [c for group in credentials for c in ([group] if isinstance(group, str) else group)]
        known = {c for c in flat if len(c.strip()) >= MIN_KNOWN}
        return cls(known=tuple(sorted(known, key=len, reverse=True)))

    def text(self, text: str) -> str:
        """`text` with every credential in it replaced by `<masked: N chars>`."""
        for secret in self.known:
            if secret in text:
                text = text.replace(secret, _masked(secret))
        text = _CREDENTIAL_FIELD.sub(_field, text)
        return redact_value(text)[0]

    def error(self, error: ApiError) -> ApiError:
        """The same error with its message masked."""
        return ApiError(
            self.text(error.message),
            status=error.status,
            type=error.type,
            param=error.param,
            code=error.code,
        )


def _field(match: re.Match[str]) -> str:
    value = match.group("value")
    if "<masked:" in value:
        return match.group()
    return match.group("name") + match.group("sep") + _masked(value)


def _masked(secret: str) -> str:
    return f"<masked: {len(secret)} chars>"
