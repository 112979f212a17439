"""An endpoint: where one model's requests go, and everything they need on the way there.

A provider (`provider.py`) builds one for each model, as pydantic-ai's `Provider` builds the
client its models use. The endpoint holds the base URL and the key, both read at each request
(given in code, else the provider's variables as they are now, through `env_settings`, so a key
fixed with `%env` counts from the next request), the header the key is sent in, the retry
policy, the connections (one pool per event loop), the administrator's policy, run before every
request leaves, and the tape: where requests are recorded or replayed, chosen by the one that
runs the model (a turn's cassette stage), never read from a global. A wire (`OpenAIChat`,
`AnthropicChat`, ...) speaks its protocol through an endpoint and reads no setting itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

import httpx

from .cassettes.cassette import Cassette
from .env_settings import FromEnv
from .transport import DEFAULT_TIMEOUT, LoopBoundClient, RetryPolicy, Tape

WindowSource = Literal["server", "ollama", "catalog", "name"]
"""Where a model's context window comes from: a local server's `/v1/models` or `/props`
(`server_props.ask_window`), Ollama's `/api/show` (`server_props.window_from_ollama_show`), the
provider's own model list (Copilot's `/models`), or the model's name (`capabilities`); the
user's `COPILOT_NB_CONTEXT_WINDOW` wins over each."""


@dataclass(frozen=True)
class Key:
    """A variable a provider's key is read from, and how the key is sent: `Authorization:
    Bearer <key>` unless the provider says otherwise (Anthropic's `x-api-key: <key>`)."""

    env: str
    header: str = "Authorization"
    scheme: str = "Bearer"

    def headers(self, value: str) -> dict[str, str]:
        return {self.header: f"{self.scheme} {value}" if self.scheme else value}


GIVEN = Key("")
"""The one key of a provider that reads none from a variable: a key given in code."""


class Reach(Protocol):
    """What an endpoint needs of its provider (`provider.Provider` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def keys(self) -> tuple[Key, ...]: ...
    @property
    def base_url_env(self) -> str: ...
    @property
    def base_url(self) -> str: ...
    @property
    def sign_in(self) -> str: ...
    @property
    def window(self) -> WindowSource: ...

    def check(self, model: str, base_url: str | None = None) -> None: ...


class Outgoing(Protocol):
    """A running turn's say on each request as it leaves (`telemetry.watch.TurnWatch`)."""

    def check(self) -> None:
        """Raise (BudgetExceeded) if the request may not leave."""

    def headers(self) -> dict[str, str]:
        """Headers the request carries for the turn (a trace id, the trace context)."""


