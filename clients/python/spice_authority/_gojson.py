"""Go ``encoding/json`` reading and writing, byte for byte (wire-format.md b.2, b.3).

The reader decodes strings exactly as Go's ``unquote`` does (an invalid UTF-8 byte or an unpaired
surrogate escape becomes U+FFFD, and the reader remembers that it substituted), checks syntax as
Go's scanner does, and hands raw values back as their exact bytes. The writer escapes as
``json.Marshal`` does with HTML escaping on, and compacts raw values as Go's ``compact`` does.
Standard library only; no recursion over caller data (depth is bounded like Go's, 10,000).
"""

from __future__ import annotations

import re

MAX_DEPTH = 10_000
_STRING_SPECIAL = re.compile(rb'["\\\x00-\x1f]')
_SIMPLE_ESCAPES = {0x22: '"', 0x5C: "\\", 0x2F: "/", 0x62: "\b", 0x66: "\f", 0x6E: "\n", 0x72: "\r", 0x74: "\t"}

_WS = b" \t\n\r"
_DIGITS = b"0123456789"
_HEX = "0123456789abcdef"

#: Go's ``unicode.IsSpace`` (the White_Space property), wire-format.md section 0.
GO_SPACE = frozenset(
    [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680]
    + list(range(0x2000, 0x200B))
    + [0x2028, 0x2029, 0x202F, 0x205F, 0x3000]
)


class JsonSyntaxError(ValueError):
    """The input is not syntactically valid JSON (Go's ``SyntaxError``); ``offset`` is the byte."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} (at byte {offset})")
        self.offset = offset


def is_go_space(cp: int) -> bool:
    return cp in GO_SPACE


def is_go_control(cp: int) -> bool:
    return cp < 0x20 or 0x7F <= cp <= 0x9F


def utf8_len(s: str) -> int:
    """UTF-8 byte length of ``s``; an unpaired surrogate counts as the 3 bytes of U+FFFD."""
    try:
        return len(s.encode("utf-8"))
    except UnicodeEncodeError:
        return len(s.encode("utf-8", "replace").replace(b"?", b"\xef\xbf\xbd"))


def is_valid_unicode(s: str) -> bool:
    """No unpaired surrogate (Python strings may carry them; they have no UTF-8 encoding)."""
    try:
        s.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def is_token(s: str, max_bytes: int) -> bool:
    """wire-format.md section 0, token(N): non-empty, no surrounding Go white space, <= N bytes."""
    if not s:
        return False
    if is_go_space(ord(s[0])) or is_go_space(ord(s[-1])):
        return False
    return utf8_len(s) <= max_bytes


def contains_go_control(s: str) -> bool:
    return any(is_go_control(ord(c)) for c in s)


def contains_go_space(s: str) -> bool:
    return any(is_go_space(ord(c)) for c in s)


def utf8_key(s: str) -> bytes:
    """Sort key ordering strings by their UTF-8 bytes, as Go's ``<`` does."""
    return s.encode("utf-8", "surrogatepass")


# ---- reading ---------------------------------------------------------------------------------


def _utf8_seq_len(b: bytes, i: int, stop: int) -> int:
    """Length of the valid UTF-8 sequence at ``i`` by Go's ``utf8.DecodeRune``, or 0 if invalid."""
    b0 = b[i]
    if b0 < 0x80:
        return 1
    if b0 < 0xC2:
        return 0

    def cont(j: int, lo: int = 0x80, hi: int = 0xBF) -> bool:
        return j < stop and lo <= b[j] <= hi

    if b0 < 0xE0:
        return 2 if cont(i + 1) else 0
    if b0 < 0xF0:
        lo, hi = 0x80, 0xBF
        if b0 == 0xE0:
            lo = 0xA0
        elif b0 == 0xED:
            hi = 0x9F
        return 3 if cont(i + 1, lo, hi) and cont(i + 2) else 0
    if b0 < 0xF5:
        lo, hi = 0x80, 0xBF
        if b0 == 0xF0:
            lo = 0x90
        elif b0 == 0xF4:
            hi = 0x8F
        return 4 if cont(i + 1, lo, hi) and cont(i + 2) and cont(i + 3) else 0
    return 0


