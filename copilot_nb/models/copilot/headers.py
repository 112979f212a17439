"""The editor identification the Copilot API asks of every client, and how to change it.

The Copilot API checks `Editor-Version` on requests signed in through an editor's OAuth app: a
missing one is refused with `bad request: missing Editor-Version header for IDE auth`, an
unrecognised one (such as `copilot_nb/0.1`) with `bad request: unknown Editor-Version header for
IDE auth` (both HTTP 400, plain text). So we send what the maintained open-source Copilot
clients send, and let the user change each value without a new release:

- `Editor-Version: vscode/1.107.0`, `Editor-Plugin-Version: copilot-chat/0.35.0`,
  `User-Agent: GitHubCopilotChat/0.35.0`: pi-ai,
  https://github.com/badlogic/pi-mono/blob/83378aad7e74a0e2bb8f37c007a9685fb4609d8a/packages/ai/scripts/generate-models.ts#L49-L54
  (2026-03-15); copilot-api-js sends `copilot-chat/0.38.0` / `GitHubCopilotChat/0.38.0`,
  https://github.com/puxu-msft/copilot-api-js/blob/5f3b681fd6a79e27f63e137f199165ec39286c63/src/lib/copilot-api.ts#L12-L14
  (2026-04-09); LiteLLM and pydantic-ai send `vscode/1.95.0` with `copilot-chat/0.26.7`.
- `Copilot-Integration-Id: vscode-chat`: every one of those clients, and the official extension
  on its WebSocket connections,
  https://github.com/microsoft/vscode-copilot-chat/blob/31acd00a86424e2ee6e980e54919cf31fbf88030/src/platform/networking/vscode-node/fetcherServiceImpl.ts#L131-L135

The samples and their sources are kept in
`tests/data/conformance/responses/copilot/request_headers.json`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

EDITOR_VERSION = "vscode/1.107.0"
EDITOR_PLUGIN_VERSION = "copilot-chat/0.35.0"
USER_AGENT = "GitHubCopilotChat/0.35.0"
INTEGRATION_ID = "vscode-chat"

ENV_EDITOR_VERSION = "COPILOT_NB_EDITOR_VERSION"
ENV_EDITOR_PLUGIN_VERSION = "COPILOT_NB_EDITOR_PLUGIN_VERSION"
ENV_USER_AGENT = "COPILOT_NB_USER_AGENT"
ENV_INTEGRATION_ID = "COPILOT_NB_INTEGRATION_ID"
EDITOR_SETTINGS = (
    ENV_EDITOR_VERSION,
    ENV_EDITOR_PLUGIN_VERSION,
    ENV_USER_AGENT,
    ENV_INTEGRATION_ID,
)


@dataclass(frozen=True, kw_only=True)
class EditorHeaders:
    """Who we say we are to GitHub and the Copilot API; each value is a setting of its own."""

    editor_version: str = EDITOR_VERSION
    editor_plugin_version: str = EDITOR_PLUGIN_VERSION
    user_agent: str = USER_AGENT
    integration_id: str = INTEGRATION_ID

    @classmethod
    def resolve(
        cls,
        *,
        editor_version: str | None = None,
        editor_plugin_version: str | None = None,
        user_agent: str | None = None,
        integration_id: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> EditorHeaders:
        """An argument wins, then its environment variable, then the default."""
        env = os.environ if environ is None else environ
        return cls(
            editor_version=editor_version or env.get(ENV_EDITOR_VERSION) or EDITOR_VERSION,
            editor_plugin_version=(
                editor_plugin_version or env.get(ENV_EDITOR_PLUGIN_VERSION) or EDITOR_PLUGIN_VERSION
            ),
            user_agent=user_agent or env.get(ENV_USER_AGENT) or USER_AGENT,
            integration_id=integration_id or env.get(ENV_INTEGRATION_ID) or INTEGRATION_ID,
        )

    def as_headers(self) -> dict[str, str]:
        return {
            "Editor-Version": self.editor_version,
            "Editor-Plugin-Version": self.editor_plugin_version,
            "User-Agent": self.user_agent,
            "Copilot-Integration-Id": self.integration_id,
        }


def editor_refusal(detail: str, editor: EditorHeaders) -> str | None:
    """What to change when the API refused our editor identification, or None if it did not."""
    lowered = detail.lower()
    if "editor-version" not in lowered and "integration-id" not in lowered:
        return None
    if "integration-id" in lowered:
        return (
            f"the Copilot API refused Copilot-Integration-Id {editor.integration_id!r}. Set "
            f"{ENV_INTEGRATION_ID} (or CopilotChat(integration_id=...)) to one it accepts, "
            f"e.g. {INTEGRATION_ID!r}."
        )
    if "missing" in lowered:
        what = "the Copilot API found no Editor-Version header in the request"
    else:
        what = f"the Copilot API does not recognise Editor-Version {editor.editor_version!r}"
    return (
        f"{what}. Set {ENV_EDITOR_VERSION} (or CopilotChat(editor_version=...)) to an editor "
        f"version it recognises, such as the default {EDITOR_VERSION!r} or your VS Code's "
        f"`vscode/<version>`; if it then refuses the plugin, set {ENV_EDITOR_PLUGIN_VERSION} "
        f"(e.g. {EDITOR_PLUGIN_VERSION!r})."
    )
