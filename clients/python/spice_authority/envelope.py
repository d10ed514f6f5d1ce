"""The signed ``SnapshotEnvelope`` (protobuf, wire-format.md a) as a host sees it, and the MAC layout.

A host treats an envelope as opaque bytes to store and hand back; it reads it only to learn the run
ID, the sequence and the payload it carries (for its plan check before an import, see
:mod:`spice_authority.importer`). :func:`parse` decodes the binary protobuf (proto3, unknown fields
skipped); :func:`encode` writes one in field order, as Go's marshaller does.

The MAC helpers (:func:`mac_input`, :func:`run_subkey`, :func:`record_mac_input`) reproduce the
authority's layout (wire-format.md c, d.3) so that the spec kit's vectors can be checked here; a
host never holds the key and can never say that a claim is authentic (only the helper can).
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

LIFECYCLES = {0: "SNAPSHOT_LIFECYCLE_UNSPECIFIED", 1: "SNAPSHOT_LIFECYCLE_SUSPENDED",
              2: "SNAPSHOT_LIFECYCLE_COMPLETED", 3: "SNAPSHOT_LIFECYCLE_FAILED", 4: "SNAPSHOT_LIFECYCLE_CANCELLED"}
STATUS_LIFECYCLE = {"suspended": 1, "completed": 2, "failed": 3, "cancelled": 4}
MAC_DOMAIN = "spice.agent.run-authority/v1"
SUBKEY_DOMAIN = "spice.agent.run-authority-run-key/v1"
RECORD_DOMAIN = "spice.agent.run-authority-record/v1"
#: Largest encoded envelope a client sends or accepts: a 16 MiB payload plus 1 KiB of fields.
MAX_ENCODED_BYTES = 16 * 1024 * 1024 + 1024


class EnvelopeMalformed(ValueError):
    """The bytes are not a SnapshotEnvelope this client can read."""


@dataclass(frozen=True, repr=False)
class Authority:
    scope_id: bytes
    generation: int
    hmac_sha256: bytes


@dataclass(frozen=True, repr=False)
class Envelope:
    format: str
    run_id: str
    last_sequence: int
    lifecycle: int
    payload: bytes
    sha256: bytes
    authority: Authority | None

    def __repr__(self) -> str:
        # No payload, no claim MAC: identity and sizes only.
        return (f"Envelope(run_id={self.run_id!r}, last_sequence={self.last_sequence}, "
                f"lifecycle={LIFECYCLES.get(self.lifecycle, self.lifecycle)}, payload_bytes={len(self.payload)})")


def _varint(b: bytes, i: int) -> tuple[int, int]:
    v = 0
    shift = 0
    while True:
        if i >= len(b) or shift > 63:
            raise EnvelopeMalformed("truncated or overlong varint")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if not c & 0x80:
            if v >= 1 << 64:
                raise EnvelopeMalformed("varint out of range")
            return v, i
        shift += 7


def _fields(b: bytes) -> list[tuple[int, int, object]]:
    out: list[tuple[int, int, object]] = []
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise EnvelopeMalformed("field number 0")
        if wt == 0:
            v, i = _varint(b, i)
            out.append((num, wt, v))
        elif wt == 2:
            n, i = _varint(b, i)
            if i + n > len(b):
                raise EnvelopeMalformed("truncated field")
            out.append((num, wt, b[i:i + n]))
            i += n
        elif wt == 1:
            if i + 8 > len(b):
                raise EnvelopeMalformed("truncated field")
            out.append((num, wt, b[i:i + 8]))
            i += 8
        elif wt == 5:
            if i + 4 > len(b):
                raise EnvelopeMalformed("truncated field")
            out.append((num, wt, b[i:i + 4]))
            i += 4
        else:
            raise EnvelopeMalformed("unsupported wire type")
    return out


def parse(data: bytes) -> Envelope:
    """Decodes a binary SnapshotEnvelope (later duplicates win, as in proto3; unknown fields skipped)."""
    data = bytes(data)
    if not 1 <= len(data) <= MAX_ENCODED_BYTES:
        raise EnvelopeMalformed("envelope size out of bounds")
    f: dict[int, object] = {}
    for num, wt, v in _fields(data):
        expected = {1: 2, 2: 2, 3: 0, 4: 0, 5: 2, 6: 2, 7: 2}.get(num)
        if expected is None:
            continue
        if wt != expected:
            raise EnvelopeMalformed("wrong wire type")
        f[num] = v
    auth = None
    if 7 in f:
        a: dict[int, object] = {}
        for num, wt, v in _fields(f[7]):  # type: ignore[arg-type]
            if num in (1, 3) and wt == 2 or num == 2 and wt == 0:
                a[num] = v
        auth = Authority(bytes(a.get(1, b"")), int(a.get(2, 0)), bytes(a.get(3, b"")))  # type: ignore[arg-type]
    try:
        fmt = bytes(f.get(1, b"")).decode("utf-8")  # type: ignore[arg-type]
        run_id = bytes(f.get(2, b"")).decode("utf-8")  # type: ignore[arg-type]
    except UnicodeDecodeError:
        raise EnvelopeMalformed("a string field is not valid UTF-8") from None
    return Envelope(fmt, run_id, int(f.get(3, 0)), int(f.get(4, 0)),  # type: ignore[arg-type]
                    bytes(f.get(5, b"")), bytes(f.get(6, b"")), auth)  # type: ignore[arg-type]


def _put_varint(v: int) -> bytes:
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        if v:
            out.append(c | 0x80)
        else:
            out.append(c)
            return bytes(out)


def _ld(num: int, b: bytes) -> bytes:
    return _put_varint(num << 3 | 2) + _put_varint(len(b)) + b


def encode(env: Envelope) -> bytes:
    """Proto3 encoding in field order; zero scalars and empty bytes are not emitted."""
    out = bytearray()
    if env.format:
        out += _ld(1, env.format.encode("utf-8"))
    if env.run_id:
        out += _ld(2, env.run_id.encode("utf-8"))
    if env.last_sequence:
        out += _put_varint(3 << 3) + _put_varint(env.last_sequence)
    if env.lifecycle:
        out += _put_varint(4 << 3) + _put_varint(env.lifecycle)
    if env.payload:
        out += _ld(5, env.payload)
    if env.sha256:
        out += _ld(6, env.sha256)
    if env.authority is not None:
        a = bytearray()
        if env.authority.scope_id:
            a += _ld(1, env.authority.scope_id)
        if env.authority.generation:
            a += _put_varint(2 << 3) + _put_varint(env.authority.generation)
        if env.authority.hmac_sha256:
            a += _ld(3, env.authority.hmac_sha256)
        out += _ld(7, bytes(a))
    return bytes(out)


def _lp(x: bytes) -> bytes:
    return len(x).to_bytes(8, "big") + x


def mac_input(scope_id: bytes, key_generation: int, format: str, run_id: str, last_sequence: int,
              lifecycle: int, payload_sha256: bytes) -> bytes:
    """The canonical MAC input (wire-format.md c.1): eight length-prefixed components."""
    return b"".join(_lp(x) for x in (
        MAC_DOMAIN.encode(), scope_id, key_generation.to_bytes(8, "big"), format.encode("utf-8"),
        run_id.encode("utf-8"), last_sequence.to_bytes(8, "big"), lifecycle.to_bytes(4, "big"), payload_sha256))


def run_subkey(master_key: bytes, scope_id: bytes, run_id: str, run_generation: int) -> bytes:
    """The per-run HMAC subkey (wire-format.md c.2)."""
    msg = b"".join(_lp(x) for x in (SUBKEY_DOMAIN.encode(), scope_id, run_id.encode("utf-8"),
                                    run_generation.to_bytes(8, "big")))
    return hmac.new(master_key, msg, hashlib.sha256).digest()


def claim(key: bytes, canonical_mac_input: bytes) -> bytes:
    return hmac.new(key, canonical_mac_input, hashlib.sha256).digest()


def record_mac_input(record_json: bytes) -> bytes:
    """LP(domain) || LP(record JSON) (wire-format.md d.3)."""
    return _lp(RECORD_DOMAIN.encode()) + _lp(record_json)


def record_file_stem(run_id: str) -> str:
    """``run-<H>`` with H the lowercase hex SHA-256 of the UTF-8 run ID (wire-format.md d.1)."""
    return "run-" + hashlib.sha256(run_id.encode("utf-8")).hexdigest()
