"""A run's output as a notebook holds it, and run_code's result: what the model reads and what
the user is shown are made from the same texts.

run_cell puts `notebook_outputs` into the cell it ran. run_code has no cell: its result carries
the run's outputs for the surfaces (`ToolOutput.outputs`, shown under the call's line), built
from the texts the model reads (printed text cut and masked as the model gets it, the result as
its masked repr), so the user sees what the model saw; a display's or a result's HTML (a
DataFrame's table) is shown only when nothing in it looks secret, else its masked text. Its
images go to a model that accepts them (`ToolOutput.images`), as run_cell's do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...text import shorten
from ..redaction.masking import REVEAL_HINT, MaskingRepr, redact_and_cut, redact_text
from ..registry import ToolOutput
from ..views.outputs import describe_data, output_images, strip_ansi
from .execute import CodeRun, ran_for
from .variables import safe_repr

MAX_STDOUT_CHARS, MAX_STDERR_CHARS, MAX_VALUE_CHARS = 6000, 2000, 3000
"""Characters of run_code's captured stdout, stderr and result shown."""
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_RICH_TYPES = ("text/html", "text/markdown")
"""What a notebook renders of a bundle beside its images and text, shown when nothing in it
looks secret."""


def notebook_outputs(
    run: CodeRun,
    shell: Any | None,
    timeout: float,
    tool: str = "run_cell",
    count: int | None = None,
) -> list[dict[str, Any]]:
    """The run's output as nbformat outputs, as a cell would have shown them (its result
    numbered `count`, the run's execution count: `counter.py`)."""
    outputs: list[dict[str, Any]] = []
    for name, text in (("stdout", run.stdout), ("stderr", run.stderr)):
        if text:
            outputs.append({"output_type": "stream", "name": name, "text": text})
    outputs += [{"output_type": "display_data", **shown} for shown in run.displays]
    if run.has_value:
        data, metadata = formatted(run.value, shell)
        outputs.append(
            {
                "output_type": "execute_result",
                "data": data,
                "metadata": metadata,
                "execution_count": count,
            }
        )
    if run.error:
        outputs.append(
            {
                "output_type": "error",
                "ename": run.ename or "Error",
                "evalue": run.evalue,
                "traceback": run.error.splitlines(),
            }
        )
    if run.timed_out:
        stopped = f"stopped after {timeout:g} s ({tool}'s timeout)\n"
        outputs.append({"output_type": "stream", "name": "stderr", "text": stopped})
    return outputs


def formatted(value: Any, shell: Any | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The value's mime bundle, as IPython formats a cell's result."""
    formatter = getattr(shell, "display_formatter", None)
    if formatter is not None:
        try:
            data, metadata = formatter.format(value)
            return dict(data), dict(metadata)
        except Exception:
            pass
    return {"text/plain": repr(value)}, {}


def run_code_output(run: CodeRun, shell: Any | None, timeout: float, kept: str = "") -> ToolOutput:
    """What run_code tells the model (output, displays, result or error, each cut with a
    marker; images beside the text) and the same output as the user is shown it."""
    parts: list[str] = []
    shown: list[dict[str, Any]] = []
    for name, text, limit in (
        ("stdout", run.stdout, MAX_STDOUT_CHARS),
        ("stderr", strip_ansi(run.stderr), MAX_STDERR_CHARS),
    ):
        if text:
            cut = redact_text(redact_and_cut(text.rstrip("\n"), limit)[0])[0]
            parts.append(f"{name}:\n{cut}")
            shown.append({"output_type": "stream", "name": name, "text": cut + "\n"})
    for display in run.displays:
        parts.append("display:\n" + "\n".join(describe_data(display["data"])))
        shown.append({"output_type": "display_data", "data": shown_data(display["data"])})
    drawn = [{"output_type": "display_data", **display} for display in run.displays]
    if run.has_value:
        text = safe_repr(run.value, MAX_VALUE_CHARS, masker=MaskingRepr())
        parts.append("result:\n" + text)
        data, _ = formatted(run.value, shell)
        result = {"output_type": "execute_result", "data": data}
        drawn.append(result)
        shown.append({**result, "data": shown_data(data, plain=text)})
    if run.error:
        parts.append("error:\n" + run.error)
        shown.append(
            {
                "output_type": "error",
                "ename": run.ename or "Error",
                "evalue": redact_text(run.evalue)[0],
                "traceback": redact_text(run.error)[0].splitlines(),
            }
        )
    if run.timed_out:
        stopped = (
            f"timed out: stopped after {timeout:g} s; what it did until then stays done. "
            "Pass a larger timeout if it needs longer, or make it do less."
        )
        parts.append(stopped)
        shown.append({"output_type": "stream", "name": "stderr", "text": stopped + "\n"})
    content, _ = redact_text("\n".join(parts)) if parts else ("(no output)", 0)
    if "<masked: " in content:
        content += f"\n(secrets are masked; {REVEAL_HINT} if it is a variable)"
    if kept:
        content += f"\nkernel: {kept}"
    failed = bool(run.error) or run.timed_out
    first = run.error.split("\n", 1)[0] if run.error else ("timed out" if run.timed_out else "")
    return ToolOutput(
        content=content,
        is_error=failed,
        summary=shorten(first or ran_for(run.seconds), 100),
        images=output_images(drawn),
        outputs=tuple(shown),
    )


def shown_data(data: Mapping[str, Any], *, plain: str | None = None) -> dict[str, Any]:
    """A bundle as the user is shown it: its images; its HTML or Markdown only when nothing in
    it looks secret; its text masked as the model reads it (`plain`: the result's masked repr,
    and then no rich form when the repr masked anything)."""
    shown: dict[str, Any] = {mime: data[mime] for mime in _IMAGE_TYPES if mime in data}
    text = plain if plain is not None else _text(data.get("text/plain", ""))
    masked = plain is not None and "<masked" in plain
    for mime in _RICH_TYPES:
        if mime in data and not masked:
            rich = _text(data[mime])
            if redact_text(rich)[1] == 0:
                shown[mime] = rich
    if text:
        shown["text/plain"] = redact_text(text)[0]
    return shown


def _text(payload: Any) -> str:
    """A payload as text: nbformat may keep it as a list of lines."""
    if isinstance(payload, list):
        return "".join(map(str, payload))
    return payload if isinstance(payload, str) else str(payload)
