"""`--where`: the filter of `buflab runs`, over the run store's columns.

    network.bottleneck.buffer < 100 and utilization >= 0.9
    traffic.0.tcp == cubic or (seed = 3 and not network.access.rate > 1Gbps)

A condition is KEY OP VALUE (OP one of == = != < <= > >=), joined by `and`, `or`, `not` and
parentheses. KEY is a column: a scenario key written as in --set (`traffic.0.flows`), a
summary metric (`utilization`), or one of the store's own (`seed`, `host`, ...). VALUE is a
number, a word or a quoted string. Scenario values are stored as written, with units
("100pkt", "1Gbps"), so a comparison with such a column compares quantities: a value with a
unit in that unit's kind (`network.access.rate > 100Mbps`), a bare number in the kind's base
unit, the one the column's values are written in (packets, bytes, bit/s, seconds:
`network.bottleneck.buffer < 100` is fewer than 100 packets); "unlimited" is larger than any
number. A row whose value is of another kind (a buffer in bytes, asked in packets) does not
match. Bad input is one line naming the condition and what was expected.

It must not know where the table comes from: text and a DataFrame in, a row mask out.
"""

from __future__ import annotations

import difflib
import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from buflab.engine import Error
from buflab.engine.units import UnitError, parse_quantity

_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_TOKEN = re.compile(
    r"""\s*(?:(?P<paren>[()])|(?P<op>==|!=|<=|>=|=|<|>)|(?P<quoted>"[^"]*"|'[^']*')"""
    r"""|(?P<word>[^\s()<>=!"']+))"""
)
_QUANTITY_KINDS = ("packets", "bytes", "rate", "time")
_UNLIMITED = "unlimited"


class WhereError(Error):
    """A --where expression that cannot be read or applied."""


@dataclass(frozen=True)
class _Token:
    kind: str  # paren, op, quoted, word
    text: str


def _tokens(text: str) -> list[_Token]:
    tokens, position = [], 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise WhereError(
                f"--where {text!r}: cannot read {text[position:].strip()[:20]!r}; expected "
                "KEY OP VALUE joined by and, or, not, e.g. network.bottleneck.buffer < 100"
            )
        kind = match.lastgroup or "word"
        tokens.append(_Token(kind, match.group(kind)))
        position = match.end()
    return tokens


def select(frame: pd.DataFrame, text: str) -> pd.Series:
    """The rows of `frame` that `text` selects, as a boolean mask."""
    tokens = _tokens(text)
    if not tokens:
        raise WhereError("--where is empty; expected e.g. network.bottleneck.buffer < 100")
    parser = _Parser(tokens, frame, text)
    mask = parser.disjunction()
    if parser.position != len(tokens):
        raise WhereError(
            f"--where {text!r}: unexpected {tokens[parser.position].text!r}; conditions are "
            "joined by and, or"
        )
    return mask


class _Parser:
    """Recursive descent: or of ands of (not) conditions or parenthesised expressions."""

    def __init__(self, tokens: list[_Token], frame: pd.DataFrame, text: str) -> None:
        self.tokens, self.frame, self.text, self.position = tokens, frame, text, 0

    def _peek(self) -> _Token | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def _take(self) -> _Token:
        token = self._peek()
        if token is None:
            raise WhereError(f"--where {self.text!r}: ends too soon; expected KEY OP VALUE")
        self.position += 1
        return token

    def _keyword(self, word: str) -> bool:
        token = self._peek()
        if token is not None and token.kind == "word" and token.text.lower() == word:
            self.position += 1
            return True
        return False

    def disjunction(self) -> pd.Series:
        mask = self.conjunction()
        while self._keyword("or"):
            mask = mask | self.conjunction()
        return mask

    def conjunction(self) -> pd.Series:
        mask = self.negation()
        while self._keyword("and"):
            mask = mask & self.negation()
        return mask

    def negation(self) -> pd.Series:
        if self._keyword("not"):
            return ~self.negation()
        token = self._peek()
        if token is not None and token.text == "(":
            self.position += 1
            mask = self.disjunction()
            closing = self._peek()
            if closing is None or closing.text != ")":
                raise WhereError(f"--where {self.text!r}: a parenthesis is not closed")
            self.position += 1
            return mask
        return self.condition()

    def condition(self) -> pd.Series:
        key, op, value = self._take(), self._take(), self._take()
        if key.kind != "word" or op.kind != "op" or value.kind not in ("word", "quoted"):
            raise WhereError(
                f"--where {self.text!r}: expected KEY OP VALUE at {key.text!r}, with OP one of "
                "== != < <= > >=, e.g. utilization >= 0.9"
            )
        literal = value.text[1:-1] if value.kind == "quoted" else value.text
        return compare(self.frame, key.text, op.text, literal, quoted=value.kind == "quoted")


