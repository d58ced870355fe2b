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
