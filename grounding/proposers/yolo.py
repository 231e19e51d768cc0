"""Learned proposers from local weights: yolo, yolo.dice, yoloworld, sam, fastsam.

``yolo`` proposes boxes from a local detector. An exported ``.onnx`` runs in the
core install through onnxruntime (no torch, no ultralytics); a ``.pt`` runs
through ultralytics (the ``yolo`` extra), imported only when one is used, with
offline defaults (:mod:`._ultralytics_env`). Classes are filtered by
``params.classes`` or, when that is unset, by the class names the spec's target
mentions ("each die" keeps ``die``); a target naming no class keeps them all.

``yolo.dice`` is ``yolo`` with the detector this project trains on its synthetic
dice (``grounding/models/dice_yolov8n.onnx``) plus classical pip counting inside
each detected box (the ``opencv.dice`` counter): the network finds the dice,
code reads the pips, which are too small for a detector trained this briefly.

``yoloworld`` runs open-vocabulary weights whose classes were set and saved
beforehand (setting them needs a CLIP download). ``sam`` / ``fastsam`` turn a
box or point prompt into a boundary polygon.

Weights are never downloaded: a name that is not a local file (absolute, or
relative to the working directory, or one of the files in
``grounding/models/``) is an error naming every place looked.
"""

from __future__ import annotations

import functools
import re
import threading
from pathlib import Path
from typing import Any, ClassVar

import cv2
import numpy as np
import supervision as sv

from groundeval.grounding._protocol import Feedback, register_proposer
from groundeval.grounding.proposers._cv import CVProposer, box
from groundeval.grounding.proposers._cv import iou as _iou
from groundeval.grounding.proposers._onnx import WeightsError, load_onnx
from groundeval.grounding.proposers._ultralytics_env import import_ultralytics, use_threads
from groundeval.grounding.proposers.opencv_dice import _count_pips
from groundeval.programs._model import GroundSpec
from groundeval.state import Element

MODELS_DIR = Path(__file__).resolve().parents[1] / "models"
"""Weights shipped with groundeval (the example dice detector)."""
DICE_WEIGHTS = "dice_yolov8n.onnx"
VERIFIER_KEY = "offline_verifier"
"""A spec param the offline verifier reads; not a proposer parameter."""


def resolve_weights(name: str | None, suffixes: tuple[str, ...]) -> Path:
    """The local weights file for ``name``, or an error naming every place looked."""
    if not name:
        raise WeightsError(f"params.weights is required: the path of a local {'/'.join(suffixes)}")
    given = Path(str(name)).expanduser()
    places = [given] if given.is_absolute() else [Path.cwd() / given, MODELS_DIR / given]
    found = next((p for p in places if p.is_file()), None)
    if found is None:
        looked = ", ".join(str(p) for p in places)
        raise WeightsError(
            f"weights file {name!r} not found (looked for {looked}); groundeval never "
            "downloads weights: give the path of a local file"
        )
    if found.suffix.lower() not in suffixes:
        raise WeightsError(f"{found}: expected a {' or '.join(suffixes)} file")
    return found


@functools.lru_cache(maxsize=8)
def _ultralytics_model(
    path: str, size: int, mtime_ns: int, kind: str
) -> tuple[Any, threading.Lock]:
    """One ultralytics model per file version, with a lock: its predict is not re-entrant."""
    ul = import_ultralytics()
    factory = {"yolo": ul.YOLO, "yoloworld": ul.YOLOWorld, "sam": ul.SAM, "fastsam": ul.FastSAM}
    try:
        model = factory[kind](path)
    except Exception as exc:  # torch / pickle / ultralytics raise many types for a bad file
        raise WeightsError(f"{path}: not readable as {kind} weights: {exc}") from exc
    return model, threading.Lock()


def ultralytics_model(path: Path, kind: str) -> tuple[Any, threading.Lock]:
    """The cached ultralytics model for a weights file (reloaded when the file changes)."""
    stat = path.stat()
    return _ultralytics_model(str(path.resolve()), stat.st_size, stat.st_mtime_ns, kind)


