"""The example library, built once per test session (see example_build.py).

Set OPGEN_EXAMPLE_BUILD_DIR to keep the compiler's output between test sessions.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.examples.example_build import BuiltExample, build_example


@pytest.fixture(scope="session")
def built_example(tmp_path_factory: pytest.TempPathFactory) -> BuiltExample:
    pytest.importorskip("torch")
    build = os.environ.get("OPGEN_EXAMPLE_BUILD_DIR") or tmp_path_factory.mktemp("build")
    return build_example(tmp_path_factory.mktemp("generated"), Path(build))


@pytest.fixture(scope="session")
def aten_mlx_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory holding examples/aten_mlx built (`aten_mlx_build.py`): once per test
    session, shared by the test processes of one (they take turns on a lock), or kept
    under OPGEN_EXAMPLE_BUILD_DIR, or the one OPGEN_ATEN_MLX_PACKAGE names."""
    from tests.examples.aten_mlx_build import build_package

    built = os.environ.get("OPGEN_ATEN_MLX_PACKAGE")
    if built:
        return Path(built)
    kept = os.environ.get("OPGEN_EXAMPLE_BUILD_DIR")
    if kept:
        return build_package(Path(kept) / "aten_mlx")
    session = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        session = session.parent  # the test processes' common directory
    return build_package(session / "aten_mlx")
