"""The safe expression language for checks written in program files.

A program file is data, so a check such as ``sum(e.pips for e in elements) == 17``
must never be able to do anything but compute over the grounding state. Two
layers keep it so:

1. a static walk of the Python AST, before anything runs, which accepts only a
   whitelist (see :func:`parse_expression`);
2. evaluation by ``simpleeval`` with bounded operators, attribute access only on
   element views, a comprehension-length cap and a wall-clock deadline.

Names: ``elements`` (the state's elements), ``image_w``, ``image_h``,
``state_status`` and ``states`` (``states["h1"]``: another question's elements,
when the runner provides them). Functions: ``count len sum min max abs round any
all sorted set``, the geometric helpers ``iou inside left_of above distance
hits`` and ``norm`` (text normalised as in ``text_equals``). A result of
``True``/``False`` scores 1/0; a number in [0, 1] is a partial score; anything
else is an error.

Comparing values of kinds that cannot meet is an error, never a "no": a number
with a string (``count(elements) == "5"``), a number with a list, and so on.
Where the kinds are known from the text, ``groundeval validate`` rejects the
expression; where only evaluation shows them (element fields, ``min``/``max``),
the comparison raises and the decision is ``error`` with the reason. Lists and
tuples compare as sequences (``sorted(...) == (1, 2)`` means what it says).
"""

from __future__ import annotations

import ast
import math
import threading
import time
import types
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any

from simpleeval import DEFAULT_OPERATORS, EvalWithCompoundTypes, InvalidExpression

from groundeval.programs._expr_static import (
    BINARY_OPS,
    COMPARE_OPS,
    DEADLINE_S,
    MAX_BUILT,
    MAX_EXPONENT,
    MAX_INT_BITS,
    MAX_SEQUENCE,
    UNARY_OPS,
    comparable,
    parse_expression,
)
from groundeval.programs._views import (
    CheckError,
    ElementView,
    above,
    describe_ids,
    element_distance,
    hits,
    inside,
    iou,
    left_of,
    normalize_text,
)


def _count(values: Iterable[Any]) -> int:
    """Number of items (elements, or those a generator with ``if`` keeps)."""
    return len(list(values))


def _sum(values: Iterable[Any], start: Any = 0) -> Any:
    """Sum of numbers only: ``sum`` over lists or strings could build huge values."""
    items = list(values)
    if not all(isinstance(v, int | float) for v in [start, *items]):
        bad = next(v for v in [start, *items] if not isinstance(v, int | float))
        raise CheckError(f"sum() adds numbers only, got {type(bad).__name__} {bad!r:.40}")
    return sum(items, start)


def _round(value: Any, ndigits: Any = None) -> Any:
    """``round`` with at most 15 digits either side."""
    if ndigits is not None and (not isinstance(ndigits, int) or abs(ndigits) > 15):
        raise CheckError(f"round() digits must be an integer in -15..15, got {ndigits!r}")
    return round(value, ndigits)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "count": _count,
    "len": len,
    "sum": _sum,
    "min": min,
    "max": max,
    "abs": abs,
    "round": _round,
    "any": any,
    "all": all,
    "sorted": sorted,
    "set": set,
    "iou": iou,
    "inside": inside,
    "left_of": left_of,
    "above": above,
    "distance": element_distance,
    "hits": hits,
    "norm": normalize_text,
}


# --------------------------------------------------------------------------- evaluation


def _limited_pow(a: Any, b: Any) -> Any:
    if not (_is_number(a) and _is_number(b)):
        raise CheckError(f"'**' needs two numbers, got {type(a).__name__} and {type(b).__name__}")
    if abs(b) > MAX_EXPONENT or (abs(a) > 1 and abs(b) * math.log10(abs(a)) > 300):
        raise CheckError(f"{a!r} ** {b!r} is too large to evaluate")
    return a**b


def _numeric_mod(a: Any, b: Any) -> Any:
    if not (_is_number(a) and _is_number(b)):
        raise CheckError("'%' works on numbers only (no string formatting)")
    return a % b


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float)


class TypeMismatch(CheckError):
    """Two values of kinds that cannot meet were compared (``3 == "3"``)."""


def _kind(value: Any) -> str | None:
    """The static language's kind of a runtime value (None: not one of them)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list | tuple):
        return "list"
    if isinstance(value, set | frozenset):
        return "set"
    if value is None:
        return "none"
    return None


_KIND_NOUNS = {
    "bool": "boolean",
    "number": "number",
    "str": "string",
    "list": "list",
    "set": "set",
    "none": "None",
}
_SYMBOLS: dict[type, str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.In: "in",
    ast.NotIn: "not in",
}


def _mismatch(op: ast.cmpop, a: Any, b: Any, ka: str, kb: str) -> TypeMismatch:
    hint = ""
    equality = isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn)
    if equality and {ka, kb} <= {"number", "bool", "str"} and "str" in (ka, kb) and ka != kb:
        hint = " (a number is never equal to text)"
    return TypeMismatch(
        f"'{_SYMBOLS[type(op)]}' compares a {_KIND_NOUNS[ka]} ({_short(a)}) with a "
        f"{_KIND_NOUNS[kb]} ({_short(b)}){hint}"
    )


def _comparison(op: ast.cmpop, fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``fn`` refusing kinds that cannot meet; a list and a tuple compare as sequences."""

    def compare(a: Any, b: Any) -> Any:
        ka, kb = _kind(a), _kind(b)
        if ka is not None and kb is not None:
            if not comparable(ka, kb, op):
                raise _mismatch(op, a, b, ka, kb)
            if ka == kb == "list" and type(a) is not type(b):
                return fn(list(a), list(b))
        return fn(a, b)

    return compare


