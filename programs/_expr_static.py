"""Static validation of check expressions: a whitelist walk of the Python AST.

Nothing here evaluates anything. :func:`parse_expression` parses the text and
rejects, each with a message saying why, every construct outside the language
(see its docstring); :mod:`groundeval.programs._expressions` then evaluates what
passed, with its own runtime bounds.
"""

from __future__ import annotations

import ast
import io
import math
import tokenize
from functools import lru_cache
from typing import Any

from groundeval.programs._views import CheckError

MAX_CHARS = 2000
MAX_NODES = 500
MAX_NESTING = 20
"""Deepest bracket nesting allowed in the text."""
MAX_AST_DEPTH = 60
MAX_EXPONENT = 100
MAX_SEQUENCE = 10_000
"""Longest string or list an expression may build (repetition, concatenation)."""
MAX_BUILT = 100_000
"""Most items all repetitions and concatenations of one evaluation may build together."""
MAX_INT_BITS = 10_000
MAX_LITERAL = 1000
"""Longest string literal and most items in a list/tuple/set literal."""
MAX_GENERATORS = 3
MAX_ITERATIONS = 10_000
"""Most comprehension steps one evaluation may take, all comprehensions together."""
DEADLINE_S = 1.0
"""Wall-clock bound of one evaluation, checked at its start, at every comprehension step
and whenever it builds a sequence."""

NAMES: tuple[str, ...] = ("elements", "image_w", "image_h", "state_status", "states")


FUNCTION_NAMES: tuple[str, ...] = (
    "count",
    "len",
    "sum",
    "min",
    "max",
    "abs",
    "round",
    "any",
    "all",
    "sorted",
    "set",
    "iou",
    "inside",
    "left_of",
    "above",
    "distance",
    "hits",
    "norm",
)
"""Functions an expression may call; the evaluator binds each to a bounded implementation."""

_FORBIDDEN_CALLS = {
    "open": "no file access",
    "eval": "no evaluation of code",
    "exec": "no evaluation of code",
    "compile": "no evaluation of code",
    "getattr": "no attribute access by name",
    "setattr": "no attribute access by name",
    "globals": "no access to the interpreter",
    "locals": "no access to the interpreter",
    "vars": "no access to the interpreter",
    "type": "no access to types",
    "input": "no I/O",
    "print": "no I/O",
}

BINARY_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
UNARY_OPS = (ast.Not, ast.USub, ast.UAdd)
COMPARE_OPS = (
    ast.Eq,
    ast.NotEq,
    ast.Lt,
    ast.LtE,
    ast.Gt,
    ast.GtE,
    ast.In,
    ast.NotIn,
    ast.Is,
    ast.IsNot,
)
_ALLOWED = (
    ast.Expression,
    ast.BoolOp,
    ast.And,
    ast.Or,
    ast.BinOp,
    ast.UnaryOp,
    ast.Compare,
    ast.IfExp,
    ast.Call,
    ast.keyword,
    ast.Name,
    ast.Load,
    ast.Constant,
    ast.Attribute,
    ast.Subscript,
    ast.Slice,
    ast.List,
    ast.Tuple,
    ast.Set,
    ast.ListComp,
    ast.GeneratorExp,
    ast.comprehension,
    *BINARY_OPS,
    *UNARY_OPS,
    *COMPARE_OPS,
)

_NODE_WORDS = {
    ast.Lambda: "lambda",
    ast.NamedExpr: "assignment (:=)",
    ast.JoinedStr: "f-string",
    ast.Starred: "star unpacking",
    ast.Dict: "dict literal",
    ast.DictComp: "dict comprehension",
    ast.SetComp: "set comprehension",
    ast.Await: "await",
    ast.Yield: "yield",
}


def _reject(problem: str) -> CheckError:
    return CheckError(f"check expression rejected: {problem}")


