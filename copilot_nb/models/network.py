"""How copilot_nb's HTTP clients reach the network behind a corporate proxy and a private CA.

Every client copilot_nb makes (the providers, the GitHub sign-in, model lists, MCP over HTTP)
takes its TLS context from `ssl_context()` and its proxy from the standard variables:

- `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` (either case) and `NO_PROXY`, as httpx reads them;
- `SSL_CERT_FILE` / `SSL_CERT_DIR`, else `REQUESTS_CA_BUNDLE` (what a requests-based setup
  already exports), else certifi's bundle.

httpx reads the proxy variables only when it builds its own transport: a client given
`transport=` (the cassettes' recording transport) ignores them, so `EnvironmentTransport` routes
such requests as a plain client would.
"""

from __future__ import annotations

import functools
import os
import ssl
import urllib.request
from collections.abc import Mapping
from typing import Any

import httpx


def ca_locations(environ: Mapping[str, str] | None = None) -> tuple[str | None, str | None]:
    """(CA file, CA folder) the environment names, or (None, None) for certifi's bundle."""
    env = os.environ if environ is None else environ
    cafile = env.get("SSL_CERT_FILE") or None
    capath = env.get("SSL_CERT_DIR") or None
    if cafile is None and capath is None:
        cafile = env.get("REQUESTS_CA_BUNDLE") or None
    return cafile, capath


def ssl_context() -> ssl.SSLContext:
    """The TLS context for every client: the environment's CA bundle, else certifi's."""
    return _context(*ca_locations())


@functools.lru_cache(maxsize=8)
def _context(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    if cafile is None and capath is None:
        import certifi

        cafile = certifi.where()
    return ssl.create_default_context(cafile=cafile, capath=capath)


def http_client(timeout: httpx.Timeout, **options: Any) -> httpx.AsyncClient:
    """An httpx.AsyncClient that honours the proxy and CA variables (see the module's doc)."""
    return httpx.AsyncClient(timeout=timeout, verify=ssl_context(), trust_env=True, **options)


class EnvironmentTransport(httpx.AsyncBaseTransport):
    """Sends each request straight or through the proxy the environment names for its scheme
    (`NO_PROXY` respected), with `ssl_context()`: a plain client's routing, for a client that
    must be given a transport of its own."""

    def __init__(self) -> None:
        self._proxies = urllib.request.getproxies_environment()
        context = ssl_context()
        self._direct = httpx.AsyncHTTPTransport(verify=context)
        self._through: dict[str, httpx.AsyncHTTPTransport] = {}
        for scheme in ("http", "https"):
            proxy = self._proxies.get(scheme) or self._proxies.get("all")
            if proxy:
                self._through[scheme] = httpx.AsyncHTTPTransport(verify=context, proxy=proxy)

    def route(self, url: httpx.URL) -> httpx.AsyncHTTPTransport:
        """The transport a request to `url` goes through."""
        through = self._through.get(url.scheme)
        if through is None or urllib.request.proxy_bypass_environment(  # type: ignore[attr-defined]
            url.host, self._proxies
        ):
            return self._direct
        return through

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self.route(request.url).handle_async_request(request)

    async def aclose(self) -> None:
        await self._direct.aclose()
        for transport in self._through.values():
            await transport.aclose()