class Reader:
    """A cursor over JSON bytes with Go's syntax and decoding rules."""

    def __init__(self, data: bytes) -> None:
        self.data = bytes(data)
        self.pos = 0
        self.end = len(self.data)
        self.substituted = False  # the last read_string() put U+FFFD in place of invalid input
        self.last_number_unsigned = False

    # -- basics

    def error(self, message: str) -> JsonSyntaxError:
        return JsonSyntaxError(message, self.pos)

    def skip_ws(self) -> None:
        d, p, e = self.data, self.pos, self.end
        while p < e and d[p] in _WS:
            p += 1
        self.pos = p

    def at_end(self) -> bool:
        return self.pos >= self.end

    def peek_kind(self) -> str:
        """One of ``{ [ " 0 t f n`` ('0' for a number); raises on anything else."""
        self.skip_ws()
        if self.pos >= self.end:
            raise self.error("unexpected end of JSON input")
        c = self.data[self.pos]
        if c in b'{["tfn':
            return chr(c)
        if c == 0x2D or 0x30 <= c <= 0x39:
            return "0"
        raise self.error(f"invalid character {chr(c)!r} looking for beginning of value")

    def _expect(self, literal: bytes) -> None:
        n = len(literal)
        if self.data[self.pos:self.pos + n] != literal:
            for k in range(n):
                if self.pos + k >= self.end:
                    self.pos += k
                    raise self.error("unexpected end of JSON input")
                if self.data[self.pos + k] != literal[k]:
                    self.pos += k
                    raise self.error("invalid character in literal")
        self.pos += n

    def read_null(self) -> None:
        self._expect(b"null")

    # -- numbers

    def _scan_number(self) -> None:
        d, e = self.data, self.end
        p = self.pos
        if p < e and d[p] == 0x2D:
            p += 1
        if p >= e:
            self.pos = p
            raise self.error("unexpected end of JSON input")
        if d[p] == 0x30:
            p += 1
        elif 0x31 <= d[p] <= 0x39:
            while p < e and d[p] in _DIGITS:
                p += 1
        else:
            self.pos = p
            raise self.error("invalid character in numeric literal")
        if p < e and d[p] == 0x2E:
            p += 1
            if p >= e or d[p] not in _DIGITS:
                self.pos = p
                raise self.error("unexpected end of JSON input" if p >= e else "invalid character after decimal point")
            while p < e and d[p] in _DIGITS:
                p += 1
        if p < e and d[p] in b"eE":
            p += 1
            if p < e and d[p] in b"+-":
                p += 1
            if p >= e or d[p] not in _DIGITS:
                self.pos = p
                raise self.error("unexpected end of JSON input" if p >= e else "invalid character in exponent")
            while p < e and d[p] in _DIGITS:
                p += 1
        self.pos = p

    def read_unsigned(self) -> int:
        """A number literal; ``last_number_unsigned`` tells whether it was plain digits < 2^64."""
        start = self.pos
        self._scan_number()
        lit = self.data[start:self.pos]
        ok = all(c in _DIGITS for c in lit)
        value = int(lit) if ok else 0
        if ok and value >= 1 << 64:
            ok = False
        self.last_number_unsigned = ok
        return value if ok else 0

    # -- strings

    def _scan_string(self) -> bool:
        """Skips a string at ``pos`` (a quote); True when it has no escape and is plain ASCII."""
        d, e = self.data, self.end
        start = p = self.pos + 1
        escaped = False
        while True:
            m = _STRING_SPECIAL.search(d, p)
            if m is None:
                self.pos = e
                raise self.error("unexpected end of JSON input")
            q = m.start()
            c = d[q]
            if c == 0x22:
                self.pos = q + 1
                return not escaped and d[start:q].isascii()
            if c < 0x20:
                self.pos = q
                raise self.error("invalid character in string literal")
            escaped = True  # a backslash
            if q + 1 >= e:
                self.pos = q + 1
                raise self.error("unexpected end of JSON input")
            esc = d[q + 1]
            if esc in b'"\\/bfnrt':
                p = q + 2
                continue
            if esc == 0x75:
                for k in range(4):
                    r = q + 2 + k
                    if r >= e:
                        self.pos = r
                        raise self.error("unexpected end of JSON input")
                    if d[r] not in b"0123456789abcdefABCDEF":
                        self.pos = r
                        raise self.error("invalid character in \\u hexadecimal character escape")
                p = q + 6
                continue
            self.pos = q + 1
            raise self.error("invalid character in string escape code")

    def read_string(self) -> str:
        self.substituted = False
        start = self.pos + 1
        simple = self._scan_string()
        stop = self.pos - 1
        raw = self.data[start:stop]
        if simple:
            return raw.decode("ascii")
        if b"\\" not in raw:
            try:
                return raw.decode("utf-8")
            except UnicodeDecodeError:
                pass
        return self._decode_slow(raw)

    def _decode_slow(self, s: bytes) -> str:
        out: list[str] = []
        i, stop = 0, len(s)
        while i < stop:
            j = s.find(b"\\", i)
            if j < 0:
                j = stop
            if j > i:
                out.append(self._utf8(s[i:j]))
                i = j
                if i >= stop:
                    break
            e = s[i + 1]
            if e == 0x75:
                r = int(s[i + 2:i + 6], 16)
                i += 6
                if 0xD800 <= r <= 0xDFFF:
                    # A valid pair is a high surrogate escape followed by a low one.
                    if r <= 0xDBFF and i + 6 <= stop and s[i] == 0x5C and s[i + 1] == 0x75:
                        r2 = int(s[i + 2:i + 6], 16)
                        if 0xDC00 <= r2 <= 0xDFFF:
                            out.append(chr(0x10000 + ((r - 0xD800) << 10) + (r2 - 0xDC00)))
                            i += 6
                            continue
                    out.append("\ufffd")
                    self.substituted = True
                else:
                    out.append(chr(r))
                continue
            out.append(_SIMPLE_ESCAPES[e])
            i += 2
        return "".join(out)

    def _utf8(self, chunk: bytes) -> str:
        """Go's decoding of raw bytes: each invalid UTF-8 byte becomes U+FFFD."""
        try:
            return chunk.decode("utf-8")
        except UnicodeDecodeError:
            pass
        out: list[str] = []
        i, stop = 0, len(chunk)
        while i < stop:
            n = _utf8_seq_len(chunk, i, stop)
            if n == 0:
                out.append("\ufffd")
                self.substituted = True
                i += 1
            else:
                out.append(chunk[i:i + n].decode("utf-8"))
                i += n
        return "".join(out)

    # -- containers

    def begin_object(self) -> None:
        self.skip_ws()
        self.pos += 1  # the '{' checked by peek_kind

    def next_member(self, first: bool) -> str | None:
        """The next member's name (the reader then stands before its value), or None at ``}``."""
        self.skip_ws()
        if self.pos >= self.end:
            raise self.error("unexpected end of JSON input")
        c = self.data[self.pos]
        if first and c == 0x7D:
            self.pos += 1
            return None
        if not first:
            if c == 0x7D:
                self.pos += 1
                return None
            if c != 0x2C:
                raise self.error("invalid character after object key:value pair")
            self.pos += 1
            self.skip_ws()
            if self.pos >= self.end:
                raise self.error("unexpected end of JSON input")
            c = self.data[self.pos]
        if c != 0x22:
            raise self.error("invalid character looking for beginning of object key string")
        key = self.read_string()
        self.skip_ws()
        if self.pos >= self.end:
            raise self.error("unexpected end of JSON input")
        if self.data[self.pos] != 0x3A:
            raise self.error("invalid character after object key")
        self.pos += 1
        return key

    def begin_array(self) -> None:
        self.skip_ws()
        self.pos += 1

    def next_element(self, first: bool) -> bool:
        self.skip_ws()
        if self.pos >= self.end:
            raise self.error("unexpected end of JSON input")
        c = self.data[self.pos]
        if c == 0x5D:
            self.pos += 1
            return False
        if not first:
            if c != 0x2C:
                raise self.error("invalid character after array element")
            self.pos += 1
        return True

    def skip_value(self) -> None:
        """Skips one value of any shape, checking its syntax (iteratively, Go's depth limit)."""
        stack: list[int] = []  # 0x7B or 0x5B per open container
        first = True
        while True:
            if stack:
                top = stack[-1]
                if top == 0x7B:
                    if self.next_member(first) is None:
                        stack.pop()
                        first = False
                        if not stack:
                            return
                        continue
                else:
                    if not self.next_element(first):
                        stack.pop()
                        first = False
                        if not stack:
                            return
                        continue
            kind = self.peek_kind()
            if kind in "{[":
                if len(stack) + 1 > MAX_DEPTH:
                    raise self.error("exceeded max depth")
                stack.append(ord(kind))
                self.pos += 1
                first = True
                continue
            if kind == '"':
                self._scan_string()
            elif kind == "0":
                self._scan_number()
            elif kind == "t":
                self._expect(b"true")
            elif kind == "f":
                self._expect(b"false")
            else:
                self._expect(b"null")
            first = False
            if not stack:
                return

    def read_raw_value(self) -> bytes:
        """One value's exact bytes (no surrounding white space), syntax checked."""
        self.skip_ws()
        start = self.pos
        self.skip_value()
        return self.data[start:self.pos]


