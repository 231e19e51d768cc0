"""Train the example dice detector on domain-randomised dice scenes (seeded).

``python -m groundeval.grounding.models.train_dice`` (needs the yolo extra)
renders domain-randomised dice scenes (:mod:`._train_render`: any face and pip
colour, pip sizes, photographs from scikit-image and procedural textures as
backgrounds, shadows, lighting, blur, JPEG, perspective) plus a share of the
in-style ``benchmarks/synthetic`` dice scenes, writes them as a YOLO dataset at
320 px (one class, ``die``), fine-tunes a yolov8n starting from ``--init``
(by default the previous shipped weights; ``yolov8n.yaml`` trains from random
init; nothing is downloaded) for at most ``--hours`` of wall time, validates,
exports to ONNX and writes ``dice_yolov8n.pt``, ``dice_yolov8n.onnx`` and
``dice_yolov8n.json`` (the figures the model card quotes) in ``--out``.

Training scenes use seeds from ``TRAIN_SEED0`` up, validation from
``VAL_SEED0`` up: every lower seed is held out for tests and benchmarks, and
the out-of-style benchmark (``benchmarks/synthetic/outstyle``) is a different
renderer the detector never sees.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from groundeval.benchmarks.synthetic._common import Scene
from groundeval.grounding.models import _train_render
from groundeval.grounding.proposers._ultralytics_env import import_ultralytics, use_threads

HERE = Path(__file__).resolve().parent
DIFFICULTIES = ("clean", "moderate", "hard")
TRAIN_SEED0 = 900_000
VAL_SEED0 = 910_000
WIDTH_PX = 320
"""Training images are the 640 x 480 scenes scaled to 320 px wide."""
STEM = "dice_yolov8n"


def dice_scene(difficulty: str, seed: int) -> Scene:
    """One synthetic dice scene, exactly as the benchmark renders it."""
    import numpy as np

    from groundeval.benchmarks.synthetic import _dice

    return _dice.make(f"dice-{difficulty}-{seed}", difficulty, seed, np.random.default_rng(seed))


def yolo_label(scene: Scene) -> str:
    """One ``0 cx cy w h`` line per die, normalised to the image size."""
    h, w = scene.image_bgr.shape[:2]
    boxes = []
    for die in scene.truth["dice"]:
        x1, y1, x2, y2 = (float(v) for v in die["xyxy_px"])
        boxes.append([max(x1, 0), max(y1, 0), min(x2, w), min(y2, h)])
    return box_label(boxes, h, w)


def box_label(boxes: list[list[float]], h: int, w: int) -> str:
    """One ``0 cx cy w h`` line per box in pixels, normalised to the image size."""
    lines = []
    for x1, y1, x2, y2 in boxes:
        cx, cy = (x1 + x2) / 2 / w, (y1 + y2) / 2 / h
        lines.append(f"0 {cx:.6f} {cy:.6f} {(x2 - x1) / w:.6f} {(y2 - y1) / h:.6f}")
    return "\n".join(lines) + ("\n" if lines else "")


def _save(root: Path, split: str, name: str, image: np.ndarray, label: str) -> None:
    h, w = image.shape[:2]
    small = cv2.resize(image, (WIDTH_PX, round(h * WIDTH_PX / w)), interpolation=cv2.INTER_AREA)
    cv2.imwrite(str(root / "images" / split / f"{name}.png"), small)
    (root / "labels" / split / f"{name}.txt").write_text(label)


def write_split(
    root: Path, split: str, seed0: int, per_difficulty: int, randomised: int = 0
) -> int:
    """Render ``randomised`` scenes and ``per_difficulty`` in-style scenes of each difficulty."""
    (root / "images" / split).mkdir(parents=True, exist_ok=True)
    (root / "labels" / split).mkdir(parents=True, exist_ok=True)
    count = 0
    for seed in range(seed0, seed0 + randomised):
        image, boxes, _ = _train_render.scene(seed)
        h, w = image.shape[:2]
        _save(root, split, f"random_{seed}", image, box_label(boxes, h, w))
        count += 1
    for difficulty in DIFFICULTIES:
        for seed in range(seed0, seed0 + per_difficulty):
            scene = dice_scene(difficulty, seed)
            _save(root, split, f"{difficulty}_{seed}", scene.image_bgr, yolo_label(scene))
            count += 1
    return count


def write_dataset(
    root: Path,
    train_per_difficulty: int,
    val_per_difficulty: int,
    train_random: int = 0,
    val_random: int = 0,
) -> Path:
    """The whole dataset and its ``data.yaml``; returns the YAML path."""
    write_split(root, "train", TRAIN_SEED0, train_per_difficulty, train_random)
    write_split(root, "val", VAL_SEED0, val_per_difficulty, val_random)
    yaml_path = root / "data.yaml"
    yaml_path.write_text(
        f"path: {root.as_posix()}\ntrain: images/train\nval: images/val\nnames:\n  0: die\n"
    )
    return yaml_path


def train(args: argparse.Namespace) -> dict[str, Any]:
    """Render, train, validate, export; return the figures for the model card."""
    ultralytics = import_ultralytics()
    YOLO = ultralytics.YOLO

    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="groundeval-dice-") as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        data = write_dataset(
            work / "data",
            args.train_per_difficulty,
            args.val_per_difficulty,
            args.train_random,
            args.val_random,
        )
        render_s = time.perf_counter() - t0
        init = args.init if args.init.endswith(".yaml") else str(Path(args.init).resolve())
        init_sha = "" if init.endswith(".yaml") else _sha256(Path(init))
        model = YOLO(init)
        threads = use_threads(model, args.threads)
        epoch_s: list[float] = []
        marks = {"t": time.perf_counter()}

        def tick(_: Any) -> None:
            now = time.perf_counter()
            epoch_s.append(round(now - marks["t"], 2))
            marks["t"] = now

        model.add_callback("on_train_epoch_start", lambda _: marks.update(t=time.perf_counter()))
        model.add_callback("on_fit_epoch_end", tick)
        t1 = time.perf_counter()
        model.train(
            data=str(data), epochs=args.epochs, imgsz=WIDTH_PX, batch=16, device="cpu",
            workers=0, seed=args.seed, deterministic=True, pretrained=bool(init_sha), amp=False,
            plots=False, val=False, time=args.hours or None, warmup_epochs=args.warmup_epochs,
            project=str(work / "runs"), name="dice", exist_ok=True, verbose=False,
        )  # fmt: skip
        train_s = time.perf_counter() - t1
        # the final epoch's weights (mAP is still rising at the last one of a short run);
        # validated once, below
        last = work / "runs" / "dice" / "weights" / "last.pt"
        shutil.copyfile(last, out / f"{STEM}.pt")
        final = YOLO(str(out / f"{STEM}.pt"))
        use_threads(final, args.threads)
        metrics = final.val(data=str(data), imgsz=WIDTH_PX, batch=16, device="cpu", plots=False,
                            project=str(work / "runs"), name="val", verbose=False)  # fmt: skip
        onnx_path = Path(final.export(format="onnx", imgsz=WIDTH_PX, simplify=False, device="cpu"))
        if onnx_path.resolve() != (out / f"{STEM}.onnx"):  # the export lands beside the .pt
            shutil.copyfile(onnx_path, out / f"{STEM}.onnx")
    import torch

    figures = {
        "model": "yolov8n",
        "init": Path(init).name,
        "init_sha256": init_sha,
        "classes": {"0": "die"},
        "imgsz": WIDTH_PX,
        "epochs_asked": args.epochs,
        "epochs_run": len(epoch_s),
        "hours_limit": args.hours,
        "warmup_epochs": args.warmup_epochs,
        "seed": args.seed,
        "train_images": args.train_per_difficulty * len(DIFFICULTIES) + args.train_random,
        "train_randomised": args.train_random,
        "val_images": args.val_per_difficulty * len(DIFFICULTIES) + args.val_random,
        "val_randomised": args.val_random,
        "train_seeds_per_difficulty": [TRAIN_SEED0, TRAIN_SEED0 + args.train_per_difficulty - 1],
        "val_seeds_per_difficulty": [VAL_SEED0, VAL_SEED0 + args.val_per_difficulty - 1],
        "threads": threads,
        "render_seconds": round(render_s, 1),
        "train_seconds": round(train_s, 1),
        "epoch_seconds": epoch_s,
        "val_map50": round(float(metrics.box.map50), 4),
        "val_map50_95": round(float(metrics.box.map), 4),
        "versions": {
            "ultralytics": ultralytics.__version__,
            "torch": torch.__version__,
            "python": platform.python_version(),
        },
    }
    (out / f"{STEM}.json").write_text(json.dumps(figures, indent=1) + "\n")
    return figures


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--hours", type=float, default=0.42, help="wall-time cap (0: none)")
    parser.add_argument(
        "--warmup-epochs", type=float, default=0.0, help="0 when fine-tuning trained weights"
    )
    parser.add_argument("--train-per-difficulty", type=int, default=8, help="in-style scenes")
    parser.add_argument("--val-per-difficulty", type=int, default=5, help="in-style scenes")
    parser.add_argument("--train-random", type=int, default=200, help="randomised scenes")
    parser.add_argument("--val-random", type=int, default=30, help="randomised scenes")
    parser.add_argument(
        "--init", default=str(HERE / f"{STEM}.pt"), help="weights to start from, or yolov8n.yaml"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: all)")
    parser.add_argument("--out", default=str(HERE), help="folder for the weights (default: here)")
    figures = train(parser.parse_args(argv))
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
