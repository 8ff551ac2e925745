"""Record filters: a small expression language, its parser and its evaluator.

    label == 3 and width > 100
    "dog" in feature2
    has(weight) and not intact
    len(tags) >= 2 or image/height > 50
    `my feature` != 'x' and index < 1000

Grammar (parsed by a tokenizer and a recursive-descent parser; nothing is ever ``eval``'d)::

    expr        := or
    or          := and ("or" and)*
    and         := not ("and" not)*
    not         := "not" not | comparison
    comparison  := operand [op operand]     op: == != < <= > >= in, "not in"
    operand     := literal | list | name | "index" | "intact"
                 | "has" "(" name ")" | "len" "(" name ")" | "(" expr ")"
    literal     := integer | float | "string" | 'string' | true | false
    list        := "[" [literal ("," literal)*] "]"
    name        := bare name | `backquoted name`

Names. A bare name starts with a letter or ``_`` and continues with letters, digits and
``_ / . -`` (so ``image/object/bbox/xmin``, ``a.b`` and ``image-width`` are names; there is no
arithmetic). Anything else, and the reserved words (``and or not in true false has len index
intact``), is written between backquotes: ```my feature```, ```index```; a backquote inside is
doubled.

Meaning.

- A feature stands for its list of values. A comparison with a list is true when *any* value
  matches: ``tags == "a"`` holds for ``["b", "a"]``; ``tags != "a"`` holds when some value is
  not ``"a"``. Comparing two names compares every pair.
- ``x in name``: a string is a substring of some bytes value (UTF-8), a number equals some
  value. ``name in "text"``: some value is a substring of the text; ``name in [1, 2]``: some
  value is in the list.
- Strings compare with bytes features (as UTF-8 bytes), numbers with int64 and float
  features (float features compare at float32 precision, so ``weight == 0.1`` finds values
  stored as 0.1). Anything else (a string against numbers, NaN) is simply false, never an
  error; ``true``/``false`` are 1/0.
- ``has(name)``: the record has the feature (or feature list). ``len(name)``: its number of
  values (steps for a feature list); 0 when absent.
- A bare name used as a condition is true when some value is non-zero / non-empty (a 0/1
  int64 flag reads naturally: ``not is_crowd``).
- ``index`` is the record number, ``intact`` whether the record's CRC is intact; both are
  given by the caller.
- A damaged record (``record=None``) has no features: anything about features is *unknown*
  for it, and unknown stays unknown through ``not`` (Kleene logic), so a filter that looks at
  features never matches a damaged record, while ``not intact`` finds them all.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import CodecError, CorruptRecordError, DecodeError

__all__ = [
    "Filter",
    "FilterSyntaxError",
    "compile_filter",
    "filter_dataset",
]

KEYWORDS = frozenset({"and", "or", "not", "in", "true", "false", "has", "len", "index", "intact"})
FUNCTIONS = ("has", "len")


class FilterSyntaxError(CodecError, ValueError):
    """A filter expression that cannot be parsed. ``position`` is the 0-based character
    offset of the problem in ``expression``; ``str()`` shows the expression with a caret
    under it."""

    def __init__(self, message: str, position: int, expression: str = "") -> None:
        self.message = message
        self.position = position
        self.expression = expression
        super().__init__(message, position)

    def __str__(self) -> str:
        head = f"{self.message} (at position {self.position})"
        if not self.expression:
            return head
        return f"{head}\n  {self.expression}\n  {' ' * self.position}^"


# --------------------------------------------------------------------------------------------
# Tokens


@dataclass(frozen=True)
class Token:
    kind: str  # name, qname, int, float, str, op, lparen, rparen, lbrack, rbrack, comma, end
    text: str
    pos: int
    value: Any = None


_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_/.\-]*")
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_OPS = ("==", "!=", "<=", ">=", "<", ">")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0"}


def _tokenize(text: str) -> list[Token]:
    out: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        if c in "\"'":
            start = i
            i += 1
            chars: list[str] = []
            while True:
                if i >= n:
                    raise FilterSyntaxError("unterminated string", start, text)
                ch = text[i]
                if ch == c:
                    i += 1
                    break
                if ch == "\\":
                    if i + 1 >= n:
                        raise FilterSyntaxError("unterminated string", start, text)
                    esc = text[i + 1]
                    if esc == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", text[i + 2 : i + 4]):
                        chars.append(chr(int(text[i + 2 : i + 4], 16)))
                        i += 4
                        continue
                    if esc not in _ESCAPES:
                        raise FilterSyntaxError(f"unknown escape '\\{esc}'", i, text)
                    chars.append(_ESCAPES[esc])
                    i += 2
                    continue
                chars.append(ch)
                i += 1
            out.append(Token("str", text[start:i], start, "".join(chars)))
            continue
        if c == "`":
            start = i
            i += 1
            chars = []
            while True:
                if i >= n:
                    raise FilterSyntaxError("unterminated `name`", start, text)
                if text[i] == "`":
                    if text[i + 1 : i + 2] == "`":
                        chars.append("`")
                        i += 2
                        continue
                    i += 1
                    break
                chars.append(text[i])
                i += 1
            if not chars:
                raise FilterSyntaxError("empty `name`", start, text)
            out.append(Token("qname", text[start:i], start, "".join(chars)))
            continue
        nxt = text[i + 1 : i + 2]
        if (
            c.isdigit()
            or (c == "." and nxt.isdigit())
            or (c in "+-" and (nxt.isdigit() or nxt == "."))
        ):
            m = _NUMBER.match(text, i)
            if m is None:
                raise FilterSyntaxError(f"bad number starting with {c!r}", i, text)
            s = m.group()
            end = m.end()
            if end < n and (text[end].isalnum() or text[end] in "_."):
                raise FilterSyntaxError("bad number", i, text)
            is_float = any(ch in s for ch in ".eE")
            value: Any = float(s) if is_float else int(s)
            out.append(Token("float" if is_float else "int", s, i, value))
            i = end
            continue
        m = _BARE.match(text, i)
        if m:
            out.append(Token("name", m.group(), i, m.group()))
            i = m.end()
            continue
        two = text[i : i + 2]
        if two in _OPS:
            out.append(Token("op", two, i))
            i += 2
            continue
        if c in "<>":
            out.append(Token("op", c, i))
            i += 1
            continue
        if c == "=":
            raise FilterSyntaxError("'=' is not an operator; use '=='", i, text)
        if c == "!":
            raise FilterSyntaxError("'!' is not an operator; use 'not' or '!='", i, text)
        simple = {"(": "lparen", ")": "rparen", "[": "lbrack", "]": "rbrack", ",": "comma"}
        if c in simple:
            out.append(Token(simple[c], c, i))
            i += 1
            continue
        if c == "&" or c == "|":
            word = "and" if c == "&" else "or"
            raise FilterSyntaxError(f"{c!r} is not an operator; use '{word}'", i, text)
        raise FilterSyntaxError(f"unexpected character {c!r}", i, text)
    out.append(Token("end", "", n))
    return out


# --------------------------------------------------------------------------------------------
# Syntax tree


@dataclass(frozen=True)
class Literal:
    value: Any  # int, float, str or a tuple of those


@dataclass(frozen=True)
class Name:
    name: str


@dataclass(frozen=True)
class Context:
    what: str  # "index" or "intact"


@dataclass(frozen=True)
class Call:
    func: str
    name: str


@dataclass(frozen=True)
class Compare:
    op: str
    left: Node
    right: Node


@dataclass(frozen=True)
class Not:
    operand: Node


@dataclass(frozen=True)
class BoolOp:
    op: str  # "and" | "or"
    operands: tuple[Node, ...]


Node = Literal | Name | Context | Call | Compare | Not | BoolOp


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0

    def peek(self) -> Token:
        return self.tokens[self.i]

    def next(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def is_word(self, word: str) -> bool:
        tok = self.peek()
        return tok.kind == "name" and tok.text == word

    def error(self, message: str, tok: Token | None = None) -> FilterSyntaxError:
        tok = tok or self.peek()
        return FilterSyntaxError(message, tok.pos, self.text)

    def parse(self) -> Node:
        if self.peek().kind == "end":
            raise self.error("empty filter")
        node = self.parse_or()
        tok = self.peek()
        if tok.kind == "rparen":
            raise self.error("unbalanced ')'", tok)
        if tok.kind != "end":
            raise self.error(f"unexpected {_describe(tok)} after a complete expression", tok)
        return node

    def parse_or(self) -> Node:
        parts = [self.parse_and()]
        while self.is_word("or"):
            self.next()
            parts.append(self.parse_and())
        return parts[0] if len(parts) == 1 else BoolOp("or", tuple(parts))

    def parse_and(self) -> Node:
        parts = [self.parse_not()]
        while self.is_word("and"):
            self.next()
            parts.append(self.parse_not())
        return parts[0] if len(parts) == 1 else BoolOp("and", tuple(parts))

    def parse_not(self) -> Node:
        if self.is_word("not"):
            self.next()
            return Not(self.parse_not())
        return self.parse_comparison()

    def parse_comparison(self) -> Node:
        left = self.parse_operand()
        tok = self.peek()
        if tok.kind == "op":
            self.next()
            return Compare(tok.text, left, self.parse_operand())
        if tok.kind == "name" and tok.text == "in":
            self.next()
            return Compare("in", left, self.parse_operand())
        if tok.kind == "name" and tok.text == "not":
            nxt = self.tokens[self.i + 1]
            if nxt.kind == "name" and nxt.text == "in":
                self.i += 2
                return Not(Compare("in", left, self.parse_operand()))
        return left

    def parse_operand(self) -> Node:
        tok = self.peek()
        if tok.kind == "lparen":
            self.next()
            if self.peek().kind == "rparen":
                raise self.error("empty parentheses")
            node = self.parse_or()
            close = self.peek()
            if close.kind != "rparen":
                if close.kind == "end":
                    raise self.error("unbalanced '(': missing ')'", tok)
                raise self.error(f"expected ')' but found {_describe(close)}", close)
            self.next()
            return node
        if tok.kind in ("int", "float", "str"):
            self.next()
            return Literal(tok.value)
        if tok.kind == "lbrack":
            return self.parse_list()
        if tok.kind == "qname":
            self.next()
            return Name(tok.value)
        if tok.kind == "name":
            word = tok.text
            after = self.tokens[self.i + 1]
            if after.kind == "lparen":
                if word not in FUNCTIONS:
                    raise self.error(
                        f"unknown function {word!r} (functions: {', '.join(FUNCTIONS)})", tok
                    )
                self.i += 2
                arg = self.peek()
                if arg.kind == "qname" or (arg.kind == "name" and arg.text not in KEYWORDS):
                    self.next()
                else:
                    raise self.error(f"{word}() takes a feature name", arg)
                close = self.peek()
                if close.kind != "rparen":
                    if close.kind == "end":
                        raise self.error("unbalanced '(': missing ')'", after)
                    raise self.error(f"expected ')' but found {_describe(close)}", close)
                self.next()
                return Call(word, arg.value)
            if word in ("true", "false"):
                self.next()
                return Literal(1 if word == "true" else 0)
            if word in ("index", "intact"):
                self.next()
                return Context(word)
            if word in FUNCTIONS:
                raise self.error(f"{word} needs parentheses: {word}(name)", after)
            if word in KEYWORDS:
                raise self.error(f"expected a value but found {word!r}", tok)
            self.next()
            return Name(word)
        if tok.kind == "rparen":
            raise self.error("unbalanced ')'", tok)
        raise self.error(f"expected a value but found {_describe(tok)}", tok)

    def parse_list(self) -> Node:
        open_tok = self.next()
        items: list[Any] = []
        if self.peek().kind == "rbrack":
            self.next()
            return Literal(tuple(items))
        while True:
            tok = self.peek()
            if tok.kind in ("int", "float", "str"):
                items.append(tok.value)
                self.next()
            elif tok.kind == "name" and tok.text in ("true", "false"):
                items.append(1 if tok.text == "true" else 0)
                self.next()
            elif tok.kind == "end":
                raise self.error("unbalanced '[': missing ']'", open_tok)
            else:
                raise self.error(f"a list holds literals, not {_describe(tok)}", tok)
            sep = self.peek()
            if sep.kind == "comma":
                self.next()
                continue
            if sep.kind == "rbrack":
                self.next()
                return Literal(tuple(items))
            if sep.kind == "end":
                raise self.error("unbalanced '[': missing ']'", open_tok)
            raise self.error(f"expected ',' or ']' but found {_describe(sep)}", sep)


def _describe(tok: Token) -> str:
    if tok.kind == "end":
        return "the end"
    return repr(tok.text)


# --------------------------------------------------------------------------------------------
# Evaluation (Kleene logic: True, False, None = unknown)


_MISSING = object()
_UNKNOWN = object()  # feature values of a damaged record


def _values(record: Any, name: str) -> Any:
    if record is None:
        return _UNKNOWN
    feats = getattr(record, "features", None) or {}
    f = feats.get(name)
    if f is not None:
        return (getattr(f, "type", ""), list(getattr(f, "values", []) or []))
    lists = getattr(record, "feature_lists", None) or {}
    steps = lists.get(name)
    if steps is not None:
        values: list[Any] = []
        kinds = set()
        for step in steps:
            kinds.add(getattr(step, "type", ""))
            values.extend(getattr(step, "values", []) or [])
        kinds.discard("none")
        kind = kinds.pop() if len(kinds) == 1 else "mixed"
        return (kind, values)
    return _MISSING


def _as_number(v: Any) -> float | int | None:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, (np.integer, np.floating)):
        return v.item()
    return None


def _f32(x: float | int) -> float:
    try:
        with np.errstate(over="ignore"):
            return float(np.float32(x))
    except (OverflowError, ValueError):
        return float(x)


def _cmp(op: str, a: Any, b: Any) -> bool:
    try:
        if op == "==":
            return bool(a == b)
        if op == "!=":
            return bool(a != b)
        if op == "<":
            return bool(a < b)
        if op == "<=":
            return bool(a <= b)
        if op == ">":
            return bool(a > b)
        if op == ">=":
            return bool(a >= b)
    except (TypeError, ValueError, OverflowError):
        return False
    return False


def _pair_ok(op: str, a: Any, b: Any) -> bool:
    """Compare one value with another; mismatched types are simply false."""
    if isinstance(a, bytes) and isinstance(b, str):
        b = b.encode("utf-8", "surrogatepass")
    elif isinstance(a, str) and isinstance(b, bytes):
        a = a.encode("utf-8", "surrogatepass")
    if isinstance(a, (bytes, bytearray)) or isinstance(b, (bytes, bytearray)):
        if not isinstance(a, (bytes, bytearray)) or not isinstance(b, (bytes, bytearray)):
            return False
        return _cmp(op, bytes(a), bytes(b))
    if isinstance(a, str) or isinstance(b, str):
        if isinstance(a, str) and isinstance(b, str):
            return _cmp(op, a, b)
        return False
    na, nb = _as_number(a), _as_number(b)
    if na is None or nb is None:
        return False
    if (isinstance(na, float) and math.isnan(na)) or (isinstance(nb, float) and math.isnan(nb)):
        return op == "!="
    return _cmp(op, na, nb)


@dataclass(frozen=True)
class _Side:
    """An evaluated operand: a list of values (``many``) or one value."""

    values: list[Any]
    ftype: str = ""  # the feature type when the side is a feature


def _contains(hay: Any, needle: Any) -> bool:
    if isinstance(hay, (bytes, bytearray)):
        if isinstance(needle, str):
            needle = needle.encode("utf-8", "surrogatepass")
        if isinstance(needle, (bytes, bytearray)):
            return bytes(needle) in bytes(hay)
        return False
    if isinstance(hay, str):
        if isinstance(needle, (bytes, bytearray)):
            try:
                needle = bytes(needle).decode("utf-8")
            except UnicodeDecodeError:
                return False
        if isinstance(needle, str):
            return needle in hay
        return False
    return _pair_ok("==", hay, needle)


class Filter:
    """A compiled filter. ``matches(record, index=..., intact=...)`` never raises on odd
    data: a type mismatch is false; a damaged record (``record=None``) matches only
    conditions that do not look at features."""

    def __init__(self, text: str, tree: Node) -> None:
        self.text = text
        self.tree = tree
        self.names = sorted(_names(tree))

    def __repr__(self) -> str:
        return f"Filter({self.text!r})"

    def uses_features(self) -> bool:
        """Whether evaluating needs decoded records (not just ``index`` / ``intact``)."""
        return bool(self.names)

    def matches(self, record: Any, *, index: int = 0, intact: bool = True) -> bool:
        try:
            return self._eval(self.tree, record, index, intact) is True
        except Exception:  # odd data must never break a filter run: no match
            return False

    # Every node evaluates to True / False / None (unknown).
    def _eval(self, node: Node, record: Any, index: int, intact: bool) -> bool | None:
        if isinstance(node, BoolOp):
            seen_unknown = False
            for part in node.operands:
                v = self._eval(part, record, index, intact)
                if node.op == "and" and v is False:
                    return False
                if node.op == "or" and v is True:
                    return True
                seen_unknown |= v is None
            if seen_unknown:
                return None
            return node.op == "and"
        if isinstance(node, Not):
            v = self._eval(node.operand, record, index, intact)
            return None if v is None else not v
        if isinstance(node, Compare):
            return self._compare(node, record, index, intact)
        side = self._side(node, record, index, intact)
        if side is None:
            return None
        return any(bool(_truthy(v)) for v in side.values)

    def _side(self, node: Node, record: Any, index: int, intact: bool) -> _Side | None:
        """``None`` when unknown (a damaged record's features)."""
        if isinstance(node, Literal):
            if isinstance(node.value, tuple):
                return _Side([node.value], "list")
            return _Side([node.value])
        if isinstance(node, Context):
            return _Side([index if node.what == "index" else int(bool(intact))])
        if isinstance(node, Name):
            got = _values(record, node.name)
            if got is _UNKNOWN:
                return None
            if got is _MISSING:
                return _Side([], "missing")
            ftype, values = got
            return _Side(values, ftype)
        if isinstance(node, Call):
            got = _values(record, node.name)
            if got is _UNKNOWN:
                return None
            if node.func == "has":
                return _Side([int(got is not _MISSING)])
            if got is _MISSING:
                return _Side([0])
            lists = getattr(record, "feature_lists", None) or {}
            feats = getattr(record, "features", None) or {}
            if node.name not in feats and node.name in lists:
                return _Side([len(lists[node.name])])
            return _Side([len(got[1])])
        v = self._eval(node, record, index, intact)
        return None if v is None else _Side([int(v)])

    def _compare(self, node: Compare, record: Any, index: int, intact: bool) -> bool | None:
        left = self._side(node.left, record, index, intact)
        right = self._side(node.right, record, index, intact)
        if left is None or right is None:
            return None
        if node.op == "in":
            return self._in(left, right)
        lvals = _prepare(left, right)
        rvals = _prepare(right, left)
        return any(_pair_ok(node.op, a, b) for a in lvals for b in rvals)

    def _in(self, needle: _Side, hay: _Side) -> bool:
        if hay.ftype == "list":
            options = hay.values[0]
            return any(_pair_ok("==", a, b) for a in _prepare(needle, hay) for b in options)
        hay_vals = _prepare(hay, needle)
        return any(_contains(h, n) for h in hay_vals for n in _prepare(needle, hay))


def _prepare(side: _Side, other: _Side) -> list[Any]:
    """Numbers meet float features at float32 precision: both sides are rounded."""
    if side.ftype == "float" or (other.ftype == "float" and not side.ftype):
        return [
            _f32(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v
            for v in side.values
        ]
    return side.values


def _truthy(v: Any) -> bool:
    if isinstance(v, float) and math.isnan(v):
        return False
    return bool(v)


def _names(node: Node) -> set[str]:
    if isinstance(node, Name):
        return {node.name}
    if isinstance(node, Call):
        return {node.name}
    if isinstance(node, Compare):
        return _names(node.left) | _names(node.right)
    if isinstance(node, Not):
        return _names(node.operand)
    if isinstance(node, BoolOp):
        out: set[str] = set()
        for p in node.operands:
            out |= _names(p)
        return out
    return set()


def compile_filter(text: str) -> Filter:
    """Parse ``text``; raises :class:`FilterSyntaxError` with the position of the problem."""
    if not isinstance(text, str):
        raise TypeError("a filter is text")
    return Filter(text, _Parser(text).parse())


# --------------------------------------------------------------------------------------------
# Running a filter over a reader or a dataset


def filter_dataset(
    source: Sequence[bytes] | Any,
    filter: Filter | str,
    progress: Callable[[int, int], None] | None = None,
    limit: int | None = None,
    *,
    start: int = 0,
    kind: str = "auto",
) -> list[int]:
    """Record numbers (ascending) of ``source`` (a :class:`codec.TFRecordFile` or
    :class:`codec.TFRecordDataset`) that match ``filter``, stopping after ``limit`` matches.

    Damaged records are evaluated with ``intact=False`` and ``record=None``. A filter that
    only looks at ``index`` / ``intact`` does not decode any payload. ``progress(done,
    total)`` is called every few thousand records."""
    from .example import decode

    flt = compile_filter(filter) if isinstance(filter, str) else filter
    needs_records = flt.uses_features()
    total = len(source)
    out: list[int] = []
    step = 4096
    done = start
    for i, data in _payloads(source, start):
        done = i + 1
        intact = data is not None
        record: Any = None
        if data is not None and needs_records:
            try:
                record = decode(data, kind)
            except (DecodeError, CodecError):
                record = decode(data, "raw")
        elif intact:
            record = _NO_FEATURES
        if flt.matches(record, index=i, intact=intact):
            out.append(i)
            if limit is not None and len(out) >= limit:
                break
        if progress and (i + 1) % step == 0:
            progress(i + 1, total)
    if progress:
        progress(done, total)
    return out


class _NoFeatures:
    features: dict[str, Any] = {}  # noqa: RUF012 - read-only sentinel
    feature_lists: dict[str, Any] = {}  # noqa: RUF012


_NO_FEATURES = _NoFeatures()


def _payloads(source: Any, start: int) -> Iterable[tuple[int, bytes | None]]:
    """``(global index, payload or None when damaged)`` for every record from ``start``."""
    files = getattr(source, "files", None)
    if files is None:
        files = [source]
    base = 0
    for f in files:
        n = len(f)
        if start >= base + n:
            base += n
            continue
        local = max(0, start - base)
        if hasattr(f, "records"):
            for info in f.records(local, n):
                yield base + info.index, info.data
        else:  # any Sequence[bytes]
            for j in range(local, n):
                try:
                    yield base + j, f[j]
                except CorruptRecordError:
                    yield base + j, None
        base += n
