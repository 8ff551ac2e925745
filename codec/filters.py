"""Record filters: a small expression language, its parser and its evaluator.

    label == 3 and width > 100
    "dog" in feature2
    has(weight) and not intact
    len(tags) >= 2 or image/height > 50
    any(image/object/bbox/xmin >= image/object/bbox/xmax)
    all(image/object/class/label in [1, 2, 3])
    `my feature` != 'x' and index < 1000

Grammar (parsed by a tokenizer and a recursive-descent parser; nothing is ever ``eval``'d)::

    expr        := or
    or          := and ("or" and)*
    and         := not ("and" not)*
    not         := "not" not | comparison
    comparison  := operand [op operand]     op: == != < <= > >= in, "not in"
    operand     := literal | list | name | "index" | "intact"
                 | "has" "(" name ")" | "len" "(" name ")"
                 | "any" "(" expr ")" | "all" "(" expr ")" | "(" expr ")"
    literal     := integer | float | "string" | 'string' | true | false
    list        := "[" [literal ("," literal)*] "]"
    name        := bare name | `backquoted name`

Names. A bare name starts with a letter or ``_`` and continues with letters, digits and
``_ / . -`` (so ``image/object/bbox/xmin``, ``a.b`` and ``image-width`` are names; there is no
arithmetic). Anything else, and the reserved words (``and or not in true false has len any all
index intact``), is written between backquotes: ```my feature```, ```index```; a backquote
inside is doubled.

Meaning.

- A feature stands for its list of values. A comparison is made value by value:

  - a list against one value (a literal, ``index``, ``len(...)``, or a feature holding one
    value) compares every value of the list with it;
  - two lists of the same length are compared position by position (box by box: ``xmin[i]``
    with ``xmax[i]``), never every value with every value;
  - two lists of different lengths cannot be compared position by position: the comparison
    is *unknown* for that record, which matches neither it nor its ``not``.

  Outside ``any``/``all``, a comparison holds when it holds for *some* position:
  ``tags == "a"`` holds for ``["b", "a"]``. ``any(cond)`` says the same explicitly, and
  ``all(cond)`` asks it for *every* position (true for an empty list, as in Python). Inside
  ``any``/``all`` the whole condition is taken position by position, so
  ``any(xmin > 0.5 and ymin > 0.5)`` asks for one box with both, and ``all(label in [1, 2])``
  for every label to be 1 or 2.
- ``x in name``: a string is a substring of a bytes value (UTF-8), a number equals a value.
  ``name in "text"``: a value is a substring of the text; ``name in [1, 2]``: a value is in
  the list.
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
- A name that no record of the dataset has is an error (:class:`UnknownFeatureError`, with
  the closest names as suggestions), except inside ``has(...)``, which exists to ask.
- Class names. Compiled with class names bound to features (``compile_filter(text,
  names={"label": ClassNames})``, :mod:`codec.names`), a string compared with a bound
  feature is a class name: ``label == "cat"``, ``label in ["cat", "dog"]``, ``"cat" in
  label``, ``all(labels != "cat")`` compare the feature's int64 values with the name's index
  (:meth:`~codec.names.ClassNames.index`). A bytes value still compares as text. A name the
  bound file does not hold is an error (:class:`UnknownClassError`, with the closest names),
  never a silent "no match".
- Evaluation. A record holding a model's predictions beside its ground truth
  (``image/detection/`` beside ``image/object/``) also has the names of its evaluation
  (:data:`codec.jobs.evaluate.RECORD_FIELDS`, computed from the record alone as
  ``tfrecord-browser evaluate`` counts them with its defaults): ``tp``, ``fp``, ``fn``;
  ``tp_class``, ``fp_class``, ``fn_class``, the classes of the objects found, the false
  predictions and the objects missed (``any(fn_class == "cat")``: a class compares as its
  label or its text); and the likely mistakes ``mistakenness``, ``mistakenness_loc``,
  ``possible_missing``, ``possible_spurious`` (:mod:`codec.mistakes`). A feature of the same
  name wins. Class names bound to the ground truth's (or predictions') label feature are
  bound to the three class lists too.
"""

from __future__ import annotations

import difflib
import itertools
import math
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from .errors import CodecError, CorruptRecordError, DecodeError

