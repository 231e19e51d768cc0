"""``groundeval author`` with ``--plugins``: what a plugin registers joins the catalogue.

A plugin file registers a proposer, a check, a scoring protocol and a drafting
judge backend; the installed ``groundeval`` command (a fresh process, as a user
runs it) must show all four in the catalogue, send them to the drafting judge,
accept a draft that names them, and review and apply it only when the plugin is
loaded again. The catalogue's protocols and judges come from their registries.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from groundeval.judges import judge_names
from groundeval.programs import protocol_names
from groundeval.programs._catalogue import build_catalogue, catalogue_text

CLI = str(Path(sys.executable).parent / "groundeval")

PLUGIN = textwrap.dedent(
    '''
    import json
    from pathlib import Path

    import cv2

    from groundeval.grounding import CVProposer, register_proposer
    from groundeval.judges import JudgeError, JudgeReply, register_judge
    from groundeval.programs import register_check, register_protocol
    from groundeval.programs.scoring import ItemScore
    from groundeval.state import Element, Usage


    @register_proposer("my.bright")
    class Bright(CVProposer):
        """Boxes around bright blobs (grey level above the threshold)."""

        defaults = {"threshold": 200}

        def detect(self, image_bgr, spec, params):
            grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
            mask = (grey > params["threshold"]).astype("uint8")
            contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            return [
                Element(id=i, kind="box", xyxy_px=[x, y, x + w, y + h])
                for i, (x, y, w, h) in enumerate(
                    sorted(cv2.boundingRect(c) for c in contours), start=1
                )
            ]


    @register_check("at_least")
    def at_least(elements, state, *, n: int = 1):
        """At least n elements were found."""
        return float(len(elements) >= n), f"{len(elements)} found, need {n}"


    @register_protocol("mine")
    class ShareOfPasses:
        """Score = share of questions passed (a plugin's protocol)."""

        def score_item(self, program, decisions, gate_failed):
            passed = sum(d.outcome == "pass" for d in decisions)
            return ItemScore("scored", {"share": passed / max(len(decisions), 1)})

        def summarize(self, results):
            return {"items": len(results)}

        def summary_rows(self, results):
            return [self.summarize(results)]


    DRAFT = {
        "scoring": "mine",
        "hard": [
            {
                "id": "h1",
                "ask": "Are there at least three stars?",
                "ground": {"helper": "boxes", "target": "each star", "proposer": "my.bright",
                           "params": {"threshold": 180}},
                "check": {"name": "at_least", "args": {"n": 3}},
            }
        ],
    }


    @register_judge("drafter")
    class Drafter:
        """`--judge drafter:<file>`: writes one fixed draft, keeping each prompt in <file>."""

        def __init__(self, path):
            self.spec, self.model, self.params, self.path = f"drafter:{path}", "d", {}, path

        async def generate(self, call):
            if call.task != "author":
                raise JudgeError(f"drafter only drafts, not {call.task!r}")
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps({"prompt": call.prompt, "schema": call.response_schema}) + "\\n")
            return JudgeReply(json.dumps(DRAFT), Usage(calls=1))
    '''
)


def _env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI", "GOOGLE", "OPENAI"))}
    env.pop("PYTHONPATH", None)
    env.update(HOME=str(folder), XDG_CACHE_HOME=str(folder / "cache"))
    return env


def _cli(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CLI, *args], cwd=folder, env=_env(folder), capture_output=True, text=True, timeout=300,
        check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    here = tmp_path_factory.mktemp("author-plugins")
    (here / "plug.py").write_text(PLUGIN, encoding="utf-8")
    (here / "prompts.txt").write_text("Three bright stars in a dark sky.\n", encoding="utf-8")
    return here


def test_catalogue_lists_protocols_and_judges_from_their_registries() -> None:
    catalogue = build_catalogue()
    protocols = {p["name"]: p["about"] for p in catalogue["protocols"]}
    assert sorted(protocols) == protocol_names()
    assert {"grounded", "checklist", "rubric", "dependency"} <= set(protocols)
    assert protocols["grounded"].startswith("relaxed = gate x")
    judges = {j["name"]: j["about"] for j in catalogue["judges"]}
    assert sorted(judges) == judge_names()
    assert "gemini:<model>" in judges["gemini"] and "replay:<cassette" in judges["replay"]
    text = catalogue_text()
    assert '"protocols":[' in text and '"judges":[' in text


def test_plugin_entries_join_the_catalogue_command(folder: Path) -> None:
    bare = _cli(folder, "author", "catalogue")
    assert bare.returncode == 0, bare.stderr
    assert "my.bright" not in bare.stdout and "drafter" not in bare.stdout
    done = _cli(folder, "author", "catalogue", "--plugins", "plug.py")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    proposers = {p["name"]: p for p in data["proposers"]}
    assert "threshold" in json.dumps(proposers["my.bright"]["params"])
    checks = {c["name"]: c for c in data["checks"]}
    assert checks["at_least"]["about"] == "At least n elements were found."
    assert checks["at_least"]["args"]["n"]["default"] == 1
    protocols = {p["name"]: p["about"] for p in data["protocols"]}
    assert protocols["mine"] == "Score = share of questions passed (a plugin's protocol)."
    judges = {j["name"]: j["about"] for j in data["judges"]}
    assert judges["drafter"].startswith("`--judge drafter:<file>`")
    broken = folder / "broken.py"
    broken.write_text("raise RuntimeError('half written')\n", encoding="utf-8")
    bad = _cli(folder, "author", "catalogue", "--plugins", "broken.py")
    assert bad.returncode == 2 and "broken.py" in bad.stderr and "half written" in bad.stderr


def test_a_draft_naming_plugin_entries_validates_reviews_and_applies(folder: Path) -> None:
    calls = folder / "calls.jsonl"
    no_plugin = _cli(folder, "author", "prompts.txt", "--judge", f"drafter:{calls}",
                     "--out", "drafts", "--no-cache")  # fmt: skip
    assert no_plugin.returncode == 1 and "unknown judge spec 'drafter:" in no_plugin.stderr
    done = _cli(folder, "author", "--plugins", "plug.py", "prompts.txt",
                "--judge", f"drafter:{calls}", "--out", "drafts", "--no-cache")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "authored 1 (0 kept from before), failed 0, calls 1" in done.stdout
    (call,) = [json.loads(line) for line in calls.read_text().split("\n") if line]
    for name in ("my.bright", "at_least", "At least n elements were found.", '"mine"'):
        assert name in call["prompt"], name
    assert "hard" in call["schema"]["properties"]
    (program,) = [json.loads(x) for x in (folder / "drafts/programs.jsonl").read_text().split("\n")
                  if x]  # fmt: skip
    assert program["status"] == "draft" and program["scoring"] == "mine"
    assert program["hard"][0]["ground"]["proposer"] == "my.bright"

    unloaded = _cli(folder, "author", "review", "drafts")
    assert unloaded.returncode == 1 and "does not validate" in unloaded.stderr
    assert "mine" in unloaded.stderr or "my.bright" in unloaded.stderr
    review = _cli(folder, "author", "review", "drafts", "--plugins", "plug.py")
    assert review.returncode == 0, review.stderr
    page = (folder / "drafts/review/index.html").read_text(encoding="utf-8")
    assert "my.bright" in page and "At least n elements were found." in page

    decisions = folder / "decisions.jsonl"
    row = {"id": program["id"], "decision": "approve", "reviewer": "Ann", "weights": {"h1": 2}}
    decisions.write_text(json.dumps(row) + "\n", encoding="utf-8")
    refused = _cli(folder, "author", "apply", "drafts", "decisions.jsonl")
    assert refused.returncode == 1 and "does not validate" in refused.stderr
    applied = _cli(folder, "author", "apply", "drafts", "decisions.jsonl", "--checks", "plug.py")
    assert applied.returncode == 0, applied.stderr
    assert "approved 1, rejected 0, still draft 0" in applied.stdout
    (approved,) = [json.loads(x) for x in (folder / "drafts/programs.jsonl").read_text().split("\n")
                   if x]  # fmt: skip
    assert approved["status"] == "approved" and approved["hard"][0]["weight"] == 2.0
