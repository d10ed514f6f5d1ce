"""The v1alpha2 snapshot payload: decoding, the rules ``P-…``, the canonical encoder, a builder.

Mirrors the Java reference (``spice.authority.snapshot.payload``) and wire-format.md b.1–b.6:

* :func:`decode` validates a payload as ``spice-authority snapshot validate`` does and returns a
  :class:`Snapshot`, or raises :class:`PayloadRejected` naming the first broken rule (``P-CANONICAL``
  only when no more specific rule is broken: a payload is accepted only when it is byte-identical
  to its canonical encoding);
* :func:`encode` writes a decoded value as Go's ``json.Marshal`` does (key order of the Go structs,
  HTML escaping, U+2028/2029 escaped, ``data`` compacted);
* :class:`SnapshotBuilder` assembles a payload from typed values, then validates it by the same rules.

Guarantees: no ``repr`` or message of this module shows conversation text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from . import _gojson as gj

FORMAT = "spice.agent.snapshot/v1alpha2"
MIB = 1 << 20
MAX_PAYLOAD_BYTES = 16 * MIB
MAX_MESSAGE_BYTES = 4 * MIB
MAX_PARTS = 128
MAX_MESSAGES = 4096
MAX_INTERACTIONS = 4096
MAX_COMPILED = 512
MAX_TURNS = 1000
RUN_ID_MAX_BYTES = 96
U32_MAX = (1 << 32) - 1
U64_MAX = (1 << 64) - 1

ROLES = ("system", "user", "assistant", "tool")
KINDS = ("text", "tool_call", "tool_result", "extension")
STATUSES = ("suspended", "completed", "failed", "cancelled")
CATEGORIES = frozenset(["provider", "stage", "observer", "broker", "tool", "decorator"])

#: Every rule id with its short, content-free reason (as the Java ``PayloadRule`` names them).
RULES: dict[str, str] = {
    "P-SIZE": "payload length must be 1..16777216 bytes",
    "P-JSON": "payload is not one syntactically valid JSON value",
    "P-TRAILING": "data follows the JSON value",
    "P-UNKNOWN": "member outside the shape of the payload's format",
    "P-TYPE": "member has the wrong JSON type or an integer out of range",
    "P-VERSION": "version must name an accepted snapshot format",
    "P-MSG-ID": "message id must be a token of at most 128 bytes",
    "P-PART-KIND": "part kind must be text, tool_call, tool_result or extension",
    "P-PART-INACTIVE": "part carries a member its kind does not use",
    "P-TEXT": "text must be non-empty and at most 1 MiB",
    "P-CALL-ID": "call_id must be a token of at most 128 bytes",
    "P-TOOL-NAME": "tool name must be a token of at most 128 bytes",
    "P-NAMESPACE": "extension namespace must be a token of at most 256 bytes",
    "P-DATA": "data must be present, one JSON value, at most 1 MiB",
    "P-MSG-ROLE": "role must be system, user, assistant or tool",
    "P-MSG-PARTS": "a message must have 1..128 parts",
    "P-MSG-SIZE": "message exceeds 4 MiB",
    "P-DEF-NAME": "definition.name must be non-empty without surrounding white space",
    "P-DEF-MODEL": "definition.model must be non-empty without surrounding white space",
    "P-DEF-TURNS": "definition.max_turns must be 1..1000",
    "P-TOOLPLAN": "tool_plan_id must be a token of at most 256 bytes without control or white-space characters",
    "P-PLAN-COUNT": "compiled_identities must hold 1..512 entries",
    "P-PLAN-SORTED": "compiled_identities must be sorted by UTF-8 bytes",
    "P-PLAN-TOKEN": "compiled identity must be a token of at most 256 bytes",
    "P-PLAN-DUP": "compiled identities must be unique",
    "P-PLAN-FORM": "compiled identity must have the form category:name",
    "P-PLAN-CATEGORY": "compiled identity category must be provider, stage, observer, broker, tool or decorator",
    "P-COMPAT": "snapshot_compatibility_identity must be empty or a token of at most 256 bytes",
    "P-FPR": "fingerprint must be sha256: followed by 64 lowercase hex digits",
    "P-RUNID": "run_id must be a token of at most 96 UTF-8 bytes of valid Unicode text without control characters",
    "P-TURNS": "completed_turns exceeds max_turns",
    "P-HIST-COUNT": "history must hold 1..4096 messages",
    "P-SEQ": "last_sequence must be 1..2^64-2",
    "P-STATUS": "status must be suspended, completed, failed or cancelled",
    "P-SUSPENDED-TURNS": "suspended requires 1 <= completed_turns <= max_turns-1",
    "P-IA-COUNT": "at most 4096 seen interaction IDs",
    "P-IA-TOKEN": "interaction ID must be a token of at most 128 bytes",
    "P-IA-ORDER": "interaction IDs must be strictly ascending by UTF-8 bytes",
    "P-HIST-FIRST-USER": "the first message must have role user",
    "P-MSG-ID-DUP": "message ids must be unique",
    "P-HIST-SIZE": "history exceeds 16 MiB",
    "P-CALL-ROLE": "tool_call parts are allowed only in assistant messages",
    "P-CALL-DUP": "tool call ids must be unique across the history",
    "P-RESULT-ROLE": "tool_result parts are allowed only in tool messages",
    "P-RESULT-MATCH": "tool_result must resolve an earlier unresolved call with the same call_id and name",
    "P-UNRESOLVED": "a tool_call has no result",
    "P-CANONICAL": "payload is not byte-identical to its canonical encoding",
}


class PayloadRejected(ValueError):
    """A payload broke rule ``rule`` (e.g. ``P-CALL-DUP``) at ``where`` (a path, or None)."""

    def __init__(self, rule: str, where: str | None = None) -> None:
        self.rule = rule
        self.where = where
        reason = RULES.get(rule, rule)
        super().__init__(f"{rule} {reason}" + (f" (at {where})" if where else ""))


def is_valid_run_id(s: str) -> bool:
    """The one run-ID rule (P-RUNID): valid Unicode, token(96), no Go-control character."""
    return isinstance(s, str) and gj.is_valid_unicode(s) and gj.is_token(s, RUN_ID_MAX_BYTES) \
        and not gj.contains_go_control(s)


# ---- the decoding model (what Go would hold after decoding, before any rule) ---------------


class _Slice:
    """A Go slice: ``len`` visible elements over a backing list that may hold stale ones beyond."""

    __slots__ = ("backing", "length")

    def __init__(self) -> None:
        self.backing: list[Any] = []
        self.length = 0

    def view(self) -> list[Any]:
        return self.backing[:self.length]

    def reset(self) -> None:
        self.backing = []
        self.length = 0


class _Part:
    __slots__ = ("kind", "text", "name", "call_id", "namespace", "data")

    def __init__(self) -> None:
        self.kind = ""
        self.text = ""
        self.name = ""
        self.call_id = ""
        self.namespace = ""
        self.data: bytes | None = None

    def has_data(self) -> bool:
        return bool(self.data)


class _Message:
    __slots__ = ("id", "role", "parts")

    def __init__(self) -> None:
        self.id = ""
        self.role = ""
        self.parts = _Slice()


class _Raw:
    def __init__(self) -> None:
        self.version = ""
        self.run_id = ""
        self.run_id_substituted = False
        self.def_name = ""
        self.def_model = ""
        self.max_turns = 0
        self.completed_turns = 0
        self.history = _Slice()
        self.compiled = _Slice()
        self.compat = ""
        self.tool_plan_id = ""
        self.fingerprint = ""
        # v1alpha3's plan_identity.workspace_fingerprint, present (even as null): a v1alpha2 payload
        # must not have it, and its version is then named (P-VERSION) before any other decoding error.
        self.workspace_present = False
        self.seen = _Slice()
        self.last_sequence = 0
        self.status = ""


_SNAPSHOT_FIELDS = ("version", "run_id", "definition", "completed_turns", "history", "plan_identity",
                    "seen_interaction_ids", "last_sequence", "status")
_DEFINITION_FIELDS = ("name", "model", "max_turns")
_MESSAGE_FIELDS = ("id", "role", "parts")
_PART_FIELDS = ("kind", "text", "name", "call_id", "namespace", "data")
#: Both formats' plan members (as the Java decoder reads them): v1alpha3's ``workspace_fingerprint`` is
#: recognised so that a v1alpha2 payload carrying it is refused for its version, as Java does.
_PLAN_FIELDS = ("compiled_identities", "snapshot_compatibility_identity", "tool_plan_id", "fingerprint",
                "workspace_fingerprint")


def _fold_equals(key: str, fieldname: str) -> bool:
    """``bytes.EqualFold`` of a key and a lowercase ASCII field name (U+017F = S, U+212A = K)."""
    if len(key) != len(fieldname):
        return False
    for k, f in zip(key, fieldname):
        c = ord(k)
        if 0x61 <= c <= 0x7A:
            c -= 32
        elif c == 0x017F:
            c = 0x53
        elif c == 0x212A:
            c = 0x4B
        fc = ord(f)
        if 0x61 <= fc <= 0x7A:
            fc -= 32
        if c != fc:
            return False
    return True


def _match(key: str, fields: Sequence[str]) -> int:
    for i, f in enumerate(fields):
        if f == key:
            return i
    for i, f in enumerate(fields):
        if _fold_equals(key, f):
            return i
    return -1


class _Decoder:
    """Go's streaming decoder into the v1alpha2 structs: the first P-UNKNOWN/P-TYPE is remembered
    and decoding goes on, so a syntax error anywhere (P-JSON) takes precedence.

    Like the Java decoder, it reads v1alpha3's ``plan_identity.workspace_fingerprint`` too, and keeps
    a type error inside it apart from the others (``workspace_saved``): the order of the rules
    depends on whether that member is present (see :func:`_decode_raw`)."""

    def __init__(self, payload: bytes) -> None:
        self.r = gj.Reader(payload)
        self.saved: tuple[str, str] | None = None
        self.saved_order = 0
        self.workspace_saved: str | None = None
        self.workspace_order = 0
        self.in_workspace = False
        self.errors = 0

    def save(self, rule: str, where: str) -> None:
        self.errors += 1
        if self.in_workspace:
            if self.workspace_saved is None:
                self.workspace_saved = rule
                self.workspace_order = self.errors
            return
        if self.saved is None:
            self.saved = (rule, where)
            self.saved_order = self.errors

    def saved_first(self) -> bool:
        """Whether the first error outside the workspace member came before the first inside it."""
        return self.saved is not None and (self.workspace_saved is None or self.saved_order < self.workspace_order)

    def mismatch(self, where: str) -> None:
        self.save("P-TYPE", where)
        self.r.skip_value()

    def unknown(self, where: str) -> None:
        self.save("P-UNKNOWN", where)
        self.r.skip_value()

    def string(self, current: str, where: str) -> str:
        k = self.r.peek_kind()
        if k == '"':
            return self.r.read_string()
        if k == "n":
            self.r.read_null()
            return current
        self.mismatch(where)
        return current

    def unsigned(self, current: int, maximum: int, where: str) -> int:
        k = self.r.peek_kind()
        if k == "0":
            v = self.r.read_unsigned()
            if not self.r.last_number_unsigned or v > maximum:
                self.save("P-TYPE", where)
                return current
            return v
        if k == "n":
            self.r.read_null()
            return current
        self.mismatch(where)
        return current

    def open_object(self, where: str) -> bool:
        k = self.r.peek_kind()
        if k == "{":
            self.r.begin_object()
            return True
        if k == "n":
            self.r.read_null()
            return False
        self.mismatch(where)
        return False

    def slice(self, s: _Slice, zero: Any, element: Any, where: str) -> None:
        k = self.r.peek_kind()
        if k == "n":
            self.r.read_null()
            s.reset()
            return
        if k != "[":
            self.mismatch(where)
            return
        self.r.begin_array()
        i = 0
        first = True
        while self.r.next_element(first):
            first = False
            if i >= len(s.backing):
                s.backing.append(zero())
            if i >= s.length:
                s.length = i + 1
            s.backing[i] = element(s.backing[i], i)
            i += 1
        if i < s.length:
            s.length = i
        if i == 0:
            s.reset()

    def members(self, where: str):  # type: ignore[no-untyped-def]
        first = True
        while True:
            key = self.r.next_member(first)
            first = False
            if key is None:
                return
            yield key

    def decode(self) -> _Raw:
        s = _Raw()
        if not self.open_object("$"):
            return s
        for key in self.members("$"):
            f = _match(key, _SNAPSHOT_FIELDS)
            if f == 0:
                s.version = self.string(s.version, "version")
            elif f == 1:
                if self.r.peek_kind() == '"':
                    s.run_id = self.r.read_string()
                    s.run_id_substituted = self.r.substituted
                else:
                    s.run_id = self.string(s.run_id, "run_id")
            elif f == 2:
                if self.open_object("definition"):
                    for dk in self.members("definition"):
                        g = _match(dk, _DEFINITION_FIELDS)
                        if g == 0:
                            s.def_name = self.string(s.def_name, "definition.name")
                        elif g == 1:
                            s.def_model = self.string(s.def_model, "definition.model")
                        elif g == 2:
                            s.max_turns = self.unsigned(s.max_turns, U32_MAX, "definition.max_turns")
                        else:
                            self.unknown("definition")
            elif f == 3:
                s.completed_turns = self.unsigned(s.completed_turns, U32_MAX, "completed_turns")
            elif f == 4:
                self.slice(s.history, _Message, self.message, "history")
            elif f == 5:
                if self.open_object("plan_identity"):
                    for pk in self.members("plan_identity"):
                        g = _match(pk, _PLAN_FIELDS)
                        if g == 0:
                            self.slice(s.compiled, str, lambda cur, i: self.string(
                                cur, f"plan_identity.compiled_identities[{i}]"), "plan_identity.compiled_identities")
                        elif g == 1:
                            s.compat = self.string(s.compat, "plan_identity.snapshot_compatibility_identity")
                        elif g == 2:
                            s.tool_plan_id = self.string(s.tool_plan_id, "plan_identity.tool_plan_id")
                        elif g == 3:
                            s.fingerprint = self.string(s.fingerprint, "plan_identity.fingerprint")
                        elif g == 4:
                            s.workspace_present = True
                            self.in_workspace = True
                            self.string("", "plan_identity.workspace_fingerprint")
                            self.in_workspace = False
                        else:
                            self.unknown("plan_identity")
            elif f == 6:
                self.slice(s.seen, str, lambda cur, i: self.string(cur, f"seen_interaction_ids[{i}]"),
                           "seen_interaction_ids")
            elif f == 7:
                s.last_sequence = self.unsigned(s.last_sequence, U64_MAX, "last_sequence")
            elif f == 8:
                s.status = self.string(s.status, "status")
            else:
                self.unknown("$")
        return s

    def message(self, m: _Message, index: int) -> _Message:
        where = f"history[{index}]"
        if not self.open_object(where):
            return m
        for key in self.members(where):
            f = _match(key, _MESSAGE_FIELDS)
            if f == 0:
                m.id = self.string(m.id, where + ".id")
            elif f == 1:
                m.role = self.string(m.role, where + ".role")
            elif f == 2:
                self.slice(m.parts, _Part, lambda p, i: self.part(p, index, i), where + ".parts")
            else:
                self.unknown(where)
        return m

    def part(self, p: _Part, mi: int, pi: int) -> _Part:
        where = f"history[{mi}].parts[{pi}]"
        if not self.open_object(where):
            return p
        for key in self.members(where):
            f = _match(key, _PART_FIELDS)
            if f == 5:
                p.data = self.r.read_raw_value()  # json.RawMessage: exact bytes; null is "null"
            elif f == 0:
                p.kind = self.string(p.kind, where + ".kind")
            elif f == 1:
                p.text = self.string(p.text, where + ".text")
            elif f == 2:
                p.name = self.string(p.name, where + ".name")
            elif f == 3:
                p.call_id = self.string(p.call_id, where + ".call_id")
            elif f == 4:
                p.namespace = self.string(p.namespace, where + ".namespace")
            else:
                self.unknown(where)
        return p


# ---- rules (wire-format.md b.5, b.6), in the reference's check order -------------------------


def _check_part(part: _Part, m: int, p: int) -> int:
    where = f"history[{m}].parts[{p}]"
    if part.kind == "text":
        if part.name or part.call_id or part.namespace or part.has_data():
            raise PayloadRejected("P-PART-INACTIVE", where)
        n = gj.utf8_len(part.text)
        if n == 0 or n > MIB:
            raise PayloadRejected("P-TEXT", where)
    elif part.kind in ("tool_call", "tool_result"):
        if part.text or part.namespace:
            raise PayloadRejected("P-PART-INACTIVE", where)
        if not gj.is_token(part.call_id, 128):
            raise PayloadRejected("P-CALL-ID", where)
        if not gj.is_token(part.name, 128):
            raise PayloadRejected("P-TOOL-NAME", where)
        if not part.has_data() or len(part.data or b"") > MIB:
            raise PayloadRejected("P-DATA", where)
    elif part.kind == "extension":
        if part.text or part.name or part.call_id:
            raise PayloadRejected("P-PART-INACTIVE", where)
        if not gj.is_token(part.namespace, 256):
            raise PayloadRejected("P-NAMESPACE", where)
        if not part.has_data() or len(part.data or b"") > MIB:
            raise PayloadRejected("P-DATA", where)
    else:
        raise PayloadRejected("P-PART-KIND", where)
    return (gj.utf8_len(part.kind) + gj.utf8_len(part.text) + gj.utf8_len(part.name)
            + gj.utf8_len(part.call_id) + gj.utf8_len(part.namespace) + len(part.data or b""))


def _check_message(msg: _Message, m: int) -> int:
    if not gj.is_token(msg.id, 128):
        raise PayloadRejected("P-MSG-ID", f"history[{m}].id")
    size = gj.utf8_len(msg.id) + gj.utf8_len(msg.role)
    parts = msg.parts.view()
    for p, part in enumerate(parts):
        size += _check_part(part, m, p)
    if msg.role not in ROLES:
        raise PayloadRejected("P-MSG-ROLE", f"history[{m}].role")
    if len(parts) == 0 or len(parts) > MAX_PARTS:
        raise PayloadRejected("P-MSG-PARTS", f"history[{m}].parts")
    if size > MAX_MESSAGE_BYTES:
        raise PayloadRejected("P-MSG-SIZE", f"history[{m}]")
    return size


def _trimmed_non_empty(v: str) -> bool:
    return bool(v) and not gj.is_go_space(ord(v[0])) and not gj.is_go_space(ord(v[-1]))


def _is_lower_hex(s: str, n: int) -> bool:
    return len(s) == n and all(c in "0123456789abcdef" for c in s)


def _check_plan(s: _Raw) -> None:
    pid = s.tool_plan_id
    if not gj.is_token(pid, 256) or gj.contains_go_control(pid) or gj.contains_go_space(pid):
        raise PayloadRejected("P-TOOLPLAN", "plan_identity.tool_plan_id")
    compiled = s.compiled.view()
    if len(compiled) == 0 or len(compiled) > MAX_COMPILED:
        raise PayloadRejected("P-PLAN-COUNT", "plan_identity.compiled_identities")
    for i in range(1, len(compiled)):
        if gj.utf8_key(compiled[i - 1]) > gj.utf8_key(compiled[i]):
            raise PayloadRejected("P-PLAN-SORTED", "plan_identity.compiled_identities")
    seen: set[str] = set()
    for i, c in enumerate(compiled):
        where = f"plan_identity.compiled_identities[{i}]"
        if not gj.is_token(c, 256):
            raise PayloadRejected("P-PLAN-TOKEN", where)
        if c in seen:
            raise PayloadRejected("P-PLAN-DUP", where)
        seen.add(c)
        colon = c.find(":")
        if colon < 0 or colon == len(c) - 1:
            raise PayloadRejected("P-PLAN-FORM", where)
        if c[:colon] not in CATEGORIES:
            raise PayloadRejected("P-PLAN-CATEGORY", where)
    if s.compat and not gj.is_token(s.compat, 256):
        raise PayloadRejected("P-COMPAT", "plan_identity.snapshot_compatibility_identity")
    f = s.fingerprint
    if not f.startswith("sha256:") or not _is_lower_hex(f[7:], 64):
        raise PayloadRejected("P-FPR", "plan_identity.fingerprint")


def _check(s: _Raw) -> None:
    history = s.history.view()
    sizes = [_check_message(msg, m) for m, msg in enumerate(history)]
    if not _trimmed_non_empty(s.def_name):
        raise PayloadRejected("P-DEF-NAME", "definition.name")
    if not _trimmed_non_empty(s.def_model):
        raise PayloadRejected("P-DEF-MODEL", "definition.model")
    if s.max_turns < 1 or s.max_turns > MAX_TURNS:
        raise PayloadRejected("P-DEF-TURNS", "definition.max_turns")
    _check_plan(s)
    if s.run_id_substituted or not is_valid_run_id(s.run_id):
        raise PayloadRejected("P-RUNID", "run_id")
    if s.completed_turns > s.max_turns:
        raise PayloadRejected("P-TURNS", "completed_turns")
    if len(history) == 0 or len(history) > MAX_MESSAGES:
        raise PayloadRejected("P-HIST-COUNT", "history")
    if s.last_sequence == 0 or s.last_sequence == U64_MAX:
        raise PayloadRejected("P-SEQ", "last_sequence")
    if s.status not in STATUSES:
        raise PayloadRejected("P-STATUS", "status")
    if s.status == "suspended" and (s.completed_turns < 1 or s.completed_turns > s.max_turns - 1):
        raise PayloadRejected("P-SUSPENDED-TURNS", "completed_turns")
    ids = s.seen.view()
    if len(ids) > MAX_INTERACTIONS:
        raise PayloadRejected("P-IA-COUNT", "seen_interaction_ids")
    for i, ia in enumerate(ids):
        if not gj.is_token(ia, 128):
            raise PayloadRejected("P-IA-TOKEN", f"seen_interaction_ids[{i}]")
        if i > 0 and gj.utf8_key(ids[i - 1]) >= gj.utf8_key(ia):
            raise PayloadRejected("P-IA-ORDER", f"seen_interaction_ids[{i}]")
    _check_history(history, sizes)


def _check_history(history: list[_Message], sizes: list[int]) -> None:
    if history[0].role != "user":
        raise PayloadRejected("P-HIST-FIRST-USER", "history[0].role")
    message_ids: set[str] = set()
    calls: dict[str, list[Any]] = {}  # call_id -> [name, resolved]
    pending = 0
    total = 0
    for m, msg in enumerate(history):
        if msg.id in message_ids:
            raise PayloadRejected("P-MSG-ID-DUP", f"history[{m}].id")
        message_ids.add(msg.id)
        total += sizes[m]
        if total > MAX_PAYLOAD_BYTES:
            raise PayloadRejected("P-HIST-SIZE", f"history[{m}]")
        for p, part in enumerate(msg.parts.view()):
            where = f"history[{m}].parts[{p}]"
            if part.kind == "tool_call":
                if msg.role != "assistant":
                    raise PayloadRejected("P-CALL-ROLE", where)
                if part.call_id in calls:
                    raise PayloadRejected("P-CALL-DUP", where)
                calls[part.call_id] = [part.name, False]
                pending += 1
            elif part.kind == "tool_result":
                if msg.role != "tool":
                    raise PayloadRejected("P-RESULT-ROLE", where)
                call = calls.get(part.call_id)
                if call is None or call[1] or call[0] != part.name:
                    raise PayloadRejected("P-RESULT-MATCH", where)
                call[1] = True
                pending -= 1
    if pending != 0:
        raise PayloadRejected("P-UNRESOLVED", "history")


# ---- the canonical encoder -------------------------------------------------------------------


def _encode_raw(s: _Raw) -> bytes:
    w = gj.write_string
    out: list[bytes] = [b'{"version":', w(s.version), b',"run_id":', w(s.run_id),
                        b',"definition":{"name":', w(s.def_name), b',"model":', w(s.def_model),
                        b',"max_turns":', str(s.max_turns).encode(), b'},"completed_turns":',
                        str(s.completed_turns).encode(), b',"history":[']
    for m, msg in enumerate(s.history.view()):
        if m:
            out.append(b",")
        out += [b'{"id":', w(msg.id), b',"role":', w(msg.role), b',"parts":[']
        for p, part in enumerate(msg.parts.view()):
            if p:
                out.append(b",")
            out += [b'{"kind":', w(part.kind)]
            if part.text:
                out += [b',"text":', w(part.text)]
            if part.name:
                out += [b',"name":', w(part.name)]
            if part.call_id:
                out += [b',"call_id":', w(part.call_id)]
            if part.namespace:
                out += [b',"namespace":', w(part.namespace)]
            if part.has_data():
                out += [b',"data":', gj.compact_raw(part.data or b"")]
            out.append(b"}")
        out.append(b"]}")
    out.append(b'],"plan_identity":{"compiled_identities":[')
    out.append(b",".join(w(c) for c in s.compiled.view()))
    out += [b'],"snapshot_compatibility_identity":', w(s.compat), b',"tool_plan_id":', w(s.tool_plan_id),
            b',"fingerprint":', w(s.fingerprint), b'},"seen_interaction_ids":[']
    out.append(b",".join(w(c) for c in s.seen.view()))
    out += [b'],"last_sequence":', str(s.last_sequence).encode(), b',"status":', w(s.status), b"}"]
    return b"".join(out)


# ---- the typed, validated snapshot -----------------------------------------------------------


@dataclass(frozen=True)
class Definition:
    name: str
    model: str
    max_turns: int


@dataclass(frozen=True)
class Part:
    """One part. ``data`` is one JSON value's bytes (tool_call, tool_result, extension)."""

    kind: str
    text: str = ""
    name: str = ""
    call_id: str = ""
    namespace: str = ""
    data: bytes | None = None

    @staticmethod
    def text_part(text: str) -> "Part":
        return Part("text", text=text)

    @staticmethod
    def tool_call(name: str, call_id: str, data: bytes | str) -> "Part":
        return Part("tool_call", name=name, call_id=call_id, data=_json_bytes(data))

    @staticmethod
    def tool_result(name: str, call_id: str, data: bytes | str) -> "Part":
        return Part("tool_result", name=name, call_id=call_id, data=_json_bytes(data))

    @staticmethod
    def extension(namespace: str, data: bytes | str) -> "Part":
        return Part("extension", namespace=namespace, data=_json_bytes(data))

    def __repr__(self) -> str:
        return f"Part(kind={self.kind!r})"


