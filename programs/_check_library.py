"""The built-in named checks (registered when the registry is first used).

Each takes ``(elements, state, **args)`` and returns ``(score, trace)``. Elements
are referred to by their id (the number drawn on the overlay). Arguments are
validated statically too, so ``groundeval validate`` rejects a bad one before a run.
"""

from __future__ import annotations

import itertools
import math
import operator
import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from groundeval.programs._checks import register_check
from groundeval.programs._views import (
    CheckError,
    ElementView,
    TooCloseToCall,
    describe_ids,
    normalize_text,
)
from groundeval.state import StateFile, error_field

Views = list[ElementView]
Result = tuple[float, str]


# --------------------------------------------------------------------------- helpers


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise CheckError(f"{what} must be a number, got {value!r}")
    return float(value)


def _element_id(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise CheckError(f"{what} must be an element id (1, 2, ...), got {value!r}")
    return value


def _by_id(elements: Views, element_id: Any, what: str) -> ElementView:
    wanted = _element_id(element_id, what)
    for view in elements:
        if view.element.id == wanted:
            return view
    raise CheckError(f"{what}: no element #{wanted} (elements: {describe_ids(elements)})")


def _one(elements: Views, element_id: Any, what: str = "element") -> ElementView:
    if element_id is not None:
        return _by_id(elements, element_id, what)
    if len(elements) != 1:
        raise CheckError(f"give '{what}': there are {len(elements)} elements, not exactly one")
    return elements[0]


def _fmt(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, float):
        return f"{value:.4g}"
    return repr(value) if isinstance(value, str) else str(value)


def _verdict(ok: bool) -> str:
    return "pass" if ok else "fail"


_PLURAL = {"box": "boxes", "polygon": "polygons", "line": "lines", "ray": "rays", "point": "points"}


def _noun(elements: Views) -> str:
    kinds = {v.element.kind for v in elements}
    if len(kinds) == 1:
        kind = next(iter(kinds))
        return kind if len(elements) == 1 else _PLURAL[kind]
    return "element" if len(elements) == 1 else "elements"


@dataclass(frozen=True)
class _Expect:
    """An expected number: exactly ``equals``, or within ``[low, high]``."""

    low: float
    high: float

    @classmethod
    def of(
        cls,
        equals: Any = None,
        min: Any = None,
        max: Any = None,
        between: Any = None,
    ) -> _Expect:
        given = [
            n
            for n, v in (
                ("equals", equals),
                ("min/max", min if min is not None else max),
                ("between", between),
            )
            if v is not None
        ]
        if len(given) != 1:
            raise CheckError("give exactly one of 'equals', 'min'/'max' or 'between'")
        if equals is not None:
            v = _number(equals, "'equals'")
            return cls(v, v)
        if between is not None:
            if not isinstance(between, Sequence) or isinstance(between, str) or len(between) != 2:
                raise CheckError(f"'between' must be [low, high], got {between!r}")
            low, high = _number(between[0], "'between' low"), _number(between[1], "'between' high")
        else:
            low = -math.inf if min is None else _number(min, "'min'")
            high = math.inf if max is None else _number(max, "'max'")
        if low > high:
            raise CheckError(f"the lower bound {_fmt(low)} is above the upper bound {_fmt(high)}")
        return cls(low, high)

    def ok(self, value: float, tolerance: float = 1e-9) -> bool:
        return self.low - tolerance <= value <= self.high + tolerance

    @property
    def text(self) -> str:
        if self.low == self.high:
            return f"expected {_fmt(self.low)}"
        if self.high == math.inf:
            return f"expected at least {_fmt(self.low)}"
        if self.low == -math.inf:
            return f"expected at most {_fmt(self.high)}"
        return f"expected {_fmt(self.low)}..{_fmt(self.high)}"


def _coerce_pair(actual: Any, expected: Any) -> tuple[Any, Any]:
    """Numbers read as text ("42") compare as numbers; strings compare normalised."""
    if (
        isinstance(expected, int | float)
        and not isinstance(expected, bool)
        and isinstance(actual, str)
    ):
        try:
            return float(actual.strip().replace(",", "")), float(expected)
        except ValueError:
            return actual, expected
    if isinstance(expected, str) and isinstance(actual, str):
        return normalize_text(actual), normalize_text(expected)
    return actual, expected


def _same(actual: Any, expected: Any, tolerance: float = 1e-9) -> bool:
    a, e = _coerce_pair(actual, expected)
    if isinstance(a, int | float) and isinstance(e, int | float) and not isinstance(a, bool):
        return abs(float(a) - float(e)) <= tolerance
    return bool(a == e)


_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": _same,
    "!=": lambda a, b: not _same(a, b),
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "in": lambda a, b: any(_same(a, x) for x in b),
    "not in": lambda a, b: not any(_same(a, x) for x in b),
    "contains": lambda a, b: normalize_text(b) in normalize_text(a),
}


