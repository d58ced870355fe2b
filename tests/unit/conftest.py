"""Fixtures for unit tests: a spec from a YAML snippet."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from opgen.spec import Spec, load_spec
from opgen.spec.native import NativeFunction

SpecFromText = Callable[[str], Spec]


@pytest.fixture
def spec_of(tmp_path: Path) -> SpecFromText:
    """Load a spec written inline (dedented); no tags file."""

    def load(text: str) -> Spec:
        path = tmp_path / "native_functions.yaml"
        path.write_text(textwrap.dedent(text))
        return load_spec(str(path), None)

    return load


@pytest.fixture
def function_of(spec_of: SpecFromText) -> Callable[[str], NativeFunction]:
    """The first function of a one-entry spec given as its `func:` schema and other keys."""

    def first(text: str) -> NativeFunction:
        return spec_of(text).functions[0]

    return first
