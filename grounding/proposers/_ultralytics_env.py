"""Offline, fast defaults for ultralytics, set before it is first imported.

Left alone, ultralytics probes DNS when imported, tries to download
``Arial.ttf`` from GitHub on every train, validation or plot (even offline),
may pip-install missing packages, and on a 2-core machine runs torch on one
thread (it takes cores - 1). :func:`import_ultralytics` fixes all of that once
per process: ``YOLO_OFFLINE=1``, ``YOLO_AUTOINSTALL=false``, a settings folder
under the user's cache (``YOLO_CONFIG_DIR``; ultralytics adds ``Ultralytics/``)
holding a font shipped by an installed package copied in as ``Arial.ttf``,
settings sync off. Values the
user already set in the environment win. :func:`use_threads` pins torch's
thread count on a model's train, validation and predict runs (ultralytics
resets it at each).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

INSTALL_HINT = (
    "the ultralytics path needs the yolo extra: pip install 'groundeval[yolo]' "
    "(then restore OpenCV's headless wheel, see the README); an exported .onnx runs without it"
)
THREADS_ENV = "GROUNDEVAL_THREADS"
"""Torch / onnxruntime thread count; all cores when unset."""
FONT_NAMES = ("Arial.ttf", "Arial.Unicode.ttf")
_LOCK = threading.Lock()
_READY: list[ModuleType] = []
_THREADS: dict[int, int] = {}


def cache_dir() -> Path:
    """The groundeval folder in the user's cache (``$XDG_CACHE_HOME`` or ``~/.cache``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "groundeval"


def thread_count(requested: int | None = None) -> int:
    """Threads to use: the argument, else ``$GROUNDEVAL_THREADS``, else every core."""
    if requested is not None:
        value: int | str = requested
    else:
        value = os.environ.get(THREADS_ENV, "") or (os.cpu_count() or 1)
    try:
        threads = int(value)
    except ValueError as exc:
        raise ValueError(f"${THREADS_ENV}={value!r} is not an integer") from exc
    if threads < 1:
        raise ValueError(f"thread count must be at least 1, got {threads}")
    return threads


def bundled_font() -> Path:
    """A TTF shipped by an installed package (matplotlib's DejaVu Sans, an ultralytics dep)."""
    spec = importlib.util.find_spec("matplotlib")
    roots = list(spec.submodule_search_locations or []) if spec else []
    for root in roots:
        font = Path(root) / "mpl-data" / "fonts" / "ttf" / "DejaVuSans.ttf"
        if font.is_file():
            return font
    raise FileNotFoundError(
        "no bundled TTF font found (looked for matplotlib's mpl-data/fonts/ttf/DejaVuSans.ttf); "
        "ultralytics would try to download Arial.ttf: pip install matplotlib"
    )


def prepare_environment() -> Path:
    """Set the offline variables and the settings folder with its fonts; return that folder."""
    os.environ.setdefault("YOLO_OFFLINE", "1")
    os.environ.setdefault("YOLO_AUTOINSTALL", "false")
    os.environ.setdefault("YOLO_CONFIG_DIR", str(cache_dir() / "ultralytics"))
    # ultralytics keeps settings and looks for fonts in a sub-folder named Ultralytics
    config = Path(os.environ["YOLO_CONFIG_DIR"]).expanduser() / "Ultralytics"
    config.mkdir(parents=True, exist_ok=True)
    missing = [name for name in FONT_NAMES if not (config / name).is_file()]
    if missing:
        font = bundled_font()
        for name in missing:
            tmp = config / f".{name}.tmp{os.getpid()}"
            shutil.copyfile(font, tmp)
            tmp.replace(config / name)
    return config


def import_ultralytics() -> ModuleType:
    """``import ultralytics`` with the offline defaults; a clear error when it is not installed."""
    with _LOCK:
        if _READY:
            return _READY[0]
        if importlib.util.find_spec("ultralytics") is None:
            raise ModuleNotFoundError(INSTALL_HINT)
        prepare_environment()
        import ultralytics

        if ultralytics.settings.get("sync", True):
            ultralytics.settings["sync"] = False  # saved to the settings file
        _READY.append(ultralytics)
        return ultralytics


def use_threads(model: Any, threads: int | None = None) -> int:
    """Pin torch to ``threads`` (default: all cores) when ``model`` trains, validates, predicts.

    ultralytics resets torch's thread count to cores - 1 when a run starts, so
    the count is set again by callbacks registered once per model.
    """
    import torch

    count = thread_count(threads)
    key = id(model)
    first = key not in _THREADS
    _THREADS[key] = count
    if first:

        def pin(_: Any) -> None:
            torch.set_num_threads(_THREADS[key])

        for event in ("on_train_start", "on_val_start", "on_predict_start", "on_export_start"):
            model.add_callback(event, pin)
    torch.set_num_threads(count)
    return count