@dataclass(frozen=True)
class _Condition:
    field: str
    op: str
    value: Any

    @classmethod
    def of(cls, field: Any, op: Any, value: Any) -> _Condition:
        if not isinstance(field, str) or not field:
            raise CheckError(f"'field' must be a field name, got {field!r}")
        if op not in _OPS:
            raise CheckError(f"'op' must be one of {', '.join(_OPS)}, got {op!r}")
        if op in ("in", "not in") and (isinstance(value, str) or not isinstance(value, Sequence)):
            raise CheckError(f"'value' for op {op!r} must be a list, got {value!r}")
        return cls(field, op, value)

    def test(self, view: ElementView) -> bool:
        actual = view.value(self.field)
        try:
            return bool(_OPS[self.op](actual, self.value))
        except TypeError:
            raise CheckError(
                f"element #{view.element.id}: cannot compare {self.field}={actual!r} "
                f"{self.op} {self.value!r}"
            ) from None

    @property
    def text(self) -> str:
        return f"{self.field} {self.op} {_fmt(self.value)}"


def _validate(build: Callable[..., Any]) -> Callable[[dict[str, Any]], None]:
    """A static argument validator that builds the check's argument objects."""

    def validate(args: dict[str, Any]) -> None:
        build(**args)

    return validate


def _expect_args(
    equals: Any = None,
    min: Any = None,
    max: Any = None,
    between: Any = None,
    **_: Any,
) -> None:
    _Expect.of(equals, min, max, between)


# --------------------------------------------------------------------------- counting


@register_check("count", validate=_validate(_expect_args))
def count(
    elements: Views,
    state: StateFile | None,
    *,
    equals: int | None = None,
    min: int | None = None,
    max: int | None = None,
    kind: str | None = None,
) -> Result:
    """Number of elements (optionally of one kind) equals / is at least / at most a number."""
    expect = _Expect.of(equals, min, max)
    chosen = [v for v in elements if kind is None or v.element.kind == kind]
    ok = expect.ok(len(chosen))
    noun = _noun(chosen) if chosen else (_PLURAL.get(kind or "", "elements"))
    return float(
        ok
    ), f"{len(chosen)} {noun} ({describe_ids(chosen)}), {expect.text} → {_verdict(ok)}"


def _count_where_args(field: Any = None, op: Any = "==", value: Any = None, **rest: Any) -> None:
    _Condition.of(field, op, value)
    _expect_args(**rest)


@register_check("count_where", validate=_validate(_count_where_args))
def count_where(
    elements: Views,
    state: StateFile | None,
    *,
    field: str,
    value: Any,
    op: str = "==",
    equals: int | None = None,
    min: int | None = None,
    max: int | None = None,
) -> Result:
    """Number of elements whose ``field op value`` holds, against equals / min / max."""
    cond = _Condition.of(field, op, value)
    expect = _Expect.of(equals, min, max)
    chosen = [v for v in elements if cond.test(v)]
    ok = expect.ok(len(chosen))
    return float(ok), (
        f"{len(chosen)} of {len(elements)} elements with {cond.text} ({describe_ids(chosen)}), "
        f"{expect.text} → {_verdict(ok)}"
    )