def compare(
    frame: pd.DataFrame, key: str, op: str, literal: str, quoted: bool = False
) -> pd.Series:
    """The mask of one condition KEY OP VALUE."""
    if key not in frame.columns:
        near = difflib.get_close_matches(key, [str(c) for c in frame.columns], n=3)
        hint = f"; did you mean {' or '.join(near)}?" if near else ""
        raise WhereError(f"--where {key}: no such column in the run store{hint}")
    column = frame[key]
    where = f"--where {key} {op} {literal}"
    test = _COMPARE[op]
    if pd.api.types.is_bool_dtype(column):
        if literal.lower() not in ("true", "false"):
            raise WhereError(f"{where}: {key} is true or false; expected true or false")
        if op not in ("==", "=", "!="):
            raise WhereError(f"{where}: {key} is true or false; only == and != apply")
        return column.map(lambda v: test(bool(v), literal.lower() == "true")).astype(bool)
    if pd.api.types.is_numeric_dtype(column):
        number = _number(literal)
        if number is None or quoted:
            raise WhereError(f"{where}: {key} is a number; expected a number, e.g. 0.9")
        return column.map(lambda v: not pd.isna(v) and test(float(v), number)).astype(bool)
    kinds = _quantity_kinds(column)
    if kinds and not quoted:
        return _compare_quantities(column, kinds, test, literal, where, key)
    if op not in ("==", "=", "!="):
        raise WhereError(
            f"{where}: {key} holds text such as {_example(column)!r}; only == and != apply"
        )
    return column.map(lambda v: test("" if v is None or v is pd.NA else str(v), literal)).astype(
        bool
    )


def _compare_quantities(
    column: pd.Series,
    kinds: set[str],
    test: Callable[[Any, Any], bool],
    literal: str,
    where: str,
    key: str,
) -> pd.Series:
    number = _number(literal)
    if literal == _UNLIMITED:
        wanted_kind, wanted = None, math.inf
    elif number is not None:
        if len(kinds) > 1:
            raise WhereError(
                f"{where}: {key} holds {' and '.join(sorted(kinds))}; give a unit, e.g. "
                f"{literal}pkt or {literal}KB"
            )
        wanted_kind, wanted = next(iter(kinds)), number
    else:
        try:
            quantity = parse_quantity(literal, _QUANTITY_KINDS)
        except UnitError:
            raise WhereError(
                f"{where}: {key} holds quantities such as {_example(column)!r}; expected a "
                "number or a quantity with a unit, e.g. 100pkt, 1Gbps, 50ms"
            ) from None
        wanted_kind, wanted = quantity.kind, quantity.value

    def matches(value: Any) -> bool:
        parsed = _quantity(value)
        if parsed is None:
            return False
        kind, amount = parsed
        if kind is not None and wanted_kind is not None and kind != wanted_kind:
            return False  # a buffer in bytes is not compared with packets
        return test(amount, wanted)

    return column.map(matches).astype(bool)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _quantity(value: Any) -> tuple[str | None, float] | None:
    """(kind, value in its base unit) of a stored text; "unlimited" is (None, inf)."""
    if not isinstance(value, str):
        return None
    if value == _UNLIMITED:
        return None, math.inf
    if _number(value) is not None:
        return None  # a bare number says no unit
    try:
        quantity = parse_quantity(value, _QUANTITY_KINDS)
    except UnitError:
        return None
    return quantity.kind, quantity.value


def _quantity_kinds(column: pd.Series) -> set[str]:
    """The kinds of quantity a text column holds, when every written value is one (or
    "unlimited"); empty when it holds other text."""
    kinds: set[str] = set()
    for value in column.dropna().unique():
        parsed = _quantity(value)
        if parsed is None:
            return set()
        if parsed[0] is not None:
            kinds.add(parsed[0])
    return kinds


def _example(column: pd.Series) -> str:
    values = column.dropna()
    return str(values.iloc[0]) if len(values) else ""