def is_json_value(b: bytes) -> bool:
    """Whether ``b`` is exactly one JSON value, white space around it allowed (Go's ``json.Valid``)."""
    r = Reader(b)
    try:
        r.skip_value()
        r.skip_ws()
        return r.at_end()
    except JsonSyntaxError:
        return False


# ---- writing ---------------------------------------------------------------------------------


def _escape_table() -> dict[int, str]:
    t: dict[int, str] = {}
    for c in range(0x20):
        t[c] = "\\u00" + _HEX[c >> 4] + _HEX[c & 15]
    t.update({0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t",
              0x22: '\\"', 0x5C: "\\\\", 0x3C: "\\u003c", 0x3E: "\\u003e", 0x26: "\\u0026",
              0x2028: "\\u2028", 0x2029: "\\u2029"})
    return t


_ESCAPES = _escape_table()


def write_string(s: str) -> bytes:
    """A quoted JSON string as Go's ``json.Marshal`` writes it (HTML escaping on)."""
    body = s.translate(_ESCAPES)
    try:
        raw = body.encode("utf-8")
    except UnicodeEncodeError:
        # An unpaired surrogate is invalid text; Go writes \ufffd for invalid UTF-8.
        raw = "".join("\\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in body).encode("utf-8")
    return b'"' + raw + b'"'


_RAW_SEGMENTS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[ \t\n\r]+|[^" \t\n\r]+', re.S)
_HTML = ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026"),
         (b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"))


def compact_raw(src: bytes) -> bytes:
    """Go's ``compact(dst, src, escape=true)`` of one syntactically valid value: white space outside
    strings removed; ``<``, ``>``, ``&``, U+2028 and U+2029 escaped; nothing else changed."""
    src = bytes(src)
    if not any(c in src for c in b" \t\n\r<>&") and b"\xe2\x80\xa8" not in src and b"\xe2\x80\xa9" not in src:
        return src
    out = []
    for m in _RAW_SEGMENTS.finditer(src):
        seg = m.group()
        if seg[0] in b" \t\n\r":
            continue
        for old, new in _HTML:
            if old in seg:
                seg = seg.replace(old, new)
        out.append(seg)
    return b"".join(out)