def own_params(spec: GroundSpec) -> GroundSpec:
    """The spec without the params another component reads (the offline verifier's)."""
    if VERIFIER_KEY not in spec.params:
        return spec
    params = {k: v for k, v in spec.params.items() if k != VERIFIER_KEY}
    return spec.model_copy(update={"params": params})


def wanted_classes(names: dict[int, str], classes: list[str] | None, target: str) -> set[str]:
    """Class names to keep: ``classes`` if given, else those the target mentions, else all."""
    known = set(names.values())
    if classes:
        unknown = sorted(set(classes) - known)
        if unknown:
            raise ValueError(
                f"params.classes {unknown} are not in the model; known: {sorted(known)}"
            )
        return set(classes)
    words = set(re.findall(r"[a-z0-9]+", target.lower()))
    plural = {"die": "dice", "person": "people", "mouse": "mice"}
    hits = {n for n in known if {n.lower(), n.lower() + "s", plural.get(n.lower(), "")} & words}
    return hits or known


def detections_to_boxes(detections: sv.Detections, keep: set[str]) -> list[Element]:
    """Box elements with class name and confidence, top to bottom then left to right."""
    names = detections.data.get("class_name", np.array([""] * len(detections)))
    scores = detections.confidence
    if scores is None:
        scores = np.full(len(names), np.nan)
    found = [
        box(xyxy.tolist(), class_name=str(n), confidence=round(float(c), 4))
        for xyxy, n, c in zip(detections.xyxy, names, scores, strict=True)
        if str(n) in keep
    ]
    found.sort(key=lambda e: (e.xyxy_px[1], e.xyxy_px[0]) if e.xyxy_px else (0.0, 0.0))
    return found


@register_proposer("yolo")
class YoloProposer(CVProposer):
    """Boxes from a local YOLO detector (``.onnx`` without torch, ``.pt`` with ultralytics)."""

    name: ClassVar[str] = "yolo"
    defaults: ClassVar[dict[str, Any]] = {
        "weights": None,
        "conf": 0.25,
        "iou": 0.45,
        "max_det": 100,
        "classes": None,
        "threads": None,
        "retry_conf": 0.1,
    }

    def resolve(self, spec: GroundSpec, feedback: Feedback | None = None) -> dict[str, Any]:
        """Parameters as the base resolves them, leaving out the offline verifier's settings."""
        return super().resolve(own_params(spec), feedback)

    def adapt(self, params: dict[str, Any], feedback: Feedback) -> dict[str, Any]:
        """Retry: accept less confident boxes (the verifier drops the wrong ones)."""
        params["conf"] = min(float(params["conf"]), float(params["retry_conf"]))
        return params

    def detections(self, image_bgr: np.ndarray, params: dict[str, Any]) -> sv.Detections:
        """Raw detections in pixels of the image, through ONNX or ultralytics by file type."""
        path = resolve_weights(params["weights"], (".onnx", ".pt"))
        conf, iou, max_det = float(params["conf"]), float(params["iou"]), int(params["max_det"])
        if path.suffix.lower() == ".onnx":
            return load_onnx(path, params["threads"]).detect(
                image_bgr, conf=conf, iou=iou, max_det=max_det
            )
        model, lock = ultralytics_model(path, "yolo")
        with lock:
            use_threads(model, params["threads"])
            result = model.predict(image_bgr, conf=conf, iou=iou, max_det=max_det, verbose=False)
        return sv.Detections.from_ultralytics(result[0])

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """Boxes of the wanted classes."""
        detections = self.detections(image_bgr, params)
        keep = wanted_classes(self.class_names(params), params["classes"], spec.target)
        return detections_to_boxes(detections, keep)

    def class_names(self, params: dict[str, Any]) -> dict[int, str]:
        """Every class the weights know (not only those seen in one image)."""
        path = resolve_weights(params["weights"], (".onnx", ".pt"))
        if path.suffix.lower() == ".onnx":
            return load_onnx(path, params["threads"]).names
        model, _ = ultralytics_model(path, "yolo")
        return {int(k): str(v) for k, v in model.names.items()}


