"""The safe expression language for checks written in program files.

A program file is data, so a check such as ``sum(e.pips for e in elements) == 17``
must never be able to do anything but compute over the grounding state. Two
layers keep it so:

1. a static walk of the Python AST, before anything runs, which accepts only a
   whitelist (see :func:`parse_expression`);
2. compilation of the validated tree (once per text, cached) into a Python code
   object in which every bounded operation is a call to a helper: ``+``/``*``
   charge a build budget, ``**``/``%`` are bounded, comparisons check kinds,
   attributes are read only from element views, every comprehension step is
   counted (at most 10,000 per evaluation) and checks a wall-clock deadline.
   The code runs with empty builtins and sees only the names and the helpers.

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
import operator
import time
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from groundeval.programs._expr_static import (
    DEADLINE_S,
    MAX_BUILT,
    MAX_EXPONENT,
    MAX_INT_BITS,
    MAX_ITERATIONS,
    MAX_SEQUENCE,
    NAMES,
    comparable,
    parse_expression,
    value_kind,
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
    views_of,
)
from groundeval.state import Element


def _count(values: Iterable[Any]) -> int:
    """Number of items (elements, or those a generator with ``if`` keeps)."""
    return len(list(values))


def _sum(values: Iterable[Any], start: Any = 0) -> Any:
    """Sum of numbers only: ``sum`` over lists or strings could build huge values."""
    items = list(values)
    for bad in (start, *items):
        if not isinstance(bad, (int, float)):  # a tuple: faster than int | float
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
    scalars = {bool: "bool", int: "number", float: "number", str: "str"}
    fine = frozenset(
        (ta, tb)
        for ta, ka in scalars.items()
        for tb, kb in scalars.items()
        if comparable(ka, kb, op)
    )  # the common case, decided by exact types alone

    def compare(a: Any, b: Any) -> Any:
        if (type(a), type(b)) in fine:
            return fn(a, b)
        ka, kb = value_kind(a), value_kind(b)
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
        kn, kc = value_kind(needle), value_kind(container)
        if kc == "str" and kn is not None and kn != "str":
            raise _mismatch(op, needle, container, kn, kc)
        if kc in ("number", "bool", "none"):
            raise TypeMismatch(f"'{_SYMBOLS[type(op)]}' looks inside a {_KIND_NOUNS[kc or '']}")
        if kc in ("list", "set") and kn in ("number", "bool", "str") and container:
            families = {"number" if k == "bool" else k for k in map(value_kind, container)}
            want = "number" if kn == "bool" else kn
            if len(families) == 1 and families <= {"number", "str"} and want not in families:
                item = next(iter(container))
                raise _mismatch(op, needle, item, kn, value_kind(item) or "")
        found = needle in container
        return not found if negate else found

    return member


_COMPARISONS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: _comparison(ast.Eq(), operator.eq),
    ast.NotEq: _comparison(ast.NotEq(), operator.ne),
    ast.Lt: _comparison(ast.Lt(), operator.lt),
    ast.LtE: _comparison(ast.LtE(), operator.le),
    ast.Gt: _comparison(ast.Gt(), operator.gt),
    ast.GtE: _comparison(ast.GtE(), operator.ge),
    ast.In: _membership(ast.In(), negate=False),
    ast.NotIn: _membership(ast.NotIn(), negate=True),
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}
"""Every comparison the language has, with the kind checks (``3 == "3"`` raises)."""


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


class _NotEvaluable(Exception):
    """Evaluation stopped by the language's rules (unknown name, too many iterations)."""


class _Run:
    """The bounds of one evaluation: build budget, iteration count, deadline, traced values.

    Compiled code reaches it as ``_ge_run``; user text cannot name it (names
    starting with ``_`` are rejected statically).
    """

    __slots__ = ("count", "deadline", "deadline_s", "left", "seen")

    def __init__(self, deadline_s: float) -> None:
        self.left = MAX_BUILT
        self.count = 0
        self.deadline_s = deadline_s
        self.deadline = time.monotonic() + deadline_s
        self.seen: dict[int, Any] = {}
        if deadline_s <= 0:  # else the deadline cannot have passed yet
            self.tick()

    def tick(self) -> None:
        """Raise once the evaluation has run past its deadline."""
        if time.monotonic() > self.deadline:
            raise CheckError(f"evaluation took longer than {self.deadline_s:g} s")

    def loop(self, iterable: Any) -> Iterator[Any]:
        """Iterate for a comprehension: at most MAX_ITERATIONS steps per evaluation, in total.

        The deadline is checked at every step, so no comprehension outlives it.
        """
        monotonic, deadline = time.monotonic, self.deadline
        for item in iterable:
            self.count += 1
            if self.count > MAX_ITERATIONS:
                raise _NotEvaluable("Comprehension generates too many elements")
            if monotonic() > deadline:
                raise CheckError(f"evaluation took longer than {self.deadline_s:g} s")
            yield item

    def watch(self, index: int, value: Any) -> Any:
        """Record a top-level operand's value for the trace."""
        self.seen[index] = value
        return value

    def spend(self, n: int) -> None:
        """Charge ``n`` built items to the evaluation's budget."""
        self.left -= n
        if n > MAX_SEQUENCE or self.left < 0:
            raise CheckError(f"the expression builds more than {MAX_SEQUENCE} items")
        self.tick()

    def mult(self, a: Any, b: Any) -> Any:
        """``a * b`` with bounded integers and bounded repetition."""
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
        """``a + b`` with concatenation charged to the budget."""
        if hasattr(a, "__len__") and hasattr(b, "__len__"):
            self.spend(_size(a, MAX_SEQUENCE) + _size(b, MAX_SEQUENCE))
        return a + b


