"""Holds endpoint-proof connections to a TCP helper, as a process of another user would.

Usage: proof_holder.py HOST PORT COUNT
Opens COUNT connections, one after the other; on each it asks GET /v1/endpoint-proof (no token,
keep-alive) and keeps the connection when the answer is 200. Prints one JSON line
{"opened", "answered", "refused", "held"} (held: kept connections still open a moment later),
then keeps them until standard input closes. Standard library only.
"""
import json
import os
import select
import socket
import sys

host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
request = ("GET /v1/endpoint-proof?nonce=%s HTTP/1.1\r\nHost: localhost\r\n\r\n" % os.urandom(32).hex()).encode()
kept, answered, refused = [], 0, 0
for _ in range(count):
    try:
        s = socket.create_connection((host, port), timeout=5)
        s.sendall(request)
        data = s.recv(65536)
    except OSError:
        data = b""
        s = None
    if data.startswith(b"HTTP/1.1 200"):
        answered += 1
        kept.append(s)
    else:
        refused += 1
        if s is not None:
            s.close()


def still_open(s):
    readable, _, _ = select.select([s], [], [], 0)
    if not readable:
        return True
    try:
        return s.recv(65536, socket.MSG_PEEK) != b""
    except OSError:
        return False


held = sum(1 for s in kept if still_open(s))
print(json.dumps({"opened": count, "answered": answered, "refused": refused, "held": held}), flush=True)
sys.stdin.read()
