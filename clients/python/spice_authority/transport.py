"""A small HTTP/1.1 transport for the helper's local API (mirrors the Java ``HttpTransport``).

One request per connection (``Connection: close``), over the helper's Unix socket or loopback TCP.

* Unix socket: before anything is sent, the listening process must be this user's
  (``SO_PEERCRED`` on Linux). Where the platform has no ``SO_PEERCRED`` the client refuses the
  socket (:class:`HelperUntrusted`): it cannot tell whose process listens.
* TCP (loopback only): the token file is read by :func:`read_token_file` (the Java
  ``TokenFiles`` rules), then on the same connection the server must answer the endpoint proof
  (``GET /v1/endpoint-proof?nonce=…``, no token) with the HMAC of a fresh nonce and of the endpoint
  the client reached; only then the request goes out with ``Authorization: Bearer <token>``.
* Bounds: a response head of 64 KiB, a body of 8 MiB (a sign's: a whole envelope, 16 MiB + 1 KiB),
  grown as it arrives. Each read and write waits at most ``read_timeout``; the whole exchange at most
  12 of them; the endpoint proof's answer one of them.

Guarantees: :class:`HelperUnreachable` and :class:`HelperUntrusted` mean nothing of the request was
sent; a failure after its first byte is :class:`HelperTimeout` or :class:`HelperProtocolError`
(outcome unknown) unless the helper's whole answer had already arrived. No message holds the token.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import os
import secrets
import socket
import stat
import struct
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Union

from .errors import HelperProtocolError, HelperTimeout, HelperUnreachable, HelperUntrusted

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 8 * 1024 * 1024
MAX_PROOF_BYTES = 1024
EXCHANGE_READ_TIMEOUTS = 12
MAX_TOKEN_BYTES = 4096
PROOF_DOMAIN = b"spice-authority endpoint proof v2"
PROOF_PATH = "/v1/endpoint-proof"
NONCE_BYTES = 32
SOCKET_NAME = "authority.sock"
TOKEN_NAME = "token"


# ---- endpoints -------------------------------------------------------------------------------


@dataclass(frozen=True)
class UnixEndpoint:
    """The helper's Unix socket."""

    socket: str

    def display(self) -> str:
        return "unix:" + str(self.socket)


@dataclass(frozen=True)
class TcpEndpoint:
    """Loopback TCP with the bearer token in ``token_file`` (the file is named here, never read)."""

    address: str
    port: int
    token_file: str

    def __post_init__(self) -> None:
        # SECURITY: the bearer token is only ever sent to this machine.
        if not ipaddress.ip_address(self.address).is_loopback:
            raise ValueError("only loopback addresses (127.0.0.0/8, ::1) are allowed")
        if not 1 <= self.port <= 65535:
            raise ValueError("port out of range")

    def display(self) -> str:
        host = self.address
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"


Endpoint = Union[UnixEndpoint, TcpEndpoint]


def default_directory(xdg_runtime_dir: str | None = None, uid: int | None = None) -> str:
    """``$XDG_RUNTIME_DIR/spice-agent`` when it is absolute, else ``/tmp/spice-agent-<uid>``
    (``/private/tmp/…`` on macOS): the same rule as ``serve`` and the Java client."""
    if xdg_runtime_dir is None:
        xdg_runtime_dir = os.environ.get("XDG_RUNTIME_DIR")
    if xdg_runtime_dir and xdg_runtime_dir.startswith("/") and not xdg_runtime_dir.endswith("/"):
        return xdg_runtime_dir + "/spice-agent"
    if uid is None:
        uid = os.getuid()
    return ("/private/tmp/spice-agent-" if sys.platform == "darwin" else "/tmp/spice-agent-") + str(uid)


def default_socket() -> UnixEndpoint:
    return UnixEndpoint(os.path.join(default_directory(), SOCKET_NAME))


# ---- the token file (Java TokenFiles) --------------------------------------------------------


