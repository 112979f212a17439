"""Live objects described for a model: what a variable is, how big, and what is in it.

What a listing shows (type, shape or length, memory, a number's value) is read statically
(`static_view.py`): list_variables and the context block run no code of the user's objects.
`inspect_variable` also shows a repr (an object's own `__repr__` or `_repr_llm_`), when asked.

pandas and numpy objects get a schema-like summary (shape, dtypes, null counts, a head, numeric
statistics); an object with a `_repr_llm_()` method describes itself; anything else is a
truncated repr. pandas and numpy are imported only to describe an object whose type comes from
them (numpy's and pandas' own classes, by identity), so a kernel that never loaded them does not start to.

Unless the user approved revealing them, secrets are masked (see `masking.py`): a whole value
when its name or type says so, else each secret-named item, column or field and each
secret-looking string inside it.
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import reprlib
import types
import warnings
from collections.abc import Mapping
from typing import Any

from ...text import human_bytes, shorten
from ..redaction.masking import (
    MaskingRepr,
    is_secret_name,
    is_secret_value,
    looks_secret,
    mask_frame,
    mask_label,
    redact_and_cut,
    reveal_hint,
)
from ..views.outputs import clip_output
from ..views.static_view import (
    class_module,
    inherits,
    is_one_of,
    lookup_type,
    size_of,
    sizeof,
    trusted_kind,
    type_name,
)
from .lookup import is_internal

MAX_DESCRIPTION_CHARS = 6000
"""Characters of one inspect_variable answer."""
MAX_COLUMNS = 60
"""DataFrame columns listed with their dtypes and null counts."""
MAX_SOURCE_LINES = 60
"""Lines of a user-defined function's or class's source shown."""
MAX_PREVIEW_CHARS = 40
"""Characters of a number's or short string's value shown by list_variables."""

_repr = reprlib.Repr()
_repr.maxlevel, _repr.maxstring, _repr.maxother, _repr.maxlong = 3, 1000, 2000, 200
_repr.maxlist = _repr.maxtuple = _repr.maxset = _repr.maxfrozenset = _repr.maxdict = 30


def user_variables(
    namespace: Mapping[str, Any], hidden: Mapping[str, Any]
) -> list[tuple[str, Any]]:
    """The user's own variables by name: no modules, no `_names`, nothing IPython or imports put there.

    `hidden` is IPython's `user_ns_hidden`: a name there counts only if the user rebound it.
    """
    found = [
        (name, value)
        for name, value in namespace.items()
        if is_state(name, value, hidden) and not looks_secret(name)
    ]
    return sorted(found, key=lambda item: item[0])


def is_state(name: Any, value: Any, hidden: Mapping[str, Any]) -> bool:
    """A name holding the user's work: not a module or an imported function or class (an
    import brings those back), not a `_name`, not one of IPython's own."""
    if type(name) is not str or is_internal(name, value, hidden):
        return False
    return not inherits(value, types.ModuleType) and not _imported(value)


def _imported(value: Any) -> bool:
    """A function, class or typing construct that an import brought in, not the notebook."""
    if class_module(type(value)) == "typing":
        return True
    if inherits(value, type):
        return class_module(value) not in ("", "__main__")
    for kind in (types.FunctionType, types.BuiltinFunctionType):
        if inherits(value, kind):
            module = kind.__dict__["__module__"].__get__(value)
            return type(module) is str and module != "__main__"
    return False


def memory_of(value: Any) -> int | None:
    """Approximate bytes: pandas' deep memory usage, numpy's nbytes, else sys.getsizeof
    (shallow, and only where the type's `__sizeof__` is a builtin's: it runs no user code)."""
    package = trusted_kind(value)
    try:
        if package == "pandas":
            usage = value.memory_usage(deep=True)
            return int(usage.sum()) if hasattr(usage, "sum") else int(usage)
        if package == "numpy":
            return int(value.nbytes)
    except Exception:
        return None
    return sizeof(value)


def describe(name: str, value: Any, *, secret: str = "", reveal: bool = False) -> str:
    """What inspect_variable answers: a header line, then the kind-specific details; secrets
    masked unless `reveal` (`secret` says why the whole value is one)."""
    memory = memory_of(value)
    facts = [type_name(value), size_of(value), human_bytes(memory) if memory is not None else ""]
    header = f"{name}: " + ", ".join(f for f in facts if f)
    if secret and not reveal:
        return f"{header}\n{mask_label(value)}\nmasked because {secret}; {reveal_hint(name)}"
    if reveal:
        body = _body(value, None)
    else:
        masker = MaskingRepr()
        body, found = redact_and_cut(_body(value, masker), MAX_DESCRIPTION_CHARS)
        if found + masker.masked:
            count = found + masker.masked
            body += (
                f"\n({count} masked: secret names or secret-looking values; {reveal_hint(name)})"
            )
    return clip_output(f"{header}\n{body}".rstrip(), MAX_DESCRIPTION_CHARS)


def preview(name: str, value: Any) -> str:
    """A number's or short string's value for list_variables; `<masked>` for a secret."""
    if is_secret_value(name, value):
        return "<masked>"
    if not (value is None or is_one_of(type(value), (str, bool, int, float, complex))):
        return ""
    text = repr(value)
    return shorten(text, MAX_PREVIEW_CHARS)