@register_proposer("yolo.dice")
class YoloDiceProposer(YoloProposer):
    """The shipped dice detector, with the pips of each die counted by classical code."""

    name: ClassVar[str] = "yolo.dice"
    defaults: ClassVar[dict[str, Any]] = {
        **YoloProposer.defaults,
        "weights": DICE_WEIGHTS,
        "conf": 0.15,
        "pip_radius_share": 0.085,
        "pip_dark_ratio": 0.55,
        "retry_pip_dark_ratio": 0.65,
        "face_threshold_bounds": [100, 210],
        "face_margin_share": 0.5,
        "min_face_cover": 0.5,
        "bare_white_share": 0.1,
        "min_side_px": 20.0,
        "max_face_aspect": 1.4,
    }

    def adapt(self, params: dict[str, Any], feedback: Feedback) -> dict[str, Any]:
        """Retry: less confident boxes, darker cut for pips."""
        params = super().adapt(params, feedback)
        params["pip_dark_ratio"] = params["retry_pip_dark_ratio"]
        return params

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """Die faces the network found, snapped to the white face, with pips read from the pixels.

        Each box is replaced by the bounds of the face it lies on (a box that
        covers half a die still gives the whole die); two boxes on the same face
        keep the more confident one. A box with no readable face keeps its
        detector bounds and gets ``pips: None`` with the ``problem``; so does a
        die-sized white region no box covers (a die the detector missed).
        """
        grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
        found: list[Element] = []
        detected = super().detect(image_bgr, spec, params)
        for element in sorted(detected, key=lambda e: -float(e.fields["confidence"])):
            face, problem = find_face(image_bgr, element.xyxy_px or [], params)
            fields: dict[str, Any] = {**element.fields, "pips": None}
            xyxy = element.xyxy_px or []
            if face is not None:
                xyxy = list(_rect(face))
                (_, _), (rw, rh), _ = cv2.minAreaRect(face)
                fields["pips"], problem = _count_pips(grey, face, float(np.sqrt(rw * rh)), params)
                fields["detector_xyxy_px"] = element.xyxy_px
            if problem:
                fields["problem"] = problem
            if any(_iou(tuple(xyxy), tuple(f.xyxy_px or [])) > 0.5 for f in found):
                continue  # a second box on a face already read
            if face is None and _duplicate_or_bare(image_bgr, xyxy, found, params):
                continue
            found.append(box(xyxy, **fields))
        found.extend(missed_faces(image_bgr, found, params))
        found.sort(key=lambda e: (e.xyxy_px[1], e.xyxy_px[0]) if e.xyxy_px else (0.0, 0.0))
        return found


@register_proposer("yoloworld")
class YoloWorldProposer(YoloProposer):
    """Open-vocabulary boxes from YOLO-World weights whose classes were set and saved beforehand."""

    name: ClassVar[str] = "yoloworld"
    defaults: ClassVar[dict[str, Any]] = {**YoloProposer.defaults, "conf": 0.1, "retry_conf": 0.05}

    def detections(self, image_bgr: np.ndarray, params: dict[str, Any]) -> sv.Detections:
        """Boxes through ultralytics, after making sure the model knows the classes asked for."""
        path = resolve_weights(params["weights"], (".pt",))
        model, lock = ultralytics_model(path, "yoloworld")
        with lock:
            self.ensure_classes(model, path, params["classes"])
            use_threads(model, params["threads"])
            result = model.predict(
                image_bgr,
                conf=float(params["conf"]),
                iou=float(params["iou"]),
                max_det=int(params["max_det"]),
                verbose=False,
            )
        return sv.Detections.from_ultralytics(result[0])

    def class_names(self, params: dict[str, Any]) -> dict[int, str]:
        """The classes saved in the weights (plus any set in this process)."""
        model, _ = ultralytics_model(resolve_weights(params["weights"], (".pt",)), "yoloworld")
        return {int(k): str(v) for k, v in model.names.items()}

    @staticmethod
    def ensure_classes(model: Any, path: Path, classes: list[str] | None) -> None:
        """Set classes the weights lack; offline that fails with an error saying what to do."""
        missing = sorted(set(classes or []) - {str(v) for v in model.names.values()})
        if not missing:
            return
        try:
            model.set_classes(sorted(set(classes or [])))
        except Exception as exc:  # a missing CLIP package or a failed download, by version
            raise WeightsError(
                f"{path}: classes {missing} are not saved in these YOLO-World weights, and "
                "set_classes needs the CLIP text encoder, which ultralytics downloads from the "
                "network (groundeval runs ultralytics offline). Where a network is available, run "
                "model = YOLOWorld(weights); model.set_classes([...]); model.save('mine.pt') "
                f"and pass mine.pt. ({type(exc).__name__}: {exc})"
            ) from exc


