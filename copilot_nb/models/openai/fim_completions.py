"""Fill-in-the-middle over OpenAI-style text completions, and Mistral's FIM endpoint.

- `OpenAICompletions`: `POST {base}/completions` with `prompt` and `suffix`, as OpenAI's legacy
  Completions API defines them (https://platform.openai.com/docs/api-reference/completions) and
  as DeepSeek's FIM beta takes them at `https://api.deepseek.com/beta/completions` (its
  "FIM Completion (Beta)" guide: `base_url=https://api.deepseek.com/beta`, `prompt`, `suffix`,
  `max_tokens`, at most 4K tokens). Streamed chunks are `{"choices": [{"text", "index",
  "finish_reason"}]}` ended by `data: [DONE]` (`fim.TextCompletionsDecoder`). vLLM declares
  `suffix` but answers `400 "suffix is not currently supported"`; that answer is taken as
  "no FIM here" and the request is made once more, and from then on, without `suffix`.
- `MistralFill`: `POST https://api.mistral.ai/v1/fim/completions` with `model`, `prompt`,
  `suffix`, `max_tokens`, `stop`, `stream` (Mistral's OpenAPI `FIMCompletionRequest`); its
  stream is Chat Completions chunks (`choices[0].delta.content`), decoded by the chat decoder.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ...errors import ModelHTTPError
from ...events import ModelEvent, Notice
from ..base import ModelRequest
from ..fim import FillRequest, TextCompletionsDecoder
from ..transport import StreamDecoder
from .chat import OpenAIChat
from .chat_stream import ChatCompletionsDecoder

_EMPTY = ModelRequest(messages=())


class OpenAICompletions(OpenAIChat):
    """A model behind an OpenAI-compatible `/completions` that fills in the middle (the
    `openai-completions` and `deepseek` rows: only their endpoints differ)."""

    speaks_for = "openai-completions"

    path = "/completions"
    takes_suffix = True
    """False once the server refused `suffix` (vLLM): the prefix alone is continued."""

    def fill(self, request: FillRequest) -> AsyncIterator[ModelEvent]:
        """Stream the middle: `TextDelta`s, then the `ModelResponse`."""
        return self._fill(request)

    def fill_body(self, request: FillRequest) -> dict[str, Any]:
        """The request body, as the provider documents it; options not set are left out."""
        body: dict[str, Any] = {
            "model": self.name,
            "prompt": request.prompt(),
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stream": True,
        }
        if self.takes_suffix:
            body["suffix"] = request.suffix
        if request.stop:
            body["stop"] = list(request.stop)
        return body

    def decoder(self) -> StreamDecoder:
        return TextCompletionsDecoder()

    async def _fill(self, request: FillRequest) -> AsyncIterator[ModelEvent]:
        try:
            async for event in self._post(
                _EMPTY, self.path, self.fill_body(request), self.decoder()
            ):
                yield event
        except ModelHTTPError as error:
            if not (self.takes_suffix and error.status == 400 and "suffix" in str(error).lower()):
                raise
            self.takes_suffix = False
            yield Notice(
                text=f"{self.provider}: {self.name} takes no suffix; continuing the prefix"
            )
            async for event in self._fill(request):  # once: it takes no suffix now
                yield event


class MistralFill(OpenAICompletions):
    """Mistral's FIM endpoint (`mistral:codestral-latest`): its own path, and its stream is
    Chat Completions chunks."""

    speaks_for = "mistral"
    path = "/fim/completions"

    def decoder(self) -> StreamDecoder:
        return ChatCompletionsDecoder()