def _json_bytes(data: bytes | str) -> bytes:
    b = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    if not gj.is_json_value(b):
        raise ValueError("data must be one JSON value")
    return b


@dataclass(frozen=True)
class Message:
    id: str
    role: str
    parts: tuple[Part, ...]

    def __repr__(self) -> str:
        return f"Message(id={self.id!r}, role={self.role!r}, parts={len(self.parts)})"


@dataclass(frozen=True)
class PlanIdentity:
    compiled_identities: tuple[str, ...]
    snapshot_compatibility_identity: str
    tool_plan_id: str
    fingerprint: str


@dataclass(frozen=True, repr=False)
class Snapshot:
    """A validated, canonical v1alpha2 payload; ``canonical`` are exactly the validated bytes."""

    run_id: str
    definition: Definition
    completed_turns: int
    history: tuple[Message, ...]
    plan_identity: PlanIdentity
    seen_interaction_ids: tuple[str, ...]
    last_sequence: int
    status: str
    canonical: bytes = field(compare=True)

    def __repr__(self) -> str:
        # Identity and counts only: conversation content is never printed.
        return (f"Snapshot(run_id={self.run_id!r}, status={self.status}, last_sequence={self.last_sequence}, "
                f"completed_turns={self.completed_turns}, messages={len(self.history)}, bytes={len(self.canonical)})")