class _SegmentProposer(CVProposer):
    """Boundary polygons from SAM-family weights, prompted by boxes or points."""

    kind: ClassVar[str] = "sam"
    defaults: ClassVar[dict[str, Any]] = {
        "weights": None,
        "prompt_xyxy_px": None,
        "prompt_points_px": None,
        "threads": None,
        "simplify_share": 0.004,
    }

    def resolve(self, spec: GroundSpec, feedback: Feedback | None = None) -> dict[str, Any]:
        """Parameters as the base resolves them, leaving out the offline verifier's settings."""
        return super().resolve(own_params(spec), feedback)

    def predict_args(self, params: dict[str, Any]) -> dict[str, Any]:
        """Prompts in the form ultralytics takes (none: segment everything)."""
        args: dict[str, Any] = {}
        if params["prompt_xyxy_px"]:
            boxes = np.asarray(params["prompt_xyxy_px"], dtype=float).reshape(-1, 4)
            args["bboxes"] = boxes.tolist()
        if params["prompt_points_px"]:
            points = np.asarray(params["prompt_points_px"], dtype=float).reshape(-1, 2)
            args["points"] = points.tolist()
            args["labels"] = [1] * len(points)
        return args

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """One polygon per mask: the outline of its largest part, simplified."""
        path = resolve_weights(params["weights"], (".pt", ".pth"))
        model, lock = ultralytics_model(path, self.kind)
        try:
            args = self.predict_args(params)
        except ValueError as exc:
            raise ValueError(f"proposer {self.name}: bad prompt: {exc}") from exc
        with lock:
            use_threads(model, params["threads"])
            result = model.predict(image_bgr, verbose=False, **args)
        detections = sv.Detections.from_ultralytics(result[0])
        return masks_to_polygons(detections, float(params["simplify_share"]))


@register_proposer("sam")
class SamProposer(_SegmentProposer):
    """SAM / SAM 2 / MobileSAM weights (``sam_b.pt``, ``mobile_sam.pt``...)."""

    name: ClassVar[str] = "sam"
    kind: ClassVar[str] = "sam"


@register_proposer("fastsam")
class FastSamProposer(_SegmentProposer):
    """FastSAM weights (``FastSAM-s.pt``), with its confidence and IoU thresholds."""

    name: ClassVar[str] = "fastsam"
    kind: ClassVar[str] = "fastsam"
    defaults: ClassVar[dict[str, Any]] = {**_SegmentProposer.defaults, "conf": 0.4, "iou": 0.9}

    def predict_args(self, params: dict[str, Any]) -> dict[str, Any]:
        """Prompts plus FastSAM's thresholds."""
        return {**super().predict_args(params), "conf": params["conf"], "iou": params["iou"]}


def masks_to_polygons(detections: sv.Detections, simplify_share: float) -> list[Element]:
    """Polygon elements (outline of each mask's largest part) with confidence and area."""
    if detections.mask is None:
        return []
    scores = detections.confidence
    found = []
    for i, mask in enumerate(detections.mask):
        parts = sv.mask_to_polygons(mask.astype(bool))
        if not parts:
            continue
        outline = max(parts, key=lambda p: cv2.contourArea(p.astype(np.float32)))
        eps = simplify_share * cv2.arcLength(outline.astype(np.float32), True)
        simple = cv2.approxPolyDP(outline.astype(np.float32), eps, True).reshape(-1, 2)
        if len(simple) < 3:
            continue
        fields: dict[str, Any] = {"area_px": int(mask.sum())}
        if scores is not None:
            fields["confidence"] = round(float(scores[i]), 4)
        points = [[round(float(x), 2), round(float(y), 2)] for x, y in simple]
        found.append(Element(id=1, kind="polygon", points_px=points, fields=fields))
    return found