def _body(value: Any, masker: MaskingRepr | None) -> str:
    if callable(lookup_type(type(value), "_repr_llm_")):
        try:
            return str(value._repr_llm_())
        except Exception as exc:
            note = f"(_repr_llm_() failed: {type(exc).__name__}: {exc})\n"
            return note + safe_repr(value, masker=masker)
    package = trusted_kind(value)
    try:
        if package == "pandas":
            return _pandas(value, masker)
        if package == "numpy":
            return _numpy(value, masker)
    except Exception as exc:  # an exotic subclass; a repr still helps
        shown = safe_repr(value, masker=masker)
        return f"(could not summarise: {type(exc).__name__}: {exc})\n{shown}"
    if inherits(value, type, types.FunctionType, types.MethodType):
        return _code_object(value)
    return safe_repr(value, masker=masker)


def safe_repr(
    value: Any, limit: int = MAX_DESCRIPTION_CHARS, *, masker: MaskingRepr | None = None
) -> str:
    """repr with containers abbreviated and the text cut; a failing __repr__ is reported.

    With a `masker`, secrets inside containers and strings are masked (and counted by it)."""
    containers = (list, tuple, set, frozenset, dict)
    try:
        if masker is not None and type(value) is str:
            text, found = redact_and_cut(repr(value), limit)
            masker.masked += found
            return text
        if masker is not None and inherits(value, *containers, Mapping, types.MappingProxyType):
            text = masker.repr(value)
        elif inherits(value, *containers):
            text = _repr.repr(value)
        else:
            text = repr(value)
            if len(text) > limit and _is_frame(value):
                text = _pandas(value, masker)  # shape, dtypes, head and tail: read from the object
    except Exception as exc:
        return f"<repr failed: {type(exc).__name__}: {exc}>"
    return clip_output(text, limit)


def _is_frame(value: Any) -> bool:
    """A pandas DataFrame or Series, told without importing pandas."""
    kind = type(value)
    package = kind.__module__.split(".", 1)[0]
    return package == "pandas" and kind.__name__ in ("DataFrame", "Series")


def _pandas(value: Any, masker: MaskingRepr | None) -> str:
    import pandas as pd

    def head(data: Any) -> str:
        shown = data.head(5)
        if masker is not None:
            shown, found = mask_frame(shown)
            masker.masked += found
        return str(shown.to_string())

    options = ("display.max_columns", 20, "display.width", 120, "display.max_colwidth", 40)
    with pd.option_context(*options):
        if isinstance(value, pd.DataFrame):
            rows, cols = value.shape
            nulls = value.isna().sum()
            lines = [f"{rows:,} rows x {cols:,} columns; index: {_index(value.index)}"]
            lines.append("columns (dtype, nulls):")
            described = zip(value.columns, value.dtypes, nulls.values, strict=True)
            for column, dtype, missing in itertools.islice(described, MAX_COLUMNS):
                lines.append(f"  {column!s}: {dtype}, {int(missing):,} null")
            if cols > MAX_COLUMNS:
                lines.append(f"  … {cols - MAX_COLUMNS:,} more columns")
            lines += ["head(5):", head(value)]
            if rows > 10:
                lines += ["tail(5):", head(value.tail(5))]
            return "\n".join(lines)
        if isinstance(value, pd.Series):
            lines = [
                f"name: {value.name!r}, dtype: {value.dtype}, length {len(value):,}, "
                f"{int(value.isna().sum()):,} null; index: {_index(value.index)}",
                "head(5):",
                head(value),
            ]
            secret = masker is not None and is_secret_name(str(value.name))
            if pd.api.types.is_numeric_dtype(value.dtype) and len(value) and not secret:
                lines += ["describe():", value.describe().to_string()]
            return "\n".join(lines)
    return safe_repr(value, masker=masker)


def _index(index: Any) -> str:
    kind = type(index).__name__
    name = f" {index.name!r}" if index.name is not None else ""
    if len(index) == 0:
        return f"{kind}{name} (empty)"
    return f"{kind}{name} {index[0]!r} … {index[-1]!r}"


def _numpy(value: Any, masker: MaskingRepr | None) -> str:
    import numpy as np

    if not isinstance(value, np.ndarray):
        return safe_repr(value, masker=masker)
    lines = [f"dtype: {value.dtype}, shape: {value.shape}, {value.nbytes:,} bytes"]
    kind = value.dtype.kind
    if value.size and kind in "biuf":
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            data = value.astype(np.float64) if kind == "b" else value
            stats = (
                f"min {np.nanmin(data):.6g}, max {np.nanmax(data):.6g}, mean {np.nanmean(data):.6g}"
            )
            if kind == "f":
                stats += f", {int(np.isnan(value).sum()):,} NaN"
            lines.append(stats)
    with np.printoptions(threshold=100, edgeitems=3, linewidth=100):
        lines.append(safe_repr(value, 3000, masker=masker))
    return "\n".join(lines)


def _code_object(value: Any) -> str:
    """A function's or class's signature, docstring and (when the notebook defined it) source."""
    lines = []
    with contextlib.suppress(TypeError, ValueError):
        lines.append(f"signature: {value.__name__}{inspect.signature(value)}")
    doc = inspect.getdoc(value)
    if doc:
        lines.append("doc: " + clip_output(doc, 800))
    try:
        source = inspect.getsource(value).splitlines()
    except (OSError, TypeError):
        source = []
    if source:
        shown = source[:MAX_SOURCE_LINES]
        more = len(source) - len(shown)
        lines += ["source:", *shown] + ([f"… {more} more lines"] if more else [])
    return "\n".join(lines) or safe_repr(value)
