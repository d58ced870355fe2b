"""Dispatch-key registrations and headers, byte for byte against torchgen.

For each configuration of `CONFIGS`: `Register<Key>_<n>.cpp`,
`Register<Key>Everything.cpp`, `<Key>Functions.h`, `<Key>Functions_inl.h` and
`ops/<op>_<key>_dispatch.h` as opgen's emitters write them, against the files
of torchgen's tree matching the same patterns (same set of paths, same bytes).
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest

from opgen.targets.aten.dispatch_headers import emit_dispatch_headers
from opgen.targets.aten.options import REGISTRATION_KEYS, Generate
from opgen.targets.aten.registration import emit_registrations

from .aten_trees import CONFIGS, opgen_files, torchgen_tree

_KEYS = "|".join(sorted((k.value for k in REGISTRATION_KEYS), key=len, reverse=True))
_LOWER_KEYS = "|".join(sorted((k.value.lower() for k in REGISTRATION_KEYS), key=len, reverse=True))
FAMILY = re.compile(
    rf"out/(Register({_KEYS})(_\d+|Everything)\.cpp"
    rf"|({_KEYS})Functions(_inl)?\.h"
    rf"|ops/\w+_({_LOWER_KEYS})_dispatch\.h)"
)
EMITTERS = ((Generate.sources, emit_registrations), (Generate.headers, emit_dispatch_headers))


def _parts(flags: tuple[str, ...]) -> set[Generate]:
    if "--generate" not in flags:
        return set(Generate)
    return {Generate(flags[flags.index("--generate") + 1])}


def first_difference(ours: dict[str, bytes], theirs: dict[str, bytes]) -> str:
    for path in sorted(theirs):
        if ours.get(path) != theirs[path]:
            diff = difflib.unified_diff(
                theirs[path].decode().splitlines(),
                ours.get(path, b"").decode().splitlines(),
                f"torchgen/{path}",
                f"opgen/{path}",
                lineterm="",
            )
            return "\n".join(list(diff)[:40])
    return ""


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_registration_family(config: str, torchgen_aten_dir: Path, tmp_path: Path) -> None:
    flags = CONFIGS[config]
    theirs_tree = torchgen_tree(flags, torchgen_aten_dir, tmp_path / "torchgen")
    theirs = {p: d for p, d in theirs_tree.files.items() if FAMILY.fullmatch(p)}
    parts = _parts(flags)
    emitters = [emit for part, emit in EMITTERS if part in parts]
    files = opgen_files(flags, torchgen_aten_dir, tmp_path / "opgen", emitters)
    ours = {p: d for p, d in files.items() if FAMILY.fullmatch(p)}
    assert set(files) == set(ours), "emitters wrote files outside the family"
    assert sorted(ours) == sorted(theirs)
    different = sorted(p for p in theirs if ours[p] != theirs[p])
    assert not different, f"{len(different)} files differ:\n" + first_difference(ours, theirs)
