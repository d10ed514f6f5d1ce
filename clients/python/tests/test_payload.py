"""Payloads, plan identity and envelopes against the spec kit: every vector, every corpus file (verdict
and rule), every transcript (byte-identical after re-encoding); the builder's Go-identical output."""

from __future__ import annotations

import _setup_path  # noqa: F401  (the package under test first on sys.path)

import contextlib
import hashlib
import io
import json
import os
import tempfile
import unittest
from pathlib import Path

from spice_authority import envelope as EN
from spice_authority import payload as P
from spice_authority import plan as PL
from spice_authority.canonicalize import main as canonicalize_main

KIT = Path(os.environ.get("SPICE_SPEC_DIR", Path(__file__).resolve().parents[3] / "spec-kit"))


def kit_json(rel: str) -> dict:
    return json.loads((KIT / rel).read_text(encoding="utf-8"))


class CorpusTest(unittest.TestCase):
    def test_every_corpus_file_has_its_verdict_and_rule(self) -> None:
        index = kit_json("payload-corpus/public/index.json")
        files = sorted(p.name for p in (KIT / "payload-corpus/public").glob("*.json") if p.name != "index.json")
        self.assertEqual(sorted(c["file"] for c in index["cases"]), files, "index and directory agree")
        self.assertEqual(len(files), 51)
        for case in index["cases"]:
            with self.subTest(case["file"]):
                data = (KIT / "payload-corpus/public" / case["file"]).read_bytes()
                if "sha256" in case:
                    self.assertEqual(hashlib.sha256(data).hexdigest(), case["sha256"])
                expected = None if case["expected"] == "valid" else case["rule"]
                self.assertEqual(P.validate(data), expected)
                if expected is None:
                    self.assertEqual(P.encode(P.decode(data)), data)

    def test_every_rule_id_is_known(self) -> None:
        index = kit_json("payload-corpus/public/index.json")
        self.assertEqual(set(index["rules"]) | {"P-CANONICAL"}, set(P.RULES))

    def test_every_transcript_reencodes_byte_identically(self) -> None:
        index = kit_json("transcripts/index.json")
        self.assertEqual(len(index["cases"]), 100)
        for case in index["cases"]:
            with self.subTest(case["file"]):
                data = (KIT / "transcripts" / case["file"]).read_bytes()
                self.assertEqual(hashlib.sha256(data).hexdigest(), case["sha256"])
                s = P.decode(data)
                self.assertEqual(P.encode(s), data)
                self.assertEqual((s.run_id, s.status, s.last_sequence, s.completed_turns),
                                 (case["run_id"], case["status"], case["last_sequence"], case["completed_turns"]))
                self.assertEqual(s.plan_identity.tool_plan_id, case["tool_plan_id"])
                self.assertEqual(s.plan_identity.fingerprint, case["plan_fingerprint"])
                rebuilt = P.SnapshotBuilder().run_id(s.run_id).definition(
                    s.definition.name, s.definition.model, s.definition.max_turns).completed_turns(
                    s.completed_turns).plan_identity(s.plan_identity).seen_interaction_ids(
                    s.seen_interaction_ids).last_sequence(s.last_sequence).status(s.status)
                for m in s.history:
                    rebuilt.message(m.id, m.role, m.parts)
                self.assertEqual(rebuilt.build().canonical, data)


