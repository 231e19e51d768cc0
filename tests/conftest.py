from __future__ import annotations

from pathlib import Path

import pytest

import tests._support.fixtures  # noqa: F401  (registers test.boxes / test.accept)
from tests._support.paths import DATA


@pytest.fixture
def data_dir() -> Path:
    return DATA