def _membership(op: ast.cmpop, negate: bool) -> Callable[[Any, Any], bool]:
    """``in`` refusing a number looked for among strings (or the reverse)."""

    def member(needle: Any, container: Any) -> bool:
        kn, kc = _kind(needle), _kind(container)
        if kc == "str" and kn is not None and kn != "str":
            raise _mismatch(op, needle, container, kn, kc)
        if kc in ("number", "bool", "none"):
            raise TypeMismatch(f"'{_SYMBOLS[type(op)]}' looks inside a {_KIND_NOUNS[kc or '']}")
        if kc in ("list", "set") and kn in ("number", "bool", "str") and container:
            families = {"number" if k == "bool" else k for k in map(_kind, container)}
            want = "number" if kn == "bool" else kn
            if len(families) == 1 and families <= {"number", "str"} and want not in families:
                item = next(iter(container))
                raise _mismatch(op, needle, item, kn, _kind(item) or "")
        found = needle in container
        return not found if negate else found

    return member


_OPERATORS: dict[type, Callable[..., Any]] = {
    op: fn for op, fn in DEFAULT_OPERATORS.items() if op in (*BINARY_OPS, *UNARY_OPS, *COMPARE_OPS)
}
_OPERATORS.update({ast.Pow: _limited_pow, ast.Mod: _numeric_mod})
for _op in (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE):
    _OPERATORS[_op] = _comparison(_op(), _OPERATORS[_op])
_OPERATORS[ast.In] = _membership(ast.In(), negate=False)
_OPERATORS[ast.NotIn] = _membership(ast.NotIn(), negate=True)


def _size(value: Any, cap: int) -> int:
    """Items in a value, nested containers included; stops counting past ``cap``."""
    total, stack = 0, [value]
    while stack and total <= cap:
        item = stack.pop()
        if isinstance(item, str | bytes):
            total += len(item)
        elif isinstance(item, list | tuple | set | frozenset | dict):
            total += len(item)
            stack.extend(item)
    return total


class _Budget:
    """Items an evaluation may build by repetition and concatenation, in total."""

    def __init__(self, limit: int = MAX_BUILT) -> None:
        self.left = limit

    def spend(self, n: int) -> None:
        self.left -= n
        if n > MAX_SEQUENCE or self.left < 0:
            raise CheckError(f"the expression builds more than {MAX_SEQUENCE} items")

    def mult(self, a: Any, b: Any) -> Any:
        if _is_number(a) and _is_number(b):
            if isinstance(a, int) and isinstance(b, int):
                if abs(a).bit_length() + abs(b).bit_length() > MAX_INT_BITS:
                    raise CheckError("the product is too large to evaluate")
            return a * b
        for seq, n in ((a, b), (b, a)):
            if hasattr(seq, "__len__") and isinstance(n, int):
                self.spend(_size(seq, MAX_SEQUENCE) * max(n, 0))
        return a * b

    def add(self, a: Any, b: Any) -> Any:
        if hasattr(a, "__len__") and hasattr(b, "__len__"):
            self.spend(_size(a, MAX_SEQUENCE) + _size(b, MAX_SEQUENCE))
        return a + b


class StatesView(Mapping[str, list[ElementView]]):
    """``states["h1"]``: elements of other questions' grounding states, read-only."""

    def __init__(self, states: Mapping[str, list[ElementView]]) -> None:
        self._states = dict(states)

    def __getitem__(self, key: str) -> list[ElementView]:
        try:
            return self._states[key]
        except (KeyError, TypeError):
            have = ", ".join(sorted(self._states)) or "none"
            raise CheckError(
                f"no grounding state for question {key!r} (available: {have})"
            ) from None

    def __iter__(self) -> Any:
        return iter(self._states)

    def __len__(self) -> int:
        return len(self._states)


_LOCAL = threading.local()