class DecoderTest(unittest.TestCase):
    BASE = (KIT / "payload-corpus/public/valid-01-minimal-suspended.json").read_bytes() if KIT.exists() else b""

    def rule(self, old: bytes, new: bytes) -> str | None:
        data = self.BASE.replace(old, new, 1)
        self.assertNotEqual(data, self.BASE)
        return P.validate(data)

    def test_go_decoder_semantics_then_canonical(self) -> None:
        self.assertIsNone(P.validate(self.BASE))
        self.assertEqual(self.rule(b'"status"', b'"Status"'), "P-CANONICAL")  # matched case-insensitively
        self.assertEqual(self.rule(b'"status"', b'"\xc5\xbftatus"'), "P-CANONICAL")  # U+017F folds to S
        self.assertEqual(self.rule(b'"status"', b'"sta\\u0074us"'), "P-CANONICAL")
        self.assertEqual(self.rule(b'"status":"suspended"', b'"status":"suspended","status":"suspended"'),
                         "P-CANONICAL")
        self.assertEqual(self.rule(b'"seen_interaction_ids":[]', b'"seen_interaction_ids":null'), "P-CANONICAL")
        self.assertEqual(self.rule(b'"status":"suspended"', b'"status":null'), "P-STATUS")
        self.assertEqual(self.rule(b'"last_sequence":7', b'"last_sequence":7.0'), "P-TYPE")
        self.assertEqual(self.rule(b'"last_sequence":7', b'"last_sequence":18446744073709551616'), "P-TYPE")
        self.assertEqual(self.rule(b'"last_sequence":7', b'"last_sequence":18446744073709551615'), "P-SEQ")
        self.assertEqual(self.rule(b'"max_turns":3', b'"max_turns":4294967296'), "P-TYPE")
        self.assertEqual(self.rule(b'"last_sequence":7', b'"last_sequence":07'), "P-JSON")
        self.assertEqual(self.rule(b'"status"', b'"extra":1,"status"'), "P-UNKNOWN")
        # a syntax error anywhere wins over an earlier unknown member
        self.assertEqual(P.validate(self.BASE.replace(b'"status"', b'"extra":1,"status"')[:-1]), "P-JSON")
        self.assertEqual(P.validate(self.BASE + b" \n"), "P-CANONICAL")
        self.assertEqual(P.validate(self.BASE + b"x"), "P-TRAILING")
        self.assertEqual(P.validate(b"\xef\xbb\xbf" + self.BASE), "P-JSON")
        self.assertEqual(P.validate(b""), "P-SIZE")
        self.assertEqual(self.rule(b'"run_id":"run-1"', b'"run_id":"run-\\ud800"'), "P-RUNID")
        self.assertEqual(self.rule(b'"run_id":"run-1"', b'"run_id":"run-\xff"'), "P-RUNID")
        self.assertEqual(self.rule(b'"run_id":"run-1"', b'"run_id":"run\\u0001"'), "P-RUNID")
        self.assertEqual(self.rule(b'"text":"hello"', b'"text":"h\xffllo"'), "P-CANONICAL")
        self.assertEqual(self.rule(b'"text":"hello"', b'"text":"a\x01"'), "P-JSON")
        self.assertEqual(P.validate(b"[" * 10001 + b"]" * 10001), "P-JSON")  # Go's depth limit
        self.assertEqual(P.validate(b"[" * 100 + b"]" * 100), "P-TYPE")

    def test_canonicalize_repairs_only_the_form(self) -> None:
        pretty = json.dumps(json.loads(self.BASE), indent=2).encode()
        self.assertEqual(P.validate(pretty), "P-CANONICAL")
        self.assertEqual(P.canonicalize(pretty), self.BASE)
        with self.assertRaises(P.PayloadRejected) as cm:
            P.canonicalize(pretty.replace(b'"hello"', b'""'))
        self.assertEqual(cm.exception.rule, "P-TEXT")