__all__ = [
    "ClassNamesLike",
    "Filter",
    "FilterRun",
    "FilterSyntaxError",
    "Looked",
    "UnknownClassError",
    "UnknownFeatureError",
    "compile_filter",
    "filter_dataset",
    "look",
    "run_filter",
    "spell_names",
]

KEYWORDS = frozenset(
    {"and", "or", "not", "in", "true", "false", "has", "len", "any", "all", "index", "intact"}
)
FUNCTIONS = ("has", "len", "any", "all")
QUANTIFIERS = ("any", "all")


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


class UnknownFeatureError(FilterSyntaxError):
    """A filter names a feature that no record of the dataset has (a misspelling, usually);
    ``position`` points at the name and the message suggests the closest existing names."""

    def __init__(self, name: str, position: int, expression: str, known: Iterable[str]) -> None:
        self.name = name
        self.suggestions = difflib.get_close_matches(name, sorted(known), n=3, cutoff=0.6)
        hint = ""
        if self.suggestions:
            hint = "; did you mean " + " or ".join(repr(s) for s in self.suggestions) + "?"
        super().__init__(
            f"no record has a feature named {name!r}{hint} (has({name}) asks without this error)",
            position,
            expression,
        )


class ClassNamesLike(Protocol):
    """What a filter needs of a feature's class names (:class:`codec.names.ClassNames`):
    the index of a name, the names themselves (for suggestions) and where they came from."""

    @property
    def names(self) -> Mapping[int, str]: ...

    @property
    def source(self) -> str: ...

    def index(self, name: str) -> int | None: ...


class UnknownClassError(FilterSyntaxError):
    """A filter compares a feature with a class name its bound names file does not hold;
    ``position`` points at the string and the message suggests the closest names."""

    def __init__(
        self, name: str, feature: str, names: ClassNamesLike, position: int, expression: str
    ) -> None:
        self.name = name
        self.feature = feature
        known = list(dict.fromkeys(names.names.values()))
        self.suggestions = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
        hint = ""
        if self.suggestions:
            hint = "; did you mean " + " or ".join(repr(s) for s in self.suggestions) + "?"
        where = os.path.basename(names.source) or names.source
        super().__init__(
            f"{feature} has no class named {name!r} in {where}{hint}",
            position,
            expression,
        )


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
    pos: int = field(default=0, compare=False)  # where it starts in the text
    # A list's items' positions (strings among them may be class names: see _with_names).
    items: tuple[int, ...] = field(default=(), compare=False)


class ClassName(str):
    """A string compared with a feature that has class names: the name, and its ``label``
    (its index in the names file). It meets an int64 value as that label, a bytes value as
    text."""

    label: int

    def __new__(cls, text: str, label: int) -> ClassName:
        self = super().__new__(cls, text)
        self.label = label
        return self

    def __reduce__(self) -> tuple[Any, ...]:  # pickled to workers with its label
        return (ClassName, (str(self), self.label))


@dataclass(frozen=True)
class Name:
    name: str
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Context:
    what: str  # "index" or "intact"


@dataclass(frozen=True)
class Call:
    func: str  # "has" | "len"
    name: str
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Quant:
    func: str  # "any" | "all"
    operand: Node


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


Node = Literal | Name | Context | Call | Quant | Compare | Not | BoolOp