def _nesting(text: str) -> int:
    depth = deepest = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.OP and tok.string in "([{":
                depth += 1
                deepest = max(deepest, depth)
            elif tok.type == tokenize.OP and tok.string in ")]}":
                depth -= 1
    except (tokenize.TokenError, SyntaxError):
        pass  # ast.parse reports the syntax error with a position
    return deepest


def _fold(node: ast.AST) -> float | None:
    """Value of a numeric constant sub-expression (as a float), ``None`` if not constant."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return None if isinstance(node.value, bool) else float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        v = _fold(node.operand)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult | ast.Pow):
        a, b = _fold(node.left), _fold(node.right)
        if a is None or b is None:
            return None
        try:
            if isinstance(node.op, ast.Pow):
                return math.inf if abs(b) > MAX_EXPONENT else float(abs(a) ** b)
            if isinstance(node.op, ast.Mult):
                return a * b
            return a + b if isinstance(node.op, ast.Add) else a - b
        except (OverflowError, ZeroDivisionError):
            return math.inf
    return None


def _is_sequence_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    return isinstance(node, ast.List | ast.Tuple | ast.Set | ast.ListComp | ast.GeneratorExp)


class _Walker:
    """Static whitelist check of one parsed expression."""

    def __init__(self) -> None:
        self.nodes = 0

    def visit(self, node: ast.AST, scope: frozenset[str], depth: int) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _reject(f"more than {MAX_NODES} syntax nodes; split the check")
        if depth > MAX_AST_DEPTH:
            raise _reject(f"nested deeper than {MAX_AST_DEPTH} levels")
        if not isinstance(node, _ALLOWED):
            word = _NODE_WORDS.get(type(node), type(node).__name__)
            raise _reject(f"{word} is not allowed")
        handler = getattr(self, f"_{type(node).__name__}", None)
        if handler is not None:
            handler(node, scope, depth)
            return
        for child in ast.iter_child_nodes(node):
            self.visit(child, scope, depth + 1)

    def _Name(self, node: ast.Name, scope: frozenset[str], depth: int) -> None:
        name = node.id
        if name.startswith("_"):
            raise _reject(f"name {name!r}: names starting with '_' are not allowed")
        if name in scope or name in NAMES:
            return
        if name in FUNCTION_NAMES:
            raise _reject(f"function {name!r} must be called, not used as a value")
        raise _reject(f"unknown name {name!r}; available: {', '.join(NAMES)}")

    def _Constant(self, node: ast.Constant, scope: frozenset[str], depth: int) -> None:
        value = node.value
        if not isinstance(value, int | float | str | bool | type(None)):
            raise _reject(f"{type(value).__name__} literals are not allowed")
        if isinstance(value, str) and len(value) > MAX_LITERAL:
            raise _reject(f"string literal longer than {MAX_LITERAL} characters")

    def _Attribute(self, node: ast.Attribute, scope: frozenset[str], depth: int) -> None:
        if node.attr.startswith("_"):
            raise _reject(f"attribute {node.attr!r}: names starting with '_' are not allowed")
        base = node.value
        if isinstance(base, ast.Attribute):
            raise _reject(
                f"attribute chain '{ast.unparse(node)}': only one field of an element "
                "can be read (e.pips)"
            )
        bound = isinstance(base, ast.Name) and base.id in scope
        if not (bound or isinstance(base, ast.Subscript)):
            raise _reject(
                f"attribute access '{ast.unparse(node)}': only an element's fields can be read "
                "(e.pips for e in elements, or elements[0].pips)"
            )
        self.visit(base, scope, depth + 1)

    def _Call(self, node: ast.Call, scope: frozenset[str], depth: int) -> None:
        func = node.func
        if isinstance(func, ast.Lambda):
            raise _reject("lambda is not allowed")
        if not isinstance(func, ast.Name):
            raise _reject(f"only named functions can be called, not '{ast.unparse(func)}'")
        name = func.id
        if name.startswith("_"):
            raise _reject(f"function {name!r}: names starting with '_' are not allowed")
        if name in _FORBIDDEN_CALLS:
            raise _reject(f"function {name!r} is not allowed ({_FORBIDDEN_CALLS[name]})")
        if name not in FUNCTION_NAMES:
            raise _reject(f"unknown function {name!r}; allowed: {', '.join(FUNCTION_NAMES)}")
        for kw in node.keywords:
            if kw.arg is None:
                raise _reject("'**' keyword unpacking is not allowed")
            if kw.arg.startswith("_"):
                raise _reject(f"keyword {kw.arg!r}: names starting with '_' are not allowed")
            self.visit(kw.value, scope, depth + 1)
        for arg in node.args:
            self.visit(arg, scope, depth + 1)

    def _BinOp(self, node: ast.BinOp, scope: frozenset[str], depth: int) -> None:
        if isinstance(node.op, ast.Pow):
            exponent = _fold(node.right)
            if exponent is not None and abs(exponent) > MAX_EXPONENT:
                raise _reject(f"exponent in '{ast.unparse(node)}' exceeds {MAX_EXPONENT}")
        if isinstance(node.op, ast.Mod) and _is_sequence_literal(node.left):
            raise _reject("'%' string formatting is not allowed")
        if isinstance(node.op, ast.Mult):
            for seq, times in ((node.left, node.right), (node.right, node.left)):
                n = _fold(times)
                if _is_sequence_literal(seq) and n is not None and abs(n) > MAX_SEQUENCE:
                    raise _reject(f"repetition in '{ast.unparse(node)[:60]}' is too large")
        self.visit(node.left, scope, depth + 1)
        self.visit(node.op, scope, depth + 1)
        self.visit(node.right, scope, depth + 1)

    def _List(
        self, node: ast.List | ast.Tuple | ast.Set, scope: frozenset[str], depth: int
    ) -> None:
        if len(node.elts) > MAX_LITERAL:
            raise _reject(f"literal with more than {MAX_LITERAL} items")
        for child in node.elts:
            self.visit(child, scope, depth + 1)

    _Tuple = _List
    _Set = _List

    def _ListComp(
        self, node: ast.ListComp | ast.GeneratorExp, scope: frozenset[str], depth: int
    ) -> None:
        if len(node.generators) > MAX_GENERATORS:
            raise _reject(f"more than {MAX_GENERATORS} 'for' clauses in one comprehension")
        inner = scope
        for gen in node.generators:
            self.nodes += 1
            if gen.is_async:
                raise _reject("async comprehensions are not allowed")
            self.visit(gen.iter, inner, depth + 1)
            inner = inner | self._targets(gen.target)
            for cond in gen.ifs:
                self.visit(cond, inner, depth + 1)
        self.visit(node.elt, inner, depth + 1)

    _GeneratorExp = _ListComp

    def _targets(self, target: ast.AST) -> frozenset[str]:
        if isinstance(target, ast.Name):
            if target.id.startswith("_"):
                raise _reject(f"name {target.id!r}: names starting with '_' are not allowed")
            if target.id in NAMES or target.id in FUNCTION_NAMES:
                raise _reject(f"loop variable {target.id!r} hides a built-in name")
            return frozenset({target.id})
        if isinstance(target, ast.Tuple):
            out: frozenset[str] = frozenset()
            for elt in target.elts:
                out |= self._targets(elt)
            return out
        raise _reject(f"loop target '{ast.unparse(target)}' must be a name")


# --------------------------------------------------------------------------- static types

_NAME_KINDS: dict[str, str] = {
    "elements": "list",
    "image_w": "number",
    "image_h": "number",
    "state_status": "str",
}
_CALL_KINDS: dict[str, str] = {
    "count": "number",
    "len": "number",
    "sum": "number",
    "abs": "number",
    "round": "number",
    "iou": "number",
    "distance": "number",
    "any": "bool",
    "all": "bool",
    "inside": "bool",
    "left_of": "bool",
    "above": "bool",
    "norm": "str",
    "sorted": "list",
    "set": "set",
}
"""What each function returns, where it is always the same kind (min, max, hits vary)."""
_KIND_WORDS = {
    "number": "a number",
    "bool": "a boolean",
    "str": "a string",
    "list": "a list",
    "set": "a set",
    "none": "None",
}
_ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _family(kind: str) -> str:
    """Kinds that compare and combine with each other: booleans are numbers."""
    return "number" if kind == "bool" else kind


def comparable(left: str, right: str, op: ast.cmpop) -> bool:
    """Whether values of two kinds can be compared with ``op`` meaningfully.

    ``==``/``!=`` between different kinds is always False/True in Python, so it is
    a mistake (``count(elements) == "5"``), except against None (``hits`` may
    return None). Ordering needs two numbers, two strings or two lists (or sets).
    """
    a, b = _family(left), _family(right)
    if isinstance(op, ast.Eq | ast.NotEq):
        return a == b or "none" in (a, b)
    if isinstance(op, _ORDERING):
        return a == b and a in ("number", "str", "list", "set")
    return True


def _mismatch(node: ast.AST, left: str, right: str, what: str, joiner: str = "with") -> CheckError:
    hint = ""
    if what == "tests equality of" and {_family(left), _family(right)} == {"number", "str"}:
        hint = "; a number is never equal to text (write 5, not '5')"
    return _reject(
        f"{ast.unparse(node)[:80]} -- {what} {_KIND_WORDS[left]} {joiner} "
        f"{_KIND_WORDS[right]}{hint}"
    )


def _binop_kind(node: ast.BinOp, left: str | None, right: str | None) -> str | None:
    """The kind of ``left op right``; rejects the combinations Python would refuse or misuse."""
    if left is None or right is None:
        return None
    a, b = _family(left), _family(right)
    op = node.op
    if a == "none" or b == "none":
        raise _mismatch(node, left, right, "does arithmetic on", "and")
    if isinstance(op, ast.Add):
        if a == b and a in ("number", "str", "list"):
            return a
        raise _mismatch(node, left, right, "adds", "and")
    if isinstance(op, ast.Mult):
        if a == b == "number":
            return "number"
        if {a, b} in ({"str", "number"}, {"list", "number"}) and "bool" not in (left, right):
            return "str" if "str" in (a, b) else "list"
        raise _mismatch(node, left, right, "multiplies", "by")
    if isinstance(op, ast.Sub) and a == b == "set":
        return "set"
    if a == b == "number":
        return "number"
    raise _mismatch(node, left, right, "does arithmetic on", "and")


def _literal_items_kind(node: ast.AST, kinds: dict[int, str | None]) -> str | None:
    """The one kind of every item of a list/tuple/set literal, if they share one."""
    if not isinstance(node, ast.List | ast.Tuple | ast.Set) or not node.elts:
        return None
    found = {kinds.get(id(e)) for e in node.elts}
    if len(found) != 1 or None in found:
        return None
    return _family(found.pop() or "")


def value_kind(value: Any) -> str | None:
    """The language's kind of a value (None: not one of them); static and run time agree."""
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