def _sum_args(field: Any = None, tolerance: Any = 1e-9, **rest: Any) -> None:
    _Condition.of(field, "==", None)
    _number(tolerance, "'tolerance'")
    _expect_args(**rest)


@register_check("sum_field", validate=_validate(_sum_args))
def sum_field(
    elements: Views,
    state: StateFile | None,
    *,
    field: str,
    equals: float | None = None,
    between: Sequence[float] | None = None,
    min: float | None = None,
    max: float | None = None,
    tolerance: float = 1e-9,
) -> Result:
    """Sum of a numeric field over all elements equals a number or lies in a range."""
    expect = _Expect.of(equals, min, max, between)
    values = [_number(v.value(field), f"element #{v.element.id} field {field!r}") for v in elements]
    total = sum(values)
    ok = expect.ok(total, tolerance)
    terms = "+".join(_fmt(x) for x in values) or "0"
    return float(ok), (
        f"sum of {field} over {len(values)} elements ({describe_ids(elements)}) = {terms} = "
        f"{_fmt(total)}, {expect.text} → {_verdict(ok)}"
    )


# --------------------------------------------------------------------------- one element


def _equals_args(field: Any = None, element: Any = None, tolerance: Any = 1e-9, **_: Any) -> None:
    _Condition.of(field, "==", None)
    if element is not None:
        _element_id(element, "'element'")
    _number(tolerance, "'tolerance'")


@register_check("equals", validate=_validate(_equals_args))
def equals(
    elements: Views,
    state: StateFile | None,
    *,
    field: str,
    value: Any,
    element: int | None = None,
    tolerance: float = 1e-9,
) -> Result:
    """One element's field equals a value (text normalised; "42" equals 42)."""
    view = _one(elements, element)
    actual = view.value(field)
    ok = _same(actual, value, tolerance)
    return float(ok), (
        f"#{view.element.id} {field}={_fmt(actual)}, expected {_fmt(value)} → {_verdict(ok)}"
    )


def _between_args(field: Any = None, element: Any = None, **rest: Any) -> None:
    _equals_args(field, element)
    _expect_args(**rest)


@register_check("between", validate=_validate(_between_args))
def between(
    elements: Views,
    state: StateFile | None,
    *,
    field: str,
    min: float | None = None,
    max: float | None = None,
    element: int | None = None,
) -> Result:
    """One element's numeric field lies within [min, max] (either bound may be omitted)."""
    expect = _Expect.of(None, min, max)
    view = _one(elements, element)
    raw = view.value(field)
    actual, _ = _coerce_pair(raw, 0.0)
    value = _number(actual, f"element #{view.element.id} field {field!r}")
    ok = expect.ok(value)
    return float(ok), f"#{view.element.id} {field}={_fmt(value)}, {expect.text} → {_verdict(ok)}"


def _quantified(name: str, need_all: bool) -> Callable[..., Result]:
    def check(
        elements: Views,
        state: StateFile | None,
        *,
        field: str,
        value: Any,
        op: str = "==",
        partial: bool = False,
    ) -> Result:
        cond = _Condition.of(field, op, value)
        if not elements:
            return 0.0, f"no elements, so not {name} have {cond.text} → fail"
        good = [v for v in elements if cond.test(v)]
        bad = [v for v in elements if v not in good]
        ok = not bad if need_all else bool(good)
        score = len(good) / len(elements) if (partial and need_all) else float(ok)
        word = "pass" if score >= 1 else ("fail" if score <= 0 else f"partial {score:.2f}")
        return score, (
            f"{len(good)} of {len(elements)} elements have {cond.text} ({describe_ids(good)}; "
            f"not: {describe_ids(bad)}), expected {name} → {word}"
        )

    check.__doc__ = f"{name.capitalize()} elements satisfy ``field op value`` (no elements: fail)."
    check.__name__ = f"check_{name}"
    return check


