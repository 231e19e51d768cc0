"""Whether a reply yielded something usable: the cache keeps only replies that did.

A reply of the wrong shape, one whose every proposal was unusable, or one with
no verdict for any mark would replay the same failure at zero calls from the
cache; such a reply is neither stored nor served, so the call is asked again.
The same parsers that read replies for a run decide here.
"""

from __future__ import annotations

from groundeval.judges._grounding import parse_proposal
from groundeval.judges._parse import load_json
from groundeval.judges._protocol import JudgeCall
from groundeval.judges._questions import parse_answers
from groundeval.judges._verify import verdicts_by_mark


def usable_reply(call: JudgeCall, text: str) -> bool:
    """Whether ``text`` yielded something usable for ``call``.

    Usable: it answers at least one question, proposes something usable (or
    explicitly nothing), or rules on at least one mark. A call without the
    structure to tell (no question ids, no proposal context) needs only a JSON
    value.
    """
    if call.task == "questions" and call.questions:
        return bool(parse_answers(text, [q.id for q in call.questions]))
    if call.task == "propose" and {"helper", "box_convention", "size_wh"} <= set(call.context):
        return _usable_proposal(call, text)
    if call.task == "verify" and "elements" in call.context:
        try:
            by_mark = verdicts_by_mark(load_json(text), text)
        except ValueError:
            return False
        marks = call.context["elements"] or []
        return not marks or any(m.get("id") in by_mark for m in marks if isinstance(m, dict))
    return load_json(text) is not None


def _usable_proposal(call: JudgeCall, text: str) -> bool:
    ctx = call.context
    try:
        size = ctx["size_wh"]
        input_wh = ctx.get("input_wh")
        parsed = parse_proposal(
            text,
            helper=str(ctx["helper"]),
            fields=dict(ctx.get("fields") or {}),
            convention=str(ctx["box_convention"]),
            size_wh=(int(size[0]), int(size[1])),
            input_wh=(int(input_wh[0]), int(input_wh[1])) if input_wh else None,
        )
    except (ValueError, KeyError, TypeError, IndexError):
        return False
    return bool(parsed.elements) or not parsed.dropped
