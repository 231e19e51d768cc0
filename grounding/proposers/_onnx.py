"""The torch-free detector path: a YOLOv8/YOLO11 export run with onnxruntime and NMS.

An ultralytics ``.onnx`` export carries its class names and input size in the
model metadata, so the core install (onnxruntime, OpenCV, supervision; no torch,
no ultralytics) can run it: letterbox the image to the input size, run the
session, decode the ``(1, 4 + classes, anchors)`` output (centre-x, centre-y,
width, height, then one score per class), drop low scores, suppress overlaps
per class with OpenCV's NMS and map the boxes back to pixels of the original
image. Sessions are cached per file (path, size and modification time) and
thread count, because creating one costs far more than running it.
"""

from __future__ import annotations

import ast
import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import supervision as sv

PAD_VALUE = 114
"""Grey the letterbox border is filled with (what ultralytics trains with)."""


class WeightsError(ValueError):
    """A weights file is missing, unreadable or not what the proposer expects."""


@dataclass(frozen=True)
class Letterbox:
    """How an image was fitted into the network input: scale, then padding."""

    scale: float
    pad_x: float
    pad_y: float

    def to_original(self, xyxy: np.ndarray) -> np.ndarray:
        """Boxes in network-input pixels -> boxes in pixels of the original image."""
        out = xyxy.astype(np.float64, copy=True)
        out[:, [0, 2]] = (out[:, [0, 2]] - self.pad_x) / self.scale
        out[:, [1, 3]] = (out[:, [1, 3]] - self.pad_y) / self.scale
        return out


def letterbox(image_bgr: np.ndarray, size_hw: tuple[int, int]) -> tuple[np.ndarray, Letterbox]:
    """Resize keeping the aspect ratio and pad to ``size_hw`` with the training grey."""
    h, w = image_bgr.shape[:2]
    out_h, out_w = size_hw
    scale = min(out_h / h, out_w / w)
    new_w, new_h = round(w * scale), round(h * scale)
    resized = cv2.resize(image_bgr, (new_w, new_h), interpolation=cv2.INTER_LINEAR)
    pad_x, pad_y = (out_w - new_w) / 2, (out_h - new_h) / 2
    top, left = round(pad_y - 0.1), round(pad_x - 0.1)
    canvas = np.full((out_h, out_w, 3), PAD_VALUE, np.uint8)
    canvas[top : top + new_h, left : left + new_w] = resized
    return canvas, Letterbox(scale=scale, pad_x=float(left), pad_y=float(top))


def decode(
    output: np.ndarray, *, conf: float, iou: float, max_det: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """YOLOv8 raw output -> (xyxy, confidence, class_id) after score filter and per-class NMS."""
    if output.ndim != 3 or output.shape[0] != 1 or output.shape[1] < 5:
        raise ValueError(f"expected a (1, 4 + classes, anchors) output, got {output.shape}")
    pred = output[0].T
    scores_all = pred[:, 4:]
    class_id = scores_all.argmax(axis=1)
    scores = scores_all[np.arange(len(pred)), class_id]
    keep = scores >= conf
    pred, scores, class_id = pred[keep], scores[keep], class_id[keep]
    if len(pred) == 0:
        return np.zeros((0, 4)), np.zeros(0), np.zeros(0, dtype=int)
    cx, cy, bw, bh = pred[:, 0], pred[:, 1], pred[:, 2], pred[:, 3]
    xywh = np.stack([cx - bw / 2, cy - bh / 2, bw, bh], axis=1)
    picked = cv2.dnn.NMSBoxesBatched(
        xywh.tolist(), scores.tolist(), class_id.tolist(), conf, iou, top_k=max_det
    )
    idx = np.asarray(picked, dtype=int).reshape(-1)[:max_det]
    xyxy = np.concatenate([xywh[idx, :2], xywh[idx, :2] + xywh[idx, 2:]], axis=1)
    return xyxy, scores[idx].astype(float), class_id[idx].astype(int)


class OnnxDetector:
    """An exported detector: ``detect(image_bgr) -> sv.Detections`` in original pixels."""

    def __init__(self, path: Path, threads: int) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        try:
            self.session = ort.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise WeightsError(f"{path}: not a readable ONNX model: {exc}") from exc
        self.path = path
        meta = self.session.get_modelmeta().custom_metadata_map
        inp = self.session.get_inputs()[0]
        self.input_name = inp.name
        self.size_hw = _input_size(inp.shape, meta, path)
        self.names = _class_names(meta, self.session.get_outputs()[0].shape, path)

    def detect(
        self, image_bgr: np.ndarray, *, conf: float = 0.25, iou: float = 0.45, max_det: int = 300
    ) -> sv.Detections:
        """Boxes, scores and classes for one BGR image."""
        canvas, fit = letterbox(image_bgr, self.size_hw)
        blob = canvas[:, :, ::-1].transpose(2, 0, 1)[None].astype(np.float32) / 255.0
        (output,) = self.session.run(None, {self.input_name: np.ascontiguousarray(blob)})[:1]
        xyxy, scores, class_id = decode(output, conf=conf, iou=iou, max_det=max_det)
        h, w = image_bgr.shape[:2]
        xyxy = fit.to_original(xyxy)
        xyxy[:, [0, 2]] = xyxy[:, [0, 2]].clip(0, w)
        xyxy[:, [1, 3]] = xyxy[:, [1, 3]].clip(0, h)
        names = np.array([self.names.get(int(c), str(int(c))) for c in class_id], dtype=object)
        return sv.Detections(
            xyxy=xyxy.astype(np.float32),
            confidence=scores.astype(np.float32),
            class_id=class_id,
            data={"class_name": names.astype(str)},
        )


def load_onnx(path: Path, threads: int | None = None) -> OnnxDetector:
    """A cached detector for ``path``; a changed file (size or mtime) is loaded again."""
    stat = path.stat()
    return _cached(str(path.resolve()), stat.st_size, stat.st_mtime_ns, threads or _cores())


@functools.lru_cache(maxsize=8)
def _cached(path: str, size: int, mtime_ns: int, threads: int) -> OnnxDetector:
    return OnnxDetector(Path(path), threads)


def _cores() -> int:
    return os.cpu_count() or 1


def _input_size(shape: list[Any], meta: dict[str, str], path: Path) -> tuple[int, int]:
    """Network input (h, w): the fixed input shape, else the ``imgsz`` metadata."""
    if len(shape) == 4 and isinstance(shape[2], int) and isinstance(shape[3], int):
        return int(shape[2]), int(shape[3])
    if "imgsz" in meta:
        size = ast.literal_eval(meta["imgsz"])
        return (int(size[0]), int(size[1])) if isinstance(size, list | tuple) else (size, size)
    raise WeightsError(f"{path}: dynamic input size and no 'imgsz' metadata; export with imgsz")


def _class_names(meta: dict[str, str], out_shape: list[Any], path: Path) -> dict[int, str]:
    """Class names from the export's ``names`` metadata, else ``class0``, ``class1``..."""
    if "names" in meta:
        try:
            names = ast.literal_eval(meta["names"])
        except (ValueError, SyntaxError) as exc:
            raise WeightsError(f"{path}: metadata 'names' is not a dict literal") from exc
        return {int(k): str(v) for k, v in dict(names).items()}
    if len(out_shape) == 3 and isinstance(out_shape[1], int):
        return {i: f"class{i}" for i in range(out_shape[1] - 4)}
    raise WeightsError(f"{path}: no 'names' metadata and an output shape {out_shape} to count from")