def _attribute(base: Any, name: str, source: str) -> Any:
    """``base.name``: only an element's fields and geometry, never a Python attribute."""
    if not isinstance(base, ElementView):
        raise CheckError(
            f"'{source}': attributes can only be read from an element, "
            f"not from {type(base).__name__}"
        )
    return base.value(name)


def _chain(left: Any, *steps: tuple[Callable[[Any, Any], Any], Callable[[], Any]]) -> Any:
    """``a < b < c``: each operand evaluated once, in order, stopping at the first false."""
    result: Any = True
    right = left
    for compare, operand in steps:
        if not result:
            break
        before, right = right, operand()
        result = compare(before, right)
    return result


class _Views(list[ElementView]):
    """The views a :class:`ViewCache` built: never changed, so described once, not per check."""

    __slots__ = ("described",)
    described: str | None


def _describe(elements: list[Any]) -> str:
    """``describe_ids`` of the elements a trace names (cached for a :class:`ViewCache`'s lists)."""
    if type(elements) is not _Views:
        return describe_ids(elements)
    if elements.described is None:
        elements.described = describe_ids(elements)
    return elements.described


class ViewCache:
    """Element views built once and shared by the checks of one item.

    Views are read-only (their geometry is computed once, the same every time),
    so every check over the same state may read the same views. Keyed by the
    identity of the elements list, which the cache keeps alive; hold one only
    while the states it has seen are not changed (one item's rescore).
    """

    __slots__ = ("_built",)

    def __init__(self) -> None:
        self._built: dict[int, tuple[list[Element], _Views]] = {}

    def of(self, elements: list[Element]) -> list[ElementView]:
        """The views of ``elements``, built on the first request."""
        found = self._built.get(id(elements))
        if found is None or found[0] is not elements:
            views = _Views(views_of(elements))
            views.described = None
            found = self._built[id(elements)] = (elements, views)
        return found[1]


class StatesView(Mapping[str, list[ElementView]]):
    """``states["h1"]``: elements of other questions' grounding states, read-only."""

    __slots__ = ("_cache", "_pending", "_states")

    def __init__(self, states: Mapping[str, list[ElementView]]) -> None:
        self._states: dict[str, list[ElementView]] = dict(states)
        self._pending: dict[str, list[Element]] = {}
        self._cache: ViewCache | None = None

    @classmethod
    def of_elements(
        cls, states: Mapping[str, list[Element]], cache: ViewCache | None = None
    ) -> StatesView:
        """Views built on first use (most checks never read ``states``), from ``cache``.

        A check makes one per evaluation, so nothing is built until an expression
        reads ``states[...]`` (not even a cache when none is given).
        """
        view = cls.__new__(cls)
        view._pending = dict(states)
        view._states = {key: [] for key in view._pending}
        view._cache = cache
        return view

    def __getitem__(self, key: str) -> list[ElementView]:
        try:
            if key in self._pending:
                if self._cache is None:
                    self._cache = ViewCache()
                self._states[key] = self._cache.of(self._pending.pop(key))
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


# --------------------------------------------------------------------------- compilation

_RUN = "_ge_run"
_GLOBALS: dict[str, Any] = {
    "__builtins__": {},  # nothing of Python's is reachable, not even by accident
    "_ge_attr": _attribute,
    "_ge_chain": _chain,
    "_ge_pow": _limited_pow,
    "_ge_mod": _numeric_mod,
    **{f"_ge_cmp_{op.__name__}": fn for op, fn in _COMPARISONS.items()},
    **{f"_ge_f_{name}": fn for name, fn in FUNCTIONS.items()},
}
"""What compiled code sees besides the names: every helper under a ``_ge_`` name."""