def _decode_raw(payload: bytes) -> _Raw:
    """The decoding rules in the order of ``snapshot validate`` (the Java ``Snapshot.decodeRaw``) for
    a reader of v1alpha2 only: P-JSON; a type error first in document order (outside the workspace
    member, before any type error inside it); P-VERSION when the version is not v1alpha2 and there
    is an unknown member or type error, or when a workspace member is present (v1alpha2 lacks it);
    the first P-UNKNOWN/P-TYPE; P-TRAILING; P-VERSION."""
    d = _Decoder(payload)
    try:
        raw = d.decode()
    except gj.JsonSyntaxError as e:
        raise PayloadRejected("P-JSON", f"byte {e.offset}") from None
    if d.saved is not None and d.saved_first() and d.saved[0] == "P-TYPE":
        raise PayloadRejected(d.saved[0], d.saved[1])  # a type error in every format keeps its place
    version_problem = raw.version != FORMAT or raw.workspace_present
    if version_problem and (d.saved is not None or raw.workspace_present):
        raise PayloadRejected("P-VERSION", "version")  # the members depend on the version: it is named first
    if d.saved is not None:
        raise PayloadRejected(d.saved[0], d.saved[1])
    d.r.skip_ws()
    if not d.r.at_end():
        raise PayloadRejected("P-TRAILING", f"byte {d.r.pos}")
    if version_problem:
        raise PayloadRejected("P-VERSION", "version")
    return raw


