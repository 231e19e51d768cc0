"""Milliseconds per image of the shipped dice detector: .onnx (onnxruntime) vs .pt (ultralytics).

Times ``YoloProposer.detections`` (letterbox + network + NMS, boxes in original
pixels) on held-out 640 x 480 synthetic dice scenes, at one thread and at all
cores, after a warm-up; median of ``--runs`` images. The .pt rows need the yolo
extra and are left out without it.

    .venv/bin/python perf/detector_speed.py [--runs 40]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import time

from groundeval.grounding.models.train_dice import dice_scene
from groundeval.grounding.proposers.yolo import YoloProposer


def median_ms(weights: str, threads: int, images: list, warmup: int = 3) -> float:
    """Median detection time for one weights file at one thread count."""
    proposer = YoloProposer()
    params = {**proposer.defaults, "weights": weights, "threads": threads}
    for image in images[:warmup]:
        proposer.detections(image, params)
    samples = []
    for image in images:
        t0 = time.perf_counter()
        proposer.detections(image, params)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1000


def main() -> None:
    """Print ms/image per weights format and thread count."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    images = [
        dice_scene(("clean", "moderate", "hard")[i % 3], i).image_bgr for i in range(args.runs)
    ]
    formats = ["dice_yolov8n.onnx"]
    if importlib.util.find_spec("ultralytics") is not None:
        formats.append("dice_yolov8n.pt")
    cores = os.cpu_count() or 1
    print(f"median ms/image over {args.runs} held-out 640x480 images (network input 320)")
    print(f"{'weights':<22}{'1 thread':>10}{f'{cores} threads':>12}")
    for weights in formats:
        one = median_ms(weights, 1, images)
        every = median_ms(weights, cores, images)
        print(f"{weights:<22}{one:10.1f}{every:12.1f}")


if __name__ == "__main__":
    main()