MAX_FILTER_CHARS = 2_000  # a filter a person writes is a line or two
MAX_FILTER_DEPTH = 32  # nested parentheses, not, any/all
MAX_FILTER_TERMS = 100  # names and calls: each is looked up in every record


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0
        self.depth = 0
        self.terms = 0

    def deeper(self, tok: Token) -> None:
        """One more level of nesting at ``tok``: refused past :data:`MAX_FILTER_DEPTH`
        (each level is a call of the parser and of the evaluator)."""
        self.depth += 1
        if self.depth > MAX_FILTER_DEPTH:
            raise self.error(f"nested more than {MAX_FILTER_DEPTH} deep", tok)

    def term(self, tok: Token) -> None:
        """One more name or call: refused past :data:`MAX_FILTER_TERMS` (each is work on
        every record)."""
        self.terms += 1
        if self.terms > MAX_FILTER_TERMS:
            raise self.error(f"more than {MAX_FILTER_TERMS} names and calls", tok)

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
            self.deeper(self.next())
            node = Not(self.parse_not())
            self.depth -= 1
            return node
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
            self.deeper(self.next())
            if self.peek().kind == "rparen":
                raise self.error("empty parentheses")
            node = self.parse_or()
            self.depth -= 1
            close = self.peek()
            if close.kind != "rparen":
                if close.kind == "end":
                    raise self.error("unbalanced '(': missing ')'", tok)
                raise self.error(f"expected ')' but found {_describe(close)}", close)
            self.next()
            return node
        if tok.kind in ("int", "float", "str"):
            self.next()
            return Literal(tok.value, tok.pos)
        if tok.kind == "lbrack":
            return self.parse_list()
        if tok.kind == "qname":
            self.term(tok)
            self.next()
            return Name(tok.value, tok.pos)
        if tok.kind == "name":
            word = tok.text
            after = self.tokens[self.i + 1]
            if after.kind == "lparen":
                self.term(tok)
                if word not in FUNCTIONS:
                    raise self.error(
                        f"unknown function {word!r} (functions: {', '.join(FUNCTIONS)})", tok
                    )
                if word in QUANTIFIERS:
                    return self.parse_quantifier(word, after)
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
                return Call(word, arg.value, arg.pos)
            if word in ("true", "false"):
                self.next()
                return Literal(1 if word == "true" else 0, tok.pos)
            if word in ("index", "intact"):
                self.next()
                return Context(word)
            if word in FUNCTIONS:
                what = "condition" if word in QUANTIFIERS else "name"
                raise self.error(f"{word} needs parentheses: {word}({what})", after)
            if word in KEYWORDS:
                raise self.error(f"expected a value but found {word!r}", tok)
            self.term(tok)
            self.next()
            return Name(word, tok.pos)
        if tok.kind == "rparen":
            raise self.error("unbalanced ')'", tok)
        raise self.error(f"expected a value but found {_describe(tok)}", tok)

    def parse_quantifier(self, word: str, open_tok: Token) -> Node:
        self.i += 2
        self.deeper(open_tok)
        if self.peek().kind == "rparen":
            raise self.error(f"{word}() takes a condition, such as {word}(xmin < xmax)")
        node = self.parse_or()
        self.depth -= 1
        close = self.peek()
        if close.kind != "rparen":
            if close.kind == "end":
                raise self.error("unbalanced '(': missing ')'", open_tok)
            raise self.error(f"expected ')' but found {_describe(close)}", close)
        self.next()
        return Quant(word, node)

    def parse_list(self) -> Node:
        open_tok = self.next()
        items: list[Any] = []
        where: list[int] = []
        if self.peek().kind == "rbrack":
            self.next()
            return Literal(tuple(items), open_tok.pos)
        while True:
            tok = self.peek()
            if tok.kind in ("int", "float", "str"):
                items.append(tok.value)
                where.append(tok.pos)
                self.next()
            elif tok.kind == "name" and tok.text in ("true", "false"):
                items.append(1 if tok.text == "true" else 0)
                where.append(tok.pos)
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
                return Literal(tuple(items), open_tok.pos, tuple(where))
            if sep.kind == "end":
                raise self.error("unbalanced '[': missing ']'", open_tok)
            raise self.error(f"expected ',' or ']' but found {_describe(sep)}", sep)


def _describe(tok: Token) -> str:
    if tok.kind == "end":
        return "the end"
    return repr(tok.text)


# --------------------------------------------------------------------------------------------
# Evaluation (Kleene logic: True, False, None = unknown), position by position


_MISSING = object()
_UNKNOWN = object()  # feature values of a damaged record
_SOME_INDEX = object()  # a record number not known yet: comparisons with it are unknown

Truth = bool | None


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


_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def _cmp(op: str, a: Any, b: Any) -> bool:
    try:
        return bool(_COMPARE[op](a, b))
    except (TypeError, ValueError, OverflowError, KeyError):
        return False


def _pair_ok(op: str, a: Any, b: Any) -> Truth:
    """Compare one value with another; mismatched types are simply false (unknown when one
    is a record number not known yet)."""
    if a is _SOME_INDEX or b is _SOME_INDEX:
        return None
    if isinstance(a, ClassName) and not isinstance(b, (str, bytes, bytearray)):
        a = a.label  # a class name meets a number as its label
    elif isinstance(b, ClassName) and not isinstance(a, (str, bytes, bytearray)):
        b = b.label
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