def _own_kind(node: ast.AST, kinds: dict[int, str | None]) -> str | None:
    """The kind of a node's value when it is known without running anything."""
    if isinstance(node, ast.Expression):
        return kinds.get(id(node.body))
    if isinstance(node, ast.Constant):
        return value_kind(node.value)
    if isinstance(node, ast.Name):
        return _NAME_KINDS.get(node.id)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return _CALL_KINDS.get(node.func.id)
    if isinstance(node, ast.BinOp):
        return _binop_kind(node, kinds.get(id(node.left)), kinds.get(id(node.right)))
    if isinstance(node, ast.UnaryOp):
        operand = kinds.get(id(node.operand))
        if isinstance(node.op, ast.Not):
            return "bool"
        if operand is not None and _family(operand) != "number":
            raise _reject(f"{ast.unparse(node)[:80]} -- negates {_KIND_WORDS[operand]}")
        return "number"
    if isinstance(node, ast.Compare):
        _check_compare(node, kinds)
        return "bool"
    if isinstance(node, ast.IfExp):
        body, orelse = kinds.get(id(node.body)), kinds.get(id(node.orelse))
        return body if body == orelse else None
    if isinstance(node, ast.List | ast.Tuple | ast.ListComp):
        return "list"
    if isinstance(node, ast.Set):
        return "set"
    return None


