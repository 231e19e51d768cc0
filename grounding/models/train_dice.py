"""Train the example dice detector on domain-randomised dice scenes (seeded).

``python -m groundeval.grounding.models.train_dice`` (needs the yolo extra)
renders domain-randomised dice scenes (:mod:`._train_render`: any face and pip
colour, pip sizes, photographs from scikit-image and procedural textures as
backgrounds, shadows, lighting, blur, JPEG, perspective) plus a share of the
in-style ``benchmarks/synthetic`` dice scenes and (optionally) out-of-style
``benchmarks/synthetic/outstyle`` dice scenes from a low seed range, writes
them as a YOLO dataset at 320 px (one class, ``die``), fine-tunes a yolov8n starting from ``--init``
(by default the previous shipped weights; ``yolov8n.yaml`` trains from random
init; nothing is downloaded) for at most ``--hours`` of wall time, validates,
exports to ONNX and writes ``dice_yolov8n.pt``, ``dice_yolov8n.onnx`` and
``dice_yolov8n.json`` (the figures the model card quotes) in ``--out``.

Training scenes use seeds from ``TRAIN_SEED0`` up, validation from
``VAL_SEED0`` up: every lower seed is held out for tests and benchmarks, and
the out-of-style benchmark's reported seeds (``outstyle.REPORT_SEED0`` = 700000
up) are refused as training data: ``--outstyle`` scenes come from
``--outstyle-seed0`` (default 1100) up and must stay below 700000.

``--work DIR`` keeps the dataset and a checkpoint per epoch (``epochN.pt``) in DIR
so a long run can be graded epoch by epoch; ``--export CKPT`` skips training and
writes the shipped files from one such checkpoint.
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

from groundeval.benchmarks.synthetic import SCENES, Scene
from groundeval.grounding.models import _train_render
from groundeval.grounding.proposers._ultralytics_env import import_ultralytics, use_threads

HERE = Path(__file__).resolve().parent
DIFFICULTIES = ("clean", "moderate", "hard")
TRAIN_SEED0 = 900_000
VAL_SEED0 = 910_000
OUTSTYLE_SEED0 = 1_100
"""First out-of-style training seed (1000-1099 stay for grading candidates)."""
OUTSTYLE_VAL_SEED0 = 1_900
WIDTH_PX = 320
"""Training images are the 640 x 480 scenes scaled to 320 px wide."""
STEM = "dice_yolov8n"


def dice_scene(difficulty: str, seed: int) -> Scene:
    """One synthetic dice scene, exactly as the benchmark renders it."""
    return benchmark_scene("dice", difficulty, seed)


def benchmark_scene(kind: str, difficulty: str, seed: int) -> Scene:
    """One in-style synthetic scene of ``kind``, exactly as the benchmark renders it."""
    return SCENES[kind](
        f"{kind}-{difficulty}-{seed}", difficulty, seed, np.random.default_rng(seed)
    )


def yolo_label(scene: Scene, key: str = "dice") -> str:
    """One ``0 cx cy w h`` line per die (``truth[key]``), normalised to the image size."""
    h, w = scene.image_bgr.shape[:2]
    boxes = []
    for die in scene.truth[key]:
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


def outstyle_seeds(seed0: int, n: int) -> range:
    """Out-of-style training seeds; the reported range (700000 up) is refused."""
    from groundeval.benchmarks.synthetic import outstyle

    if n and (seed0 < 0 or seed0 + n > outstyle.REPORT_SEED0):
        raise ValueError(
            f"out-of-style training seeds {seed0}..{seed0 + n - 1} must stay in "
            f"0..{outstyle.REPORT_SEED0 - 1} (the reported range starts at {outstyle.REPORT_SEED0})"
        )
    return range(seed0, seed0 + n)


def write_split(
    root: Path,
    split: str,
    seed0: int,
    per_difficulty: int,
    randomised: int = 0,
    outstyle_seeds: range = range(0),
    kind: str = "dice",
) -> int:
    """Render the split's scenes; return how many.

    ``randomised`` domain-randomised scenes, ``per_difficulty`` in-style scenes of
    each difficulty and one out-of-style scene per seed in ``outstyle_seeds``, all of
    scene ``kind`` (the truth's box list is ``truth[kind]``).
    """
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
            scene = benchmark_scene(kind, difficulty, seed)
            _save(root, split, f"{difficulty}_{seed}", scene.image_bgr, yolo_label(scene, kind))
            count += 1
    if outstyle_seeds:
        from groundeval.benchmarks.synthetic import outstyle

        for seed in outstyle_seeds:
            scene = outstyle.generate(kind, seed)
            _save(root, split, f"outstyle_{seed}", scene.image_bgr, yolo_label(scene, kind))
            count += 1
    return count


def write_dataset(
    root: Path,
    train_per_difficulty: int,
    val_per_difficulty: int,
    train_random: int = 0,
    val_random: int = 0,
    train_outstyle: range = range(0),
    val_outstyle: range = range(0),
    kind: str = "dice",
    class_name: str = "die",
) -> Path:
    """The whole dataset and its ``data.yaml``; returns the YAML path."""
    write_split(
        root, "train", TRAIN_SEED0, train_per_difficulty, train_random, train_outstyle, kind
    )
    write_split(root, "val", VAL_SEED0, val_per_difficulty, val_random, val_outstyle, kind)
    yaml_path = root / "data.yaml"
    yaml_path.write_text(
        f"path: {root.as_posix()}\ntrain: images/train\nval: images/val\n"
        f"names:\n  0: {class_name}\n"
    )
    return yaml_path


def train(
    args: argparse.Namespace, kind: str = "dice", class_name: str = "die", stem: str = STEM
) -> dict[str, Any]:
    """Render, train, validate, export; return the figures for the model card.

    ``kind``/``class_name``/``stem``: the scenes, the one class and the shipped files' stem.
    """
    ultralytics = import_ultralytics()
    YOLO = ultralytics.YOLO

    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    train_out = outstyle_seeds(args.outstyle_seed0, args.train_outstyle)
    val_out = outstyle_seeds(OUTSTYLE_VAL_SEED0, args.val_outstyle)
    with tempfile.TemporaryDirectory(prefix=f"groundeval-{kind}-") as tmp:
        work = Path(args.work).resolve() if args.work else Path(tmp)
        t0 = time.perf_counter()
        data = write_dataset(
            work / "data",
            args.train_per_difficulty,
            args.val_per_difficulty,
            args.train_random,
            args.val_random,
            train_out,
            val_out,
            kind,
            class_name,
        )
        render_s = time.perf_counter() - t0
        print(f"rendered the dataset in {render_s:.0f} s", flush=True)
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
            print(f"epoch {len(epoch_s)} done in {epoch_s[-1]} s", flush=True)

        model.add_callback("on_train_epoch_start", lambda _: marks.update(t=time.perf_counter()))
        model.add_callback("on_train_epoch_end", tick)  # once per epoch (fit-end also fires
        # after the final validation)
        t1 = time.perf_counter()
        model.train(
            data=str(data), epochs=args.epochs, imgsz=WIDTH_PX, batch=16, device="cpu",
            workers=args.workers, seed=args.seed, deterministic=True, pretrained=bool(init_sha),
            amp=False, plots=False, val=False, time=args.hours or None,
            warmup_epochs=args.warmup_epochs, close_mosaic=args.close_mosaic, save_period=1,
            project=str(work / "runs"), name=kind, exist_ok=True, verbose=False,
        )  # fmt: skip
        train_s = time.perf_counter() - t1
        # the final epoch's weights (--export ships another epoch's checkpoint); validated once
        last = work / "runs" / kind / "weights" / "last.pt"
        metrics = export(last, out, data, args.threads, stem)
    import torch

    figures = {
        "model": "yolov8n",
        "init": Path(init).name,
        "init_sha256": init_sha,
        "classes": {"0": class_name},
        "imgsz": WIDTH_PX,
        "epochs_asked": args.epochs,
        "epochs_run": len(epoch_s),
        "hours_limit": args.hours,
        "warmup_epochs": args.warmup_epochs,
        "close_mosaic": args.close_mosaic,
        "workers": args.workers,
        "seed": args.seed,
        "train_images": args.train_per_difficulty * len(DIFFICULTIES)
        + args.train_random
        + len(train_out),
        "train_in_style": args.train_per_difficulty * len(DIFFICULTIES),
        "train_randomised": args.train_random,
        "train_outstyle": len(train_out),
        "val_images": args.val_per_difficulty * len(DIFFICULTIES) + args.val_random + len(val_out),
        "val_randomised": args.val_random,
        "val_outstyle": len(val_out),
        "train_seeds_per_difficulty": [TRAIN_SEED0, TRAIN_SEED0 + args.train_per_difficulty - 1],
        "train_seeds_randomised": [TRAIN_SEED0, TRAIN_SEED0 + args.train_random - 1],
        "train_seeds_outstyle": [train_out.start, train_out.stop - 1] if train_out else [],
        "val_seeds_per_difficulty": [VAL_SEED0, VAL_SEED0 + args.val_per_difficulty - 1],
        "val_seeds_randomised": [VAL_SEED0, VAL_SEED0 + args.val_random - 1],
        "val_seeds_outstyle": [val_out.start, val_out.stop - 1] if val_out else [],
        "threads": threads,
        "render_seconds": round(render_s, 1),
        "train_seconds": round(train_s, 1),
        "epoch_seconds": epoch_s,
        **metrics,
        "versions": {
            "ultralytics": ultralytics.__version__,
            "torch": torch.__version__,
            "python": platform.python_version(),
        },
    }
    (out / f"{stem}.json").write_text(json.dumps(figures, indent=1) + "\n")
    return figures


def export(
    checkpoint: Path, out: Path, data: Path, threads: int | None, stem: str = STEM
) -> dict[str, float]:
    """Ship one checkpoint: ``{stem}.pt`` (optimizer stripped) and ``.onnx`` in ``out``.

    Validates it on ``data`` and returns mAP50 and mAP50-95.
    """
    ultralytics = import_ultralytics()
    from ultralytics.utils.torch_utils import strip_optimizer

    pt = out / f"{stem}.pt"
    shutil.copyfile(checkpoint, pt)
    strip_optimizer(str(pt))
    final = ultralytics.YOLO(str(pt))
    use_threads(final, threads)
    with tempfile.TemporaryDirectory(prefix="groundeval-dice-val-") as tmp:
        metrics = final.val(data=str(data), imgsz=WIDTH_PX, batch=16, device="cpu", plots=False,
                            project=tmp, name="val", verbose=False)  # fmt: skip
    onnx_path = Path(final.export(format="onnx", imgsz=WIDTH_PX, simplify=False, device="cpu"))
    if onnx_path.resolve() != (out / f"{stem}.onnx"):  # the export lands beside the .pt
        shutil.copyfile(onnx_path, out / f"{stem}.onnx")
    return {
        "val_map50": round(float(metrics.box.map50), 4),
        "val_map50_95": round(float(metrics.box.map), 4),
    }


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
    parser.add_argument("--train-outstyle", type=int, default=0, help="out-of-style scenes")
    parser.add_argument("--val-outstyle", type=int, default=0, help="out-of-style scenes")
    parser.add_argument(
        "--outstyle-seed0", type=int, default=OUTSTYLE_SEED0, help="first out-of-style seed"
    )
    parser.add_argument(
        "--init", default=str(HERE / f"{STEM}.pt"), help="weights to start from, or yolov8n.yaml"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: all)")
    parser.add_argument("--workers", type=int, default=0, help="data-loader processes")
    parser.add_argument("--close-mosaic", type=int, default=10, help="last epochs without mosaic")
    parser.add_argument("--work", default=None, help="keep dataset and epoch checkpoints here")
    parser.add_argument("--out", default=str(HERE), help="folder for the weights (default: here)")
    parser.add_argument(
        "--export", default=None, help="only export this checkpoint (needs --work's dataset)"
    )
    args = parser.parse_args(argv)
    if args.export:
        if not args.work:
            parser.error("--export needs --work (the dataset to validate on)")
        out = Path(args.out).resolve()
        out.mkdir(parents=True, exist_ok=True)
        data = Path(args.work).resolve() / "data" / "data.yaml"
        print(json.dumps(export(Path(args.export), out, data, args.threads), indent=1))
        return
    figures = train(args)
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
