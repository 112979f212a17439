"""Model families: what a model gets besides the common instructions, chosen from its name.

Models of one line were trained on their makers' agent harnesses and do best with the habits
those taught: Claude with exact-string edits and parallel reads, the GPT-5 line with terse
progress and no asking for confirmation, small local models with fewer tools at once. The
table is keyed by name prefix (`models/capabilities.by_model_name`, the longest prefix winning,
any router prefix such as `openai/` ignored); `%copilot context` shows what the current model
gets. A provider that names each model's family (Copilot's model list: `capabilities.family`)
is believed first, so a model whose name says nothing (an alias, a preview's code name) still
gets its line's habits; the name decides until that list has been read.

A family may also get tools of its own, offered besides everyone's: the codex line gets
`apply_patch`, the patch format it was trained on (`tools/files/patch_tool.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ...models.capabilities import by_model_name
from ...tools.files.patch_tool import patch_tools
from ...tools.registry import Tool
from ...tools.wrappers import DEFER_THRESHOLD
from ...workspace.workspace import Workspace

FamilyTools = Callable[[Workspace], Iterable[Tool]]
"""Tools bound to a turn's workspace, like the session's toolset factories."""


@dataclass(frozen=True, kw_only=True)
class Family:
    """What one family of models gets: its own instructions, tool-search threshold and tools."""

    name: str
    instructions: str = ""
    """Added after the common instructions; '' for none."""
    defer_threshold: int = DEFER_THRESHOLD
    """Past this many tools, the extra ones wait for `tool_search`."""
    tools: tuple[FamilyTools, ...] = ()
    """Offered to this family only, besides every family's tools."""

    def own_tools(self, workspace: Workspace) -> list[Tool]:
        """This family's own tools, bound to `workspace`."""
        return [item for factory in self.tools for item in factory(workspace)]


GENERIC = Family(name="generic")
CLAUDE = Family(
    name="claude",
    instructions="""\
For this model: edit with edit_file / edit_cell, old_str copied exactly from what you read \
(whitespace included) and long enough to match once. Make independent reads in one round of \
parallel calls.
""",
    defer_threshold=64,
)
GPT = Family(
    name="gpt",
    instructions="""\
For this model: keep going until the request is done; do not stop to ask for confirmation \
between steps. Before a group of tool calls, say in one short line what you are about to do.
""",
)
CODEX = Family(
    name="codex",
    instructions="""\
For this model: edit files with apply_patch (context lines copied from what you read); \
notebook cells only with edit_cell / insert_cell. There is no shell here. Keep progress notes \
to one line.
""",
    tools=(patch_tools,),
)
SMALL = Family(
    name="small",
    instructions="""\
For this model: one step at a time. Call one tool, read its result, then decide the next step.
""",
    defer_threshold=16,
)

FAMILIES: dict[str, Family] = {
    "claude": CLAUDE,
    "gpt-": GPT,
    "o1": GPT,
    "o3": GPT,
    "o4": GPT,
    "gpt-5-codex": CODEX,
    "codex": CODEX,
    "llama": SMALL,
    "qwen": SMALL,
    "mistral": SMALL,
    "phi": SMALL,
    "gemma": SMALL,
    "smollm": SMALL,
}
"""Name prefixes to families; a name with `codex` anywhere in it is of the codex line."""


def family_for(model_name: str, listed: str = "") -> Family:
    """The family of a model by the family its provider lists (`listed`, e.g. Copilot's
    `gpt-5-mini`) when that is one we know, else by its name (`claude-sonnet-4`,
    `openai/gpt-5.1-codex`), else the generic one."""
    for name in (listed, model_name):
        if not name:
            continue
        if "codex" in name.rsplit("/", 1)[-1].lower():
            return CODEX
        found = by_model_name(name, FAMILIES, GENERIC)
        if found is not GENERIC:
            return found
    return GENERIC


def listed_family(model: Any) -> str:
    """The family the provider's model list gave this model (a `CopilotChat` once its list was
    read), or ''; never asks the provider."""
    info = getattr(model, "info", None)
    family = getattr(info, "family", "")
    return family if isinstance(family, str) else ""


def family_of(model: Any) -> Family:
    """The family of a model object: what its provider lists, else its name."""
    return family_for(str(getattr(model, "name", "")), listed_family(model))