class VersionOrderTest(unittest.TestCase):
    """The order of P-VERSION among the decoding rules, as ``snapshot validate`` names them for a
    reader of v1alpha2 only (the Java PayloadV1alpha3Test): the version is named before an unknown
    member, and v1alpha3's ``plan_identity.workspace_fingerprint`` is a member v1alpha2 lacks."""

    BASE = DecoderTest.BASE
    WS = b'"sha256:' + b"f" * 64 + b'"'
    V2 = b'"version":"spice.agent.snapshot/v1alpha2"'

    def edit(self, data: bytes, old: bytes, new: bytes) -> bytes:
        out = data.replace(old, new, 1)
        self.assertNotEqual(out, data)
        return out

    def refusal(self, data: bytes) -> P.PayloadRejected:
        with self.assertRaises(P.PayloadRejected) as cm:
            P.decode(data)
        return cm.exception

    def with_workspace(self, value: bytes = b"", name: bytes = b"workspace_fingerprint") -> bytes:
        return self.edit(self.BASE, b'"tests:v1"', b'"tests:v1","' + name + b'":' + (value or self.WS))

    def version(self, data: bytes, version: bytes) -> bytes:
        return self.edit(data, self.V2, b'"version":"' + version + b'"')

    def unknown(self, data: bytes) -> bytes:
        return self.edit(data, b'"status":', b'"extra":0,"status":')

    def test_unknown_version_with_unknown_member_is_a_version_error(self) -> None:
        e = self.refusal(self.unknown(self.version(self.BASE, b"spice.agent.snapshot/v9")))
        self.assertEqual((e.rule, e.where), ("P-VERSION", "version"))
        nested = self.edit(self.version(self.BASE, b"x"), b'"max_turns":3', b'"max_turns":3,"extra":0')
        self.assertEqual(P.validate(nested), "P-VERSION")
        self.assertEqual(P.validate(self.unknown(self.edit(self.BASE, self.V2 + b",", b""))), "P-VERSION", "no version")
        v3 = self.version(self.BASE, b"spice.agent.snapshot/v1alpha3")
        self.assertEqual(P.validate(self.unknown(v3)), "P-VERSION", "v1alpha3 is not accepted here")

    def test_known_version_unknown_member_stays_unknown(self) -> None:
        e = self.refusal(self.unknown(self.BASE))
        self.assertEqual((e.rule, e.where), ("P-UNKNOWN", "$"))
        # outside plan_identity the workspace member is unknown in every format
        self.assertEqual(P.validate(self.edit(self.BASE, b'"status":', b'"workspace_fingerprint":"",' + b'"status":')),
                         "P-UNKNOWN")

    def test_v1alpha2_with_workspace_member_is_a_version_error(self) -> None:
        e = self.refusal(self.with_workspace())
        self.assertEqual((e.rule, e.where), ("P-VERSION", "version"))
        # also when the member is null, a number, or spelled in another case (Go's folding)
        self.assertEqual(P.validate(self.with_workspace(b"null")), "P-VERSION")
        self.assertEqual(P.validate(self.with_workspace(b"5")), "P-VERSION")
        self.assertEqual(P.validate(self.with_workspace(b'""')), "P-VERSION")
        self.assertEqual(P.validate(self.with_workspace(name=b"Workspace_Fingerprint")), "P-VERSION")
        self.assertEqual(P.validate(self.with_workspace(name="wor\u212aspace_fingerprint".encode())), "P-VERSION")
        self.assertEqual(P.validate(self.with_workspace(name="WORK\u017fPACE_FINGERPRINT".encode())), "P-VERSION")
        self.assertEqual(P.validate(self.with_workspace(name=b"workspace_fingerprin")), "P-UNKNOWN")
        # before trailing data and before an unknown member or a later type error
        self.assertEqual(P.validate(self.with_workspace() + b"x"), "P-VERSION")
        self.assertEqual(P.validate(self.unknown(self.with_workspace())), "P-VERSION")
        # a type error outside it keeps its place (it is one in every format) ...
        self.assertEqual(P.validate(self.edit(self.with_workspace(), b'"last_sequence":7', b'"last_sequence":"7"')),
                         "P-TYPE")
        # ... unless a type error inside it came first: that one counts for v1alpha3 only
        self.assertEqual(P.validate(self.edit(self.with_workspace(b"5"), b'"last_sequence":7', b'"last_sequence":"7"')),
                         "P-VERSION")
        # but a syntax error still comes first
        self.assertEqual(P.validate(self.with_workspace()[:-1]), "P-JSON")

    def test_type_error_first_keeps_its_place(self) -> None:
        typed = self.edit(self.BASE, b'"max_turns":3', b'"max_turns":"3"')
        e = self.refusal(self.unknown(self.version(typed, b"x")))
        self.assertEqual((e.rule, e.where), ("P-TYPE", "definition.max_turns"))
        e = self.refusal(self.edit(typed, b'"tests:v1"', b'"tests:v1","workspace_fingerprint":5'))
        self.assertEqual((e.rule, e.where), ("P-TYPE", "definition.max_turns"), "before the workspace member")
        late = self.edit(self.version(self.BASE, b"x"), b'"last_sequence":7', b'"last_sequence":7.0')
        self.assertEqual(P.validate(late), "P-TYPE")

    def test_unknown_version_alone_trailing_data_still_first(self) -> None:
        self.assertEqual(P.validate(self.version(self.BASE, b"x") + b"x"), "P-TRAILING")
        self.assertEqual(P.validate(self.version(self.BASE, b"x")), "P-VERSION")

    def test_v1alpha3_corpus_is_refused_for_its_version(self) -> None:
        # A v1alpha2-only reader: what snapshot validate names where only v1alpha2 is accepted.
        index = kit_json("payload-corpus/v1alpha3/index.json")
        for case in index["cases"]:
            with self.subTest(case["file"]):
                data = (KIT / "payload-corpus/v1alpha3" / case["file"]).read_bytes()
                if case["file"] == "invalid-version-v1alpha2-payload.json":
                    self.assertIsNone(P.validate(data))  # a valid v1alpha2 payload
                    continue
                # syntax first; otherwise the version, also before trailing data (the workspace member is there)
                rule = case.get("rule")
                self.assertEqual(P.validate(data), rule if rule in ("P-SIZE", "P-JSON") else "P-VERSION")