def find_face(
    image_bgr: np.ndarray, xyxy_px: list[float], params: dict[str, Any]
) -> tuple[np.ndarray | None, str]:
    """The white square die face a detected box lies on (full-image contour), or why not.

    The face is looked for in the box plus a margin, so a box that covers only
    part of a die still finds the whole face; a box with no white face under
    it, or whose white region is not one square face (two dice merged), fails.
    """
    h, w = image_bgr.shape[:2]
    bx1, by1, bx2, by2 = (float(v) for v in xyxy_px)
    if min(bx2 - bx1, by2 - by1) < 6:
        return None, "box too small to read"
    margin = float(params["face_margin_share"]) * max(bx2 - bx1, by2 - by1)
    x1, y1 = max(int(bx1 - margin), 0), max(int(by1 - margin), 0)
    x2, y2 = min(int(np.ceil(bx2 + margin)), w), min(int(np.ceil(by2 + margin)), h)
    white = np.ascontiguousarray(image_bgr[y1:y2, x1:x2].min(axis=2))
    otsu, _ = cv2.threshold(white, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    low, high = params["face_threshold_bounds"]
    mask = (white > float(np.clip(otsu, low, high))).astype(np.uint8) * 255
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    box_area = (bx2 - bx1) * (by2 - by1)
    target = (bx1 - x1, by1 - y1, bx2 - x1, by2 - y1)
    covered = [(_overlap(_rect(c), target) / box_area, c) for c in contours]
    share, face = max(covered, key=lambda t: t[0], default=(0.0, None))
    if face is None or share < float(params["min_face_cover"]):
        return None, f"no white die face under the box ({share:.0%} covered)"
    (_, _), (rw, rh), _ = cv2.minAreaRect(face)
    if max(rw, rh) > float(params["max_face_aspect"]) * max(min(rw, rh), 1.0):
        return None, "the white region under the box is not one square face"
    return face + np.array([x1, y1]), ""


def _duplicate_or_bare(
    image_bgr: np.ndarray, xyxy: list[float], found: list[Element], params: dict[str, Any]
) -> bool:
    """A face-less box whose white pixels all belong to faces already read (or that has none)."""
    x1, y1, x2, y2 = (round(v) for v in xyxy)
    if x2 <= x1 or y2 <= y1:
        return True
    white = image_bgr[y1:y2, x1:x2].min(axis=2) > float(params["face_threshold_bounds"][0])
    for f in found:
        fx1, fy1, fx2, fy2 = (round(v) for v in (f.xyxy_px or [0, 0, 0, 0]))
        white[max(fy1 - y1, 0) : max(fy2 - y1, 0), max(fx1 - x1, 0) : max(fx2 - x1, 0)] = False
    return bool(white.mean() < float(params["bare_white_share"]))


def missed_faces(
    image_bgr: np.ndarray, found: list[Element], params: dict[str, Any]
) -> list[Element]:
    """White regions of a die's size that no element covers: the detector missed a die.

    They come back with ``pips: None`` so the verifier rejects them and the
    question is withheld rather than answered with a die left out.
    """
    white = image_bgr.min(axis=2)
    otsu, _ = cv2.threshold(white, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    low, high = params["face_threshold_bounds"]
    mask = (white > float(np.clip(otsu, low, high))).astype(np.uint8) * 255
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    min_area = float(params["min_side_px"]) ** 2 * 0.6
    extra = []
    for contour in contours:
        if cv2.contourArea(contour) < min_area:
            continue
        rect = _rect(contour)
        area = max((rect[2] - rect[0]) * (rect[3] - rect[1]), 1.0)
        if any(_overlap(rect, tuple(f.xyxy_px or [])) / area > 0.3 for f in found):
            continue
        extra.append(box(rect, pips=None, problem="a white face the detector did not find"))
    return extra


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return max(w, 0.0) * max(h, 0.0)


def _rect(contour: np.ndarray) -> tuple[float, float, float, float]:
    x, y, bw, bh = cv2.boundingRect(contour)
    return float(x), float(y), float(x + bw), float(y + bh)