def _to_snapshot(raw: _Raw, canonical: bytes) -> Snapshot:
    msgs = []
    for msg in raw.history.view():
        parts = tuple(Part(p.kind, p.text, p.name, p.call_id, p.namespace, p.data if p.has_data() else None)
                      for p in msg.parts.view())
        msgs.append(Message(msg.id, msg.role, parts))
    return Snapshot(
        run_id=raw.run_id,
        definition=Definition(raw.def_name, raw.def_model, raw.max_turns),
        completed_turns=raw.completed_turns,
        history=tuple(msgs),
        plan_identity=PlanIdentity(tuple(raw.compiled.view()), raw.compat, raw.tool_plan_id, raw.fingerprint),
        seen_interaction_ids=tuple(raw.seen.view()),
        last_sequence=raw.last_sequence,
        status=raw.status,
        canonical=canonical,
    )


def decode(payload: bytes, *, _run_id_repaired: bool = False) -> Snapshot:
    """Decodes and validates ``payload``; raises :class:`PayloadRejected` with the first broken rule."""
    payload = bytes(payload)
    if len(payload) == 0 or len(payload) > MAX_PAYLOAD_BYTES:
        raise PayloadRejected("P-SIZE")
    raw = _decode_raw(payload)
    raw.run_id_substituted |= _run_id_repaired
    _check(raw)
    if _encode_raw(raw) != payload:
        raise PayloadRejected("P-CANONICAL")
    return _to_snapshot(raw, payload)


