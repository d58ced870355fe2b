"""Upstream's codegen on the malformed-executorch corpus (layout: tests/malformed_corpus.py).

Each case's `functions.yaml` goes through what `executorch.codegen.gen` does with a
functions YAML before it writes a file: `parse_yaml_files` (the `op:` entries
translated against the corpus's `native_functions.yaml`, then read by torchgen
with the kernels) and every kernel key's string, which its generator renders for
each key (`upstream_reading` in test_executorch_model.py). Some mistakes show
only there: a dtype ExecuTorch's ScalarType does not have.

A case marked `upstream-rejects` must make it raise; every other case (which
opgen rejects on purpose, its YAML says why in a comment on the first line) must
pass. torchgen caches parsed specs by path, so each case reads a copy of its spec.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.malformed_corpus import TAGS
from tests.unit.test_malformed_executorch import EXECUTORCH

from .test_executorch_model import upstream_reading


def run_upstream(case: Path, tmp_path: Path) -> None:
    native, tags = tmp_path / "native_functions.yaml", tmp_path / "tags.yaml"
    shutil.copyfile(EXECUTORCH.native_for(case), native)
    shutil.copyfile(TAGS, tags)
    upstream_reading(case / EXECUTORCH.input_name, native, tags, custom_ops=False)


REJECTED = [c for c in EXECUTORCH.cases() if (c / "upstream-rejects").is_file()]
ACCEPTED = [c for c in EXECUTORCH.cases() if not (c / "upstream-rejects").is_file()]


@pytest.mark.parametrize("case", REJECTED, ids=[c.name for c in REJECTED])
def test_upstream_rejects(case: Path, tmp_path: Path) -> None:
    with pytest.raises(Exception):  # noqa: B017 - any error will do
        run_upstream(case, tmp_path)


@pytest.mark.parametrize("case", ACCEPTED, ids=[c.name for c in ACCEPTED])
def test_upstream_accepts_what_opgen_rejects_on_purpose(case: Path, tmp_path: Path) -> None:
    run_upstream(case, tmp_path)