def read_token_file(path: str | os.PathLike[str]) -> bytearray:
    """Reads the helper's bearer token: a regular single-link file of this user with mode 0600,
    in a 0700 directory of this user, never through a symbolic link, at most 4096 bytes; the token
    is the content without surrounding white space, visible ASCII only.

    Raises :class:`HelperUnreachable` when the file does not exist and ``OSError`` (naming only the
    path and the rule broken) when it is refused.
    """
    p = Path(os.path.abspath(path))
    if p.name == "" or p.parent == p:
        raise OSError(f"token file {path}: not a file path")
    own = os.geteuid()
    try:
        d = os.lstat(p.parent)
        before = os.lstat(p)
    except FileNotFoundError:
        raise HelperUnreachable(f"no token file {path}") from None
    # SECURITY: another user's directory or file, a link, or loose rights: refused unread.
    if not stat.S_ISDIR(d.st_mode) or d.st_uid != own or stat.S_IMODE(d.st_mode) != 0o700:
        raise OSError(f"token file {path}: refused: its directory must be yours with mode 0700")
    if (not stat.S_ISREG(before.st_mode) or before.st_uid != own or stat.S_IMODE(before.st_mode) != 0o600
            or before.st_nlink != 1):
        raise OSError(f"token file {path}: refused: must be your regular single-link file with mode 0600")
    if before.st_size > MAX_TOKEN_BYTES:
        raise OSError(f"token file {path}: refused: larger than {MAX_TOKEN_BYTES} bytes")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(p, flags)
    except OSError:
        raise OSError(f"token file {path}: refused: it changed while being read") from None
    buf = bytearray()
    try:
        opened = os.fstat(fd)
        # RACE: the same file (device and inode) as checked, so the bytes come from the checked file.
        if (opened.st_dev, opened.st_ino) != (before.st_dev, before.st_ino):
            raise OSError(f"token file {path}: refused: it changed while being read")
        while len(buf) <= MAX_TOKEN_BYTES:
            chunk = os.read(fd, MAX_TOKEN_BYTES + 1 - len(buf))
            if not chunk:
                break
            buf += chunk
        if len(buf) != before.st_size:
            raise OSError(f"token file {path}: refused: it changed while being read")
        return token_from_content(str(path), buf)
    finally:
        os.close(fd)
        for i in range(len(buf)):
            buf[i] = 0


def token_from_content(path: str, content: bytes | bytearray) -> bytearray:
    """The token in a token file's content: without surrounding white space, visible ASCII only.

    Returned as a ``bytearray`` that the caller zeroes after use (the transport does).
    """
    start, end = 0, len(content)
    while start < end and content[start] in b" \t\r\n":
        start += 1
    while end > start and content[end - 1] in b" \t\r\n":
        end -= 1
    if start == end:
        raise OSError(f"token file {path}: empty")
    if any(c <= 0x20 or c >= 0x7F for c in content[start:end]):
        raise OSError(f"token file {path}: not a token (only visible ASCII characters are allowed)")
    return bytearray(content[start:end])


# ---- the endpoint proof (Java EndpointProof) -------------------------------------------------


class ProofRefused(Exception):
    """A proof answer that is not the expected one; the reason leaks nothing of the token."""


def proof_mac(token: bytes | bytearray, nonce: bytes, address: str, port: int) -> bytes:
    """HMAC-SHA256(token, domain || 0x00 || nonce || n || address || port), n = 4 or 16."""
    if not token:
        raise ValueError("token is empty")
    if len(nonce) != NONCE_BYTES:
        raise ValueError("nonce must be 32 bytes")
    addr = ipaddress.ip_address(address).packed
    if not 0 <= port <= 0xFFFF:
        raise ValueError("port out of range")
    msg = PROOF_DOMAIN + b"\x00" + nonce + bytes([len(addr)]) + addr + port.to_bytes(2, "big")
    return hmac.new(token, msg, hashlib.sha256).digest()


def proof_target(nonce: bytes) -> str:
    return PROOF_PATH + "?nonce=" + nonce.hex()


