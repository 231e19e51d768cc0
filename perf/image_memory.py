"""Memory and time to load one tiny-file, huge-pixel image (issue 12.18).

Writes test images into a temporary folder (a 16-bit grayscale PNG of
7,070 x 7,070 that compresses to ~100 KB, the same size as 8-bit RGB and RGBA),
then, in a fresh process per run (``--repeat`` runs), loads each with
``groundeval.grounding.load_image`` as the runner does for every image of an
item, and then asks for its BGR pixels as a pixel-reading proposer does. Prints,
per image: file size, median seconds to load and to make the pixels, the peak RSS
of the process (VmHWM) and the peak above its RSS before loading, and what an item
holds afterwards (RSS above the start: with the pixels, and for a judge-only item
without them).

    .venv/bin/python perf/image_memory.py            # 7,070 x 7,070, 5 repeats
    .venv/bin/python perf/image_memory.py --side 4000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

CHILD = r"""
import json, sys, time
from pathlib import Path
import numpy as np, PIL, cv2  # imported before the baseline so it counts only loading
from groundeval.grounding._images import load_image

def status_mb(key):
    # VmHWM is this process's own high-water mark; ru_maxrss would carry the
    # parent's peak across fork + exec
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return 0.0

before = status_mb("VmRSS")
start = time.perf_counter()
loaded = load_image(Path(sys.argv[1]))
load_s = time.perf_counter() - start
held_bytes_mb = status_mb("VmRSS") - before
start = time.perf_counter()
pixels = loaded.bgr
pixels_s = time.perf_counter() - start
print(json.dumps({"load_s": load_s, "pixels_s": pixels_s, "peak_mb": status_mb("VmHWM"),
                  "before_mb": before, "held_bytes_mb": held_bytes_mb,
                  "held_pixels_mb": status_mb("VmRSS") - before}))
"""


def make_images(folder: Path, side: int) -> dict[str, Path]:
    """Flat images with a few marks: large in pixels, small on disk."""
    yy, xx = np.mgrid[0:side, 0:side]
    marks = ((xx // 500 + yy // 500) % 2 == 0) & ((xx % 500) < 40)
    gray16 = np.where(marks, 60000, 1000).astype(np.uint16)
    rgb = np.zeros((side, side, 3), np.uint8)
    rgb[marks] = (200, 30, 30)
    alpha = np.dstack([rgb, np.full((side, side), 255, np.uint8)])
    alpha[marks, 3] = 128
    paths = {
        "png16_gray": folder / "gray16.png",
        "png8_rgb": folder / "rgb.png",
        "png8_rgba": folder / "rgba.png",
    }
    Image.fromarray(gray16).save(paths["png16_gray"])
    Image.fromarray(rgb).save(paths["png8_rgb"])
    Image.fromarray(alpha, "RGBA").save(paths["png8_rgba"])
    return paths


def measure(path: Path, repeat: int) -> dict[str, float]:
    runs = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, check=True
        )
        runs.append(json.loads(out.stdout))
    return {
        "file_kb": path.stat().st_size / 1024,
        "load_s": statistics.median(r["load_s"] for r in runs),
        "pixels_s": statistics.median(r["pixels_s"] for r in runs),
        "peak_rss_mb": max(r["peak_mb"] for r in runs),
        "added_rss_mb": max(r["peak_mb"] - r["before_mb"] for r in runs),
        "held_bytes_mb": max(r["held_bytes_mb"] for r in runs),
        "held_pixels_mb": max(r["held_pixels_mb"] for r in runs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--side", type=int, default=7070, help="image width = height, pixels")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = make_images(Path(tmp), args.side)
        print(f"{args.side} x {args.side} = {args.side**2 / 1e6:.1f} Mpx, {args.repeat} runs each")
        print(f"{'image':<11} {'file KB':>7} {'load s':>7} {'pixels s':>8} {'peak RSS MB':>11} "
              f"{'peak added':>10} {'held, judge':>11} {'held, pixels':>12}")  # fmt: skip
        for name, path in paths.items():
            m = measure(path, args.repeat)
            print(f"{name:<11} {m['file_kb']:>7.0f} {m['load_s']:>7.2f} {m['pixels_s']:>8.2f} "
                  f"{m['peak_rss_mb']:>11.0f} {m['added_rss_mb']:>10.0f} "
                  f"{m['held_bytes_mb']:>11.0f} {m['held_pixels_mb']:>12.0f}")  # fmt: skip


if __name__ == "__main__":
    main()
