"""`CopilotChat`: GitHub Copilot's chat models, each asked through an endpoint that serves it.

Every request carries a short-lived Copilot token, set and renewed by `CopilotAuth` (see
`copilot_auth`), and the editor headers the Copilot API insists on (`copilot_headers`). The model
asks the auth for the token before it builds a request, because the token names the API base URL
to use (`endpoints.api`, which differs for individual, business and enterprise accounts).

Copilot serves a model through the endpoints its `/models` entry lists (`copilot_models`):
Claude in Anthropic's Messages format, the GPT-5 codex line only through the Responses API,
the rest through Chat Completions. `CopilotChat` is one model to its users; inside, it asks
through the best endpoint the list names, speaking that endpoint's protocol with the code of
`AnthropicChat`, `OpenAIResponses` or `OpenAIChat`. An answer that the model is not served there
(`unsupported_api_for_model`) is followed by one new route, from a freshly read list.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import httpx

from ...errors import (
    AuthError,
    CopilotError,
    LookupFailed,
    ModelConnectionError,
    ModelError,
    ModelHTTPError,
)
from ...events import ModelEvent, Notice
from ..anthropic.cache import takes_breakpoints
from ..anthropic.chat import ANTHROPIC_VERSION, AnthropicChat
from ..base import MessagesIn, ModelRequest
from ..capabilities import ImageLimits, carries_images, image_limits_for
from ..lookups import lookup
from ..openai.chat import LIST_TIMEOUT, OpenAIChat
from ..openai.responses import OpenAIResponses
from ..transport import error_text, http_error, provider_message
from .auth import REFRESH_MARGIN, CopilotAuth, CopilotToken
from .cache_hints import copilot_cache_hints
from .catalog import (
    MESSAGES,
    PREFERENCE,
    RESPONSES,
    CopilotModelInfo,
    choose_endpoint,
    parse_models,
    unsupported_api,
)
from .github_tokens import GitHubHosts, GitHubToken
from .headers import EditorHeaders, editor_refusal

__all__ = ["CopilotChat", "CopilotModelInfo", "initiator", "parse_models"]

SPOKEN = PREFERENCE
"""The endpoints `CopilotChat` speaks, best first: Messages, Responses, Chat Completions."""


def initiator(messages: MessagesIn) -> str:
    """`user` when the user just asked, `agent` for the loop's follow-up rounds (tool results).

    Copilot counts premium requests by this header, as VS Code's agent mode sends it.
    """
    if not messages:
        return "user"
    last = messages[-1]
    role = last.get("role") if isinstance(last, Mapping) else getattr(last, "role", None)
    return "user" if role == "user" else "agent"


class CopilotChat(OpenAIChat):
    """A GitHub Copilot chat model (`copilot:gpt-4o`); sign in once with `%copilot login`.

    `editor_version`, `editor_plugin_version`, `user_agent` and `integration_id` override the
    editor identification sent to Copilot (also `COPILOT_NB_EDITOR_VERSION` and friends).
    """

    speaks_for = "copilot"
    spoken: tuple[str, ...] = SPOKEN

    def __init__(
        self,
        model: str,
        *,
        github_token: str | GitHubToken | None = None,
        hosts: GitHubHosts | None = None,
        clock: Callable[[], float] = time.time,
        refresh_margin: float = REFRESH_MARGIN,
        editor_version: str | None = None,
        editor_plugin_version: str | None = None,
        user_agent: str | None = None,
        integration_id: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(model, **options)
        if isinstance(github_token, str):
            github_token = GitHubToken(value=github_token, source="the github_token argument")
        self.editor = EditorHeaders.resolve(
            editor_version=editor_version,
            editor_plugin_version=editor_plugin_version,
            user_agent=user_agent,
            integration_id=integration_id,
        )
        self.auth: CopilotAuth = CopilotAuth(
            github_token=github_token,
            hosts=hosts or GitHubHosts.from_env(),
            client=self.endpoint.client,
            cassette=self.endpoint.cassette,
            clock=clock,
            refresh_margin=refresh_margin,
            editor=self.editor,
        )
        self.context_window: int | None = None
        self.max_prompt_tokens: int | None = None
        self.info: CopilotModelInfo | None = None
        """This model's entry in the last `/models` list read, if it was there."""
        self._listed = False
        self._messages: _CopilotMessages | None = None
        self._responses: _CopilotResponses | None = None

    async def copilot_token(self) -> CopilotToken:
        """The Copilot token for the next request, signing in first; it also names the API base
        URL, which becomes `base_url`."""
        token = await self.auth.token()
        self.base_url = token.api_url
        return token

    async def prepare_request(
        self, request: ModelRequest | None = None
    ) -> tuple[str, dict[str, str]]:
        """The Copilot API base URL and the editor headers; the auth adds the token."""
        await self.copilot_token()
        headers = {
            "Accept": "text/event-stream",
            **self.editor.as_headers(),
            "Openai-Intent": "conversation-panel",
            "X-Initiator": initiator(request.messages) if request is not None else "user",
            "X-Request-Id": str(uuid.uuid4()),
            **self.endpoint.headers,
        }
        if request is not None and carries_images(request.messages):
            headers["Copilot-Vision-Request"] = "true"  # else images are refused
        return self.base_url, headers

    def image_limits(self) -> ImageLimits | None:
        """What the model list says (`supports.vision`, `limits.vision`), unless `vision` is set;
        the name table before the list is read."""
        info = self.info
        limits = image_limits_for(self.name, self.vision, info.vision if info else None)
        if limits is None or info is None:
            return limits
        return limits.narrowed(
            max_images=info.max_images,
            max_bytes=info.max_image_bytes,
            media_types=info.image_types,
        )

    cache_prompt: bool | None = None
    """Whether Chat Completions requests mark the prompt cache with Copilot's own
    `copilot_cache_control` (`cache_hints.py`). None: for a model whose cache needs
    breakpoints (Claude), by the family Copilot's model list gives, else by its name; GPT
    models on Copilot cache by themselves."""

    def cache_hints(self, body: dict[str, Any], request: ModelRequest) -> None:
        """Copilot's cache marks on a Chat Completions body, for Claude."""
        super().cache_hints(body, request)
        marks = self.cache_prompt
        if marks is None:
            marks = takes_breakpoints(self.name, self.info.family if self.info else "")
        if marks:
            copilot_cache_hints(body)

    def route(self, *, refused: tuple[str, ...] = ()) -> str | None:
        """The API the next request goes through (`/v1/messages`, `/responses` or
        `/chat/completions`; None: none that serves this model)."""
        return choose_endpoint(self.info, spoken=self.spoken, refused=refused)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Through the endpoint the model list names; once more through another after the API
        says the model is not served there."""
        await self.copilot_token()  # a sign-in problem surfaces as such
        if not self._listed:
            self._listed = True
            try:
                await self.list_models()
            except LookupFailed as exc:  # not asked again: each request would wait as long
                yield Notice(text=f"{exc}; asking {self.name} without what the list says of it")
            except CopilotError:
                pass  # the list is a help, not a requirement: the request says what is wrong
        info = self.info
        if request.tools and info is not None and info.tool_calls_listed and not info.tool_calls:
            yield Notice(
                text=f"copilot: {self.name} cannot call tools (Copilot's model list says so); "
                "asking without them, so it can only answer in text"
            )
            request = request.without_tools()
        refused: tuple[str, ...] = ()
        while True:
            endpoint = self.route(refused=refused)
            if endpoint is None:
                raise ModelError(self._no_endpoint(refused))
            try:
                async for event in self._through(endpoint, request):
                    yield event
                return
            except ModelHTTPError as error:
                if refused or not unsupported_api(error.body):
                    explained = self._explained(error)
                    if explained is error:
                        raise
                    raise explained from error
                refused = (endpoint,)
            with contextlib.suppress(CopilotError):
                await self.list_models()
            again = self.route(refused=refused)
            if again is not None:
                yield Notice(
                    text=f"copilot: {self.name} is not served on {endpoint}; asking through {again}"
                )

    def _through(self, endpoint: str, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if endpoint == MESSAGES:
            if self._messages is None:
                self._messages = _CopilotMessages(self)
            return self._messages._stream(request)
        if endpoint == RESPONSES:
            if self._responses is None:
                self._responses = _CopilotResponses(self)
            return self._responses._stream(request)
        return super()._stream(request)

    def _no_endpoint(self, refused: tuple[str, ...]) -> str:
        listed = ", ".join(self.info.endpoints) if self.info and self.info.endpoints else None
        if refused:
            return (
                f"copilot: the Copilot API does not serve {self.name} through {refused[0]}, and "
                f"its model list names no other endpoint copilot_nb speaks"
                + (f" (it lists {listed})" if listed else "")
                + ". Choose another model: `%copilot models copilot` shows how each is served."
            )
        return (
            f"copilot: {self.name} is served only through {listed}, which copilot_nb does not "
            f"speak (it speaks {', '.join(self.spoken)}). Choose another model: "
            "`%copilot models copilot` shows how each is served."
        )

    def _explained(self, error: ModelHTTPError) -> ModelHTTPError:
        """An error that names the setting to change when the API refused our editor headers."""
        if error.status != 400 or isinstance(error, AuthError):
            return error
        detail = provider_message(error.body)
        hint = editor_refusal(detail, self.editor)
        if hint is None:
            return error
        return ModelHTTPError(
            f"copilot: {hint} (the API said: {detail.strip()})",
            status=error.status,
            body=error.body,
        )

    async def list_models(self) -> list[CopilotModelInfo]:
        """The models this account may use, from `{api}/models`."""
        base_url, headers = await self.prepare_request()
        headers["Accept"] = "application/json"
        client = self.endpoint.client()
        url = f"{base_url}/models"
        asked = client.build_request("GET", url, headers=headers, timeout=LIST_TIMEOUT)
        what = f"copilot: the model list at {url}"
        try:
            response = await lookup(client, asked, limits=self.lookups, what=what, auth=self.auth)
        except httpx.TransportError as exc:
            raise ModelConnectionError(
                f"copilot: could not reach {base_url}/models: {error_text(exc)}"
            ) from exc
        if response.status_code >= 400:
            error = http_error(response, provider=self.provider, sign_in_hint=self.sign_in_hint())
            raise self._explained(error)
        models = parse_models(response.json())
        self._listed = True
        for info in models:
            if info.id == self.name:  # the context budget reads these limits
                self.info = info
                self.context_window = info.context_window
                self.max_prompt_tokens = info.max_prompt_tokens
        return models


class _CopilotMessages(AnthropicChat):
    """Claude through Copilot's `/v1/messages`: Anthropic's request and decoder, with Copilot's
    token, editor headers, retries and connections."""

    label = "copilot"

    def __init__(self, owner: CopilotChat) -> None:
        output = owner.info.max_output_tokens if owner.info else None
        super().__init__(
            owner.name,
            endpoint=owner.endpoint,  # its address, connections, retries, policy and tape
            max_tokens=min(8192, output) if output else 8192,
        )
        self._owner = owner
        self.auth = owner.auth

    def image_limits(self) -> ImageLimits | None:
        return self._owner.image_limits()

    async def prepare_request(self, request: ModelRequest) -> tuple[str, dict[str, str]]:
        base_url, headers = await self._owner.prepare_request(request)
        headers["anthropic-version"] = ANTHROPIC_VERSION
        headers["Content-Type"] = "application/json"
        return base_url, headers


class _CopilotResponses(OpenAIResponses):
    """A model served through Copilot's `/responses`: the Responses request and decoder, with
    Copilot's token, editor headers, retries and connections."""

    def __init__(self, owner: CopilotChat) -> None:
        super().__init__(owner.name, endpoint=owner.endpoint)
        self._owner = owner
        self.auth = owner.auth

    def image_limits(self) -> ImageLimits | None:
        return self._owner.image_limits()

    async def prepare_request(
        self, request: ModelRequest | None = None
    ) -> tuple[str, dict[str, str]]:
        return await self._owner.prepare_request(request)
