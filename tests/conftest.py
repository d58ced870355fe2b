"""Shared fixtures: where upstream torchgen's packaged spec lives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def torchgen_native_dir() -> Path:
    torchgen = pytest.importorskip("torchgen")
    return Path(os.path.dirname(torchgen.__file__)) / "packaged" / "ATen" / "native"
