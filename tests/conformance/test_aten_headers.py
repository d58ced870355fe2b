"""The operator and function headers and sources, byte for byte against torchgen.

Family: `Operators.h`, `Operators_<N>.cpp` + `OperatorsEverything.cpp`,
`MethodOperators.h`, `Functions.h`, `Functions.cpp`, `RedispatchFunctions.h`,
`NativeFunctions.h`, `NativeMetaFunctions.h`, `core/TensorBody.h`,
`core/TensorMethods.cpp`, and with `--per-operator-headers`
`ops/<root>{,_ops,_native,_meta}.h` (not the `ops/<root>_<key>_dispatch.h`
headers). For every configuration of `aten_trees.CONFIGS`, opgen must write
the same set of these paths as torchgen, with the same bytes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from opgen.spec.keys import DispatchKey
from opgen.targets.aten.functions import emit_functions_sources
from opgen.targets.aten.operator_headers import emit_headers
from opgen.targets.aten.operators import emit_operators_sources
from opgen.targets.aten.options import AtenPart

from .aten_trees import CONFIGS, TreeOf, assert_same_files, family_files

_TOP = re.compile(
    r"out/(Operators\.h|Operators(_\d+|Everything)\.cpp|MethodOperators\.h|Functions\.(h|cpp)"
    r"|RedispatchFunctions\.h|NativeFunctions\.h|NativeMetaFunctions\.h"
    r"|core/TensorBody\.h|core/TensorMethods\.cpp)"
)
_KEYS = "|".join(sorted(re.escape(k.value.lower()) for k in DispatchKey))
_DISPATCH_HEADER = re.compile(rf"out/ops/.*_({_KEYS})_dispatch\.h")


def in_family(path: str) -> bool:
    if _TOP.fullmatch(path):
        return True
    return path.startswith("out/ops/") and not _DISPATCH_HEADER.fullmatch(path)


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_headers_match_torchgen(
    config: str,
    torchgen_aten_tree: TreeOf,
    torchgen_aten_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    flags = CONFIGS[config]
    root = tmp_path_factory.mktemp(f"headers-{config}")
    theirs_tree = torchgen_aten_tree(config)
    theirs = {p: data for p, data in theirs_tree.files.items() if in_family(p)}
    emitters = (
        (AtenPart.headers, emit_headers),
        (AtenPart.sources, emit_operators_sources),
        (AtenPart.sources, emit_functions_sources),
    )
    files = family_files(flags, torchgen_aten_dir, root / "opgen", emitters)
    ours = {p: data for p, data in files.items() if in_family(p)}
    assert_same_files(theirs, ours)
