"""Fill-in-the-middle on a llama.cpp server: `POST /infill`.

Follows llama.cpp's server README ("POST /infill: For code infilling"): `input_prefix`,
`input_suffix`, `input_extra` (an array of `{"filename", "text"}` chunks put before the FIM
prefix, with the model's repo-level tokens where it has them), and every option of
`/completion` (`n_predict`, `temperature`, `stop`, `stream`). Streamed, each event is
`data: {"content": "<piece>", "stop": false, ...}`; the last one has `"stop": true` with
`stop_type` (`eos`, `limit`, `word`), `tokens_evaluated`, `tokens_predicted` and `timings`
(`fim.InfillDecoder`). The server is an OpenAI-compatible one too, so this sits beside the
other local servers' wires; `LLAMA_CPP_BASE_URL` says where it is.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ...events import ModelEvent
from ..base import ModelRequest
from ..fim import FillRequest, InfillDecoder
from .chat import OpenAIChat


class LlamaCppFill(OpenAIChat):
    """The model a llama.cpp server runs (`llamacpp:qwen2.5-coder`; the name is only a label)."""

    speaks_for = "llamacpp"

    def fill(self, request: FillRequest) -> AsyncIterator[ModelEvent]:
        return self._post(
            ModelRequest(messages=()), "/infill", self.fill_body(request), InfillDecoder()
        )

    def fill_body(self, request: FillRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "input_prefix": request.prefix,
            "input_suffix": request.suffix,
            "input_extra": [
                {"filename": name, "text": text} for name, text in request.context if text
            ],
            "n_predict": request.max_tokens,
            "temperature": request.temperature,
            "stream": True,
        }
        if request.stop:
            body["stop"] = list(request.stop)
        return body
