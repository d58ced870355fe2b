"""Upstream torchgen on the malformed-spec corpus (layout: tests/unit/test_malformed.py).

A case marked with an `upstream-rejects` file must make torchgen raise too; a
case without it is one that torchgen accepts and opgen rejects on purpose (its
yaml says why in a comment on the first line), which is checked as well.

torchgen caches parsed files by path, so each case is copied to a fresh
directory before torchgen reads it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

gen = pytest.importorskip("torchgen.gen")

CORPUS = Path(__file__).parents[1] / "malformed"
CASES = sorted(p for p in CORPUS.iterdir() if (p / "native_functions.yaml").is_file())


def tags_for(case: Path) -> Path:
    own = case / "tags.yaml"
    return own if own.is_file() else CORPUS / "tags.yaml"


def run_torchgen(case: Path, tmp_path: Path) -> None:
    native, tags = tmp_path / "native_functions.yaml", tmp_path / "tags.yaml"
    shutil.copyfile(case / "native_functions.yaml", native)
    shutil.copyfile(tags_for(case), tags)
    parsed = gen.parse_native_yaml(str(native), str(tags))
    gen.get_grouped_native_functions(parsed.native_functions)
    gen.get_grouped_by_view_native_functions(parsed.native_functions)


REJECTED = [c for c in CASES if (c / "upstream-rejects").is_file()]
ACCEPTED = [c for c in CASES if not (c / "upstream-rejects").is_file()]


@pytest.mark.parametrize("case", REJECTED, ids=[c.name for c in REJECTED])
def test_torchgen_rejects(case: Path, tmp_path: Path) -> None:
    with pytest.raises(Exception):  # noqa: B017 - any error will do
        run_torchgen(case, tmp_path)


@pytest.mark.parametrize("case", ACCEPTED, ids=[c.name for c in ACCEPTED])
def test_torchgen_accepts_what_opgen_rejects_on_purpose(case: Path, tmp_path: Path) -> None:
    assert (case / "native_functions.yaml").read_text(encoding="utf-8").startswith("# ")
    run_torchgen(case, tmp_path)