def _contains(hay: Any, needle: Any) -> Truth:
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


def _truthy(v: Any) -> Truth:
    if v is _SOME_INDEX:
        return None
    if isinstance(v, float) and math.isnan(v):
        return False
    return bool(v)


@dataclass(frozen=True)
class _Side:
    """An evaluated operand: its values, whether it is one value that every position shares
    (``scalar``), and the feature type when it is a feature."""

    values: list[Any]
    scalar: bool = False
    ftype: str = ""

    def prepared(self, other: _Side) -> list[Any]:
        """Numbers meet float features at float32 precision: both sides are rounded."""
        if self.ftype == "float" or (other.ftype == "float" and not self.ftype):
            return [
                _f32(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v
                for v in self.values
            ]
        return self.values


@dataclass(frozen=True)
class _Vec:
    """A condition evaluated position by position; ``scalar`` when it is the same at every
    position (it then holds one truth)."""

    truths: list[Truth]
    scalar: bool = False


_UNKNOWN_VEC = _Vec([None], scalar=True)


def _pairs(a: _Vec | _Side, b: _Vec | _Side) -> list[tuple[int, int]] | None:
    """Index pairs that line ``a`` and ``b`` up position by position: a scalar (or a list of
    one value) goes with every position of the other side; lists of equal length go position
    by position; lists of different lengths do not line up (``None``)."""
    na = len(a.truths) if isinstance(a, _Vec) else len(a.values)
    nb = len(b.truths) if isinstance(b, _Vec) else len(b.values)
    if a.scalar or (na == 1 and not b.scalar):
        return [(0, j) for j in range(nb)] if na else []
    if b.scalar or nb == 1:
        return [(i, 0) for i in range(na)] if nb else []
    if na == nb:
        return [(i, i) for i in range(na)]
    return None


def _any(truths: list[Truth]) -> Truth:
    if any(t is True for t in truths):
        return True
    return None if any(t is None for t in truths) else False


def _all(truths: list[Truth]) -> Truth:
    if any(t is False for t in truths):
        return False
    return None if any(t is None for t in truths) else True


def _and(a: Truth, b: Truth) -> Truth:
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


def _or(a: Truth, b: Truth) -> Truth:
    if a is True or b is True:
        return True
    return None if a is None or b is None else False


class Filter:
    """A compiled filter. ``matches(record, index=..., intact=...)`` never raises on odd
    data: a type mismatch is false; a damaged record (``record=None``) matches only
    conditions that do not look at features."""

    def __init__(self, text: str, tree: Node, label_map: Mapping[int, str] | None = None) -> None:
        self.text = text
        self.tree = tree
        # The label map a record's evaluation (tp, fp_class, ...) reads classes with, as
        # `evaluate` does: ground truth naming classes by text meets predictions numbering
        # them only through it.
        self.label_map = dict(label_map) if label_map is not None else None
        self.names = sorted(_names(tree))
        # Names used outside has(): a name no record has is an error for these.
        self.required: dict[str, int] = _required(tree)
        self.uses_index = _uses_index(tree)

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

    def decide(self, record: Any, *, intact: bool = True) -> Truth:
        """Whether ``record`` matches, when its record number is not known yet: true or
        false whatever the number, or ``None`` when that depends on it (the filter uses
        ``index``: ask :meth:`matches` once the number is known). Same evaluation as
        :meth:`matches`, with every comparison involving ``index`` unknown (Kleene logic:
        a condition that holds or fails with it unknown does so for every number)."""
        if not self.uses_index:
            return self.matches(record, intact=intact)
        try:
            return self._eval(self.tree, record, None, intact)
        except Exception:  # left for matches to decide with the number
            return None

    def check_names(self, known: Iterable[str]) -> None:
        """Raise :class:`UnknownFeatureError` for the first name used outside ``has(...)``
        that is not in ``known`` (the feature names the dataset's records have)."""
        have = set(known)
        for name, pos in sorted(self.required.items(), key=lambda kv: kv[1]):
            if name not in have:
                raise UnknownFeatureError(name, pos, self.text, have)

    # -- top level: each comparison holds when it holds at some position --------------------

    def _eval(self, node: Node, record: Any, index: int | None, intact: bool) -> Truth:
        if isinstance(node, BoolOp):
            combine = _and if node.op == "and" else _or
            result: Truth = node.op == "and"
            for part in node.operands:
                result = combine(result, self._eval(part, record, index, intact))
                if result is (node.op == "or"):
                    return result
            return result
        if isinstance(node, Not):
            v = self._eval(node.operand, record, index, intact)
            return None if v is None else not v
        if isinstance(node, Quant):
            vec = self._vec(node.operand, record, index, intact)
            return (_all if node.func == "all" else _any)(vec.truths)
        return _any(self._vec(node, record, index, intact).truths)

    # -- position by position ------------------------------------------------------------

    def _vec(self, node: Node, record: Any, index: int | None, intact: bool) -> _Vec:
        if isinstance(node, Compare):
            return self._compare(node, record, index, intact)
        if isinstance(node, BoolOp):
            combine = _and if node.op == "and" else _or
            acc = self._vec(node.operands[0], record, index, intact)
            for part in node.operands[1:]:
                nxt = self._vec(part, record, index, intact)
                pairs = _pairs(acc, nxt)
                if pairs is None:
                    return _UNKNOWN_VEC
                acc = _Vec(
                    [combine(acc.truths[i], nxt.truths[j]) for i, j in pairs],
                    acc.scalar and nxt.scalar,
                )
            return acc
        if isinstance(node, Not):
            v = self._vec(node.operand, record, index, intact)
            return _Vec([None if t is None else not t for t in v.truths], v.scalar)
        if isinstance(node, Quant):
            return _Vec([self._eval(node, record, index, intact)], scalar=True)
        side = self._side(node, record, index, intact)
        if side is None:
            return _UNKNOWN_VEC
        return _Vec([_truthy(v) for v in side.values], side.scalar)

    def _side(self, node: Node, record: Any, index: int | None, intact: bool) -> _Side | None:
        """``None`` when unknown (a damaged record's features)."""
        if isinstance(node, Literal):
            is_list = isinstance(node.value, tuple)
            return _Side([node.value], scalar=True, ftype="list" if is_list else "")
        if isinstance(node, Context):
            if node.what == "intact":
                return _Side([int(bool(intact))], scalar=True)
            return _Side([_SOME_INDEX if index is None else index], scalar=True)
        if isinstance(node, Name):
            got = _values(record, node.name)
            if got is _UNKNOWN:
                return None
            if got is _MISSING:
                return _Side([], ftype="missing")
            ftype, values = got
            return _Side(values, ftype=ftype)
        if isinstance(node, Call):
            got = _values(record, node.name)
            if got is _UNKNOWN:
                return None
            if node.func == "has":
                return _Side([int(got is not _MISSING)], scalar=True)
            if got is _MISSING:
                return _Side([0], scalar=True)
            lists = getattr(record, "feature_lists", None) or {}
            feats = getattr(record, "features", None) or {}
            if node.name not in feats and node.name in lists:
                return _Side([len(lists[node.name])], scalar=True)
            return _Side([len(got[1])], scalar=True)
        v = self._eval(node, record, index, intact)
        return None if v is None else _Side([int(v)], scalar=True)

    def _compare(self, node: Compare, record: Any, index: int | None, intact: bool) -> _Vec:
        left = self._side(node.left, record, index, intact)
        right = self._side(node.right, record, index, intact)
        if left is None or right is None:
            return _UNKNOWN_VEC
        if node.op == "in" and right.ftype == "list":
            options = right.values[0]
            return _Vec(
                [_any([_pair_ok("==", a, b) for b in options]) for a in left.prepared(right)],
                left.scalar,
            )
        pairs = _pairs(left, right)
        if pairs is None:
            return _UNKNOWN_VEC
        lv, rv = left.prepared(right), right.prepared(left)
        if node.op == "in":
            return _Vec([_contains(rv[j], lv[i]) for i, j in pairs], left.scalar and right.scalar)
        return _Vec(
            [_pair_ok(node.op, lv[i], rv[j]) for i, j in pairs], left.scalar and right.scalar
        )


def _names(node: Node) -> set[str]:
    if isinstance(node, (Name, Call)):
        return {node.name}
    return set().union(*(_names(child) for child in _children(node)))


def _children(node: Node) -> list[Node]:
    if isinstance(node, Compare):
        return [node.left, node.right]
    if isinstance(node, (Not, Quant)):
        return [node.operand]
    if isinstance(node, BoolOp):
        return list(node.operands)
    return []


def _uses_index(node: Node) -> bool:
    if isinstance(node, Context):
        return node.what == "index"
    return any(_uses_index(child) for child in _children(node))


def _required(node: Node) -> dict[str, int]:
    """Names used outside ``has()``, with the position of their first use."""
    if isinstance(node, Name) or (isinstance(node, Call) and node.func != "has"):
        return {node.name: node.pos}
    out: dict[str, int] = {}
    for child in _children(node):
        for name, pos in _required(child).items():
            out.setdefault(name, pos)
    return out


def compile_filter(text: str, names: Mapping[str, ClassNamesLike] | None = None) -> Filter:
    """Parse ``text``; raises :class:`FilterSyntaxError` with the position of the problem.
    ``names``: the class names bound to features (by record key), so that ``label == "cat"``
    compares ``label`` with the index of ``cat``; a class name that the bound file does not
    hold raises :class:`UnknownClassError`."""
    if not isinstance(text, str):
        raise TypeError("a filter is text")
    if len(text) > MAX_FILTER_CHARS:
        raise FilterSyntaxError(
            f"a filter of {len(text):,} characters; at most {MAX_FILTER_CHARS:,} are read",
            MAX_FILTER_CHARS,
        )
    tree = _Parser(text).parse()
    label_map = None
    if names:
        tree = _with_names(tree, _class_lists_named(names, _names(tree)), text)
        if _evaluation_names(_names(tree)):
            from .jobs.evaluate import PREDICTIONS_PREFIX, TRUTH_PREFIX, label_map_of

            label_map = label_map_of(names, TRUTH_PREFIX, PREDICTIONS_PREFIX)
    return Filter(text, tree, label_map)


def _class_lists_named(
    names: Mapping[str, ClassNamesLike], used: set[str]
) -> Mapping[str, ClassNamesLike]:
    """``names`` with the evaluation's class lists (``fp_class`` ...) bound to the names of
    the ground truth's label feature, else the predictions' (when the filter uses them)."""
    if not _evaluation_names(used):
        return names
    from .jobs.evaluate import CLASS_FIELDS, PREDICTIONS_PREFIX, TRUTH_PREFIX

    for key in (f"{TRUTH_PREFIX}class/label", f"{PREDICTIONS_PREFIX}label"):
        if key in names:
            return {**{c: names[key] for c in CLASS_FIELDS}, **names}
    return names


def _with_names(node: Node, names: Mapping[str, ClassNamesLike], text: str) -> Node:
    """``node`` with every string compared with a feature that has class names made a
    :class:`ClassName` (the name and its index); raises :class:`UnknownClassError` for a
    name the feature's file does not hold."""
    if isinstance(node, Compare):
        left, right = node.left, node.right
        if isinstance(left, Name) and left.name in names and isinstance(right, Literal):
            right = _named_literal(right, left.name, names[left.name], text)
        elif isinstance(right, Name) and right.name in names and isinstance(left, Literal):
            left = _named_literal(left, right.name, names[right.name], text)
        else:
            left, right = _with_names(left, names, text), _with_names(right, names, text)
        return Compare(node.op, left, right)
    if isinstance(node, Not):
        return Not(_with_names(node.operand, names, text))
    if isinstance(node, Quant):
        return Quant(node.func, _with_names(node.operand, names, text))
    if isinstance(node, BoolOp):
        return BoolOp(node.op, tuple(_with_names(n, names, text) for n in node.operands))
    return node


def spell_names(text: str, names: Mapping[str, ClassNamesLike]) -> str:
    """``text`` with every class name it compares with a feature that has ``names`` written
    as its label: ``label == "cat"`` → ``label == 3``; the same records match without the
    names. Raises as :func:`compile_filter` does (an unknown class name included)."""
    tree = compile_filter(text, names).tree
    labels: dict[int, int] = {}

    def walk(node: Node) -> None:
        if isinstance(node, Literal):
            values = node.value if isinstance(node.value, tuple) else (node.value,)
            where = node.items if isinstance(node.value, tuple) else (node.pos,)
            for v, pos in zip(values, where):
                if isinstance(v, ClassName):
                    labels[pos] = v.label
        for child in _children(node):
            walk(child)

    walk(tree)
    if not labels:
        return text
    out = text
    for tok in reversed(_tokenize(text)):
        if tok.kind == "str" and tok.pos in labels:
            out = out[: tok.pos] + str(labels[tok.pos]) + out[tok.pos + len(tok.text) :]
    return out


def _named_literal(lit: Literal, feature: str, names: ClassNamesLike, text: str) -> Literal:
    def named(value: Any, pos: int) -> Any:
        if not isinstance(value, str):
            return value
        index = names.index(value)
        if index is None:
            raise UnknownClassError(value, feature, names, pos, text)
        return ClassName(value, index)

    if isinstance(lit.value, tuple):
        where = lit.items or (lit.pos,) * len(lit.value)
        return replace(lit, value=tuple(named(v, p) for v, p in zip(lit.value, where)))
    return replace(lit, value=named(lit.value, lit.pos))


# --------------------------------------------------------------------------------------------
# Running a filter over a reader or a dataset


@dataclass
class FilterRun:
    """What a run of a filter found: the matching record numbers (ascending), whether every
    record was looked at (``complete``; false when it stopped at ``limit``), and the feature
    names the records looked at have (empty when the filter needs no features). ``files``,
    when the run counted them (a job's), holds the number of records of each file in order:
    where a match is (it is not compared)."""

    matches: list[int]
    complete: bool
    seen: set[str]
    files: list[int] = field(default_factory=list, compare=False)


def run_filter(
    source: Sequence[bytes] | Any,
    filter: Filter | str,
    progress: Callable[[int, int], None] | None = None,
    limit: int | None = None,
    *,
    start: int = 0,
    kind: str = "auto",
    check_names: bool = True,
    names: Mapping[str, ClassNamesLike] | None = None,
) -> FilterRun:
    """Run ``filter`` over ``source`` (a :class:`codec.TFRecordFile` or
    :class:`codec.TFRecordDataset`) from record ``start``, stopping after ``limit`` matches.

    Damaged records are evaluated with ``intact=False`` and ``record=None``. A filter that
    only looks at ``index`` / ``intact`` does not decode any payload. ``progress(done,
    total)`` is called every few thousand records. With ``check_names``, a complete run over
    the whole source raises :class:`UnknownFeatureError` when a name used outside ``has()``
    is not a feature of any record. ``names``: class names by feature, for a filter given as
    text (:func:`compile_filter`)."""
    flt = compile_filter(filter, names) if isinstance(filter, str) else filter
    total = len(source)

    def tick(done: int) -> None:
        if progress:
            progress(done, total)

    found = look(flt, _payloads(source, start), limit=limit, kind=kind, tick=tick)
    complete = found.stop is None or found.stop + 1 >= total
    if progress:
        progress(start if found.last is None else found.last + 1, total)
    seen = set(found.names)
    if check_names and complete and start == 0 and flt.uses_features():
        flt.check_names(seen)
    return FilterRun(found.matches, complete, seen)


@dataclass
class Looked:
    """What a filter found in a run of records (:func:`look`): the numbers of the matching
    ones (ascending); ``pending``, when the numbers given are not the records' own (a task
    over part of a dataset), the records whose match depends on their number, as ``(number,
    intact, the features the filter names)`` to decide with :meth:`Filter.matches` once it
    is known; the feature names seen, each with the number of the first record having it;
    the number of the last record looked at, and of the record where ``limit`` matches were
    reached (``stop``; ``None`` when every record was looked at)."""

    matches: list[int] = field(default_factory=list)
    pending: list[tuple[int, bool, Any]] = field(default_factory=list)
    names: dict[str, int] = field(default_factory=dict)
    last: int | None = None
    stop: int | None = None


def look(
    flt: Filter,
    payloads: Iterable[tuple[int, bytes | None]],
    *,
    limit: int | None = None,
    kind: str = "auto",
    numbered: bool = True,
    tick: Callable[[int], None] | None = None,
) -> Looked:
    """Evaluate ``flt`` over ``(number, payload or None when damaged)`` pairs in order,
    stopping once ``limit`` records match (at least one). Damaged records are evaluated
    with ``intact=False`` and ``record=None``; payloads are decoded (as ``kind``, raw when
    they do not parse) only when the filter looks at features. With ``numbered`` false the
    numbers are only positions (the records' own numbers are not known yet): a match that
    depends on ``index`` is left ``pending``. ``tick(number + 1)`` is called every 4096
    records."""
    from .example import decode

    needs_records = flt.uses_features()
    names = flt.names
    out = Looked()
    step = 4096
    items: Iterable[tuple[int, bytes | None, dict[str, list[Any]] | None]]
    if _evaluation_names(names):
        items = _with_evaluation(payloads, flt.label_map)
    else:
        items = ((i, data, None) for i, data in payloads)
    for i, data, evaluated in items:
        out.last = i
        intact = data is not None
        record: Any = None
        if data is not None and needs_records:
            try:
                record = decode(data, kind)
            except (DecodeError, CodecError):
                record = decode(data, "raw")
            if evaluated is not None:
                record = _evaluated(record, evaluated)
            _note_names(out.names, record, i)
        elif intact:
            record = _NO_FEATURES
        if numbered:
            truth: Truth = flt.matches(record, index=i, intact=intact)
        else:
            truth = flt.decide(record, intact=intact)
            if truth is None and flt.uses_index:
                out.pending.append((i, intact, _Named.of(record, names)))
        if truth:
            out.matches.append(i)
            if limit is not None and len(out.matches) >= limit:
                out.stop = i
                break
        if tick and (i + 1) % step == 0:
            tick(i + 1)
    return out


_EVALUATED_BATCH = 256  # records whose evaluation is computed at once


def _evaluation_names(names: Iterable[str]) -> bool:
    """Whether a filter naming ``names`` may use a record's evaluation."""
    from .jobs.evaluate import RECORD_FIELDS

    return not set(RECORD_FIELDS).isdisjoint(names)


def _with_evaluation(
    payloads: Iterable[tuple[int, bytes | None]], label_map: Mapping[int, str] | None = None
) -> Iterator[tuple[int, bytes | None, dict[str, list[Any]] | None]]:
    """The payloads, each with its record's evaluation (None: none), computed a batch at a
    time (:func:`codec.jobs.evaluate.payload_fields`) with classes read by ``label_map``."""
    from .jobs.evaluate import payload_fields

    it = iter(payloads)
    while batch := list(itertools.islice(it, _EVALUATED_BATCH)):
        fields = payload_fields([data for _, data in batch], label_map)
        for (i, data), got in zip(batch, fields):
            yield i, data, got


def _evaluated(record: Any, evaluated: Mapping[str, list[Any]]) -> Any:
    """``record`` with its evaluation's values as features (its own features win)."""
    from .example import Feature, Record
    from .jobs.evaluate import CLASS_FIELDS

    def value(v: tuple[int | None, str | None]) -> Any:
        label, text = v
        if label is not None and text is not None:
            return ClassName(text, label)
        return label if label is not None else text

    extra: dict[str, Any] = {}
    for name, values in evaluated.items():
        if name in CLASS_FIELDS:
            extra[name] = Feature("class", [value(v) for v in values])
        else:
            kind = "double" if any(isinstance(v, float) for v in values) else "int64"
            extra[name] = Feature(kind, list(values))
    return Record(record.kind, {**extra, **record.features}, record.feature_lists, record.raw)


def _note_names(names: dict[str, int], record: Any, i: int) -> None:
    for group in (record.features, record.feature_lists):
        if not group.keys() <= names.keys():
            for name in group:
                names.setdefault(name, i)


@dataclass(frozen=True)
class _Named:
    """The features of a record that a filter names: all it needs to decide later."""

    features: dict[str, Any]
    feature_lists: dict[str, Any]

    @classmethod
    def of(cls, record: Any, names: Sequence[str]) -> Any:
        if record is None or record is _NO_FEATURES:
            return record
        feats, lists = record.features, record.feature_lists
        return cls(
            {n: feats[n] for n in names if n in feats},
            {n: lists[n] for n in names if n in lists},
        )


def filter_dataset(
    source: Sequence[bytes] | Any,
    filter: Filter | str,
    progress: Callable[[int, int], None] | None = None,
    limit: int | None = None,
    *,
    start: int = 0,
    kind: str = "auto",
) -> list[int]:
    """The record numbers (ascending) of ``source`` that match ``filter``: :func:`run_filter`'s
    matches, without the check of feature names."""
    return run_filter(
        source, filter, progress, limit, start=start, kind=kind, check_names=False
    ).matches


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
