"""Gathers Unix-socket connections to the helper from short-lived children over SCM_RIGHTS.

Usage: fd_hoarder.py SOCKET CHILDREN PER_CHILD
Each child (one at a time) opens PER_CHILD connections, sends one request on each (so each is
counted against the child), passes every descriptor to this process over SCM_RIGHTS and exits;
this process reaps it. Then it prints {"first": {status: n}, "received": n} (status 0: closed),
waits for a line on standard input, sends one request on each received connection that had
answered 200, prints {"then": {status: n}}, and holds everything until standard input closes.
Standard library only (Python 3.9+ for send_fds).
"""
import json
import os
import socket
import sys

path, children, per_child = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
REQUEST = b"GET /q/health/live HTTP/1.1\r\nHost: localhost\r\n\r\n"


def status(s):
    """The status of one keep-alive request on s, its body read; 0 when the helper closed it."""
    try:
        s.settimeout(10)
        s.sendall(REQUEST)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                return 0
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(body) < length:
            chunk = s.recv(65536)
            if not chunk:
                break
            body += chunk
        return int(head.split(b" ")[1])
    except OSError:
        return 0


def tally(statuses):
    out = {}
    for st in statuses:
        out[str(st)] = out.get(str(st), 0) + 1
    return out


ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
received, first = [], []
for _ in range(children):
    pid = os.fork()
    if pid == 0:
        conns, answers = [], []
        for _ in range(per_child):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(path)
            except OSError:
                answers.append(0)  # refused: passed on all the same, so answers and descriptors pair up
                conns.append(s)
                continue
            answers.append(status(s))
            conns.append(s)
        socket.send_fds(theirs, [json.dumps(answers).encode()], [c.fileno() for c in conns])
        os._exit(0)
    msg, fds, _, _ = socket.recv_fds(ours, 65536, per_child)
    os.waitpid(pid, 0)
    answers = json.loads(msg)
    first.extend(answers)
    for fd, answer in zip(fds, answers):
        received.append((socket.socket(fileno=fd), answer))
print(json.dumps({"first": tally(first), "received": len(received)}), flush=True)
sys.stdin.readline()
then = [status(s) for s, answer in received if answer == 200]
print(json.dumps({"then": tally(then)}), flush=True)
sys.stdin.read()
