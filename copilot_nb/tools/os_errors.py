"""The OS's errors as sentences that tell the model its next step, for every file tool."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import ToolError


@contextmanager
def os_errors(name: str, path: str, *, destination: str = "", hint: str = "") -> Iterator[None]:
    """Raise ToolError for an OS error inside the block; `destination` is a move's target, and
    `hint` is added where the path does not exist (edit_file: "to create a file use write_file")."""
    try:
        yield
    except FileNotFoundError as exc:
        also = f"; {hint}" if hint else ""
        raise ToolError(
            f"{name}: {path!r} does not exist in the workspace; call list_directory or "
            f"find_files to see what exists{also}"
        ) from exc
    except FileExistsError as exc:
        raise ToolError(
            f"{name}: {destination or path!r} already exists; choose another destination or "
            "delete it first with delete_path"
        ) from exc
    except IsADirectoryError as exc:
        raise ToolError(
            f"{name}: {path!r} is a directory; call list_directory with path={path!r}"
        ) from exc
    except NotADirectoryError as exc:
        raise ToolError(
            f"{name}: {destination or path!r} is not a directory, or a part of it is a file; "
            "call list_directory to check the path"
        ) from exc
    except PermissionError as exc:
        where = f"{path!r}" + (f" or {destination!r}" if destination else "")
        raise ToolError(f"{name}: permission denied for {where} ({exc.strerror})") from exc
    except UnicodeEncodeError as exc:
        raise ToolError(f"{name}: the content cannot be encoded as UTF-8 ({exc.reason})") from exc