def _load(name: str) -> ast.Name:
    return ast.Name(id=name, ctx=ast.Load())


def _helper(name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=_load(name), args=list(args), keywords=[])


def _run_method(name: str, *args: ast.expr) -> ast.Call:
    method = ast.Attribute(value=_load(_RUN), attr=name, ctx=ast.Load())
    return ast.Call(func=method, args=list(args), keywords=[])


def _thunk(body: ast.expr) -> ast.Lambda:
    none = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    return ast.Lambda(args=none, body=body)


def _target(node: ast.expr) -> ast.expr:
    if isinstance(node, ast.Name):
        return ast.Name(id=node.id, ctx=ast.Store())
    if isinstance(node, ast.Tuple):
        return ast.Tuple(elts=[_target(e) for e in node.elts], ctx=ast.Store())
    raise CheckError(f"loop target '{ast.unparse(node)}' must be a name")


class _Emitter:
    """Rewrites a validated tree so every bounded operation goes through a helper.

    Additions and products go through the run's budget, ``**`` and ``%`` through
    their bounded versions, comparisons through the kind checks, attributes
    through :func:`_attribute`, and every comprehension iterates through
    :meth:`_Run.loop` (eagerly, as a list, as the language always has). Names
    stay names: the element fields, ``elements`` and the rest are globals of
    the evaluation.
    """

    def __init__(self, watch: dict[int, int]) -> None:
        self.watch = watch

    def emit(self, node: ast.expr) -> ast.expr:
        out = self._emit(node)
        index = self.watch.get(id(node))
        if index is not None:
            out = _run_method("watch", ast.Constant(index), out)
        return out

    def _emit(self, node: ast.expr) -> ast.expr:
        emit = self.emit
        if isinstance(node, ast.Constant):
            return ast.Constant(node.value)
        if isinstance(node, ast.Name):
            return _load(node.id)
        if isinstance(node, ast.BoolOp):
            return ast.BoolOp(op=node.op, values=[emit(v) for v in node.values])
        if isinstance(node, ast.UnaryOp):
            return ast.UnaryOp(op=node.op, operand=emit(node.operand))
        if isinstance(node, ast.BinOp):
            left, right = emit(node.left), emit(node.right)
            if isinstance(node.op, ast.Add):
                return _run_method("add", left, right)
            if isinstance(node.op, ast.Mult):
                return _run_method("mult", left, right)
            if isinstance(node.op, ast.Pow):
                return _helper("_ge_pow", left, right)
            if isinstance(node.op, ast.Mod):
                return _helper("_ge_mod", left, right)
            return ast.BinOp(left=left, op=node.op, right=right)
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.IfExp):
            return ast.IfExp(test=emit(node.test), body=emit(node.body), orelse=emit(node.orelse))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            keywords = [ast.keyword(arg=k.arg, value=emit(k.value)) for k in node.keywords]
            args = [emit(a) for a in node.args]
            return ast.Call(func=_load(f"_ge_f_{node.func.id}"), args=args, keywords=keywords)
        if isinstance(node, ast.Attribute):
            source = ast.Constant(ast.unparse(node))
            return _helper("_ge_attr", emit(node.value), ast.Constant(node.attr), source)
        if isinstance(node, ast.Subscript):
            return ast.Subscript(value=emit(node.value), slice=emit(node.slice), ctx=ast.Load())
        if isinstance(node, ast.Slice):
            lower, upper, step = (
                None if n is None else emit(n) for n in (node.lower, node.upper, node.step)
            )
            return ast.Slice(lower=lower, upper=upper, step=step)
        if isinstance(node, ast.List | ast.Tuple):
            return type(node)(elts=[emit(e) for e in node.elts], ctx=ast.Load())
        if isinstance(node, ast.Set):
            return ast.Set(elts=[emit(e) for e in node.elts])
        if isinstance(node, ast.ListComp | ast.GeneratorExp):
            generators = [
                ast.comprehension(
                    target=_target(g.target),
                    iter=_run_method("loop", emit(g.iter)),
                    ifs=[emit(c) for c in g.ifs],
                    is_async=0,
                )
                for g in node.generators
            ]
            return ast.ListComp(elt=emit(node.elt), generators=generators)
        raise CheckError(f"{type(node).__name__} cannot be compiled")  # the whitelist forbids it

    def _compare(self, node: ast.Compare) -> ast.expr:
        left = self.emit(node.left)
        compares = [_load(f"_ge_cmp_{type(op).__name__}") for op in node.ops]
        if len(node.ops) == 1:
            return ast.Call(
                func=compares[0], args=[left, self.emit(node.comparators[0])], keywords=[]
            )
        steps = [
            ast.Tuple(elts=[fn, _thunk(self.emit(c))], ctx=ast.Load())
            for fn, c in zip(compares, node.comparators, strict=True)
        ]
        return _helper("_ge_chain", left, *steps)


