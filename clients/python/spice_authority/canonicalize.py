"""Checks v1alpha2 payload files as ``spice-authority snapshot validate`` does.

    python3 -m spice_authority.canonicalize FILE...

Prints ``OK FILE`` for a payload that is valid and already canonical, otherwise
``REJECTED FILE RULE`` with the rule ID of the first broken rule (``P-CANONICAL`` for a valid
payload that is not byte-identical to its canonical encoding; ``P-SIZE`` for a file over 16 MiB,
refused before it is read), or ``UNREADABLE FILE REASON``. ``-`` reads standard input.
With ``--write``, for a payload whose only fault is its form (``P-CANONICAL``) its canonical
encoding is written next to it as ``FILE.canonical`` (mode 0600).

Exit codes: 0 when every file is OK, 1 when any was rejected or unreadable, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import os
import sys

from .payload import MAX_PAYLOAD_BYTES, PayloadRejected, canonicalize, decode


def _read(name: str) -> bytes:
    """At most 16 MiB + 1 bytes, so a larger file is refused without being read whole."""
    if name == "-":
        data = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
    else:
        with open(name, "rb") as f:
            data = f.read(MAX_PAYLOAD_BYTES + 1)
    return data


def check(name: str, write: bool = False) -> str:
    """The line for one file."""
    try:
        data = _read(name)
    except OSError as e:
        return f"UNREADABLE {name} {e.strerror or type(e).__name__}"
    if len(data) > MAX_PAYLOAD_BYTES:
        return f"REJECTED {name} P-SIZE"
    try:
        decode(data)
        return f"OK {name}"
    except PayloadRejected as e:
        if e.rule == "P-CANONICAL" and write and name != "-":
            out = name + ".canonical"
            fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(canonicalize(data))
        return f"REJECTED {name} {e.rule}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python3 -m spice_authority.canonicalize",
        description="Check v1alpha2 payloads: OK FILE when valid and canonical, else REJECTED FILE RULE.",
        epilog="exit 0 only when every file is OK; 1 otherwise; 2 usage. "
               "Example: python3 -m spice_authority.canonicalize spec-kit/payload-corpus/public/*.json")
    ap.add_argument("files", nargs="+", metavar="FILE", help="payload files; '-' reads standard input")
    ap.add_argument("--write", action="store_true",
                    help="for a payload refused only as P-CANONICAL, write its canonical form to FILE.canonical")
    a = ap.parse_args(argv)
    ok = True
    for name in a.files:
        line = check(name, a.write)
        ok &= line.startswith("OK ")
        print(line, flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
