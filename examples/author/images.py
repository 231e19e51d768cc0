"""Write the synthetic scenes the example prompts describe, and a manifest to grade them.

Six of the example prompts (ids like ``clock-clean-00000``) are the prompts of
synthetic scenes with exact truth; this writes those images, ``manifest.jsonl``
for ``groundeval run --manifest`` and ``truth.jsonl`` (every question's expected
outcome), so the drafted programs can be run offline and checked:

    .venv/bin/python examples/author/images.py gen/
    groundeval run drafts/programs.jsonl --manifest gen/manifest.jsonl --out runs/drafts \\
        --allow-drafts
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from groundeval.benchmarks.synthetic import AXIS_SCENES, SCENES, encode_png, generate
from groundeval.programs._author import read_prompts

HERE = Path(__file__).resolve().parent


def write_images(out: Path, prompts: Path = HERE / "prompts.jsonl") -> list[str]:
    """Images, manifest and truth for every prompt whose id names a synthetic scene."""
    out.mkdir(parents=True, exist_ok=True)
    manifest, truth, ids = [], [], []
    for prompt in read_prompts(prompts):
        scene, _, rest = prompt.id.partition("-")
        difficulty, _, seed = rest.partition("-")
        if scene not in {**SCENES, **AXIS_SCENES} or not seed.isdigit():
            continue
        made = generate(scene, difficulty, int(seed))
        if made.programs[0].prompt != prompt.prompt:
            raise SystemExit(f"{prompt.id}: the prompt differs from the scene's own prompt")
        (out / f"{prompt.id}.png").write_bytes(encode_png(made.image_bgr))
        manifest.append({"id": prompt.id, "images": [f"{prompt.id}.png"]})
        truth.append({"id": prompt.id, "answers": made.truth["answers"]})
        ids.append(prompt.id)
    (out / "manifest.jsonl").write_text("".join(json.dumps(m) + "\n" for m in manifest))
    (out / "truth.jsonl").write_text("".join(json.dumps(t) + "\n" for t in truth))
    return ids


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: images.py OUT_DIR")
    print(", ".join(write_images(Path(sys.argv[1]))))
