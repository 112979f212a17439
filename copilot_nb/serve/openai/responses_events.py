"""Our replies in the Responses API's wire shape: pure, the route only writes the bytes.

`ResponseEncoder` turns a model stream into the typed events OpenAI sends (`response.created`,
`response.output_item.added`, `response.output_text.delta`, `response.function_call_arguments
.delta`, `response.output_item.done`, `response.completed`, ...), each framed with its `event:`
line and a `sequence_number`. The non-streamed reply is the same encoder's final Response
object, so the two cannot drift. Reasoning becomes a reasoning item with one summary part, text a
message item, each tool call a `function_call` item; a call opens once its id and name are known
(its argument text waits until then) and closes with the reply, with the arguments the final
message holds.
"""

from __future__ import annotations

import itertools
import json
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from ...agent.conversations.usage import tokens_of
from ...events import ToolCallDelta
from ...messages import AssistantMessage, ToolCall, Usage
from .api_errors import ApiError
from .chat_response import finish_reason, tool_call_body
from .responses_echo import UNASKED
from .stream_encoder import StreamEncoder

_INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}
"""Finish reasons (as `chat_response.finish_reason` words them) that make a reply incomplete."""


def usage_body(usage: Usage | None) -> dict[str, Any]:
    """Usage as a Response carries it, its details read from whichever wire the upstream
    speaks (`tokens_of`: input is the whole prompt, cached tokens part of it; 0 where the
    upstream reported none)."""
    tokens = tokens_of(usage or Usage())
    return {
        "input_tokens": tokens["input"],
        "input_tokens_details": {
            "cached_tokens": tokens["cached"],
            "cache_write_tokens": tokens["cache_write"],
        },
        "output_tokens": tokens["output"],
        "output_tokens_details": {"reasoning_tokens": tokens["reasoning"]},
        "total_tokens": tokens["input"] + tokens["output"],
    }


def failure_code(error: ApiError) -> str:
    """One of the codes a Response's `error` may hold, for a failure the proxy relays."""
    return "rate_limit_exceeded" if error.status == 429 else "server_error"


def _message_item() -> dict[str, Any]:
    return {
        "id": f"msg_{uuid.uuid4().hex}",
        "type": "message",
        "status": "in_progress",
        "role": "assistant",
        "content": [],
    }


