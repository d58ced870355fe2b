"""Dispatch-key registrations and headers, byte for byte against torchgen.

For each configuration of `CONFIGS`: `Register<Key>_<n>.cpp`,
`Register<Key>Everything.cpp`, `<Key>Functions.h`, `<Key>Functions_inl.h` and
`ops/<op>_<key>_dispatch.h` as opgen's emitters write them, against the files
of torchgen's tree matching the same patterns (same set of paths, same bytes).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from opgen.targets.aten.dispatch_headers import emit_dispatch_headers
from opgen.targets.aten.options import REGISTRATION_KEYS, AtenPart
from opgen.targets.aten.registration import emit_registrations

from .aten_trees import CONFIGS, TreeOf, assert_same_files, family_files

_KEYS = "|".join(sorted((k.value for k in REGISTRATION_KEYS), key=len, reverse=True))
_LOWER_KEYS = "|".join(sorted((k.value.lower() for k in REGISTRATION_KEYS), key=len, reverse=True))
FAMILY = re.compile(
    rf"out/(Register({_KEYS})(_\d+|Everything)\.cpp"
    rf"|({_KEYS})Functions(_inl)?\.h"
    rf"|ops/\w+_({_LOWER_KEYS})_dispatch\.h)"
)
EMITTERS = ((AtenPart.sources, emit_registrations), (AtenPart.headers, emit_dispatch_headers))


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_registration_family(
    config: str,
    torchgen_aten_tree: TreeOf,
    torchgen_aten_dir: Path,
    tmp_path: Path,
) -> None:
    flags = CONFIGS[config]
    theirs_tree = torchgen_aten_tree(config)
    theirs = {p: d for p, d in theirs_tree.files.items() if FAMILY.fullmatch(p)}
    files = family_files(flags, torchgen_aten_dir, tmp_path / "opgen", EMITTERS)
    ours = {p: d for p, d in files.items() if FAMILY.fullmatch(p)}
    assert set(files) == set(ours), "emitters wrote files outside the family"
    assert_same_files(theirs, ours)