class BuilderTest(unittest.TestCase):
    PLAN = P.PlanIdentity(("broker:injected", "provider:injected", "stage:kernel"), "tests:v1", "generation-1",
                          "sha256:" + "0" * 64)

    def builder(self) -> P.SnapshotBuilder:
        return (P.SnapshotBuilder().run_id("run-1").definition("test", "model", 3).completed_turns(1)
                .plan_identity(self.PLAN).last_sequence(9).status("suspended"))

    def test_go_escaping_and_compaction(self) -> None:
        text = "<a> & \u2028\u2029 \b\f\n\r\t\x01\x7f / \"q\" \\ é 😀"
        s = (self.builder()
             .message("m1", "user", [P.Part.text_part(text)])
             .message("m2", "assistant", [P.Part.tool_call("t", "c1", ' { "a" : "<&>\u2028" , "n" : 2.50 } ')])
             .message("m3", "tool", [P.Part.tool_result("t", "c1", b'"\\u0041\\/"'),
                                     P.Part.extension("ns", b"null")])
             .build())
        out = s.canonical.decode("utf-8")
        self.assertIn(r'"text":"\u003ca\u003e \u0026 \u2028\u2029 \b\f\n\r\t\u0001' + "\x7f" + r' / \"q\" \\ é 😀"', out)
        self.assertIn(r'"data":{"a":"\u003c\u0026\u003e\u2028","n":2.50}', out)
        self.assertIn(r'"data":"\u0041\/"', out)
        self.assertIn('{"kind":"extension","namespace":"ns","data":null}', out)
        self.assertTrue(out.startswith('{"version":"spice.agent.snapshot/v1alpha2","run_id":"run-1","definition":'
                                       '{"name":"test","model":"model","max_turns":3},"completed_turns":1,"history":['))
        self.assertTrue(out.endswith('"seen_interaction_ids":[],"last_sequence":9,"status":"suspended"}'))
        self.assertEqual(P.decode(s.canonical), s)
        self.assertNotIn("hello", repr(s))

    def test_builder_reports_the_first_rule(self) -> None:
        with self.assertRaises(P.PayloadRejected) as cm:
            self.builder().message("m1", "assistant", [P.Part.text_part("x")]).build()
        self.assertEqual(cm.exception.rule, "P-HIST-FIRST-USER")
        with self.assertRaises(P.PayloadRejected) as cm:
            self.builder().run_id("a\ud800").message("m1", "user", [P.Part.text_part("x")]).build()
        self.assertEqual(cm.exception.rule, "P-RUNID")
        with self.assertRaises(ValueError):
            P.Part.tool_call("t", "c", "{not json")