def _check_compare(node: ast.Compare, kinds: dict[int, str | None]) -> None:
    operands = [node.left, *node.comparators]
    for op, left, right in zip(node.ops, operands, operands[1:], strict=False):
        a, b = kinds.get(id(left)), kinds.get(id(right))
        if isinstance(op, ast.In | ast.NotIn):
            items = _literal_items_kind(right, kinds)
            if b == "str" and a is not None and _family(a) != "str":
                raise _mismatch(node, a, b, "looks for", "in")
            if a is not None and items is not None and "none" not in (a, items):
                if _family(a) != items:
                    raise _mismatch(node, a, items, "looks for", "among items that are all")
            if b is not None and _family(b) in ("number", "bool", "none"):
                raise _reject(f"{ast.unparse(node)[:80]} -- looks inside {_KIND_WORDS[b]}")
            continue
        if a is not None and b is not None and not comparable(a, b, op):
            eq = isinstance(op, ast.Eq | ast.NotEq)
            raise _mismatch(node, a, b, "tests equality of" if eq else "orders", "and")


def check_types(tree: ast.AST) -> None:
    """Reject comparisons and arithmetic whose operand kinds are known and do not fit.

    Kinds are known for literals, the names ``elements``/``image_w``/``image_h``/
    ``state_status`` and functions that always return one kind (``count`` is a
    number, ``norm`` a string); element fields are known only when evaluated, so
    the evaluator checks those (see :mod:`groundeval.programs._expressions`).

    Raises:
        CheckError: e.g. ``count(elements) == "5"`` (a number is never equal to text).
    """
    kinds: dict[int, str | None] = {}
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:  # post-order without recursion: children's kinds first
        node, expanded = stack.pop()
        if expanded:
            kinds[id(node)] = _own_kind(node, kinds)
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in ast.iter_child_nodes(node))


