"""Schema registration, backend select, op lists and Declarations.yaml, byte for byte.

For every configuration of `aten_trees.CONFIGS`, opgen's emitters of this family
must produce exactly the family's files torchgen writes, with the same bytes:
`RegisterSchema.cpp`, `RegisterBackendSelect.cpp`, `core/ATenOpList.cpp`
(`--generate sources`), `core/aten_interned_strings.h`, `core/enum_tag.h`,
`RegistrationDeclarations.h` (`--generate headers`) and `Declarations.yaml`
(`--generate declarations_yaml`).

Declarations.yaml is written without PyYAML's representer; a second test dumps
the same data through PyYAML (the dumper torchgen uses) and checks that the
bytes are identical, and that every string the fast path writes plain is what
PyYAML writes for it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from opgen.targets.aten.backend_select import emit_backend_select
from opgen.targets.aten.declarations_yaml import emit_declarations_yaml
from opgen.targets.aten.op_lists import (
    emit_aten_op_list,
    emit_interned_strings,
    emit_registration_declarations,
    emit_tag_enum,
)
from opgen.targets.aten.options import AtenPart
from opgen.targets.aten.schema_registration import emit_schema_registration

from .aten_trees import CONFIGS, TreeOf, assert_same_files, family_files, unified_diff

FAMILY = re.compile(
    r"out/(RegisterSchema\.cpp|RegisterBackendSelect\.cpp|core/ATenOpList\.cpp"
    r"|core/aten_interned_strings\.h|core/enum_tag\.h|RegistrationDeclarations\.h"
    r"|Declarations\.yaml)\Z"
)

EMITTERS = (
    (AtenPart.sources, emit_backend_select),
    (AtenPart.sources, emit_schema_registration),
    (AtenPart.sources, emit_aten_op_list),
    (AtenPart.headers, emit_registration_declarations),
    (AtenPart.headers, emit_interned_strings),
    (AtenPart.headers, emit_tag_enum),
    (AtenPart.declarations_yaml, emit_declarations_yaml),
)


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_family_matches_torchgen(
    config: str,
    torchgen_aten_tree: TreeOf,
    torchgen_aten_dir: Path,
    tmp_path: Path,
) -> None:
    flags = CONFIGS[config]
    theirs_all = torchgen_aten_tree(config).files
    theirs = {p: data for p, data in theirs_all.items() if FAMILY.match(p)}
    ours = family_files(flags, torchgen_aten_dir, tmp_path / "opgen", EMITTERS)
    assert_same_files(theirs, ours)


def test_declarations_yaml_of_the_example_spec(torchgen_native_dir: Path) -> None:
    """The example spec's Declarations.yaml against torchgen's, computed live (it is small)."""
    from torchgen.gen import compute_declaration_yaml, format_yaml, parse_native_yaml

    from opgen.spec.model import load_spec
    from opgen.spec.selection import OperatorSelection
    from opgen.targets.aten.declarations_yaml import declarations_yaml
    from opgen.targets.aten.options import AtenOptions
    from opgen.targets.aten.run import AtenRun

    from .spec_files import spec_files

    native, tags = spec_files("example", torchgen_native_dir)
    parsed = parse_native_yaml(native, tags)
    theirs = format_yaml([compute_declaration_yaml(f) for f in parsed.native_functions])
    options = AtenOptions(generate=frozenset({AtenPart.declarations_yaml}))
    run = AtenRun.of(options, load_spec(native, tags), OperatorSelection.everything())
    ours = declarations_yaml(run)
    if ours != theirs:
        pytest.fail(unified_diff("Declarations.yaml", theirs.encode(), ours.encode()))
