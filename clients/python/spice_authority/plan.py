"""The plan identity (wire-format.md b.4): tool fingerprints, static plan IDs, combined fingerprint.

Mirrors ``spice.authority.snapshot.plan.PlanIdentities`` and ``ToolDefinition`` of the Java
reference. All orders are Go's (UTF-8 bytes); every length prefix is LP(x) = u64be(len) || x.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Iterable, Sequence

from . import _gojson as gj
from .payload import PlanIdentity

PLAN_DOMAIN = "spice-agent-plan/v2"
EFFECTS = ("read_only", "mutating")
REPLAY_SAFETIES = ("safe", "idempotent", "unsafe")
CAPABILITIES = ("filesystem.read", "filesystem.write", "process.execute", "network.access",
                "secrets.read", "environment.read", "environment.write")
_NOT_FOR_READ_ONLY = frozenset(["filesystem.write", "process.execute", "network.access", "environment.write"])


def _lp(x: bytes | str) -> bytes:
    b = x.encode("utf-8") if isinstance(x, str) else bytes(x)
    return len(b).to_bytes(8, "big") + b


@dataclass(frozen=True)
class ToolDefinition:
    """A leased tool definition as the plan identity sees it; valid from birth (ValueError otherwise).

    ``input_schema`` is kept exactly as supplied (not compacted): it is hashed as it is.
    """

    name: str
    description: str
    input_schema: bytes
    effect: str
    replay_safety: str
    capabilities: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "input_schema", bytes(self.input_schema) if not isinstance(self.input_schema, str)
                           else self.input_schema.encode("utf-8"))
        object.__setattr__(self, "capabilities", tuple(self.capabilities))
        if not isinstance(self.name, str) or not gj.is_token(self.name, 128):
            raise ValueError("tool name must be a token of at most 128 bytes")
        if not isinstance(self.description, str) or not gj.is_token(self.description, 4096):
            raise ValueError("tool description must be a token of at most 4096 bytes")
        if not 1 <= len(self.input_schema) <= 1 << 20 or not gj.is_json_value(self.input_schema):
            raise ValueError("input schema must be valid JSON of 1..1 MiB")
        if self.effect not in EFFECTS:
            raise ValueError("effect must be read_only or mutating")
        if self.replay_safety not in REPLAY_SAFETIES:
            raise ValueError("replay safety must be safe, idempotent or unsafe")
        if self.effect == "read_only" and self.replay_safety != "safe":
            raise ValueError("a read-only tool must be replay-safe")
        if self.effect == "mutating" and self.replay_safety == "safe":
            raise ValueError("a mutating tool cannot be replay-safe")
        seen: set[str] = set()
        for c in self.capabilities:
            if c not in CAPABILITIES:
                raise ValueError("unknown capability")
            if c in seen:
                raise ValueError("capabilities may not repeat")
            seen.add(c)
            if self.effect == "read_only" and c in _NOT_FOR_READ_ONLY:
                raise ValueError(f"a read-only tool may not declare {c}")

    def fingerprint(self) -> str:
        """Lowercase hex SHA-256 over LP(name) LP(description) LP(schema) LP(effect) LP(replay) LP(cap)…"""
        h = hashlib.sha256()
        for x in (self.name, self.description, self.input_schema, self.effect, self.replay_safety):
            h.update(_lp(x))
        for c in sorted(self.capabilities, key=gj.utf8_key):
            h.update(_lp(c))
        return h.hexdigest()


def tool_fingerprint(tool: ToolDefinition) -> str:
    return tool.fingerprint()


def _sorted_by_name(tools: Iterable[ToolDefinition]) -> list[ToolDefinition]:
    out = sorted(tools, key=lambda t: gj.utf8_key(t.name))
    for a, b in zip(out, out[1:]):
        if a.name == b.name:
            raise ValueError("leased tool names must be unique")
    return out


def static_tool_plan_id(tools: Iterable[ToolDefinition]) -> str:
    """``static:`` + hex SHA-256 over LP(name) LP(fingerprint) of each tool, sorted by name."""
    h = hashlib.sha256()
    for t in _sorted_by_name(tools):
        h.update(_lp(t.name) + _lp(t.fingerprint()))
    return "static:" + h.hexdigest()


def plan_fingerprint(compiled_identities: Sequence[str], tool_plan_id: str, compatibility_identity: str,
                     tools: Iterable[ToolDefinition]) -> str:
    """``sha256:`` + hex SHA-256 over LP(domain), LP(each compiled identity in list order), LP(plan ID),
    LP(compatibility identity), then LP(name) LP(fingerprint) per tool sorted by name."""
    h = hashlib.sha256(_lp(PLAN_DOMAIN))
    for c in compiled_identities:
        h.update(_lp(c))
    h.update(_lp(tool_plan_id) + _lp(compatibility_identity))
    for t in _sorted_by_name(tools):
        h.update(_lp(t.name) + _lp(t.fingerprint()))
    return "sha256:" + h.hexdigest()


def plan_identity(compiled_identities: Iterable[str], tool_plan_id: str, compatibility_identity: str,
                  tools: Iterable[ToolDefinition]) -> PlanIdentity:
    """The full plan identity; the compiled identities are sorted by bytes first."""
    tools = list(tools)
    compiled = tuple(sorted(compiled_identities, key=gj.utf8_key))
    return PlanIdentity(compiled, compatibility_identity, tool_plan_id,
                        plan_fingerprint(compiled, tool_plan_id, compatibility_identity, tools))


def matches(recorded: PlanIdentity, leased_tools: Iterable[ToolDefinition]) -> bool:
    """Recomputes the fingerprint of ``recorded`` from the tools leased now; constant-time compare."""
    again = plan_fingerprint(recorded.compiled_identities, recorded.tool_plan_id,
                             recorded.snapshot_compatibility_identity, leased_tools)
    return hmac.compare_digest(again.encode("ascii"), recorded.fingerprint.encode("utf-8"))