def verify_proof(token: bytes | bytearray, nonce: bytes, address: str, port: int, body: bytes) -> None:
    """Raises :class:`ProofRefused` unless ``body`` is a JSON object whose ``proof`` is exactly the
    expected MAC as 64 lowercase hex digits (compared in constant time)."""
    try:
        o = json.loads(body.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ProofRefused("its answer is not a JSON object") from None
    if not isinstance(o, dict):
        raise ProofRefused("its answer is not a JSON object")
    proof = o.get("proof")
    if not isinstance(proof, str):
        raise ProofRefused("its answer has no proof")
    if len(proof) != 2 * NONCE_BYTES or any(c not in "0123456789abcdef" for c in proof):
        raise ProofRefused("its proof is not 64 lowercase hex digits")
    # SECURITY: constant time, so the comparison tells nothing about how much of the MAC matched.
    if not hmac.compare_digest(proof_mac(token, nonce, address, port), bytes.fromhex(proof)):
        raise ProofRefused("its proof is wrong")


# ---- HTTP ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Response:
    status: int
    reason: str
    headers: Mapping[str, str]
    body: bytes = field(repr=False)

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


_TCHARS = set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _require_token(s: str, what: str) -> None:
    if not s or any(c not in _TCHARS for c in s):
        raise ValueError(f"{what} is not an HTTP token")


def _require_header_text(s: str, what: str, target: bool = False) -> None:
    for c in s:
        o = ord(c)
        # SECURITY: no CR/LF or other controls: a header or target can never split the request.
        if o < 0x20 or o == 0x7F or (target and (o == 0x20 or o > 0x7E)):
            raise ValueError(f"{what} has a control or non-ASCII character")


def segment(s: str) -> str:
    """Percent-encodes one path segment (RFC 3986 unreserved characters stay)."""
    out = []
    for b in s.encode("utf-8"):
        c = chr(b)
        if c.isascii() and (c.isalnum() or c in "-._~"):
            out.append(c)
        else:
            out.append("%%%02X" % b)
    return "".join(out)


class _Conn:
    """A connected socket with buffered, deadline-bounded reads and writes."""

    def __init__(self, sock: socket.socket, display: str, read_timeout: float) -> None:
        self.sock = sock
        self.display = display
        self.read_timeout = read_timeout
        self.buf = bytearray()
        self.eof = False
        self.deadline: float | None = None  # monotonic time by which every read/write must end

    def _wait(self) -> float:
        t = self.read_timeout
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise HelperTimeout(f"timed out talking to the helper at {self.display}")
            t = min(t, left)
        return t

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        off = 0
        while off < len(view):
            self.sock.settimeout(self._wait())
            try:
                n = self.sock.send(view[off:off + 65536])
            except socket.timeout:
                raise HelperTimeout(f"timed out sending to the helper at {self.display}") from None
            off += n

    def fill(self) -> bool:
        if self.eof:
            return False
        self.sock.settimeout(self._wait())
        try:
            chunk = self.sock.recv(65536)
        except socket.timeout:
            raise HelperTimeout(f"timed out reading from the helper at {self.display}") from None
        if not chunk:
            self.eof = True
            return False
        self.buf += chunk
        return True

    def line(self, limit: int) -> str:
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                if i + 1 > limit:
                    break
                raw = bytes(self.buf[:i])
                del self.buf[:i + 1]
                if raw.endswith(b"\r"):
                    raw = raw[:-1]
                return raw.decode("latin-1")
            if len(self.buf) > limit:
                break
            if not self.fill():
                raise HelperProtocolError(f"the helper at {self.display} closed the connection mid-response")
        raise HelperProtocolError(f"a response line from the helper at {self.display} is larger than allowed "
                                  f"(the head: {MAX_HEAD_BYTES} bytes, a chunk size: 1024)")

    def exactly(self, n: int) -> bytes:
        # Grown as bytes arrive, never sized by the declared length alone.
        while len(self.buf) < n:
            if not self.fill():
                raise HelperProtocolError(f"the helper at {self.display} closed the connection mid-response")
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def response(self, method: str, max_body: int, framed: bool) -> Response:
        head = 0
        while True:
            status_line = self.line(MAX_HEAD_BYTES - head)
            head += len(status_line) + 2
            if (not status_line.startswith("HTTP/1.") or len(status_line) < 12 or status_line[8] != " "
                    or not status_line[9:12].isdigit() or not status_line[9:12].isascii()
                    or (len(status_line) > 12 and status_line[12] != " ")):
                raise HelperProtocolError(f"malformed status line from the helper at {self.display}")
            status = int(status_line[9:12])
            reason = status_line[13:] if len(status_line) > 13 else ""
            headers: dict[str, str] = {}
            while True:
                h = self.line(MAX_HEAD_BYTES - head)
                head += len(h) + 2
                if not h:
                    break
                colon = h.find(":")
                if colon <= 0 or h[0] in " \t":
                    raise HelperProtocolError(f"malformed header line from the helper at {self.display}")
                name = h[:colon].strip().lower()
                value = h[colon + 1:].strip()
                headers[name] = headers[name] + ", " + value if name in headers else value
            if 100 <= status < 200:
                if status == 101:
                    raise HelperProtocolError(f"unexpected protocol switch from the helper at {self.display}")
                continue
            return Response(status, reason, headers, self._body(method, status, headers, max_body, framed))

    def _body(self, method: str, status: int, headers: dict[str, str], max_body: int, framed: bool) -> bytes:
        if method == "HEAD" or status in (204, 304):
            return b""
        te = headers.get("transfer-encoding")
        if te is not None:
            if te.split(",")[-1].strip().lower() != "chunked":
                raise HelperProtocolError(f"unsupported transfer encoding from the helper at {self.display}")
            return self._chunked(max_body)
        cl = headers.get("content-length")
        if cl is not None:
            values = [v.strip() for v in cl.split(",")]
            if any(v != values[0] for v in values):
                raise HelperProtocolError(f"conflicting Content-Length from the helper at {self.display}")
            v = values[0]
            if not v.isdigit() or not v.isascii() or len(v) > 10 or int(v) > max_body:
                raise HelperProtocolError(f"response body from the helper is larger than {max_body} bytes "
                                          "or has a malformed Content-Length")
            return self.exactly(int(v))
        if framed:
            raise HelperProtocolError(f"response from the helper at {self.display} has neither Content-Length "
                                      "nor chunked framing")
        while self.fill():
            if len(self.buf) > max_body:
                raise HelperProtocolError(f"response body from the helper is larger than {max_body} bytes")
        if len(self.buf) > max_body:
            raise HelperProtocolError(f"response body from the helper is larger than {max_body} bytes")
        out = bytes(self.buf)
        self.buf.clear()
        return out

    def _chunked(self, max_body: int) -> bytes:
        out = bytearray()
        while True:
            size_line = self.line(1024)
            hexpart = size_line.split(";", 1)[0].strip()
            if not hexpart or len(hexpart) > 8 or any(c not in "0123456789abcdefABCDEF" for c in hexpart):
                raise HelperProtocolError(f"malformed chunk size from the helper at {self.display}")
            size = int(hexpart, 16)
            if size == 0:
                break
            if len(out) + size > max_body:
                raise HelperProtocolError(f"response body from the helper is larger than {max_body} bytes")
            out += self.exactly(size)
            if self.line(2) != "":
                raise HelperProtocolError(f"malformed chunk from the helper at {self.display}")
        trailers = 0
        while True:
            t = self.line(MAX_HEAD_BYTES - trailers)
            trailers += len(t) + 2
            if not t:
                return bytes(out)


#: Reads the bearer token for one request; the transport zeroes a ``bytearray`` it returns after use.
TokenReader = Callable[[str], Union[bytes, bytearray]]


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a connected Unix socket (Linux ``SO_PEERCRED``).

    Raises :class:`HelperUntrusted` on a platform without ``SO_PEERCRED``: there the client cannot
    tell whose process listens, and refuses the socket rather than send anything to it.
    """
    opt = getattr(socket, "SO_PEERCRED", None)
    if opt is None:
        raise HelperUntrusted("refused: this platform has no SO_PEERCRED, so the owner of the helper's socket "
                              "cannot be checked; use loopback TCP with the token file; nothing was sent")
    creds = sock.getsockopt(socket.SOL_SOCKET, opt, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid


class Transport:
    """Sends one request per connection; see the module comment for the guarantees."""

    def __init__(self, endpoint: Endpoint, *, connect_timeout: float = 10.0, read_timeout: float = 10.0,
                 user_agent: str = "spice-authority-python", token_reader: TokenReader = read_token_file,
                 peer_uid_of: Callable[[socket.socket], int] = peer_uid) -> None:
        if not user_agent or any(ord(c) <= 0x20 or ord(c) >= 0x7F for c in user_agent):
            raise ValueError("user agent must be visible ASCII without spaces")
        if connect_timeout <= 0 or read_timeout <= 0:
            raise ValueError("timeouts must be positive")
        self.endpoint = endpoint
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.user_agent = user_agent
        self._token_reader = token_reader
        self._peer_uid_of = peer_uid_of

    def send(self, method: str, target: str, headers: Mapping[str, str], body: bytes | None,
             max_body: int = MAX_BODY_BYTES) -> Response:
        _require_token(method, "method")
        _require_header_text(target, "request target", target=True)
        if not target.startswith("/"):
            raise ValueError("request target must start with '/'")
        display = self.endpoint.display()
        token: bytes | bytearray | None = None
        if isinstance(self.endpoint, TcpEndpoint):
            try:
                token = self._token_reader(self.endpoint.token_file)
            except (HelperUnreachable, HelperUntrusted):
                raise
            except OSError as e:
                # Refused or unreadable: nothing was sent, which a caller must tell from a lost answer.
                raise HelperUntrusted(f"the token for {display} cannot be used ({e}); nothing was sent") from None
        head = self._head(method, target, headers, body, token)
        sending = False
        sock: socket.socket | None = None
        try:
            sock = self._connect(display)
            conn = _Conn(sock, display, self.read_timeout)
            if token is not None:
                # SECURITY: the token and the body go only on a connection whose server has just
                # proven it holds the token.
                self._require_token_holder(conn, token, display)
            sending = True
            conn.deadline = time.monotonic() + EXCHANGE_READ_TIMEOUTS * self.read_timeout
            try:
                conn.write(bytes(head))
                if body:
                    conn.write(body)
            except HelperTimeout:
                raise
            except OSError:
                # The helper may have answered before it read the whole body (413, 503), then
                # closed: that answer, if it came whole, is the outcome (nothing was done).
                early = self._early_answer(conn, method)
                if early is None:
                    raise HelperProtocolError(f"the connection to the helper at {display} failed while sending "
                                              "the request; its outcome is unknown") from None
                return early
            return conn.response(method, max_body, framed=False)
        except (HelperUnreachable, HelperUntrusted, HelperTimeout, HelperProtocolError):
            raise
        except OSError as e:
            if sending:
                raise HelperProtocolError(f"the connection to the helper at {display} failed "
                                          f"({type(e).__name__}); the outcome is unknown") from None
            raise HelperUnreachable(f"cannot talk to {display} ({type(e).__name__}); nothing was sent") from None
        finally:
            if sock is not None:
                sock.close()
            # SECURITY: the head holds the bearer token on TCP; both are zeroed (a token reader that
            # returns immutable bytes leaves a copy to the garbage collector).
            for buf in (head, token):
                if isinstance(buf, bytearray):
                    buf[:] = bytes(len(buf))

    def _early_answer(self, conn: _Conn, method: str) -> Response | None:
        try:
            conn.deadline = min(conn.deadline or float("inf"), time.monotonic() + self.read_timeout)
            r = conn.response(method, MAX_PROOF_BYTES * 64, framed=False)
            return r if r.status >= 400 else None
        except Exception:
            return None

    def _head(self, method: str, target: str, headers: Mapping[str, str], body: bytes | None,
              token: bytes | bytearray | None) -> bytearray:
        lines = [f"{method} {target} HTTP/1.1", "Host: localhost", "Connection: close", f"User-Agent: {self.user_agent}"]
        accept = content_type = False
        for k, v in headers.items():
            _require_token(k, "header name")
            _require_header_text(v, f"header {k}")
            lower = k.lower()
            if lower in ("host", "connection", "content-length", "authorization", "transfer-encoding"):
                raise ValueError(f"header {k} is set by the client itself")
            accept |= lower == "accept"
            content_type |= lower == "content-type"
            lines.append(f"{k}: {v}")
        if not accept:
            lines.append("Accept: application/json, application/problem+json")
        if body is not None and not content_type:
            lines.append("Content-Type: application/json")
        if body is not None or method in ("POST", "PUT"):
            lines.append(f"Content-Length: {0 if body is None else len(body)}")
        out = bytearray(("\r\n".join(lines) + "\r\n").encode("utf-8"))
        if token is not None:
            out += b"Authorization: Bearer " + token + b"\r\n"
        out += b"\r\n"
        return out

    def _connect(self, display: str) -> socket.socket:
        ep = self.endpoint
        if isinstance(ep, UnixEndpoint):
            if not os.path.lexists(ep.socket):
                raise HelperUnreachable(f"no helper socket at {ep.socket}")
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            addr: object = ep.socket
        else:
            family = socket.AF_INET6 if ":" in ep.address else socket.AF_INET
            sock = socket.socket(family, socket.SOCK_STREAM)
            addr = (ep.address, ep.port)
        try:
            sock.settimeout(self.connect_timeout)
            try:
                sock.connect(addr)  # type: ignore[arg-type]
            except socket.timeout:
                raise HelperUnreachable(f"no connection to {display} within {self.connect_timeout} s; "
                                        "nothing was sent") from None
            except (ConnectionRefusedError, FileNotFoundError):
                raise HelperUnreachable(f"nothing is listening on {display} (connection refused)") from None
            except OSError as e:
                raise HelperUnreachable(f"cannot connect to {display} ({e.strerror or type(e).__name__}); "
                                        "nothing was sent") from None
            if isinstance(ep, UnixEndpoint):
                # SECURITY: a socket another user put at the path first gets nothing, not even a request.
                try:
                    uid = self._peer_uid_of(sock)
                except OSError as e:
                    raise HelperUntrusted(f"refused: cannot read the peer credentials of {display} "
                                          f"({type(e).__name__}); nothing was sent") from None
                if uid != os.geteuid():
                    raise HelperUntrusted(f"refused: {display} is served by another user's process (uid {uid}); "
                                          "nothing was sent")
            return sock
        except BaseException:
            sock.close()
            raise

    def _require_token_holder(self, conn: _Conn, token: bytes | bytearray, display: str) -> None:
        nonce = secrets.token_bytes(NONCE_BYTES)
        reason: str
        try:
            ask = (f"GET {proof_target(nonce)} HTTP/1.1\r\nHost: localhost\r\nUser-Agent: {self.user_agent}\r\n"
                   "Accept: application/json\r\n\r\n").encode("ascii")
            # SECURITY: the whole answer within one read timeout: a squatter that drips a byte now
            # and then cannot hold the client.
            conn.deadline = time.monotonic() + self.read_timeout
            conn.write(ask)
            r = conn.response("GET", MAX_PROOF_BYTES, framed=True)
            conn.deadline = None
            connection = (r.header("connection") or "").lower()
            if r.status != 200:
                reason = f"it answered HTTP {r.status} to the endpoint proof"
            elif "close" in connection:
                reason = "it would close the connection after the endpoint proof"
            else:
                peer = conn.sock.getpeername()
                verify_proof(token, nonce, peer[0], peer[1], r.body)
                return
        except ProofRefused as e:
            reason = str(e)
        except HelperTimeout:
            reason = f"no answer to the endpoint proof within {self.read_timeout} s"
        except HelperProtocolError as e:
            reason = str(e)
        except OSError as e:
            reason = f"the connection failed during the endpoint proof ({type(e).__name__})"
        raise HelperUntrusted(f"refused: the server at {display} did not prove it holds the helper's token ({reason}); "
                              "nothing was sent to it, neither the token nor the request. Another process may hold "
                              "the port, or the helper is older than this client.")
