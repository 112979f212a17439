"""GitHub Copilot's ghost-text endpoint: the completions its editor plugins ask while you type.

Same sign-in and token as `CopilotChat` (`%copilot login`); the request goes to the completions
proxy the token exchange names (`endpoints.proxy`, else the token's `proxy-ep=`), at
`POST {proxy}/v1/engines/{engine}/completions` with `Openai-Intent: copilot-ghost` and the editor
headers. The body is the one the editor plugins send, as captured from them by open-source
clients (e.g. copilot-proxy-insight's recorded exchange with copilot/1.254.0, and the bodies in
copilot.vim-era reimplementations): `prompt`, `suffix`, `max_tokens`, `temperature`, `top_p`,
`n`, `stop`, `nwo`, `stream: true` and `extra: {language, next_indent, trim_by_indentation,
prompt_tokens, suffix_tokens}`. The answer streams text-completion chunks (`choices[].text`,
`finish_reason`) ended by `data: [DONE]` (`fim.TextCompletionsDecoder`). The engine defaults to
`copilot-codex`, the name those plugins use; `copilot:<engine>` as the completion model picks
another.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

from ...events import ModelEvent
from ..base import ModelRequest
from ..endpoint import Endpoint
from ..fim import FillRequest, TextCompletionsDecoder
from .chat import CopilotChat

DEFAULT_ENGINE = "copilot-codex"
_EMPTY = ModelRequest(messages=())


def copilot_fill(endpoint: Endpoint) -> CopilotFill:
    """The `copilot` row's fill wire: the engine named (`copilot-codex`, `*-copilot`), else the
    default one when the name is a chat model's."""
    name = endpoint.model
    if "codex" in name or name.endswith("-copilot"):
        return CopilotFill(name, endpoint=endpoint)
    return CopilotFill(DEFAULT_ENGINE, endpoint=endpoint.for_model(DEFAULT_ENGINE))


class CopilotFill(CopilotChat):
    """Copilot's completions engine (`copilot:copilot-codex`), signed in as `CopilotChat` is."""

    def __init__(self, engine: str = DEFAULT_ENGINE, **options: Any) -> None:
        super().__init__(engine, **options)

    async def prepare_request(
        self, request: ModelRequest | None = None
    ) -> tuple[str, dict[str, str]]:
        """The completions proxy and the editor headers; the auth adds the token."""
        token = await self.copilot_token()
        headers = {
            "Accept": "text/event-stream",
            **self.editor.as_headers(),
            "Openai-Intent": "copilot-ghost",
            "X-Request-Id": str(uuid.uuid4()),
            **self.endpoint.headers,
        }
        return token.proxy_url, headers

    def fill(self, request: FillRequest) -> AsyncIterator[ModelEvent]:
        path = f"/v1/engines/{self.name}/completions"
        return self._post(_EMPTY, path, self.fill_body(request), TextCompletionsDecoder())

    def fill_body(self, request: FillRequest) -> dict[str, Any]:
        prompt = request.prompt()
        last_line = request.prefix.rsplit("\n", 1)[-1]
        indent = len(last_line) - len(last_line.lstrip(" ")) if not last_line.strip() else 0
        return {
            "prompt": prompt,
            "suffix": request.suffix,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "top_p": 1,
            "n": 1,
            "stop": list(request.stop) or ["\n\n"],
            "nwo": "",
            "stream": True,
            "extra": {
                "language": request.language,
                "next_indent": indent,
                "trim_by_indentation": True,
                "prompt_tokens": max(1, len(prompt) // 4),
                "suffix_tokens": len(request.suffix) // 4,
            },
        }


__all__ = ["DEFAULT_ENGINE", "CopilotFill", "copilot_fill"]
