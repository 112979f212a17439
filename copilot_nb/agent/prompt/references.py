"""`@` references in a request: `@path/to/file`, `@cell:ID` or `@cell:#N`, `@var:name`.

Each is read with the agent's own read tool (`read_file`, `read_cell`, `inspect_variable`), so
the sandbox, the masking of secrets and the summaries of outputs are the same as when the model
reads; the results are attached to the request under `<attachments>`. A reference that does not
resolve, or that would read a secret, is an error before anything is sent. References inside
backticks are code, not references (`@dataclass` in `code`); a bare `@word` with no `/` or `.`
counts only as `@cell:`/`@var:` or when a file of that name exists (so prose like "add
@dataclass" is left alone).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...errors import ConfigError
from ...tools.toolset import ToolSource
from ...workspace.workspace import Workspace

_REFERENCE = re.compile(r"(?<![\w@`/])@(cell:#?[\w-]+|var:[A-Za-z_][\w.]*|[\w./-]+)")
_CODE = re.compile(r"`[^`]*`")


@dataclass(frozen=True, kw_only=True)
class Reference:
    """One `@` reference and the read tool call that resolves it."""

    text: str
    tool: str
    arguments: dict[str, Any]
    label: str


def find_references(prompt: str, workspace: Workspace) -> list[Reference]:
    """The references of a request, each once, in order of appearance."""
    prose = _CODE.sub(lambda m: " " * len(m.group()), prompt)
    found: dict[str, Reference] = {}
    for match in _REFERENCE.finditer(prose):
        text = match.group(1).rstrip(".,;:!?)")
        if text in found:
            continue
        if text.startswith("cell:"):
            found[text] = Reference(
                text=text, tool="read_cell", arguments={"cell_id": text[5:]}, label=text
            )
        elif text.startswith("var:"):
            found[text] = Reference(
                text=text, tool="inspect_variable", arguments={"name": text[4:]}, label=text
            )
        elif "/" in text or "." in text or workspace.exists(text):
            found[text] = Reference(
                text=text, tool="read_file", arguments={"path": text}, label=text
            )
    return list(found.values())


async def attach_references(prompt: str, workspace: Workspace, tools: ToolSource) -> str:
    """The request with what its references point at attached; ConfigError names the first
    reference that cannot be read, before anything is sent."""
    references = find_references(prompt, workspace)
    if not references:
        return prompt
    attached = []
    for reference in references:
        tool = tools.get(reference.tool)
        if tool is None:
            raise ConfigError(
                f"@{reference.text}: {reference.tool} is not available here, so the reference "
                "cannot be read"
            )
        if tool.category_for(reference.arguments) == "read-secret":
            raise ConfigError(
                f"@{reference.text} may hold secrets, so it is not attached; ask for it in the "
                "request instead and approve the read, or paste what the model should see"
            )
        output = await tools.call_tool(reference.tool, reference.arguments)
        if output.is_error:
            raise ConfigError(f"@{reference.text} cannot be attached: {output.content}")
        attached.append(f'<attachment ref="@{reference.label}">\n{output.content}\n</attachment>')
    return prompt + "\n\n<attachments>\n" + "\n".join(attached) + "\n</attachments>"
