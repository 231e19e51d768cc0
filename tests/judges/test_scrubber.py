"""Secrets echoed in pieces are redacted too: split across lines, cut off or JSON-escaped."""

from __future__ import annotations

from groundeval.judges._middleware import FRAGMENT_CHARS, REDACTED, Scrubber

KEY = "AIzaSyD3mo-K3y_0123456789abcdefghijklmnop"  # 40 characters, like a Gemini key


def test_whole_key_is_one_mark() -> None:
    assert Scrubber([KEY])(f"key={KEY}.") == f"key={REDACTED}."


def test_key_split_in_two_halves_is_redacted() -> None:
    half = len(KEY) // 2
    text = Scrubber([KEY])(f"first {KEY[:half]}\nthen {KEY[half:]} done")
    assert KEY[:half] not in text and KEY[half:] not in text
    assert text == f"first {REDACTED}\nthen {REDACTED} done"


def test_cut_off_key_is_redacted_but_short_pieces_stay() -> None:
    scrub = Scrubber([KEY])
    assert scrub(f"reply ends with {KEY[:FRAGMENT_CHARS]}") == f"reply ends with {REDACTED}"
    short = KEY[: FRAGMENT_CHARS - 1]
    assert scrub(f"prefix {short}") == f"prefix {short}"  # too short to be the key
    assert scrub("AIza is how Gemini keys start") == "AIza is how Gemini keys start"


def test_json_escaped_key_is_redacted() -> None:
    key = 'sk-proj/"quoted"\\slash-0123456789'
    escaped = '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'
    assert Scrubber([key])(f'{{"k": {escaped}}}') == f'{{"k": "{REDACTED}"}}'


def test_no_secrets_leaves_text_alone() -> None:
    assert Scrubber([None, "", "abc"])("abc stays") == "abc stays"