def _quantified_args(field: Any = None, op: Any = "==", value: Any = None, **_: Any) -> None:
    _Condition.of(field, op, value)


register_check("all", validate=_validate(_quantified_args))(_quantified("all", need_all=True))
register_check("any", validate=_validate(_quantified_args))(_quantified("any", need_all=False))


# --------------------------------------------------------------------------- text


def _text_args(expected: Any = None, element: Any = None, field: Any = "text", **_: Any) -> None:
    if not isinstance(expected, str) or not normalize_text(expected):
        raise CheckError(f"'expected' must be non-empty text, got {expected!r}")
    _equals_args(field, element)


def _texts(elements: Views, element: int | None, field: str) -> list[tuple[ElementView, str]]:
    chosen = [_by_id(elements, element, "'element'")] if element is not None else elements
    return [(v, normalize_text(v.value(field))) for v in chosen]


@register_check("text_equals", validate=_validate(_text_args))
def text_equals(
    elements: Views,
    state: StateFile | None,
    *,
    expected: str,
    element: int | None = None,
    field: str = "text",
) -> Result:
    """An element's text equals ``expected`` after :func:`normalize_text`.

    With ``element`` that element must match; without it, any element may.
    """
    want = normalize_text(expected)
    texts = _texts(elements, element, field)
    hits = [v for v, t in texts if t == want]
    seen = ", ".join(f"#{v.element.id} {t!r}" for v, t in texts[:10]) or "no text"
    ok = bool(hits)
    where = f"#{hits[0].element.id}" if hits else "none"
    return float(ok), f"read {seen}; expected {want!r}, matched {where} → {_verdict(ok)}"


@register_check("text_contains", validate=_validate(_text_args))
def text_contains(
    elements: Views,
    state: StateFile | None,
    *,
    expected: str,
    element: int | None = None,
    field: str = "text",
) -> Result:
    """Text contains ``expected`` after :func:`normalize_text` on both sides.

    With ``element`` that element's text; without it, the texts of all elements
    joined with spaces in id order (so a phrase split over boxes still matches).
    """
    want = normalize_text(expected)
    texts = _texts(elements, element, field)
    joined = " ".join(t for _, t in sorted(texts, key=lambda p: p[0].element.id))
    ok = want in joined
    shown = joined if len(joined) <= 80 else joined[:77] + "..."
    return (
        float(ok),
        f"read {shown!r} ({describe_ids([v for v, _ in texts])}); "
        f"expected to contain {want!r} → {_verdict(ok)}",
    )


# --------------------------------------------------------------------------- order


def _field_args(field: Any = None, **_: Any) -> None:
    _Condition.of(field, "==", None)


@register_check("argmax_is_leftmost", validate=_validate(_field_args))
def argmax_is_leftmost(elements: Views, state: StateFile | None, *, field: str) -> Result:
    """The leftmost element (smallest centre x) has the largest value of ``field`` (ties pass)."""
    if not elements:
        return 0.0, "no elements → fail"
    values = {
        v.element.id: _number(v.value(field), f"element #{v.element.id} field {field!r}")
        for v in elements
    }
    top = max(values.values())
    best = [v for v in elements if values[v.element.id] == top]
    leftmost = min(elements, key=lambda v: (v.value("cx"), v.element.id))
    ok = values[leftmost.element.id] == top
    return float(ok), (
        f"max {field}={_fmt(top)} at {describe_ids(best)}; leftmost is #{leftmost.element.id} "
        f"(cx={_fmt(leftmost.value('cx'))}, {field}={_fmt(values[leftmost.element.id])}) "
        f"→ {_verdict(ok)}"
    )


# --------------------------------------------------------------------------- latent, long range

_NUMBER_RE = re.compile(r"[-+]?\d+(?:[.,]\d+)?")
ARITHMETIC_OPS = ("sum", "product", "difference", "min", "max", "increasing", "decreasing")
_ORDER_BY = ("x", "y", "id")


