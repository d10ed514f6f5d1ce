"""Transport and client against a fake helper: answers malformed, oversized, slow; refusals; retries;
the endpoint proof (fixed vectors of the Java EndpointProofTest); the token file rules."""

from __future__ import annotations

import _setup_path  # noqa: F401  (the package under test first on sys.path)

import os
import socket
import tempfile
import threading
import time
import unittest

from fakehelper import FakeHelper, Request, answer, fixed, problem, sequence

from spice_authority import errors as E
from spice_authority.client import AuthorityClient, RetryPolicy, Session
from spice_authority.transport import (ProofRefused, Transport, UnixEndpoint, proof_mac, proof_target,
                                       read_token_file, verify_proof)

TOKEN = b"feedface" * 8
NONCE = bytes(range(32))
VECTOR = "71e7d4c20286b9e8dc4f471fd77b02042b4e68bd29fa5df2fff92913d7fb68b9"
TOKEN2 = b"0123456789abcdef" * 4
NONCE2 = b"\xff" * 32
VECTOR2 = "7c526d496ca17a29daa69509669dfa731ec74ca2657f5997f3316c20af796b6b"
OTHER_PORT = "4f5bb64f585e117bb2dd5d721bb4589c19782bb2abad1c8063fed872afd98e46"

RUN = {"run_id": "run-1", "phase": "ACTIVE", "run_generation": 1, "owned": True}


def client_for(fake: FakeHelper, **kw: object) -> AuthorityClient:
    kw.setdefault("retry", RetryPolicy(4, 0.0, 0.0))
    if fake.tcp:
        return AuthorityClient.on_tcp("127.0.0.1", fake.port, fake.token_file, **kw)  # type: ignore[arg-type]
    return AuthorityClient.on_socket(fake.socket_path, **kw)  # type: ignore[arg-type]


class EndpointProofTest(unittest.TestCase):
    def test_fixed_vectors(self) -> None:
        self.assertEqual(proof_mac(TOKEN, NONCE, "127.0.0.1", 8421).hex(), VECTOR)
        self.assertEqual(proof_mac(TOKEN2, NONCE2, "::1", 65535).hex(), VECTOR2)
        self.assertEqual(proof_mac(TOKEN, NONCE, "127.0.0.1", 8422).hex(), OTHER_PORT)
        self.assertEqual(proof_target(NONCE), "/v1/endpoint-proof?nonce=" + NONCE.hex())
        with self.assertRaises(ValueError):
            proof_mac(b"", NONCE, "127.0.0.1", 1)

    def test_verify_accepts_only_the_expected_proof(self) -> None:
        verify_proof(TOKEN, NONCE, "127.0.0.1", 8421, b'{"proof":"' + VECTOR.encode() + b'"}')
        verify_proof(TOKEN, NONCE, "127.0.0.1", 8421, b'{"proof": "' + VECTOR.encode() + b'", "other": 1}')
        other_nonce = proof_mac(TOKEN, NONCE2, "127.0.0.1", 8421).hex()
        other_token = proof_mac(TOKEN2, NONCE, "127.0.0.1", 8421).hex()
        other_addr = proof_mac(TOKEN, NONCE, "127.0.0.2", 8421).hex()
        cases = [
            ('{"proof":"%s"}' % other_nonce, "its proof is wrong"),
            ('{"proof":"%s"}' % other_token, "its proof is wrong"),
            ('{"proof":"%s"}' % OTHER_PORT, "its proof is wrong"),
            ('{"proof":"%s"}' % other_addr, "its proof is wrong"),
            ('{"proof":"deaaf55ce666ec699a7b6a39edc618360b2ddabfd4617d5dbb7174fc01aa87d5"}', "its proof is wrong"),
            ('{"proof":"%s"}' % VECTOR.upper(), "not 64 lowercase hex"),
            ('{"proof":"%s"}' % VECTOR[2:], "not 64 lowercase hex"),
            ('{"proof":"%s00"}' % VECTOR, "not 64 lowercase hex"),
            ('{"proof":"%s"}' % TOKEN.decode(), "its proof is wrong"),
            ('{"proof":1}', "no proof"),
            ('{"ok":true}', "no proof"),
            ('["%s"]' % VECTOR, "not a JSON object"),
            ("proof=" + VECTOR, "not a JSON object"),
            ("", "not a JSON object"),
        ]
        for body, why in cases:
            with self.subTest(body=body[:30]):
                with self.assertRaises(ProofRefused) as cm:
                    verify_proof(TOKEN, NONCE, "127.0.0.1", 8421, body.encode())
                self.assertIn(why, str(cm.exception))
                self.assertNotIn(TOKEN.decode(), str(cm.exception))
                self.assertNotIn(VECTOR[:16], str(cm.exception))


class TokenFileTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="spice-token-")
        os.chmod(self.dir, 0o700)
        self.file = os.path.join(self.dir, "token")

    def tearDown(self) -> None:
        for f in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, f))
        os.rmdir(self.dir)

    def write(self, content: bytes, mode: int = 0o600) -> None:
        fd = os.open(self.file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(fd, content)
        os.close(fd)
        os.chmod(self.file, mode)

    def test_reads_a_token(self) -> None:
        self.write(b"  abc123\n")
        self.assertEqual(read_token_file(self.file), b"abc123")

    def test_refusals_name_the_rule_never_the_content(self) -> None:
        self.write(b"secret-token-value", 0o644)
        with self.assertRaises(OSError) as cm:
            read_token_file(self.file)
        self.assertIn("0600", str(cm.exception))
        self.assertNotIn("secret-token-value", str(cm.exception))
        self.write(b"secret token value")
        with self.assertRaises(OSError) as cm:
            read_token_file(self.file)
        self.assertNotIn("secret", str(cm.exception))
        self.write(b"   \n")
        with self.assertRaisesRegex(OSError, "empty"):
            read_token_file(self.file)
        self.write(b"x" * 4097)
        with self.assertRaisesRegex(OSError, "larger than 4096"):
            read_token_file(self.file)

    def test_loose_directory_link_and_second_link_are_refused(self) -> None:
        self.write(b"tok")
        os.chmod(self.dir, 0o755)
        with self.assertRaisesRegex(OSError, "0700"):
            read_token_file(self.file)
        os.chmod(self.dir, 0o700)
        link = os.path.join(self.dir, "link")
        os.symlink(self.file, link)
        with self.assertRaisesRegex(OSError, "single-link file"):
            read_token_file(link)
        os.unlink(link)
        os.link(self.file, link)
        with self.assertRaisesRegex(OSError, "single-link file"):
            read_token_file(self.file)

    def test_missing_file_is_unreachable(self) -> None:
        with self.assertRaises(E.HelperUnreachable):
            read_token_file(os.path.join(self.dir, "absent"))


class SocketTransportTest(unittest.TestCase):
    def test_a_run_view_and_the_request_it_sent(self) -> None:
        with FakeHelper(fixed(answer(200, RUN))) as fake:
            c = client_for(fake)
            v = c.start(Session("s3cr3t", 1), "run-1")
            self.assertEqual((v.phase, v.run_generation, v.owned, v.fenced), ("ACTIVE", 1, True, False))
            r = fake.requests[0]
            self.assertEqual((r.method, r.target), ("POST", "/v1/runs"))
            self.assertEqual(r.headers["spice-session"], "s3cr3t")
            self.assertEqual(r.headers["connection"], "close")
            self.assertEqual(r.body, b'{"run_id": "run-1"}')

    def test_another_users_socket_gets_nothing(self) -> None:
        with FakeHelper(fixed(answer(200, RUN))) as fake:
            c = AuthorityClient.on_socket(fake.socket_path)
            c._http._peer_uid_of = lambda s: os.geteuid() + 1  # type: ignore[attr-defined]
            with self.assertRaises(E.HelperUntrusted) as cm:
                c.run("run-1")
            self.assertTrue(cm.exception.nothing_sent)
            self.assertEqual(fake.requests, [])  # the refusal came before any byte was written

    def test_without_so_peercred_the_socket_is_refused(self) -> None:
        from unittest import mock

        from spice_authority import transport
        with FakeHelper(fixed(answer(200, RUN))) as fake:
            with mock.patch.object(transport.socket, "SO_PEERCRED", None, create=True):
                with self.assertRaisesRegex(E.HelperUntrusted, "no SO_PEERCRED") as cm:
                    AuthorityClient.on_socket(fake.socket_path).run("run-1")
            self.assertTrue(cm.exception.nothing_sent)
            self.assertEqual(fake.requests, [])

    def test_no_socket_is_unreachable_and_retried(self) -> None:
        slept: list[float] = []
        c = AuthorityClient.on_socket("/nonexistent/spice.sock", retry=RetryPolicy(3, 0.01, 0.02),
                                      _sleep=slept.append)
        with self.assertRaises(E.HelperUnreachable):
            c.run("run-1")
        self.assertEqual(slept, [0.01, 0.02])

    def test_malformed_answers_are_protocol_errors(self) -> None:
        cases = {
            "status line": b"HTTX/1.1 200 OK\r\n\r\n",
            "not json": answer(200, b"{nope"),
            "not a run": answer(200, {"run_id": "run-1"}),
            "conflicting length": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
            "bad chunk": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "truncated": b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{}",
            "header line": b"HTTP/1.1 200 OK\r\n no-colon\r\n\r\n",
            "problem without code": answer(500, {"detail": "x"}),
            "NaN": answer(200, b'{"run_id":"r","phase":"A","run_generation":NaN}'),
        }
        for name, data in cases.items():
            with self.subTest(name), FakeHelper(fixed(data)) as fake:
                with self.assertRaises(E.HelperProtocolError):
                    client_for(fake).run("run-1")
                self.assertEqual(fake.connections, 1, "an unreadable answer is never repeated")

    def test_chunked_and_close_delimited_answers_are_read(self) -> None:
        import json
        body = json.dumps(RUN).encode()
        chunked = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"%x\r\n" % 5 + body[:5] + b"\r\n"
                   + b"%x;ext=1\r\n" % (len(body) - 5) + body[5:] + b"\r\n0\r\nX-T: 1\r\n\r\n")
        for data in (chunked, b"HTTP/1.1 200 OK\r\n\r\n" + body, b"HTTP/1.1 100 Continue\r\n\r\n" + answer(200, RUN)):
            with self.subTest(data[:30]), FakeHelper(fixed(data)) as fake:
                self.assertEqual(client_for(fake).run("run-1").phase, "ACTIVE")

    def test_oversized_answers_are_refused_without_being_held(self) -> None:
        big_head = b"HTTP/1.1 200 OK\r\n" + b"X-Pad: " + b"a" * (70 * 1024) + b"\r\n\r\n"
        big_length = b"HTTP/1.1 200 OK\r\nContent-Length: 8388609\r\n\r\n"
        for name, data in {"head": big_head, "declared": big_length}.items():
            with self.subTest(name), FakeHelper(fixed(data)) as fake:
                with self.assertRaisesRegex(E.HelperProtocolError, "larger than"):
                    client_for(fake).run("run-1")

        def flood(conn: socket.socket, req: Request) -> None:
            conn.sendall(b"HTTP/1.1 200 OK\r\n\r\n")
            chunk = b" " * 65536
            try:
                for _ in range(8 * 16 + 2):  # just past 8 MiB, close-delimited
                    conn.sendall(chunk)
            except OSError:
                pass  # the client hung up once past its bound

        with FakeHelper(flood) as fake:
            with self.assertRaisesRegex(E.HelperProtocolError, "larger than 8388608"):
                client_for(fake).runs()

    def test_a_slow_or_silent_helper_times_out_within_the_deadline_and_is_not_retried(self) -> None:
        stop = threading.Event()

        def drip(conn: socket.socket, req: Request) -> None:
            for b in answer(200, RUN) + b" " * 1000:
                if stop.is_set():
                    return
                conn.sendall(bytes([b]))
                stop.wait(0.02)  # the slowness is the subject: a helper dripping its answer

        def silent(conn: socket.socket, req: Request) -> None:
            stop.wait(10)  # never answers within the client's deadline

        for name, handler, bound in (("drip", drip, 0.05 * 12 + 1.0), ("silent", silent, 0.05 + 1.0)):
            with self.subTest(name), FakeHelper(handler) as fake:
                c = client_for(fake, read_timeout=0.05)
                t0 = time.monotonic()
                with self.assertRaises(E.HelperTimeout):
                    c.start(Session("s", 1), "run-1")
                self.assertLess(time.monotonic() - t0, bound)
                self.assertEqual(fake.connections, 1)
                stop.set()
            stop.clear()

    def test_problems_map_to_their_classes(self) -> None:
        cases = [
            (400, "invalid_request", E.InvalidRequest), (422, "invalid_snapshot", E.InvalidSnapshot),
            (403, "verification_failed", E.VerificationFailed), (415, "unsupported_format", E.UnsupportedFormat), (409, "busy", E.Busy),
            (409, "state_conflict", E.StateConflict), (500, "uncertain", E.Uncertain),
            (503, "unavailable", E.Unavailable), (503, "closing", E.Closing), (404, "not_found", E.NotFound),
            (401, "unauthorized", E.Unauthorized), (409, "cancelled", E.Cancelled), (418, "teapot", E.Unrecognized),
        ]
        for status, code, cls in cases:
            with self.subTest(code), FakeHelper(fixed(problem(status, code, rule="P-TEXT"))) as fake:
                c = client_for(fake, retry=RetryPolicy.NONE)  # type: ignore[attr-defined]
                with self.assertRaises(cls) as cm:
                    c.run("run-1")
                self.assertEqual((cm.exception.status, cm.exception.code), (status, code))
        with FakeHelper(fixed(problem(422, "invalid_snapshot", "bad", rule="P-CALL-DUP"))) as fake:
            with self.assertRaises(E.InvalidSnapshot) as cm2:
                client_for(fake).sign(Session("s", 1), "run-1", b"{}")
            self.assertEqual(cm2.exception.rule, "P-CALL-DUP")
            self.assertEqual(str(cm2.exception), "invalid_snapshot: bad (rule P-CALL-DUP)")

    def test_session_id_never_reaches_a_message(self) -> None:
        with FakeHelper(fixed(problem(409, "state_conflict", "session abcdef0123 does not own it"))) as fake:
            s = Session("abcdef0123", 7)
            with self.assertRaises(E.StateConflict) as cm:
                client_for(fake).release(s, "run-1")
            self.assertNotIn("abcdef0123", str(cm.exception))
            self.assertIn("<session>", str(cm.exception))
            self.assertNotIn("abcdef0123", repr(s) + str(s))

    def test_the_observer_never_sees_the_session_id(self) -> None:
        seen: list[tuple[str, str, int]] = []
        with FakeHelper(fixed(answer(204))) as fake:
            client_for(fake, observer=lambda m, t, st: seen.append((m, t, st))).close_session(Session("abc123", 1))
        self.assertEqual(seen, [("DELETE", "/v1/sessions/<session>", 204)])

    def test_retried_only_when_nothing_happened(self) -> None:
        run = answer(200, RUN)
        cases = [
            ("unavailable", [problem(503, "unavailable"), run], 2, None),
            ("busy with Retry-After", [problem(409, "busy", retry_after=1), run], 2, None),
            ("busy quota", [problem(429, "busy"), run], 2, None),
            ("cancelled", [problem(409, "cancelled"), run], 2, None),
            ("busy owner alive", [problem(409, "busy"), run], 1, E.Busy),
            ("uncertain", [problem(500, "uncertain"), run], 1, E.Uncertain),
            ("unknown code", [problem(500, "new_code"), run], 1, E.Unrecognized),
            ("gives up", [problem(503, "unavailable")], 4, E.Unavailable),
        ]
        for name, answers, connections, error in cases:
            with self.subTest(name), FakeHelper(sequence(*answers)) as fake:
                slept: list[float] = []
                c = client_for(fake, retry=RetryPolicy(4, 0.01, 0.5), _sleep=slept.append)
                if error is None:
                    self.assertEqual(c.start(Session("s", 1), "run-1").phase, "ACTIVE")
                else:
                    with self.assertRaises(error):
                        c.start(Session("s", 1), "run-1")
                self.assertEqual(fake.connections, connections)
                if name == "busy with Retry-After":
                    self.assertEqual(slept, [0.5])  # honoured up to the policy's maximum

    def test_a_sign_answer_that_is_not_the_envelope_of_the_payload_is_refused(self) -> None:
        from spice_authority import envelope as EN
        payload = b'{"run_id":"run-1","last_sequence":7,"status":"suspended"}'
        import hashlib

        def env(**change: object) -> bytes:
            fields = dict(format="spice.agent.snapshot/v1alpha2", run_id="run-1", last_sequence=7, lifecycle=1,
                          payload=payload, sha256=hashlib.sha256(payload).digest(),
                          authority=EN.Authority(b"\x01" * 32, 1, b"\x02" * 32))
            fields.update(change)
            return EN.encode(EN.Envelope(**fields))  # type: ignore[arg-type]

        with FakeHelper(fixed(answer(200, env(), {"Content-Type": "application/x-protobuf"}))) as fake:
            self.assertEqual(client_for(fake).sign(Session("s", 1), "run-1", payload), env())
        for name, bad in {"other run": env(run_id="run-2"), "other payload": env(payload=b"{}"),
                          "sequence": env(last_sequence=8), "lifecycle": env(lifecycle=2),
                          "no claim": env(authority=None), "garbage": b"\xff\xff"}.items():
            with self.subTest(name), FakeHelper(fixed(answer(200, bad))) as fake:
                with self.assertRaisesRegex(E.HelperProtocolError, "outcome is unknown"):
                    client_for(fake).sign(Session("s", 1), "run-1", payload)
                self.assertEqual(fake.connections, 1)

    def test_a_cancelled_sign_is_never_repeated(self) -> None:
        with FakeHelper(sequence(problem(409, "cancelled"), answer(200, b"\x0a\x00"))) as fake:
            with self.assertRaises(E.Cancelled) as cm:
                client_for(fake).sign(Session("s", 1), "run-1", b"{}")
            self.assertTrue(cm.exception.may_follow_write)
            self.assertTrue(cm.exception.outcome_unknown)
            self.assertEqual(fake.connections, 1)

    def test_an_early_refusal_of_a_large_body_is_the_outcome(self) -> None:
        def refuse_early(conn: socket.socket, req: Request) -> None:
            conn.sendall(problem(413, "invalid_request", "too large"))
            conn.shutdown(socket.SHUT_RDWR)

        # The fake reads the head and Content-Length bytes; send a body the fake will not read whole.
        with FakeHelper(refuse_early) as fake:
            c = client_for(fake, retry=RetryPolicy.NONE)  # type: ignore[attr-defined]
            try:
                c.sign(Session("s", 1), "run-1", b"x" * (4 * 1024 * 1024))
            except E.InvalidRequest as e:
                self.assertEqual(e.status, 413)
            except E.HelperProtocolError:
                pass  # the kernel may report the reset before the answer could be read: unknown, not retried
            self.assertEqual(fake.connections, 1)

    def test_bad_run_ids_and_header_injection_are_refused_before_sending(self) -> None:
        with FakeHelper(fixed(answer(200, RUN))) as fake:
            c = client_for(fake)
            for bad in ("", " x", "a\nb", "x" * 97, "a\x7fb", "a\ud800"):
                with self.subTest(bad=bad[:5]), self.assertRaises(ValueError):
                    c.start(Session("s", 1), bad)
            with self.assertRaises(ValueError):
                Transport(UnixEndpoint(fake.socket_path)).send("GET", "/v1/runs", {"X": "a\r\nInjected: 1"}, None)
            self.assertEqual(fake.requests, [])