class PlanIdentityTest(unittest.TestCase):
    def test_every_plan_vector(self) -> None:
        v = kit_json("vectors/plan-identity.json")
        self.assertEqual(v["plan_domain"], PL.PLAN_DOMAIN)
        tools = {}
        for t in v["tools"]:
            d = PL.ToolDefinition(t["name"], t["description"], t["input_schema_utf8"].encode(), t["effect"],
                                  t["replay_safety"], tuple(t["capabilities"]))
            self.assertEqual(d.fingerprint(), t["fingerprint"], t["key"])
            tools[t["key"]] = d
        for s in v["static_plan_ids"]:
            self.assertEqual(PL.static_tool_plan_id([tools[k] for k in s["tools"]]), s["static_plan_id"])
        for p in v["plans"]:
            leased = [tools[k] for k in p["tools"]]
            fp = PL.plan_fingerprint(p["compiled_identities"], p["tool_plan_id"],
                                     p["snapshot_compatibility_identity"], leased)
            self.assertEqual(fp, p["fingerprint"])
            ident = PL.plan_identity(reversed(p["compiled_identities"]), p["tool_plan_id"],
                                     p["snapshot_compatibility_identity"], leased)
            self.assertEqual(ident.fingerprint, p["fingerprint"])
            self.assertTrue(PL.matches(ident, leased))
            self.assertFalse(PL.matches(ident, leased[:-1]) and len(leased) > 0)

    def test_corpus_plans_match_their_tools(self) -> None:
        v = kit_json("vectors/plan-identity.json")
        tools = {t["key"]: PL.ToolDefinition(t["name"], t["description"], t["input_schema_utf8"].encode(),
                                             t["effect"], t["replay_safety"], tuple(t["capabilities"]))
                 for t in v["tools"]}
        for case in kit_json("payload-corpus/public/index.json")["cases"]:
            if case["expected"] != "valid":
                continue
            s = P.decode((KIT / "payload-corpus/public" / case["file"]).read_bytes())
            leased = [tools[k] for k in case.get("plan_tools", [])]
            with self.subTest(case["file"]):
                self.assertTrue(PL.matches(s.plan_identity, leased))

    def test_definition_rules(self) -> None:
        ok = dict(name="t", description="d", input_schema=b"{}", effect="read_only", replay_safety="safe")
        PL.ToolDefinition(**ok)  # type: ignore[arg-type]
        for bad in (dict(replay_safety="unsafe"), dict(effect="mutating"), dict(input_schema=b"{"),
                    dict(name=" t"), dict(capabilities=("network.access",)),
                    dict(capabilities=("filesystem.read", "filesystem.read"))):
            with self.subTest(bad), self.assertRaises(ValueError):
                PL.ToolDefinition(**{**ok, **bad})  # type: ignore[arg-type]