@lru_cache(maxsize=512)
def parse_expression(text: str) -> ast.Expression:
    """Parse and statically validate a check expression; nothing is evaluated.

    Rejected, each with a message saying why: text over 2,000 characters; bracket
    nesting over 20; more than 500 syntax nodes; any name or attribute starting
    with ``_``; unknown names and functions; ``open``/``eval``/``exec``/``getattr``
    and friends; lambdas, walrus, f-strings, star unpacking, dicts; attribute access
    on anything but an element (``e.pips``, ``elements[0].pips``) and attribute
    chains; constant exponents over 100; repeating a string or list literal more
    than 10,000 times; string literals over 1,000 characters; comparisons and
    arithmetic between kinds that cannot meet (``count(elements) == "5"``, see
    :func:`check_types`).

    Raises:
        CheckError: the expression is not allowed or does not parse.
    """
    if not isinstance(text, str) or not text.strip():
        raise _reject("the expression is empty")
    if len(text) > MAX_CHARS:
        raise _reject(f"the expression has {len(text)} characters; at most {MAX_CHARS}")
    if "\x00" in text:
        raise _reject("the expression contains a NUL character")
    nesting = _nesting(text)
    if nesting > MAX_NESTING:
        raise _reject(f"brackets nested {nesting} deep; at most {MAX_NESTING}")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise _reject(f"not a single Python expression ({exc.msg}, column {exc.offset})") from None
    except (RecursionError, MemoryError, ValueError) as exc:
        raise _reject(f"cannot be parsed ({type(exc).__name__})") from None
    _Walker().visit(tree, frozenset(), 0)
    check_types(tree)
    return tree