@dataclass(frozen=True)
class _Compiled:
    code: types.CodeType
    labels: tuple[str, ...]
    """Source text of each traced operand, by watch index."""
    helpers: dict[str, Any]
    """The part of :data:`_GLOBALS` the code uses (a smaller scope to build per call)."""
    params: tuple[str, ...]
    """The language's names the text reads, in the order :attr:`function` takes them."""
    function: Callable[..., Any]
    """The same code as a function of ``params`` and the run, over a scope built once.

    Calling it builds no scope per evaluation, and its names are local variables;
    :attr:`code` is evaluated instead when the caller lacks one of ``params`` (the
    name is then an error only if evaluation reaches it, as the language says).
    """
    traces_elements: bool
    """The text mentions ``elements``, so its trace starts with their count and ids."""


def _code_names(code: types.CodeType) -> set[str]:
    """Every name a code object and the code nested in it (comprehensions) look up."""
    found = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _code_names(const)
    return found


@lru_cache(maxsize=1024)
def _compiled(text: str) -> _Compiled:
    """Validate once, then compile to a code object over the whitelisted names (cached)."""
    return _compile_validated(text, parse_expression(text))


def _compile_validated(text: str, tree: ast.Expression) -> _Compiled:
    """Compile a tree :func:`parse_expression` accepted (nothing else ever reaches here)."""
    watch = _watched(tree)
    source = text.strip()
    labels = tuple(ast.get_source_segment(source, n) or ast.unparse(n) for n in watch)
    body = _Emitter({id(n): i for i, n in enumerate(watch)}).emit(tree.body)
    module = ast.fix_missing_locations(ast.Expression(body=body))
    code = compile(module, "<check>", "eval")
    used = _code_names(code)
    helpers = {k: v for k, v in _GLOBALS.items() if k in used or k == "__builtins__"}
    params = tuple(name for name in NAMES if name in used)
    function = _as_function(body, params, helpers)
    return _Compiled(code, labels, helpers, params, function, "elements" in text)


def _as_function(body: ast.expr, params: tuple[str, ...], helpers: dict[str, Any]) -> Any:
    """``lambda <params>, _ge_run: <body>``, its globals only ``helpers`` (no builtins)."""
    args = ast.arguments(
        posonlyargs=[],
        args=[ast.arg(arg=name) for name in (*params, _RUN)],
        kwonlyargs=[],
        kw_defaults=[],
        defaults=[],
    )
    tree = ast.fix_missing_locations(ast.Expression(body=ast.Lambda(args=args, body=body)))
    return eval(compile(tree, "<check>", "eval"), dict(helpers))  # makes the function only


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


def evaluate_expression(
    text: str,
    names: dict[str, Any],
    *,
    deadline_s: float = DEADLINE_S,
) -> tuple[float, str]:
    """Validate, then evaluate an expression over ``names``; returns (score, trace).

    The text is validated and compiled once (cached by text); each call runs the
    code object with fresh bounds (:class:`_Run`).

    Raises:
        CheckError: rejected statically, or failed while evaluating.
    """
    compiled = _compiled(text)
    run = _Run(deadline_s)
    try:
        args = [names[name] for name in compiled.params]
    except KeyError:
        args = None  # a name the caller did not give: evaluated as a scope, to see if it is read
    try:
        if args is not None:
            value = compiled.function(*args, run)
        else:
            value = eval(compiled.code, {**names, **compiled.helpers, _RUN: run})
    except TypeMismatch as exc:
        raise CheckError(f"check {text!r}: {exc}") from None
    except CheckError:
        raise
    except _NotEvaluable as exc:
        raise CheckError(f"check {text!r} could not be evaluated: {exc}") from None
    except NameError as exc:  # a name the caller did not provide (e.g. no ``states``)
        raise CheckError(
            f"check {text!r} could not be evaluated: "
            f"'{exc.name}' is not defined for expression '{text}'"
        ) from None
    except (ArithmeticError, TypeError, ValueError, LookupError, RecursionError) as exc:
        raise CheckError(
            f"check {text!r} could not be evaluated: {type(exc).__name__}: {exc}"
        ) from None
    score = score_of(value, text)
    seen = run.seen
    shown = [f"{label}={_short(seen[i])}" for i, label in enumerate(compiled.labels) if i in seen]
    elements = names.get("elements")
    if compiled.traces_elements and isinstance(elements, list):
        shown.insert(0, f"elements: {len(elements)} ({_describe(elements)})")
    detail = f" with {'; '.join(shown)}" if shown else ""
    return score, f"{text}{detail} → {verdict_word(score)}"