def _numeric(view: ElementView, field: str) -> float:
    """A field as a number: numbers as they are, text read as its one number ("$12" -> 12)."""
    value = view.value(field)
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    if isinstance(value, str):
        found = _NUMBER_RE.findall(value.replace("\u2212", "-"))
        if len(found) == 1:
            return float(found[0].replace(",", "."))
        raise CheckError(
            f"element #{view.element.id} field {field!r} = {value!r} holds "
            f"{len(found)} numbers, not exactly one"
        )
    raise CheckError(f"element #{view.element.id} field {field!r} = {value!r} is not a number")


def _uncertainty(view: ElementView, field: str) -> float:
    """A number field's uncertainty (its ``_err`` sibling), 0 when the element has none."""
    name = error_field(field)
    if not view.has(name):
        return 0.0
    value = view.value(name)
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value < 0:
        raise CheckError(
            f"element #{view.element.id} field {name!r} = {value!r} is not a non-negative number"
        )
    return float(value)


def _ordered(elements: Views, order_by: str) -> Views:
    """Reading order: left to right (``x``), top to bottom (``y``) or by id."""
    key = {"x": "cx", "y": "cy", "id": "id"}[order_by]
    return sorted(elements, key=lambda v: (v.value(key), v.element.id))


SIDE_BY_SIDE_SHARE = 0.25
"""Centres closer along the reading axis than this share of the elements' median extent on it
put them side by side across it (dice stacked one above the other read left to right): they
have no reading order (in-style dice_math hard 9677: two dice 0.08 px apart in x, read in
the order their boxes rounded to). A die face's box centre is off its die's by up to 0.03
of its width (95th percentile; 0.05 at the 99th, both dice proposers, 300 tuning dice_math
images), so two dice's order is sure from about 0.1 apart; a quarter leaves room for a face
read short of its die (a shaded band)."""


def _readings(views: Views, order_by: str, field: str) -> tuple[Views, ...]:
    """The reading order with elements side by side put by ``field`` rising, and falling.

    Just the one order when no two elements are side by side; a verdict that differs
    between the two rests on an order the picture does not give.
    """
    if order_by == "id" or len(views) < 2:
        return (views,)
    centre, extent = ("cx", "w") if order_by == "x" else ("cy", "h")
    near = SIDE_BY_SIDE_SHARE * statistics.median(v.value(extent) for v in views)
    runs: list[list[ElementView]] = [[views[0]]]
    for a, b in itertools.pairwise(views):
        if b.value(centre) - a.value(centre) < near:
            runs[-1].append(b)
        else:
            runs.append([b])
    if len(runs) == len(views):
        return (views,)
    rising = [v for run in runs for v in sorted(run, key=lambda v: _numeric(v, field))]
    falling = [v for run in runs for v in sorted(run, key=lambda v: -_numeric(v, field))]
    return rising, falling


def _order_given(verdicts: list[Result], order_by: str) -> Result:
    """The first verdict, unless the last (the other :func:`_readings` order) reverses it.

    One verdict (an op the order does not touch) is its own last.
    """
    (ok, said), (other, other_said) = verdicts[0], verdicts[-1]
    if ok != other:
        raise TooCloseToCall(
            f"{said}, but elements side by side across the reading order ({order_by}) may "
            f"as well read {other_said}: too close to call"
        )
    return ok, said


def _arithmetic_args(
    op: Any = None, field: Any = "text", order_by: Any = "x", tolerance: Any = 1e-9, **rest: Any
) -> None:
    if op not in ARITHMETIC_OPS:
        raise CheckError(f"'op' must be one of {', '.join(ARITHMETIC_OPS)}, got {op!r}")
    _Condition.of(field, "==", None)
    if order_by not in _ORDER_BY:
        raise CheckError(f"'order_by' must be one of {', '.join(_ORDER_BY)}, got {order_by!r}")
    _number(tolerance, "'tolerance'")
    if op in ("increasing", "decreasing"):
        if any(v is not None for v in rest.values()):
            raise CheckError(f"op {op!r} takes no 'equals'/'min'/'max'/'between'")
    else:
        _expect_args(**rest)


