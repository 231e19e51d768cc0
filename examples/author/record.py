"""Re-record examples/author/cassette.jsonl from the prepared drafts in replies.jsonl.

The cassette lets ``groundeval author examples/author/prompts.jsonl --judge
replay:examples/author/cassette.jsonl --out drafts`` run with no key and no
network. Its replies were written by hand (replies.jsonl: four prompts get a
first draft with a typical mistake and a corrected second draft), not by a model.
A drafting call's key covers the catalogue, so registering a new proposer or
check changes the prompts: re-record then. ``catalogue.json`` keeps the catalogue
and response schema the cassette was recorded with, so tests/programs/test_author.py can
say what changed.

    .venv/bin/python examples/author/record.py
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from groundeval.judges import wrap_judge
from groundeval.programs._author import author_all, read_prompts, response_schema
from groundeval.programs._author_script import read_replies, scripted_author
from groundeval.programs._catalogue import build_catalogue

HERE = Path(__file__).resolve().parent


def record(folder: Path = HERE, cassette: Path | None = None) -> Path:
    """Draft every example prompt with the scripted judge, recording each call."""
    target = cassette or folder / "cassette.jsonl"
    target.unlink(missing_ok=True)
    recorded = {"catalogue": build_catalogue(), "response_schema": response_schema()}
    (folder / "catalogue.json").write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    judge = wrap_judge(scripted_author(read_replies(folder / "replies.jsonl")), record=target)
    outcomes = asyncio.run(author_all(judge, read_prompts(folder / "prompts.jsonl")))
    failed = [o.prompt.id for o in outcomes if o.program is None]
    if failed:
        raise SystemExit(f"prepared drafts that never validate: {failed}")
    return target


if __name__ == "__main__":
    print(record())
