"""Train the coin detector on in-style and out-of-style coin scenes (seeded).

``python -m groundeval.grounding.models.train_coins`` (needs the yolo extra)
renders the in-style ``benchmarks/synthetic`` coin scenes (clean, moderate and
hard) and out-of-style ``benchmarks/synthetic/outstyle`` coin scenes from a low
seed range, writes them as a YOLO dataset at 320 px (one class, ``coin``),
fine-tunes a yolov8n starting from ``--init`` (by default the shipped dice
weights; nothing is downloaded) for at most ``--hours`` of wall time,
validates, exports to ONNX and writes ``coins_yolov8n.pt``,
``coins_yolov8n.onnx`` and ``coins_yolov8n.json`` (the figures the model card
quotes) in ``--out``.

Everything but the defaults is :mod:`.train_dice`'s: the same seeds
(``TRAIN_SEED0`` / ``VAL_SEED0`` up for in-style scenes, ``--outstyle-seed0``
= 1100 / ``OUTSTYLE_VAL_SEED0`` = 1900 up for out-of-style scenes, which must
stay below the reported range, 700000 up), the same training and export code.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from groundeval.grounding.models import train_dice

HERE = Path(__file__).resolve().parent
STEM = "coins_yolov8n"
KIND = "coins"
CLASS_NAME = "coin"


def parser() -> argparse.ArgumentParser:
    """The command line (train_dice's options, with coin defaults)."""
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--hours", type=float, default=0.75, help="wall-time cap (0: none)")
    p.add_argument("--warmup-epochs", type=float, default=0.0)
    p.add_argument("--train-per-difficulty", type=int, default=60, help="in-style scenes")
    p.add_argument("--val-per-difficulty", type=int, default=5, help="in-style scenes")
    p.add_argument("--train-outstyle", type=int, default=120, help="out-of-style scenes")
    p.add_argument("--val-outstyle", type=int, default=15, help="out-of-style scenes")
    p.add_argument(
        "--outstyle-seed0",
        type=int,
        default=train_dice.OUTSTYLE_SEED0,
        help="first out-of-style seed",
    )
    p.add_argument(
        "--init",
        default=str(HERE / f"{train_dice.STEM}.pt"),
        help="weights to start from (default: the shipped dice detector)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2, help="torch threads")
    p.add_argument("--workers", type=int, default=0, help="data-loader processes")
    p.add_argument("--close-mosaic", type=int, default=5, help="last epochs without mosaic")
    p.add_argument("--work", default=None, help="keep dataset and epoch checkpoints here")
    p.add_argument("--out", default=str(HERE), help="folder for the weights (default: here)")
    p.add_argument(
        "--export", default=None, help="only export this checkpoint (needs --work's dataset)"
    )
    return p


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    p = parser()
    args = p.parse_args(argv)
    args.train_random = args.val_random = 0  # train_dice's randomised scenes are dice only
    if args.export:
        if not args.work:
            p.error("--export needs --work (the dataset to validate on)")
        out = Path(args.out).resolve()
        out.mkdir(parents=True, exist_ok=True)
        data = Path(args.work).resolve() / "data" / "data.yaml"
        metrics = train_dice.export(Path(args.export), out, data, args.threads, STEM)
        print(json.dumps(metrics, indent=1))
        return
    figures = train_dice.train(args, KIND, CLASS_NAME, STEM)
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
