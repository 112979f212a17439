"""Fill-in-the-middle on Ollama: its native `POST /api/generate` with `suffix`.

Follows Ollama's API reference (docs/api.md, "Generate a completion"; the "suffix" example):
the body is `{"model", "prompt", "suffix", "stream": true, "options": {"num_predict",
"temperature", "stop"}}`, and the answer is newline-delimited JSON, one object per line:
`{"model", "created_at", "response": "<text>", "done": false}` for each piece, then one with
`"done": true`, `"done_reason"`, `"prompt_eval_count"` and `"eval_count"`. A model whose template
has no suffix answers `400 {"error": "... does not support insert"}`; an error after the stream
began is a line `{"error": "..."}`. Ollama fills the model's own FIM template itself.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from ...errors import StreamError
from ...events import ModelEvent, TextDelta
from ...messages import AssistantMessage, Usage
from ...text import server_text, shorten
from ..base import ModelRequest
from ..fim import FillRequest
from ..transport import stream_reply
from .ollama import OllamaChat, native_url


class NDJSONGenerateDecoder:
    """Ollama's `/api/generate` stream: bytes in, events out; `done` at the `"done": true` line."""

    def __init__(self) -> None:
        self.done = False
        self._pending = b""
        self._text: list[str] = []
        self._finish: str | None = None
        self._usage: Usage | None = None

    def feed(self, data: bytes) -> list[ModelEvent]:
        if self.done:
            return []
        lines = (self._pending + data).split(b"\n")
        self._pending = lines.pop()
        out: list[ModelEvent] = []
        for line in lines:
            self._line(line, out)
            if self.done:
                break
        return out

    def flush(self) -> list[ModelEvent]:
        out: list[ModelEvent] = []
        if self._pending and not self.done:
            line, self._pending = self._pending, b""
            self._line(line, out)
        return out

    def close(self) -> AssistantMessage:
        self.flush()
        return AssistantMessage(
            text="".join(self._text), finish_reason=self._finish, usage=self._usage
        )

    def _line(self, line: bytes, out: list[ModelEvent]) -> None:
        if not line.strip():
            return
        try:
            chunk: Any = json.loads(line)
        except ValueError:
            raise StreamError(
                f"ollama sent a line that is not JSON: {shorten(line.decode('utf-8', 'replace'), 120)!r}",
                body=line.decode("utf-8", "replace"),
            ) from None
        if not isinstance(chunk, dict):
            raise StreamError("ollama sent a line that is not a JSON object", body=chunk)
        if chunk.get("error"):
            raise StreamError(
                f"ollama reported an error: {server_text(chunk['error'])}", body=chunk
            )
        text = chunk.get("response")
        if text:
            self._text.append(text)
            out.append(TextDelta(text=text))
        if chunk.get("done"):
            self.done = True
            self._finish = str(chunk.get("done_reason") or "stop")
            self._usage = Usage(
                input_tokens=int(chunk.get("prompt_eval_count") or 0),
                output_tokens=int(chunk.get("eval_count") or 0),
                raw={k: chunk[k] for k in ("prompt_eval_count", "eval_count") if k in chunk},
            )


class OllamaFill(OllamaChat):
    """A code model on Ollama that fills in the middle (`ollama:qwen2.5-coder:1.5b`)."""

    def fill(self, request: FillRequest) -> AsyncIterator[ModelEvent]:
        return self._fill(request)

    def fill_body(self, request: FillRequest) -> dict[str, Any]:
        options: dict[str, Any] = {
            "num_predict": request.max_tokens,
            "temperature": request.temperature,
        }
        if request.stop:
            options["stop"] = list(request.stop)
        return {
            "model": self.name,
            "prompt": request.prompt(),
            "suffix": request.suffix,
            "stream": True,
            "options": options,
        }

    def _fill(self, request: FillRequest) -> AsyncIterator[ModelEvent]:
        body = self.fill_body(request)
        base = native_url(self.base_url)

        async def send() -> Any:
            client = self.endpoint.client(base)  # the administrator's policy, for this URL
            _, headers = await self.prepare_request(ModelRequest(messages=()))
            headers["Accept"] = "application/x-ndjson"
            wire = client.build_request("POST", f"{base}/api/generate", json=body, headers=headers)
            return await client.send(wire, stream=True)

        return stream_reply(
            send,
            NDJSONGenerateDecoder(),
            provider=self.provider,
            where=base,
            sign_in_hint=self.sign_in_hint(),
            policy=self.retry,
            reach_hint=self.endpoint.reach_hint(),
        )