class TcpTransportTest(unittest.TestCase):
    def test_the_proof_comes_first_and_then_the_token(self) -> None:
        with FakeHelper(fixed(answer(200, RUN)), tcp=True) as fake:
            self.assertEqual(client_for(fake).run("run-1").phase, "ACTIVE")
            self.assertEqual(fake.requests[0].headers["authorization"], "Bearer " + TOKEN.decode())

    def test_a_server_that_does_not_prove_gets_neither_token_nor_request(self) -> None:
        for how in ("wrong", "status500", "close", "slow"):
            with self.subTest(how), FakeHelper(fixed(answer(200, RUN)), tcp=True, proof=how) as fake:
                c = client_for(fake, read_timeout=0.3)
                t0 = time.monotonic()
                with self.assertRaises(E.HelperUntrusted) as cm:
                    c.run("run-1")
                self.assertLess(time.monotonic() - t0, 0.3 + 1.0)  # within one read timeout, never retried
                self.assertTrue(cm.exception.nothing_sent)
                self.assertEqual(fake.requests, [])
                self.assertNotIn(TOKEN.decode(), str(cm.exception))

    def test_the_token_is_zeroed_after_the_request(self) -> None:
        held: list[bytearray] = []

        def reader(path: str) -> bytearray:
            held.append(read_token_file(path))
            return held[-1]

        with FakeHelper(fixed(answer(200, RUN)), tcp=True) as fake:
            client_for(fake, token_reader=reader).run("run-1")
            self.assertEqual(held[0], bytearray(len(TOKEN)))

    def test_only_loopback(self) -> None:
        with self.assertRaises(ValueError):
            AuthorityClient.on_tcp("10.0.0.1", 80, "/x/token")


if __name__ == "__main__":
    unittest.main()
