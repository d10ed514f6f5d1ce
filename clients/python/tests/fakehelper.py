"""A fake helper for the tests: a Unix-socket or loopback TCP server whose answers a test scripts.

Each connection is handed to ``handler(conn, request)`` on its own thread, after the request's
head and (Content-Length) body were read; ``request`` is a :class:`Request`. On TCP the fake
answers the endpoint proof first (with the right MAC, or as ``proof`` says), like the helper.
"""

from __future__ import annotations

import _setup_path  # noqa: F401  (the package under test first on sys.path)

import json
import os
import shutil
import socket
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Callable

from spice_authority.transport import proof_mac


@dataclass
class Request:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes = b""


def read_request(conn: socket.socket, buf: bytearray) -> Request | None:
    while b"\r\n\r\n" not in buf:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        buf += chunk
    head, _, rest = bytes(buf).partition(b"\r\n\r\n")
    buf[:] = rest
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers = {}
    for h in lines[1:]:
        k, _, v = h.partition(":")
        headers[k.strip().lower()] = v.strip()
    n = int(headers.get("content-length", "0"))
    while len(buf) < n:
        chunk = conn.recv(65536)
        if not chunk:
            break
        buf += chunk
    body = bytes(buf[:n])
    del buf[:n]
    return Request(method, target, headers, body)


def answer(status: int, body: bytes | dict | list = b"", headers: dict[str, str] | None = None,
           reason: str = "X") -> bytes:
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
    h = {"Content-Length": str(len(body)), "Content-Type": "application/json"}
    h.update(headers or {})
    return (f"HTTP/1.1 {status} {reason}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h.items()) + "\r\n").encode() + body


def problem(status: int, code: str, detail: str = "refused", **extra: object) -> bytes:
    headers = {"Content-Type": "application/problem+json"}
    ra = extra.pop("retry_after", None)
    if ra is not None:
        headers["Retry-After"] = str(ra)
    body = {"type": "urn:x", "title": code, "status": status, "code": code, "detail": detail}
    body.update(extra)
    return answer(status, body, headers)


Handler = Callable[[socket.socket, Request], None]


@dataclass
class FakeHelper:
    """Use as a context manager; ``socket_path`` (Unix) or ``port`` and ``token_file`` (TCP)."""

    handler: Handler
    tcp: bool = False
    token: bytes = b"feedface" * 8
    proof: str = "right"  # right | wrong | slow | status500 | close
    requests: list[Request] = field(default_factory=list)
    connections: int = 0

    def __enter__(self) -> "FakeHelper":
        self.dir = tempfile.mkdtemp(prefix="spice-fake-")
        os.chmod(self.dir, 0o700)
        if self.tcp:
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.sock.bind(("127.0.0.1", 0))
            self.port = self.sock.getsockname()[1]
            self.token_file = os.path.join(self.dir, "token")
            fd = os.open(self.token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.write(fd, self.token + b"\n")
            os.close(fd)
        else:
            self.socket_path = os.path.join(self.dir, "authority.sock")
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.bind(self.socket_path)
        self.sock.listen(16)
        self.stopping = False
        self.threads: list[threading.Thread] = []
        self.acceptor = threading.Thread(target=self._accept, daemon=True)
        self.acceptor.start()
        return self

    def _accept(self) -> None:
        while not self.stopping:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self.threads.append(t)
            t.start()

    def _serve(self, conn: socket.socket) -> None:
        buf = bytearray()
        try:
            req = read_request(conn, buf)
            if req is None:
                return
            if self.tcp and req.target.startswith("/v1/endpoint-proof"):
                if not self._prove(conn, req):
                    return
                req = read_request(conn, buf)
                if req is None:
                    return
            self.requests.append(req)
            self.handler(conn, req)
        except OSError:
            pass
        finally:
            conn.close()

    def _prove(self, conn: socket.socket, req: Request) -> bool:
        nonce = bytes.fromhex(req.target.split("nonce=", 1)[1])
        host, port = conn.getsockname()[:2]
        mac = proof_mac(self.token, nonce, host, port).hex()
        if self.proof == "wrong":
            mac = proof_mac(self.token, nonce, host, port + 1).hex()
        if self.proof == "status500":
            conn.sendall(answer(500, {"proof": mac}))
            return False
        if self.proof == "close":
            conn.sendall(answer(200, {"proof": mac}, {"Connection": "close"}))
            return False
        if self.proof == "slow":
            data = answer(200, {"proof": mac})
            for b in data:
                if self.stopping:
                    return False
                conn.sendall(bytes([b]))
                threading.Event().wait(0.05)  # the slowness is the subject: a dripping squatter
            return False
        conn.sendall(answer(200, {"proof": mac}))
        return self.proof == "right"

    def __exit__(self, *exc: object) -> None:
        self.stopping = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self.acceptor.join(timeout=5)
        for t in self.threads:
            t.join(timeout=5)
        shutil.rmtree(self.dir, ignore_errors=True)


def fixed(data: bytes) -> Handler:
    """A handler that sends ``data`` and closes."""
    def h(conn: socket.socket, req: Request) -> None:
        conn.sendall(data)
    return h


def sequence(*answers: bytes) -> Handler:
    """A handler that sends the n-th answer on the n-th request (the last one repeated)."""
    lock = threading.Lock()
    state = {"n": 0}

    def h(conn: socket.socket, req: Request) -> None:
        with lock:
            i = min(state["n"], len(answers) - 1)
            state["n"] += 1
        conn.sendall(answers[i])
    return h
