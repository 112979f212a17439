"""The system's keyring (macOS Keychain, Windows Credential Locker, the Secret Service), when
the optional `keyring` package is installed and finds a real one.

A key kept there is encrypted at rest and never in a file of ours; `key_store` keeps only a
note that it is there. Without the package, or where its only backends are the "fail" one, a
plaintext file (keyrings.alt) or a chain of nothing, there is no system keyring and the keys
stay in copilot_nb's owner-only file.
"""

from __future__ import annotations

import contextlib
from typing import Any, Protocol

SERVICE = "copilot_nb"
"""The service name keys are filed under, one entry per variable name."""
_NOT_REAL = ("keyring.backends.fail", "keyring.backends.null", "keyrings.alt")
"""Backends that are no system keyring: they refuse everything, or write plaintext files."""


class Keyring(Protocol):
    """What `key_store` needs of a keyring: set, get and delete one secret by its name."""

    name: str
    """What the form says the key is kept in ("the system keyring (macOS Keychain)")."""

    def set(self, name: str, value: str) -> None: ...

    def get(self, name: str) -> str | None: ...

    def delete(self, name: str) -> None: ...


class SystemKeyring:
    """A `keyring` backend under copilot_nb's service name."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        label = getattr(backend, "name", "") or type(backend).__name__
        self.name = f"the system keyring ({label})"

    def set(self, name: str, value: str) -> None:
        self.backend.set_password(SERVICE, name, value)

    def get(self, name: str) -> str | None:
        value = self.backend.get_password(SERVICE, name)
        return value if isinstance(value, str) and value else None

    def delete(self, name: str) -> None:
        from keyring.errors import PasswordDeleteError

        with contextlib.suppress(PasswordDeleteError):  # already gone: forgetting it is done
            self.backend.delete_password(SERVICE, name)


def system_keyring() -> SystemKeyring | None:
    """The system keyring, or None when `keyring` is not installed or has no real backend."""
    try:
        import keyring
    except ImportError:
        return None
    try:
        backend = keyring.get_keyring()
    except Exception:  # a backend that fails to load is no keyring to keep keys in
        return None
    chosen = real_backend(backend)
    return SystemKeyring(chosen) if chosen is not None else None


def real_backend(backend: Any) -> Any | None:
    """`backend` when it keeps secrets in a system keyring, the first such one of a chain
    (keyring's ChainerBackend), else None: a chain would fall through to a plaintext file."""
    inner = getattr(backend, "backends", None)
    if inner is not None:
        return next((each for each in inner if real_backend(each) is not None), None)
    return backend if is_real(backend) else None


def is_real(backend: Any) -> bool:
    """Whether one `keyring` backend is a system keyring: a positive priority, not the fail or
    null backend, not a plaintext file."""
    module = type(backend).__module__
    if module.startswith(_NOT_REAL):
        return False
    try:
        return float(getattr(backend, "priority", 0)) > 0
    except Exception:  # a backend whose priority check raises is not available here
        return False


__all__ = ["SERVICE", "Keyring", "SystemKeyring", "is_real", "real_backend", "system_keyring"]