def validate(payload: bytes) -> str | None:
    """The first rule ``payload`` breaks (e.g. ``P-CANONICAL``), or None when it is valid and canonical."""
    try:
        decode(payload)
        return None
    except PayloadRejected as e:
        return e.rule


def canonicalize(payload: bytes) -> bytes:
    """The canonical encoding of a payload that is valid apart from its form (P-CANONICAL).

    Raises :class:`PayloadRejected` for any other broken rule.
    """
    payload = bytes(payload)
    if len(payload) == 0 or len(payload) > MAX_PAYLOAD_BYTES:
        raise PayloadRejected("P-SIZE")
    raw = _decode_raw(payload)
    _check(raw)
    out = _encode_raw(raw)
    return decode(out).canonical


def encode(snapshot: Snapshot) -> bytes:
    """The canonical bytes of a validated snapshot (re-encoded from its fields)."""
    return _encode_raw(_from_snapshot(snapshot))


def _from_snapshot(s: Snapshot) -> _Raw:
    raw = _Raw()
    raw.version = FORMAT
    raw.run_id = s.run_id
    raw.def_name, raw.def_model, raw.max_turns = s.definition.name, s.definition.model, s.definition.max_turns
    raw.completed_turns = s.completed_turns
    for msg in s.history:
        rm = _Message()
        rm.id, rm.role = msg.id, msg.role
        for p in msg.parts:
            rp = _Part()
            rp.kind, rp.text, rp.name, rp.call_id, rp.namespace, rp.data = (
                p.kind, p.text, p.name, p.call_id, p.namespace, p.data)
            rm.parts.backing.append(rp)
        rm.parts.length = len(rm.parts.backing)
        raw.history.backing.append(rm)
    raw.history.length = len(raw.history.backing)
    pi = s.plan_identity
    raw.compiled.backing = list(pi.compiled_identities)
    raw.compiled.length = len(raw.compiled.backing)
    raw.compat, raw.tool_plan_id, raw.fingerprint = (pi.snapshot_compatibility_identity, pi.tool_plan_id,
                                                     pi.fingerprint)
    raw.seen.backing = list(s.seen_interaction_ids)
    raw.seen.length = len(raw.seen.backing)
    raw.last_sequence = s.last_sequence
    raw.status = s.status
    return raw