@register_check("arithmetic", validate=_validate(_arithmetic_args))
def arithmetic(
    elements: Views,
    state: StateFile | None,
    *,
    op: str,
    field: str = "text",
    equals: float | None = None,
    min: float | None = None,
    max: float | None = None,
    between: Sequence[float] | None = None,
    order_by: str = "x",
    tolerance: float = 1e-9,
) -> Result:
    """Arithmetic over numbers read from elements (OCR text, pips, counts): sum, product, order.

    ``difference`` is the first minus the rest in reading order (``order_by``);
    ``increasing``/``decreasing`` test the reading order itself.
    """
    _arithmetic_args(
        op, field, order_by, tolerance, equals=equals, min=min, max=max, between=between
    )
    if not elements:
        raise CheckError("no elements to compute with")
    views = _ordered(elements, order_by)
    orders = _readings(views, order_by, field) if op in ORDER_OPS else (views,)
    expect = None if op in ("increasing", "decreasing") else _Expect.of(equals, min, max, between)
    verdicts = [_computed(order, op, field, order_by, tolerance, expect) for order in orders]
    return _order_given(verdicts, order_by)


ORDER_OPS = ("increasing", "decreasing", "difference")
""":func:`arithmetic`'s ops whose result hangs on the reading order."""


def _computed(
    views: Views, op: str, field: str, order_by: str, tolerance: float, expect: _Expect | None
) -> Result:
    """:func:`arithmetic` over the elements in one order (``expect``: none for a sequence)."""
    values = [_numeric(v, field) for v in views]
    shown = ", ".join(f"#{v.element.id}={_fmt(x)}" for v, x in zip(views, values, strict=True))
    if expect is None:
        sign = 1 if op == "increasing" else -1
        ok = all(sign * (b - a) > tolerance for a, b in itertools.pairwise(values))
        return float(ok), f"{field} in reading order ({order_by}): {shown}; {op}? → {_verdict(ok)}"
    if op == "sum":
        result = math.fsum(values)
    elif op == "product":
        result = math.prod(values)
    elif op == "difference":
        result = values[0] - math.fsum(values[1:])
    else:
        result = _min(values) if op == "min" else _max(values)
    ok = expect.ok(result, tolerance)
    return float(ok), f"{op} of {field} ({shown}) = {_fmt(result)}, {expect.text} → {_verdict(ok)}"


_min, _max = min, max
CONSISTENT_MODES = ("same", "increasing", "decreasing")


def _consistent_args(
    field: Any = None,
    mode: Any = "same",
    tolerance: Any = 0.0,
    relative: Any = False,
    order_by: Any = "x",
    min_count: Any = 2,
    **_: Any,
) -> None:
    _Condition.of(field, "==", None)
    if mode not in CONSISTENT_MODES:
        raise CheckError(f"'mode' must be one of {', '.join(CONSISTENT_MODES)}, got {mode!r}")
    if _number(tolerance, "'tolerance'") < 0:
        raise CheckError("'tolerance' must not be negative")
    if not isinstance(relative, bool):
        raise CheckError(f"'relative' must be true or false, got {relative!r}")
    if order_by not in _ORDER_BY:
        raise CheckError(f"'order_by' must be one of {', '.join(_ORDER_BY)}, got {order_by!r}")
    if isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 1:
        raise CheckError(f"'min_count' must be a positive integer, got {min_count!r}")