class _Evaluator(EvalWithCompoundTypes):  # type: ignore[misc]
    """simpleeval with element-only attributes, bounded operators and a deadline."""

    def __init__(self) -> None:
        super().__init__(operators=dict(_OPERATORS), functions=dict(FUNCTIONS), names={})
        self.functions = dict(FUNCTIONS)  # drop list/tuple/dict/set added by the base class
        self.functions["set"] = set
        self._deadline = 0.0
        self._deadline_s = 0.0
        self._watch: set[int] = set()
        self.seen: dict[int, Any] = {}

    @classmethod
    def for_thread(cls, names: dict[str, Any], watch: set[int], deadline_s: float) -> _Evaluator:
        """This thread's evaluator, reset for one evaluation (building one costs ~40 µs)."""
        evaluator: _Evaluator | None = getattr(_LOCAL, "evaluator", None)
        if evaluator is None:
            evaluator = _LOCAL.evaluator = cls()
        budget = _Budget()
        evaluator.operators = {**_OPERATORS, ast.Mult: budget.mult, ast.Add: budget.add}
        evaluator.names = names
        evaluator._deadline = time.monotonic() + deadline_s
        evaluator._deadline_s = deadline_s
        evaluator._watch = watch
        evaluator.seen = {}
        return evaluator

    def _eval(self, node: ast.AST) -> Any:
        if time.monotonic() > self._deadline:
            raise CheckError(f"evaluation took longer than {self._deadline_s:g} s")
        value = super()._eval(node)
        if id(node) in self._watch:
            self.seen[id(node)] = value
        return value

    def _check_disallowed_items(self, item: Any) -> None:
        """Shallow: nothing reachable returns a module or a function, so no deep walk.

        simpleeval's own check walks nested containers item by item, which a
        repeated nested list turns into minutes of work.
        """
        if isinstance(item, types.ModuleType) or callable(item):
            raise CheckError(f"the expression produced a {type(item).__name__}, not a value")

    def _eval_attribute(self, node: ast.Attribute) -> Any:
        base = self._eval(node.value)
        if not isinstance(base, ElementView):
            raise CheckError(
                f"'{ast.unparse(node)}': attributes can only be read from an element, "
                f"not from {type(base).__name__}"
            )
        return base.value(node.attr)


def _watched(node: ast.AST) -> list[ast.AST]:
    """The top-level operands whose values a trace shows."""
    if isinstance(node, ast.Expression):
        return _watched(node.body)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _watched(node.operand)
    if isinstance(node, ast.BoolOp):
        parts: list[ast.AST] = []
        for value in node.values:
            inner = _watched(value)
            parts.extend(inner if inner else [value])
        return [p for p in parts if not isinstance(p, ast.Constant)]
    if isinstance(node, ast.Compare):
        parts = [node.left, *node.comparators]
        return [p for p in parts if not isinstance(p, ast.Constant)]
    return []


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def score_of(value: Any, text: str) -> float:
    """``True``/``False`` → 1/0; a number in [0, 1] → itself; anything else is an error."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float) and math.isfinite(value) and 0.0 <= value <= 1.0:
        return float(value)
    raise CheckError(
        f"check {text!r} gave {_short(value)} ({type(value).__name__}); "
        "expected True/False or a number in [0, 1]"
    )


def verdict_word(score: float) -> str:
    """``pass`` at 1, ``fail`` at 0, ``partial 0.60`` between."""
    if score >= 1.0:
        return "pass"
    if score <= 0.0:
        return "fail"
    return f"partial {score:.2f}"


@lru_cache(maxsize=512)
def _watch_labels(text: str) -> tuple[list[ast.AST], list[str]]:
    """The operands a trace shows and their source text (the parsed tree is cached too)."""
    watch = _watched(parse_expression(text))
    source = text.strip()
    return watch, [ast.get_source_segment(source, n) or ast.unparse(n) for n in watch]


def evaluate_expression(
    text: str,
    names: dict[str, Any],
    *,
    deadline_s: float = DEADLINE_S,
) -> tuple[float, str]:
    """Validate, then evaluate an expression over ``names``; returns (score, trace).

    Raises:
        CheckError: rejected statically, or failed while evaluating.
    """
    tree = parse_expression(text)
    watch, labels = _watch_labels(text)
    evaluator = _Evaluator.for_thread(names, {id(n) for n in watch}, deadline_s)
    try:
        value = evaluator.eval(text, previously_parsed=tree.body)
    except TypeMismatch as exc:
        raise CheckError(f"check {text!r}: {exc}") from None
    except CheckError:
        raise
    except InvalidExpression as exc:
        raise CheckError(f"check {text!r} could not be evaluated: {exc}") from None
    except (ArithmeticError, TypeError, ValueError, LookupError, RecursionError) as exc:
        raise CheckError(
            f"check {text!r} could not be evaluated: {type(exc).__name__}: {exc}"
        ) from None
    score = score_of(value, text)
    shown = [
        f"{label}={_short(evaluator.seen[id(n)])}"
        for n, label in zip(watch, labels, strict=True)
        if id(n) in evaluator.seen
    ]
    elements = names.get("elements")
    if isinstance(elements, list) and "elements" in text:
        shown.insert(0, f"elements: {len(elements)} ({describe_ids(elements)})")
    detail = f" with {'; '.join(shown)}" if shown else ""
    return score, f"{text}{detail} → {verdict_word(score)}"