class EnvelopeVectorTest(unittest.TestCase):
    def test_envelope_vectors(self) -> None:
        for case in kit_json("vectors/envelope.json")["cases"]:
            with self.subTest(case["name"]):
                raw = bytes.fromhex(case["envelope_hex"])
                self.assertEqual(len(raw), int(case["envelope_length"]))
                env = EN.parse(raw)
                f = case["fields"]
                self.assertEqual((env.format, env.run_id, env.last_sequence, env.lifecycle),
                                 (f["format"], f["run_id"], int(f["last_sequence_decimal"]), f["lifecycle_number"]))
                self.assertEqual(env.payload, bytes.fromhex(case["payload_hex"]))
                self.assertEqual(env.payload, case["payload_utf8"].encode("utf-8"))
                self.assertEqual(env.sha256.hex(), f["sha256_hex"])
                self.assertEqual(hashlib.sha256(env.payload).hexdigest(), f["sha256_hex"])
                self.assertEqual(EN.encode(env), raw)
                s = P.decode(env.payload)  # valid and canonical
                self.assertEqual(P.encode(s), env.payload)
                self.assertEqual(EN.STATUS_LIFECYCLE[s.status], env.lifecycle)
                a = case["authority"]
                key = EN.run_subkey(bytes.fromhex(a["master_key_hex"]), bytes.fromhex(a["scope_id_hex"]),
                                    env.run_id, a["run_generation"])
                self.assertEqual(key.hex(), a["run_subkey_hex"])
                mi = EN.mac_input(bytes.fromhex(a["scope_id_hex"]), a["authority_key_generation"], env.format,
                                  env.run_id, env.last_sequence, env.lifecycle, env.sha256)
                self.assertEqual(mi.hex(), case["canonical_mac_input_hex"])
                self.assertEqual(EN.claim(key, mi).hex(), case["hmac_sha256_hex"])
                assert env.authority is not None
                self.assertEqual(env.authority.hmac_sha256.hex(), case["hmac_sha256_hex"])
                self.assertNotIn(case["hmac_sha256_hex"][:16], repr(env))

    def test_mac_input_vectors(self) -> None:
        v = kit_json("vectors/mac-input.json")
        self.assertEqual(v["domain"], EN.MAC_DOMAIN)
        for case in v["cases"]:
            with self.subTest(case["name"]):
                i = case["inputs"]
                payload = bytes.fromhex(i["payload_hex"])
                self.assertEqual(hashlib.sha256(payload).hexdigest(), i["payload_sha256_hex"])
                mi = EN.mac_input(bytes.fromhex(i["scope_id_hex"]), int(i["generation_decimal"]), i["format"],
                                  bytes.fromhex(i["run_id_utf8_hex"]).decode("utf-8"),
                                  int(i["last_sequence_decimal"]), i["lifecycle_number"], hashlib.sha256(payload).digest())
                self.assertEqual(mi.hex(), case["canonical_input_hex"])
                self.assertEqual(len(mi), case["canonical_input_length"])
                self.assertEqual(EN.claim(bytes.fromhex(i["key_hex"]), mi).hex(), case["hmac_sha256_hex"])

    def test_run_subkey_vectors(self) -> None:
        v = kit_json("vectors/run-subkey.json")
        self.assertEqual(v["domain"], EN.SUBKEY_DOMAIN)
        for case in v["cases"]:
            with self.subTest(case["name"]):
                i = case["inputs"]
                key = EN.run_subkey(bytes.fromhex(i["master_key_hex"]), bytes.fromhex(i["scope_id_hex"]),
                                    bytes.fromhex(i["run_id_utf8_hex"]).decode("utf-8"),
                                    int(i["run_generation_decimal"]))
                self.assertEqual(key.hex(), case["subkey_hex"])

    def test_record_vectors(self) -> None:
        v = kit_json("vectors/record.json")
        self.assertEqual(v["domain"], EN.RECORD_DOMAIN)
        master = bytes.fromhex(v["store"]["master_key_hex"])
        for case in v["cases"]:
            with self.subTest(case["name"]):
                rec = bytes.fromhex(case["record_json_hex"])
                self.assertEqual(EN.record_mac_input(rec).hex(), case["mac_input_hex"])
                self.assertEqual(EN.claim(master, EN.record_mac_input(rec)).hex(), case["record_hmac_sha256_hex"])
                self.assertEqual(EN.record_file_stem(case["record"]["run_id"]) + ".state", case["state_file"])

    def test_malformed_envelopes(self) -> None:
        for bad in (b"", b"\x0a\xff", b"\x0a\x05ab", b"\x0f", b"\x12\x02\xff\xfe"):
            with self.subTest(bad), self.assertRaises(EN.EnvelopeMalformed):
                EN.parse(bad)