@register_check("consistent", validate=_validate(_consistent_args))
def consistent(
    elements: Views,
    state: StateFile | None,
    *,
    field: str,
    mode: str = "same",
    tolerance: float = 0.0,
    relative: bool = False,
    order_by: str = "x",
    min_count: int = 2,
) -> Result:
    """One attribute kept across many elements: all the same (within tolerance) or a sequence.

    ``same``: numbers within ``tolerance`` of each other (a share of the median when
    ``relative``), text equal after normalising; ``increasing``/``decreasing``: each
    step in reading order (``order_by``) moves by more than ``tolerance``. Numbers that
    carry an uncertainty (a ``<field>_err`` sibling) count as intervals: a verdict some
    values within them would reverse is too close to call, and the question is withheld.
    """
    _consistent_args(field, mode, tolerance, relative, order_by, min_count)
    if len(elements) < min_count:
        return 0.0, f"{len(elements)} elements, fewer than min_count {min_count} → fail"
    views = _ordered(elements, order_by)
    raw = [v.value(field) for v in views]
    if mode == "same" and all(isinstance(x, str) for x in raw):
        texts = [normalize_text(x) for x in raw]
        ok = len(set(texts)) == 1
        seen = sorted(set(texts))
        return float(ok), f"{field}: {seen} over {len(views)} elements → {_verdict(ok)}"
    values = [_numeric(v, field) for v in views]
    errs = [_uncertainty(v, field) for v in views]
    shown = ", ".join(
        _fmt(round(x, 2)) + (f"±{_fmt(round(e, 2))}" if e else "")
        for x, e in zip(values, errs, strict=True)
    )
    scale = sorted(abs(x) for x in values)[len(values) // 2] if relative else 1.0
    allowed = tolerance * scale
    if mode == "same":
        lows = [x - e for x, e in zip(values, errs, strict=True)]
        highs = [x + e for x, e in zip(values, errs, strict=True)]
        spread = _max(values) - _min(values)
        said = (
            f"{field} over {len(values)} elements in order {order_by}: {shown}; spread "
            f"{_fmt(round(spread, 3))}, allowed {_fmt(round(allowed, 3))}"
        )
        widest = _max(highs) - _min(lows)  # the spreads the measurements allow
        narrowest = max(0.0, _max(lows) - _min(highs))
        if narrowest <= allowed + 1e-9 < widest:
            raise TooCloseToCall(
                f"{said}, but within the measurements' uncertainty it could be "
                f"{_fmt(round(narrowest, 3))} to {_fmt(round(widest, 3))}: too close to call"
            )
        ok = spread <= allowed + 1e-9
        return float(ok), f"{said} → {_verdict(ok)}"
    verdicts = [
        _sequence(order, field, mode, allowed, order_by)
        for order in _readings(views, order_by, field)
    ]
    return _order_given(verdicts, order_by)


def _sequence(views: Views, field: str, mode: str, allowed: float, order_by: str) -> Result:
    """:func:`consistent`'s ``increasing``/``decreasing`` over the elements in one order."""
    values = [_numeric(v, field) for v in views]
    errs = [_uncertainty(v, field) for v in views]
    shown = ", ".join(
        _fmt(round(x, 2)) + (f"±{_fmt(round(e, 2))}" if e else "")
        for x, e in zip(values, errs, strict=True)
    )
    sign = 1 if mode == "increasing" else -1
    steps = [sign * (b - a) for a, b in itertools.pairwise(values)]
    # each step at its least and its most, given both measurements' uncertainties
    slack = [e1 + e2 for e1, e2 in itertools.pairwise(errs)]
    least = [s - d for s, d in zip(steps, slack, strict=True)]
    most = [s + d for s, d in zip(steps, slack, strict=True)]
    bad = [i + 2 for i, s in enumerate(most) if s <= allowed]
    doubtful = [i + 2 for i, s in enumerate(least) if s <= allowed and i + 2 not in bad]
    ok = not bad
    where = f"; breaks at position(s) {bad}" if bad else ""
    said = f"{field} in order {order_by}: {shown}; {mode}{where}"
    if ok and doubtful:
        raise TooCloseToCall(
            f"{said}; the step(s) to position(s) {doubtful} are within the measurements' "
            "uncertainty: too close to call"
        )
    return float(ok), f"{said} → {_verdict(ok)}"
