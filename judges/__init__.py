"""Judges: one backend protocol, its backends, middleware, and the shared question layer.

``build_judge("gemini:gemini-2.5-flash", cache_dir=..., record=...)`` is what a run
uses; ``make_judge`` builds a bare backend. Coordinates from any judge are
converted here, once, into pixels of the original image.
"""

from groundeval.judges._account import DEFAULT_PRICES, Account, Price, load_prices
from groundeval.judges._cache import DiskCache
from groundeval.judges._cassette import CassetteWriter, ReplayJudge, read_cassette
from groundeval.judges._coords import (
    CONVENTIONS,
    QWEN_MAX_PIXELS,
    QWEN_MIN_PIXELS,
    BoxConvention,
    box_to_xyxy_px,
    guess_convention,
    point_to_px,
    px_to_point,
    qwen25_input_wh,
    xyxy_px_to_box,
)
from groundeval.judges._gemini import GeminiJudge, thinking_settings
from groundeval.judges._grounding import (
    ParsedProposal,
    build_propose_prompt,
    parse_proposal,
    propose_schema,
)
from groundeval.judges._middleware import (
    AccountingLayer,
    CacheLayer,
    LimitLayer,
    RecordingLayer,
    RepeatLayer,
    RetryLayer,
    Scrubber,
)
from groundeval.judges._offline import OfflineJudge
from groundeval.judges._openai import OpenAIJudge
from groundeval.judges._parse import load_json, parse_reply
from groundeval.judges._protocol import (
    ImagePart,
    Judge,
    JudgeCall,
    JudgeError,
    JudgeRefusal,
    JudgeReply,
    QuestionRef,
    TransientJudgeError,
)
from groundeval.judges._questions import ANSWERS_SCHEMA, Answer, ask_questions, parse_answers
from groundeval.judges._ray_limits import start_rate_budget, with_cluster_limit
from groundeval.judges._registry import (
    build_judge,
    judge_names,
    make_judge,
    register_judge,
    wrap_judge,
)
from groundeval.judges._scripted import ScriptedJudge
from groundeval.judges._usable import usable_reply
from groundeval.judges._verify import VERIFY_SCHEMA, build_verify_prompt, parse_verification

__all__ = [
    "ANSWERS_SCHEMA",
    "CONVENTIONS",
    "DEFAULT_PRICES",
    "QWEN_MAX_PIXELS",
    "QWEN_MIN_PIXELS",
    "VERIFY_SCHEMA",
    "Account",
    "AccountingLayer",
    "Answer",
    "BoxConvention",
    "CacheLayer",
    "CassetteWriter",
    "DiskCache",
    "GeminiJudge",
    "ImagePart",
    "Judge",
    "JudgeCall",
    "JudgeError",
    "JudgeRefusal",
    "JudgeReply",
    "LimitLayer",
    "OfflineJudge",
    "OpenAIJudge",
    "ParsedProposal",
    "Price",
    "QuestionRef",
    "RecordingLayer",
    "RepeatLayer",
    "ReplayJudge",
    "RetryLayer",
    "ScriptedJudge",
    "Scrubber",
    "TransientJudgeError",
    "ask_questions",
    "box_to_xyxy_px",
    "build_judge",
    "build_propose_prompt",
    "build_verify_prompt",
    "guess_convention",
    "judge_names",
    "load_json",
    "load_prices",
    "make_judge",
    "parse_answers",
    "parse_proposal",
    "parse_reply",
    "parse_verification",
    "point_to_px",
    "propose_schema",
    "px_to_point",
    "qwen25_input_wh",
    "read_cassette",
    "register_judge",
    "start_rate_budget",
    "thinking_settings",
    "usable_reply",
    "with_cluster_limit",
    "wrap_judge",
    "xyxy_px_to_box",
]
