"""A corporate network on loopback: a forward proxy that tunnels CONNECT and forwards plain
HTTP, and TLS for any loopback service with a private CA (`trustme`), as `localhost`."""

from __future__ import annotations

import select
import socket
import ssl
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trustme

from copilot_nb.testing.server import LoopbackHTTPServer, LoopbackService


@dataclass
class ForwardProxy:
    """`HTTPS_PROXY=proxy.url`: every request it carried is in `seen` ("CONNECT host:port", or
    "GET http://host:port/path")."""

    seen: list[str] = field(default_factory=list)
    _listener: socket.socket | None = None

    def start(self) -> ForwardProxy:
        self._listener = socket.create_server(("127.0.0.1", 0))
        threading.Thread(target=self._accept, daemon=True, name="forward-proxy").start()
        return self

    @property
    def url(self) -> str:
        assert self._listener is not None
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def stop(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None

    def _accept(self) -> None:
        listener = self._listener
        while listener is not None:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        with client:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = client.recv(65536)
                if not chunk:
                    return
                head += chunk
            header, _, rest = head.partition(b"\r\n\r\n")
            request_line, *header_lines = header.decode("latin-1").split("\r\n")
            method, target, version = request_line.split(" ", 2)
            self.seen.append(f"{method} {target}")
            if method == "CONNECT":
                host, _, port = target.rpartition(":")
                upstream = socket.create_connection((host.strip("[]"), int(port)))
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:  # absolute form: send it on in origin form
                _, _, after = target.partition("://")
                hostport, slash, path = after.partition("/")
                host, _, port = hostport.rpartition(":")
                upstream = socket.create_connection((host.strip("[]"), int(port or 80)))
                kept = [h for h in header_lines if not h.lower().startswith("proxy-")]
                first = f"{method} {slash}{path} {version}\r\n".encode("latin-1")
                upstream.sendall(first + "\r\n".join(kept).encode("latin-1") + b"\r\n\r\n" + rest)
            with upstream:
                _pipe(client, upstream)


def _pipe(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until either side closes."""
    while True:
        ready, _, _ = select.select([a, b], [], [], 30)
        if not ready:
            return
        for source in ready:
            data = source.recv(65536)
            if not data:
                return
            (b if source is a else a).sendall(data)


class PrivateCA:
    """A CA of our own: `ca_file` for SSL_CERT_FILE, `server_context()` for `localhost`."""

    def __init__(self, folder: Path) -> None:
        self.ca = trustme.CA()
        self.cert = self.ca.issue_cert("localhost", "127.0.0.1")
        self.ca_file = folder / "corporate-ca.pem"
        self.ca.cert_pem.write_to_path(str(self.ca_file))
        self.cert_file = folder / "localhost.pem"
        self.key_file = folder / "localhost.key"
        self.cert.cert_chain_pems[0].write_to_path(str(self.cert_file))
        self.cert.private_key_pem.write_to_path(str(self.key_file))

    def server_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.cert.configure_cert(context)
        return context


class _TLSServer(LoopbackHTTPServer):
    context: ssl.SSLContext

    def get_request(self) -> tuple[Any, Any]:
        connection, address = super().get_request()
        # The handshake happens on the handler's thread, at its first read.
        return self.context.wrap_socket(
            connection, server_side=True, do_handshake_on_connect=False
        ), address


def start_tls(service: LoopbackService, ca: PrivateCA) -> LoopbackService:
    """Start a loopback service (a ScriptedServer, the GitHub fake) speaking HTTPS as
    `localhost`; its `base_url` becomes `https://localhost:PORT`."""
    handler = type(f"{type(service).__name__}Handler", (service.handler,), {"owner": service})
    httpd = _TLSServer(("127.0.0.1", 0), handler)
    httpd.context = ca.server_context()
    service._httpd = httpd
    threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    port = httpd.server_address[1]
    over_tls = property(lambda self: f"https://localhost:{port}")
    service.__class__ = type(
        f"TLS{type(service).__name__}", (type(service),), {"base_url": over_tls}
    )
    return service