class ResponseEncoder(StreamEncoder):
    """A model stream as Responses events: `start()`, `event(e)` for each event (the last one a
    `ModelResponse`), or `error(e)` in place of the rest; `response` is the Response object as
    it stands (the whole reply once the stream ended)."""

    def __init__(
        self,
        *,
        model: str,
        response_id: str,
        created: int,
        echo: Mapping[str, Any],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.model = model
        self.response_id = response_id
        self.created = created
        self.echo = dict(echo)
        self.clock = clock
        """When the reply completed (`completed_at`), read as it does."""
        self.output: list[dict[str, Any]] = []
        self.status = "in_progress"
        self.extra: dict[str, Any] = {}
        self._sequence = itertools.count()
        self._open: dict[str, int] = {}  # "message" / "reasoning" -> the output index open
        self._texts: dict[int, list[str]] = {}  # output index -> text streamed into it
        self._calls: dict[int, int] = {}  # the model's call index -> output index, once open
        self._waiting: dict[int, dict[str, Any]] = {}  # calls whose id or name has not come
        self._order: list[int] = []  # the model's call indexes in the order they started

    @property
    def response(self) -> dict[str, Any]:
        return {
            "id": self.response_id,
            "object": "response",
            "created_at": self.created,
            "completed_at": None,
            "status": self.status,
            "error": None,
            "incomplete_details": None,
            "model": self.model,
            "output": [dict(item) for item in self.output],
            "usage": None,
            **UNASKED,
            **self.echo,
            **self.extra,
        }

    def start(self) -> bytes:
        return self._event("response.created", response=self.response) + self._event(
            "response.in_progress", response=self.response
        )

    def _text(self, text: str) -> bytes:
        return self._piece("message", text)

    def _reasoning(self, text: str) -> bytes:
        return self._piece("reasoning", text)

    def done(self) -> bytes:
        """Nothing: a Responses stream ends at its terminal event, with no `[DONE]`."""
        return b""

    def error(self, error: ApiError) -> bytes:
        """A failure after the stream started: OpenAI's `error` event, then `response.failed`."""
        self.status = "failed"
        self.extra = {"error": {"code": failure_code(error), "message": error.message}}
        return self._event(
            "error", code=error.code, message=error.message, param=error.param
        ) + self._event("response.failed", response=self.response)

    # --- items ----------------------------------------------------------------------------------

    def _piece(self, kind: str, text: str) -> bytes:
        if not text:
            return b""
        out = b"" if kind in self._open else self._close_open() + self._open_item(kind)
        index = self._open[kind]
        self._texts[index].append(text)
        if kind == "message":
            return out + self._event(
                "response.output_text.delta", **self._part_head(index), delta=text, logprobs=[]
            )
        return out + self._event(
            "response.reasoning_summary_text.delta", **self._summary_head(index), delta=text
        )

    def _open_item(self, kind: str) -> bytes:
        index = len(self.output)
        self._open[kind] = index
        self._texts[index] = []
        if kind == "message":
            self.output.append(_message_item())
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            return self._added(index) + self._event(
                "response.content_part.added", **self._part_head(index), part=part
            )
        self.output.append({"id": f"rs_{uuid.uuid4().hex}", "type": "reasoning", "summary": []})
        part = {"type": "summary_text", "text": ""}
        return self._added(index) + self._event(
            "response.reasoning_summary_part.added", **self._summary_head(index), part=part
        )

    def _close_open(self) -> bytes:
        """Close the open message or reasoning item: something else begins."""
        out = b""
        for kind, index in sorted(self._open.items(), key=lambda pair: pair[1]):
            text = "".join(self._texts[index])
            if kind == "message":
                part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
                out += self._event(
                    "response.output_text.done", **self._part_head(index), text=text, logprobs=[]
                )
                out += self._event(
                    "response.content_part.done", **self._part_head(index), part=part
                )
                self.output[index] = {
                    **self.output[index],
                    "status": "completed",
                    "content": [part],
                }
            else:
                part = {"type": "summary_text", "text": text}
                head = self._summary_head(index)
                out += self._event("response.reasoning_summary_text.done", **head, text=text)
                out += self._event("response.reasoning_summary_part.done", **head, part=part)
                self.output[index] = {**self.output[index], "summary": [part]}
            out += self._event(
                "response.output_item.done", output_index=index, item=self.output[index]
            )
        self._open.clear()
        return out

    def _tool_delta(self, delta: ToolCallDelta) -> bytes:
        if delta.index in self._calls:
            if not delta.arguments:
                return b""
            index = self._calls[delta.index]
            self._texts[index].append(delta.arguments)
            return self._arguments_delta(index, delta.arguments)
        if delta.index not in self._waiting:
            self._order.append(delta.index)
        waiting = self._waiting.setdefault(delta.index, {"arguments": ""})
        waiting.update({key: value for key in ("id", "name") if (value := getattr(delta, key))})
        waiting["arguments"] += delta.arguments
        if "id" not in waiting or "name" not in waiting:
            return b""
        del self._waiting[delta.index]
        out = self._close_open() + self._open_call(delta.index, waiting["id"], waiting["name"])
        if waiting["arguments"]:
            index = self._calls[delta.index]
            self._texts[index].append(waiting["arguments"])
            out += self._arguments_delta(index, waiting["arguments"])
        return out

    def _open_call(self, model_index: int, call_id: str, name: str) -> bytes:
        index = len(self.output)
        self._calls[model_index] = index
        self._texts[index] = []
        self.output.append(
            {
                "id": f"fc_{uuid.uuid4().hex}",
                "type": "function_call",
                "status": "in_progress",
                "call_id": call_id,
                "name": name,
                "arguments": "",
            }
        )
        return self._added(index)

    def _close_call(self, index: int, call: ToolCall | None) -> bytes:
        arguments = "".join(self._texts[index])
        if call is not None:
            arguments = tool_call_body(call)["function"]["arguments"]
        item = {**self.output[index], "status": "completed", "arguments": arguments}
        self.output[index] = item
        head = {"item_id": item["id"], "output_index": index}
        done = self._event("response.function_call_arguments.done", **head, arguments=arguments)
        return done + self._event("response.output_item.done", output_index=index, item=item)

    def _finish(self, message: AssistantMessage) -> bytes:
        """What the final message holds that was not streamed, every open item closed, and
        the terminal event: `response.completed`, or `response.incomplete` when cut off."""
        out = b""
        if message.reasoning and not any(i["type"] == "reasoning" for i in self.output):
            out += self._piece("reasoning", message.reasoning)
        if message.text and not any(i["type"] == "message" for i in self.output):
            out += self._piece("message", message.text)
        out += self._close_open()
        if message.refusal:
            out += self._refusal(message.refusal)
        final = list(message.tool_calls)
        for position, model_index in enumerate(self._order):
            call = final[position] if position < len(final) else None
            if model_index not in self._calls and call is not None:
                out += self._open_call(model_index, call.id, call.name)
            if model_index in self._calls:
                out += self._close_call(self._calls[model_index], call)
        for call in final[len(self._order) :]:  # calls only the final message had
            out += self._open_call(-1 - len(self._calls), call.id, call.name)
            out += self._close_call(len(self.output) - 1, call)
        reason = _INCOMPLETE.get(finish_reason(message))
        self.status = "incomplete" if reason else "completed"
        self.extra = {"usage": usage_body(message.usage)}
        if reason:
            self.extra["incomplete_details"] = {"reason": reason}
        else:
            self.extra["completed_at"] = max(self.created, int(self.clock()))
        return out + self._event(f"response.{self.status}", response=self.response)

    def _refusal(self, refusal: str) -> bytes:
        """A refusal, which our models give only whole: a message item of its own."""
        index = len(self.output)
        self.output.append(_message_item())
        head = self._part_head(index)
        empty = {"type": "refusal", "refusal": ""}
        out = self._added(index)
        out += self._event("response.content_part.added", **head, part=empty)
        part = {**empty, "refusal": refusal}
        out += self._event("response.refusal.delta", **head, delta=refusal)
        out += self._event("response.refusal.done", **head, refusal=refusal)
        out += self._event("response.content_part.done", **head, part=part)
        self.output[index] = {**self.output[index], "status": "completed", "content": [part]}
        return out + self._event(
            "response.output_item.done", output_index=index, item=self.output[index]
        )

    # --- framing --------------------------------------------------------------------------------

    def _added(self, index: int) -> bytes:
        item = self.output[index]
        return self._event("response.output_item.added", output_index=index, item=item)

    def _part_head(self, index: int) -> dict[str, Any]:
        return {"item_id": self.output[index]["id"], "output_index": index, "content_index": 0}

    def _summary_head(self, index: int) -> dict[str, Any]:
        return {"item_id": self.output[index]["id"], "output_index": index, "summary_index": 0}

    def _arguments_delta(self, index: int, text: str) -> bytes:
        head = {"item_id": self.output[index]["id"], "output_index": index}
        return self._event("response.function_call_arguments.delta", **head, delta=text)

    def _event(self, kind: str, **fields: Any) -> bytes:
        payload = {"type": kind, "sequence_number": next(self._sequence), **fields}
        data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        return f"event: {kind}\ndata: {data}\n\n".encode()