class Endpoint:
    """One model's way to its provider: address, key, retries, connections, policy and tape."""

    def __init__(
        self,
        provider: Reach,
        model: str,
        *,
        api_key: str | None = None,
        keys: Mapping[str, str | None] | None = None,
        base_url: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        max_retries: int = 2,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        """`api_key`: the key for the provider's first key variable, given in code (None: read
        the variables at each request; "": send none); `keys`: values given for others, by
        variable (Anthropic's `ANTHROPIC_AUTH_TOKEN`); `base_url`: the server, given in code."""
        self.provider = provider
        self.model = model
        self._given: dict[str, str] = {k: v for k, v in (keys or {}).items() if v is not None}
        if api_key is not None:
            self._given[self._keys()[0].env] = api_key
        self._variables = {key.env: FromEnv(key.env, default=None) for key in provider.keys}
        self._address = (
            FromEnv(provider.base_url_env, default=None, url=True)
            if provider.base_url_env
            else None
        )
        self.base_url = base_url
        self.headers = dict(headers or {})
        self.retry = RetryPolicy(max_retries=max_retries)
        self.tape: Tape | None = None
        """Where its requests are recorded or replayed now (None: live): the runner's choice."""
        self.outgoing: Outgoing | None = None
        """The running turn's check and headers for each request (a turn's `watched` stage)."""
        self._options = (timeout, max_retries, http_client)
        self.connections = LoopBoundClient(
            timeout=timeout, guard=self.check, tape=self.cassette, client=http_client
        )

    def __repr__(self) -> str:
        return f"Endpoint({self.provider.name!r}, {self.model!r}, base_url={self.base_url!r})"

    # --- where and who ----------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The server given in code, else the provider's variable as it is now, else its
        default; without a trailing `/`, so paths join."""
        value = self._base_url
        if value is None and self._address is not None:
            value = self._address.from_environment()
        return (value or self.provider.base_url).rstrip("/")

    @base_url.setter
    def base_url(self, value: str | None) -> None:
        self._base_url = value or None

    def _keys(self) -> tuple[Key, ...]:
        return self.provider.keys or (GIVEN,)

    def credential(self) -> tuple[Key, str] | None:
        """The key the next request carries and the variable it stands for: each of the
        provider's keys in turn, given in code or set in the environment now; the first wins."""
        for key in self._keys():
            value = self._given.get(key.env)
            if value is None and key.env:
                value = self._variables[key.env].from_environment()
            if value:
                return key, value
        return None

    @property
    def api_key(self) -> str | None:
        """The key the next request carries, if any."""
        found = self.credential()
        return found[1] if found else None

    def auth_headers(self) -> dict[str, str]:
        """The headers that carry the key (none without one), after the endpoint's own."""
        found = self.credential()
        turn = self.outgoing.headers() if self.outgoing is not None else {}
        return {**self.headers, **turn, **(found[0].headers(found[1]) if found else {})}

    def given(self) -> bool:
        """Whether the base URL was given in code rather than read from a variable."""
        return self._base_url is not None

    # --- what to tell the user --------------------------------------------------------------

    def sign_in_hint(self) -> str:
        """What to do when the server refused the request's credentials."""
        sign_in = self.provider.sign_in
        found = self.credential()
        if found is None:
            first = self.provider.keys[0].env if self.provider.keys else ""
            return f"{first} is not set. {sign_in}" if first else sign_in
        key = found[0]
        if key.env in self._given or not key.env:
            return f"Check the key given in code{f' for {key.env}' if key.env else ''}: it was refused."
        return f"Check {key.env}: the key was refused. {sign_in}"

    def reach_hint(self) -> str:
        """What to check when the server cannot be reached: the variable that names it, unless
        code gave the address."""
        variable = self.provider.base_url_env
        if variable and not self.given():
            return f"Check that the server is running, or set {variable} to where it is."
        return "Check that the server is running and reachable from this kernel."

    # --- how requests leave -----------------------------------------------------------------

    def check(self, url: str | None = None) -> None:
        """The administrator's policy for a request to `url` (None: the base URL) as it leaves."""
        self.provider.check(self.model, url or self.base_url)
        if self.outgoing is not None:
            self.outgoing.check()  # the turn's budget, before anything is sent

    def client(self, url: str | None = None) -> httpx.AsyncClient:
        """The client for one request to `url` (None: the base URL), once the policy allows it."""
        return self.connections.get(url)

    def cassette(self) -> Cassette | None:
        """The cassette its requests are recorded to or replayed from now, if any."""
        return self.tape() if self.tape is not None else None

    def tape_with(self, cassette: Cassette | None) -> Callable[[], None]:
        """Its requests recorded to or replayed from `cassette` from now on (a turn's); returns
        what puts its tape back as it was (the turn's tear-down)."""
        before = self.tape
        self.tape = lambda: cassette

        def restore() -> None:
            self.tape = before

        return restore

    def outgoing_with(self, outgoing: Outgoing | None) -> Callable[[], None]:
        """Each request checked and marked by `outgoing` from now on (a turn's); returns what
        puts it back as it was (the turn's tear-down)."""
        before = self.outgoing
        self.outgoing = outgoing

        def restore() -> None:
            self.outgoing = before

        return restore

    def for_model(self, model: str) -> Endpoint:
        """A new endpoint of the same provider and given settings, for another model."""
        timeout, max_retries, http_client = self._options
        return Endpoint(
            self.provider,
            model,
            keys=self._given if self.provider.keys else None,
            api_key=self._given.get("") if not self.provider.keys else None,
            base_url=self._base_url,
            headers=self.headers,
            timeout=timeout,
            max_retries=max_retries,
            http_client=http_client,
        )

    async def aclose(self) -> None:
        """Close its connections (on the loop that opened them)."""
        await self.connections.aclose()


__all__ = ["GIVEN", "Endpoint", "Key", "Outgoing", "Reach", "WindowSource"]


class OnEndpoint:
    """A model whose base URL, key and retry policy are its endpoint's, read now: one place for
    the three, whichever wire the model speaks."""

    endpoint: Endpoint

    @property
    def base_url(self) -> str:
        """Its endpoint's base URL now (given in code, else its provider's variable)."""
        return self.endpoint.base_url

    @base_url.setter
    def base_url(self, value: str | None) -> None:
        self.endpoint.base_url = value

    @property
    def api_key(self) -> str | None:
        """The key its next request carries (its endpoint's: given in code, else read now)."""
        return self.endpoint.api_key

    @property
    def retry(self) -> RetryPolicy:
        """Its endpoint's retry policy."""
        return self.endpoint.retry

    @retry.setter
    def retry(self, policy: RetryPolicy) -> None:
        self.endpoint.retry = policy