class SnapshotBuilder:
    """Assembles a payload from typed values; :meth:`build` encodes canonically, then validates
    with :func:`decode`, so a built payload obeys exactly the rules of a received one."""

    def __init__(self) -> None:
        self._run_id = ""
        self._definition = Definition("", "", 0)
        self._completed_turns = 0
        self._history: list[Message] = []
        self._plan = PlanIdentity((), "", "", "")
        self._seen: tuple[str, ...] = ()
        self._last_sequence = 0
        self._status = ""

    def run_id(self, run_id: str) -> "SnapshotBuilder":
        self._run_id = run_id
        return self

    def definition(self, name: str, model: str, max_turns: int) -> "SnapshotBuilder":
        self._definition = Definition(name, model, max_turns)
        return self

    def completed_turns(self, turns: int) -> "SnapshotBuilder":
        self._completed_turns = turns
        return self

    def message(self, id: str, role: str, parts: Iterable[Part]) -> "SnapshotBuilder":
        self._history.append(Message(id, role, tuple(parts)))
        return self

    def plan_identity(self, plan: PlanIdentity) -> "SnapshotBuilder":
        self._plan = plan
        return self

    def seen_interaction_ids(self, ids: Iterable[str]) -> "SnapshotBuilder":
        self._seen = tuple(ids)
        return self

    def last_sequence(self, seq: int) -> "SnapshotBuilder":
        self._last_sequence = seq
        return self

    def status(self, status: str) -> "SnapshotBuilder":
        self._status = status
        return self

    def build(self) -> Snapshot:
        """Raises :class:`PayloadRejected` with the first broken rule."""
        for n, lo, hi, rule in ((self._definition.max_turns, 0, U32_MAX, "P-TYPE"),
                                (self._completed_turns, 0, U32_MAX, "P-TYPE"),
                                (self._last_sequence, 0, U64_MAX, "P-TYPE")):
            if not isinstance(n, int) or n < lo or n > hi:
                raise PayloadRejected(rule)
        s = Snapshot(self._run_id, self._definition, self._completed_turns, tuple(self._history), self._plan,
                     self._seen, self._last_sequence, self._status, b"")
        raw = _from_snapshot(s)
        raw.version = FORMAT
        return decode(_encode_raw(raw), _run_id_repaired=not gj.is_valid_unicode(self._run_id))