class ConformanceKitTest(unittest.TestCase):
    """The scenarios are well formed, and their payload templates are what the README says."""

    def test_every_scenario_is_well_formed(self) -> None:
        from spice_authority.conformance import check_scenario, load_scenarios
        scenarios = load_scenarios(KIT / "conformance")
        self.assertGreaterEqual(len(scenarios), 13)
        names = [s["name"] for _, s in scenarios]
        self.assertEqual(len(names), len(set(names)), "scenario names are unique")
        for file, scenario in scenarios:
            with self.subTest(file):
                self.assertEqual(check_scenario(KIT / "conformance", scenario), [])

    def test_malformed_scenarios_are_reported(self) -> None:
        from spice_authority.conformance import check_scenario
        bad = {"format": "spice-authority-conformance/v1", "name": "bad", "steps": [
            {"do": "sign", "session": "A", "run": "r", "payload": "absent.json"},
            {"do": "prepare_import", "session": "A", "envelope": "never", "expect": {"status": 409}},
            {"do": "jump"}]}
        self.assertEqual(check_scenario(KIT / "conformance", bad), [
            "step 0 (sign): session 'A' was never opened", "step 0 (sign): no payload file 'absent.json'",
            "step 1 (prepare_import): session 'A' was never opened",
            "step 1 (prepare_import): envelope 'never' is used before it is saved",
            "step 1 (prepare_import): a code goes with a status of 400 or more, and only there",
            "step 2: unknown step 'jump'"])

    def test_payload_templates(self) -> None:
        expected = {"suspended-turn-1.json": None, "suspended-turn-1-other.json": None,
                    "suspended-turn-2.json": None, "completed.json": None,
                    "noncanonical-space.json": "P-CANONICAL", "invalid-text-empty.json": "P-TEXT"}
        files = sorted(p.name for p in (KIT / "conformance/payloads").glob("*.json"))
        self.assertEqual(files, sorted(expected))
        for name, rule in expected.items():
            with self.subTest(name):
                data = (KIT / "conformance/payloads" / name).read_bytes()
                self.assertEqual(data.count(b"${run}"), 1)
                self.assertEqual(P.validate(data.replace(b"${run}", b"c0123abcd-some-scenario-r1")), rule)


class CanonicalizeCommandTest(unittest.TestCase):
    def run_main(self, *args: str) -> tuple[int, list[str]]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = canonicalize_main(list(args))
        return code, out.getvalue().splitlines()

    def test_every_corpus_file_as_snapshot_validate_reports_it(self) -> None:
        index = kit_json("payload-corpus/public/index.json")
        files = [str(KIT / "payload-corpus/public" / c["file"]) for c in index["cases"]]
        code, lines = self.run_main(*files)
        self.assertEqual(code, 1)
        for case, line in zip(index["cases"], lines):
            f = str(KIT / "payload-corpus/public" / case["file"])
            self.assertEqual(line, f"OK {f}" if case["expected"] == "valid" else f"REJECTED {f} {case['rule']}")

    def test_exit_zero_only_when_all_ok_and_write(self) -> None:
        files = sorted(str(p) for p in (KIT / "transcripts").glob("tau-*.json"))
        code, lines = self.run_main(*files)
        self.assertEqual((code, len(lines)), (0, 100))
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "pretty.json")
            base = (KIT / "payload-corpus/public/valid-01-minimal-suspended.json").read_bytes()
            Path(p).write_bytes(json.dumps(json.loads(base), indent=1).encode())
            big = os.path.join(d, "big.json")
            with open(big, "wb") as f:
                f.truncate(16 * 1024 * 1024 + 1)
            code, lines = self.run_main("--write", p, big, os.path.join(d, "absent.json"))
            self.assertEqual(code, 1)
            self.assertEqual(lines[0], f"REJECTED {p} P-CANONICAL")
            self.assertEqual(lines[1], f"REJECTED {big} P-SIZE")
            self.assertTrue(lines[2].startswith("UNREADABLE "))
            self.assertEqual(Path(p + ".canonical").read_bytes(), base)


if __name__ == "__main__":
    unittest.main()
