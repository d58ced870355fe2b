"""Reading part of a spec gives, for the operators asked for, what reading all of it gives.

`opgen backend` and `opgen lazy` read only the entries their operators need
(`opgen.spec.partial`). For every operator of torch's spec, asked for in
batches, the partial model must hold the same function (schema, every field
`opgen dump` prints, its kernels) in the same grouped item, and the grouped
items must come in the whole spec's order.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.model import LoadOptions, Spec, load_spec
from opgen.spec.native import NativeFunction
from opgen.spec.partial import family, only_families
from opgen.tooling.dump import function_record

from .spec_files import spec_files

BATCHES = 7  # every operator is in one batch; a batch mixes unrelated families


@pytest.fixture(scope="module")
def whole(torchgen_native_dir: Path) -> Spec:
    return load_spec(*spec_files("torch", torchgen_native_dir))


def _members(item: NativeFunction | NativeFunctionsGroup) -> list[str]:
    functions = item.functions() if isinstance(item, NativeFunctionsGroup) else [item]
    return [str(f.func.name) for f in functions]


def _record(spec: Spec, f: NativeFunction) -> str:
    return json.dumps(function_record(spec, f), sort_keys=True, default=str)


@pytest.mark.parametrize("batch", range(BATCHES))
def test_partial_spec_is_the_whole_spec_for_its_operators(
    batch: int, whole: Spec, torchgen_native_dir: Path
) -> None:
    names = frozenset(str(f.func.name) for f in whole.functions[batch::BATCHES])
    part = load_spec(*spec_files("torch", torchgen_native_dir), LoadOptions(only_operators=names))
    by_name = {str(f.func.name): f for f in part.functions}
    assert names <= by_name.keys()
    for f in whole.functions:
        if str(f.func.name) in names:
            assert _record(part, by_name[str(f.func.name)]) == _record(whole, f)
    wanted = {family(n) for n in names}
    items = [_members(item) for item in whole.grouped]
    expected = [m for m in items if any(family(name) in wanted for name in m)]
    assert [_members(item) for item in part.grouped] == expected


@pytest.mark.parametrize("batch", range(BATCHES))
def test_without_view_families_the_schemas_are_the_whole_specs(
    batch: int, whole: Spec, torchgen_native_dir: Path
) -> None:
    """What `opgen executorch` reads for the schemas of derived operators."""
    names = frozenset(str(f.func.name) for f in whole.functions[batch::BATCHES])
    options = LoadOptions(only_operators=names, view_families=False)
    part = load_spec(*spec_files("torch", torchgen_native_dir), options)
    schemas = {str(f.func.name): str(f.func) for f in part.functions}
    assert {
        str(f.func.name): str(f.func) for f in whole.functions if str(f.func.name) in names
    } == {n: schemas[n] for n in names}


def test_blanked_entries_keep_lines_and_columns() -> None:
    a = "- func: a(Tensor x) -> Tensor\n  variants: function\n\n"
    b = "- func: b_(Tensor(a!) x) -> Tensor(a!)\n"
    text = "# head\n" + a + b
    assert only_families(text, ["b.out"]) == "# head\n\n\n\n" + b
    assert only_families(text, ["a"]) == "# head\n" + a + "\n"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("add.Tensor", "add"),
        ("add_.Scalar", "add"),
        ("__iand__.Tensor", "and"),
        ("__and__.Scalar", "and"),
        ("_fused_moving_avg_obs_fq_helper_functional", "_fused_moving_avg_obs_fq_helper"),
        ("view_copy.dtype", "view"),
        ("slice_scatter", "slice"),
        ("_foreach_add_.List", "_foreach_add"),
    ],
)
def test_family(name: str, expected: str) -> None:
    assert family(name) == expected


def test_family_without_views() -> None:
    assert family("view_copy.dtype", views=False) == "view_copy"
    assert family("slice_scatter", views=False) == "slice_scatter"
    assert family("add_.Scalar", views=False) == "add"
    text = "- func: t(Tensor x) -> Tensor\n- func: t_copy(Tensor x) -> Tensor\n"
    assert (
        only_families(text, ["t_copy.out"], views=False) == "\n- func: t_copy(Tensor x) -> Tensor\n"
    )
    assert only_families(text, ["t"], views=False) == text  # a view brings its copy
