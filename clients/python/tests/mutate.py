"""Seeded mutations of the spec kit's payloads, for the differential test against
``spice-authority snapshot validate``: byte-level edits (syntax, escapes, invalid UTF-8) and
value-level edits of decoded payloads (wrong types, bounds, white space, duplicates, case)."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any, Iterator

_TOKENS = [b" ", b"\n", b'"', b"\\", b"\\u0000", b"\\ud800", b"\xff", b"\xe2\x80\xa8", b"<", b"null", b"[]", b"{}",
           b"0", b"-1", b"1e3", b'"x"', b",", b":", b"}", b"]", b'"Status"', b"\xc5\xbf", b"\\/", b"true",
           b"18446744073709551615", b"4294967296"]
_VALUES: list[Any] = [
    "", " x", "x ", "\u00a0x", "x\u2028", "a\u0085", "\u0000", "user", "assistant", "tool", "system", "text",
    "tool_call", "tool_result", "extension", "suspended", "completed", "failed", "cancelled", "running", None, 0, 1,
    2, 3, 999, 1000, 1001, -1, 2**32, 2**64 - 2, 2**64 - 1, [], {}, "x" * 97, "x" * 128, "x" * 129, "é" * 48,
    "é" * 49, "sha256:" + "a" * 64, "sha256:" + "A" * 64, "broker:x", "tool:", ":x", "zz:y", "generation 1",
    "static:" + "0" * 64, "\U0001f600", "<&>", True]


def _paths(o: Any, p: tuple = ()) -> Iterator[tuple]:
    yield p
    if isinstance(o, dict):
        for k, v in o.items():
            yield from _paths(v, p + (k,))
    elif isinstance(o, list):
        for i, v in enumerate(o):
            yield from _paths(v, p + (i,))


def byte_mutations(sources: list[bytes], n: int, rng: random.Random) -> Iterator[bytes]:
    for _ in range(n):
        b = bytearray(rng.choice(sources))
        for _ in range(rng.randint(1, 3)):
            pos = rng.randrange(len(b) + 1)
            k = rng.random()
            if k < 0.4:
                b[pos:pos] = rng.choice(_TOKENS)
            elif k < 0.7 and len(b) > 1:
                del b[pos:pos + rng.randint(1, 4)]
            else:
                j = b.find(b'"', pos)
                e = b.find(b'"', j + 1) if j >= 0 else -1
                if e > 0:
                    b[j:e + 1] = rng.choice(_TOKENS)
        yield bytes(b)


def value_mutations(sources: list[bytes], n: int, rng: random.Random) -> Iterator[bytes]:
    decoded = []
    for s in sources:
        try:
            o = json.loads(s)
        except ValueError:
            continue
        if isinstance(o, dict):
            decoded.append(o)
    for _ in range(n):
        o = copy.deepcopy(rng.choice(decoded))
        for _ in range(rng.randint(1, 2)):
            p = rng.choice([q for q in _paths(o) if q])
            parent = o
            for k in p[:-1]:
                parent = parent[k]
            r = rng.random()
            if r < 0.7:
                parent[p[-1]] = copy.deepcopy(rng.choice(_VALUES))
            elif r < 0.85:
                del parent[p[-1]]
            elif isinstance(parent, list):
                parent.insert(p[-1], copy.deepcopy(parent[p[-1]]))
            elif isinstance(p[-1], str):
                parent[p[-1].upper()] = copy.deepcopy(rng.choice(_VALUES))
        s = json.dumps(o, separators=(",", ":"), ensure_ascii=rng.random() < 0.1)
        if rng.random() < 0.9:
            s = s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        yield s.encode("utf-8", "surrogatepass")


def write_cases(kit: Path, out: Path, n: int, seed: int) -> list[Path]:
    rng = random.Random(seed)
    sources = [p.read_bytes() for p in sorted((kit / "payload-corpus/public").glob("*.json")) if p.name != "index.json"]
    sources += [p.read_bytes() for p in sorted((kit / "transcripts").glob("tau-airline-00*.json"))]
    files = []
    for i, b in enumerate(list(byte_mutations(sources, n // 2, rng)) + list(value_mutations(sources, n - n // 2, rng))):
        f = out / f"m{i:05d}.json"
        f.write_bytes(b)
        files.append(f)
    return files


def version_cases(valid01: bytes) -> list[bytes]:
    """Hand-made cases of the version among the decoding rules: named before an unknown member, and
    v1alpha3's ``plan_identity.workspace_fingerprint`` is a member v1alpha2 lacks (never the v1alpha3
    version itself: ``snapshot validate`` accepts that format, the client does not)."""
    a = valid01
    v2 = b'"version":"spice.agent.snapshot/v1alpha2"'
    ws = b'"sha256:' + b"f" * 64 + b'"'

    def other(s: bytes, version: bytes) -> bytes:
        return s.replace(v2, b'"version":' + version, 1)

    def extra(s: bytes) -> bytes:
        return s.replace(b'"status":', b'"extra":0,"status":', 1)

    def with_ws(value: bytes, name: bytes = b"workspace_fingerprint") -> bytes:
        return a.replace(b'"tests:v1"', b'"tests:v1","' + name + b'":' + value, 1)

    out = []
    for version in (b'"spice.agent.snapshot/v9"', b'"x"', b"null", b"5"):
        out += [other(a, version), extra(other(a, version)), other(a, version) + b"x",
                other(a, version).replace(b'"max_turns":3', b'"max_turns":3,"extra":0', 1),
                other(a, version).replace(b'"last_sequence":7', b'"last_sequence":7.0', 1),
                extra(other(a, version).replace(b'"max_turns":3', b'"max_turns":"3"', 1)),
                other(with_ws(ws), version)]
    out.append(extra(a.replace(v2 + b",", b"", 1)))
    for value in (ws, b"null", b'""', b"5", b"[]", b"{}", b'"x"'):
        out += [with_ws(value), with_ws(value) + b"x", extra(with_ws(value)),
                with_ws(value).replace(b'"last_sequence":7', b'"last_sequence":"7"', 1),
                with_ws(value).replace(b'"max_turns":3', b'"max_turns":"3"', 1)]
    for name in ("Workspace_Fingerprint", "WORKSPACE_FINGERPRINT", "wor\\u212aspace_fingerprint",
                 "work\u017fpace_fingerprint", "workspace_fingerprin", "workspacefingerprint"):
        out.append(with_ws(ws, name.encode("utf-8")))
    out.append(a.replace(b'"tests:v1"', b'"tests:v1","workspace_fingerprint":5,"workspace_fingerprint":' + ws, 1))
    out.append(a.replace(b'"status":', b'"workspace_fingerprint":' + ws + b',"status":', 1))
    out.append(a.replace(b'"plan_identity":{', b'"plan_identity":{"workspace_fingerprint":null},"plan_identity":{', 1))
    return out
