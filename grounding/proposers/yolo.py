"""Learned box proposers from local weights: ``yolo`` and ``yoloworld``.

``yolo`` proposes boxes from a local detector. An exported ``.onnx`` runs in the
core install through onnxruntime (no torch, no ultralytics); a ``.pt`` runs
through ultralytics (the ``yolo`` extra), imported only when one is used, with
offline defaults (:mod:`._ultralytics_env`). Classes are filtered by
``params.classes`` or, when that is unset, by the class names the spec's target
mentions ("each die" keeps ``die``); a target naming no class keeps them all.

``yoloworld`` runs open-vocabulary weights whose classes were set and saved
beforehand (setting them needs a CLIP download). ``yolo.dice``
(:mod:`.yolo_dice`) and ``sam`` / ``fastsam`` (:mod:`.sam`) build on this.

Weights are never downloaded: a name that is not a local file (absolute, or
relative to the working directory, or one of the files in
``grounding/models/``) is an error naming every place looked.

A ``.pt`` / ``.pth`` file is a Python pickle: loading it can run any code. So a
program may name only the packaged models, ``.onnx`` files (plain data), or
pickles inside a directory the *user* trusted on the command line
(``--models-dir``, kept in ``$GROUNDEVAL_MODELS_DIR`` so worker processes see
it). Anything else is refused before the file is opened
(:func:`resolve_weights` at run time, :func:`weights_issues` when a program is
validated), naming the file and the ``params.weights`` field.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import supervision as sv

from groundeval.grounding._geometry import element_xyxy
from groundeval.grounding._protocol import Feedback, register_proposer
from groundeval.grounding.proposers._cv import CVProposer, box
from groundeval.grounding.proposers._onnx import OnnxDetector, WeightsError, load_onnx
from groundeval.grounding.proposers._ultralytics_env import import_ultralytics, use_threads
from groundeval.state import Element, GroundSpec

__all__ = [
    "MODELS_DIR",
    "MODELS_DIR_ENV",
    "PICKLE_SUFFIXES",
    "WeightsError",
    "YoloProposer",
    "YoloWorldProposer",
    "resolve_weights",
    "set_models_dir",
    "trusted_dirs",
    "ultralytics_model",
    "wanted_classes",
    "weights_issues",
]

MODELS_DIR = Path(__file__).resolve().parents[1] / "models"
"""Weights shipped with groundeval (the example dice detector)."""


MODELS_DIR_ENV = "GROUNDEVAL_MODELS_DIR"
"""Directories (``os.pathsep``-separated) the user trusts to hold pickled weights."""
PICKLE_SUFFIXES = (".pt", ".pth")
"""Weights formats that are Python pickles (loading one can run code)."""


def set_models_dir(path: Path | str | None) -> Path | None:
    """Trust ``path`` (a directory the user named) to hold ``.pt`` weights; None trusts none.

    Kept in the environment so worker processes started later inherit it.
    """
    if path is None:
        os.environ.pop(MODELS_DIR_ENV, None)
        return None
    folder = Path(path).expanduser().resolve()
    if not folder.is_dir():
        raise WeightsError(f"--models-dir {path}: not a directory")
    os.environ[MODELS_DIR_ENV] = str(folder)
    return folder


def trusted_dirs() -> list[Path]:
    """Where pickled weights may be loaded from: the packaged models and ``--models-dir``."""
    dirs = [MODELS_DIR.resolve()]
    for part in os.environ.get(MODELS_DIR_ENV, "").split(os.pathsep):
        if part.strip():
            dirs.append(Path(part).expanduser().resolve())
    return dirs


def _is_trusted(path: Path) -> bool:
    real = path.resolve()
    return any(real.is_relative_to(d) for d in trusted_dirs())


def _places(given: Path, pickle: bool) -> list[Path]:
    if given.is_absolute():
        return [given]
    places = [Path.cwd() / given, MODELS_DIR / given]
    if pickle:
        places += [d / given for d in trusted_dirs()[1:]]
    return places


def _untrusted(name: str, found: Path) -> WeightsError:
    return WeightsError(
        f"params.weights {name!r} ({found}) is a pickled .pt file outside the packaged models "
        "and --models-dir: loading a .pt runs code, so a program may name only packaged "
        "models, .onnx files, or .pt files under a directory given with --models-dir DIR"
    )


def resolve_weights(name: str | None, suffixes: tuple[str, ...]) -> Path:
    """The local weights file for ``name``, or an error naming every place looked.

    A pickle (``.pt``, ``.pth``) resolves only inside :func:`trusted_dirs`;
    one found anywhere else is refused before it is opened.
    """
    if not name:
        raise WeightsError(f"params.weights is required: the path of a local {'/'.join(suffixes)}")
    if not isinstance(name, str | os.PathLike):
        raise WeightsError(f"params.weights must be a file name, got {type(name).__name__}")
    given = Path(str(name)).expanduser()
    pickle = given.suffix.lower() in PICKLE_SUFFIXES
    places = _places(given, pickle)
    existing = [p for p in places if p.is_file()]
    if pickle:
        trusted = [p for p in existing if _is_trusted(p)]
        if existing and not trusted:
            raise _untrusted(str(name), existing[0])
        existing = trusted
    found = existing[0] if existing else None
    if found is None:
        looked = ", ".join(str(p) for p in places)
        raise WeightsError(
            f"weights file {name!r} not found (looked for {looked}); groundeval never "
            "downloads weights: give the path of a local file"
        )
    if found.suffix.lower() not in suffixes:
        raise WeightsError(f"{found}: expected a {' or '.join(suffixes)} file")
    return found


def weights_issues(spec: GroundSpec) -> list[tuple[str, str]]:
    """Problems with the weights a ground spec names, as ``(field path, message)`` pairs.

    Checked when a program is validated, before anything is loaded: a weights
    name must be a string; a pickle must resolve inside :func:`trusted_dirs`.
    A missing ``.onnx`` is left to run time (the file may be made later).
    """
    issues: list[tuple[str, str]] = []
    opinions = [("params.weights", spec.params)] + [
        (f"agree_with[{i}].params.weights", o.params) for i, o in enumerate(spec.agree_with)
    ]
    for field, params in opinions:
        if "weights" not in params or params["weights"] is None:
            continue
        name = params["weights"]
        if not isinstance(name, str) or not name:
            issues.append((field, f"must be a file name, got {name!r}"))
            continue
        given = Path(name).expanduser()
        if given.suffix.lower() not in PICKLE_SUFFIXES:
            continue
        existing = [p for p in _places(given, True) if p.is_file()]
        if not any(_is_trusted(p) for p in existing):
            where = f" ({existing[0]})" if existing else ""
            issues.append((
                field,
                f"{name!r}{where} is a pickled .pt file not under the packaged models or "
                "--models-dir: loading a .pt runs code, so name a packaged model, an .onnx "
                "file, or a .pt under a directory given with --models-dir DIR",
            ))  # fmt: skip
    return issues


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


def inside_share(xyxy: tuple[float, float, float, float], elements: list[Element]) -> float:
    """The share of ``xyxy``'s area inside the union of the elements' boxes (16 x 16 samples)."""
    x1, y1, x2, y2 = xyxy
    xs = x1 + (np.arange(16) + 0.5) * (x2 - x1) / 16
    ys = y1 + (np.arange(16) + 0.5) * (y2 - y1) / 16
    gx, gy = np.meshgrid(xs, ys)
    inside = np.zeros(gx.shape, bool)
    for e in elements:
        ex1, ey1, ex2, ey2 = element_xyxy(e)
        inside |= (gx >= ex1) & (gx <= ex2) & (gy >= ey1) & (gy <= ey2)
    return float(inside.mean())


def doubtful_boxes(
    everything: list[Element], conf: float, what: str, sure: list[Element], inside: float = 1.0
) -> list[Element]:
    """Boxes scored under ``conf`` and not mostly (over ``inside``) in a sure box, as unexplained.

    The network half believed each is one more object: counting without it is a guess.
    """
    doubts = []
    for e in everything:
        score = float(e.fields["confidence"])
        if score >= conf or (sure and inside_share(element_xyxy(e), sure) > inside):
            continue
        why = f"a box the detector scored {score:.2f} as a {what} (accepted from {conf:g})"
        doubts.append(box(element_xyxy(e), reason=why))
    return doubts


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
    param_types: ClassVar[dict[str, Any]] = {
        "weights": str | None,
        "classes": list[str] | None,
        "threads": int | None,
    }
    """Types the ``None`` defaults cannot show (``validate`` checks them)."""

    def adapt(self, params: dict[str, Any], feedback: Feedback) -> dict[str, Any]:
        """Retry: accept less confident boxes (the verifier drops the wrong ones)."""
        params["conf"] = min(float(params["conf"]), float(params["retry_conf"]))
        return params

    def detections(self, image_bgr: np.ndarray, params: dict[str, Any]) -> sv.Detections:
        """Raw detections in pixels of the image, through ONNX or ultralytics by file type."""
        path = resolve_weights(params["weights"], (".onnx", ".pt"))
        conf, iou, max_det = float(params["conf"]), float(params["iou"]), int(params["max_det"])
        detections: sv.Detections
        if path.suffix.lower() == ".onnx":
            detector: OnnxDetector = load_onnx(path, params["threads"])
            detections = detector.detect(image_bgr, conf=conf, iou=iou, max_det=max_det)
            return detections
        model, lock = ultralytics_model(path, "yolo")
        with lock:
            use_threads(model, params["threads"])
            result = model.predict(image_bgr, conf=conf, iou=iou, max_det=max_det, verbose=False)
        detections = sv.Detections.from_ultralytics(result[0])
        return detections

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
            detector: OnnxDetector = load_onnx(path, params["threads"])
            return dict(detector.names)
        model, _ = ultralytics_model(path, "yolo")
        return {int(k): str(v) for k, v in model.names.items()}


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
