"""Reading part of a spec gives, for the operators asked for, what reading all of it gives.

`opgen backend` and `opgen lazy` read only the entries their operators need
(`opgen.spec.partial`). For every operator of torch's spec, asked for in
batches, the partial model must hold the same function (schema, every field
`opgen dump` prints, its kernels) in the same grouped item, and the grouped
items must come in the whole spec's order. Split into parts of whole families
(`family_parts`), read apart, the parts hold those operators between them,
each once, and their grouped items take the whole spec's order by their lines
(`grouped_lines`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opgen.diagnostics import SpecError
from opgen.spec.groups import NativeFunctionsGroup, grouped_lines
from opgen.spec.model import LoadOptions, Spec, load_spec
from opgen.spec.native import NativeFunction
from opgen.spec.partial import family, family_parts, only_families
from opgen.spec.yaml.load import read_text
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


@pytest.mark.parametrize("count", [2, 3, 5])
def test_parts_read_apart_are_the_whole_spec_in_its_order(
    count: int, whole: Spec, torchgen_native_dir: Path
) -> None:
    native, tags = spec_files("torch", torchgen_native_dir)
    text = read_text(native)
    names = frozenset(str(f.func.name) for f in whole.functions[1::3])
    parts = family_parts(text, names, count, min_entries=64)
    assert len(parts) == count
    listed: list[str] = []
    items: list[tuple[int, list[str]]] = []  # (line, members) of every part's items
    for operators, part_text in parts:
        assert part_text == only_families(text, operators)
        spec = load_spec(native, tags, native_text=part_text)
        items += zip(grouped_lines(spec.grouped), map(_members, spec.grouped), strict=True)
        listed += operators
    assert sorted(listed) == sorted(names)  # each operator in one part
    sizes = [part_text.count("\n- ") for _, part_text in parts]
    assert max(sizes) - min(sizes) <= max(sizes) // 4  # parts of about equal size
    whole_items = [_members(item) for item in whole.grouped]
    expected = [m for m in whole_items if any(family(name) in map(family, names) for name in m)]
    assert [members for _, members in sorted(items, key=lambda item: item[0])] == expected


def test_grouped_lines_are_each_operators_first() -> None:
    text = (
        "- func: f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)\n"  # line 1
        "- func: g(Tensor self) -> Tensor\n"
        "- func: f(Tensor x) -> Tensor\n"
        "- func: g.Scalar(Tensor x, Scalar s) -> Tensor\n"
        "- func: g_(Tensor(a!) self) -> Tensor(a!)\n"  # line 5: g's variant; no out=
    )
    spec = load_spec("spec.yaml", None, native_text=text)
    assert [_members(item) for item in spec.grouped] == [
        ["f", "f.out"],
        ["g"],
        ["g_"],
        ["g.Scalar"],
    ]
    assert grouped_lines(spec.grouped) == [1, 2, 2, 4]


def test_parts_of_a_small_spec() -> None:
    a = "- func: a(Tensor x) -> Tensor\n  variants: function\n"
    b = "- func: b(Tensor self) -> Tensor\n- func: b_(Tensor(a!) self) -> Tensor(a!)\n"
    c = "- func: c(Tensor x) -> Tensor\n"
    text = "# head\n" + a + b + c
    # The larger family first, to the lighter part: b (2 entries), then a, then c.
    assert family_parts(text, ["a", "b_", "c"], 2) == [
        (frozenset({"b_"}), "# head\n\n\n" + b + "\n"),
        (frozenset({"a", "c"}), "# head\n" + a + "\n\n" + c),
    ]
    # At least `min_entries` entries a part; one part if an entry does not name itself.
    assert [ops for ops, _ in family_parts(text, ["a", "b_", "c"], 2, min_entries=3)] == [
        frozenset({"a", "b_", "c"})
    ]
    unnamed = text + "- variants: function\n  func: d(Tensor x) -> Tensor\n"
    assert family_parts(unnamed, ["a", "c"], 2) == [
        (frozenset({"a", "c"}), only_families(unnamed, ["a", "c"]))
    ]


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


def test_a_spec_read_without_view_groups() -> None:
    """As gen_backend_stubs reads it: views are not grouped, nor their rules checked."""
    text = "- func: v(Tensor(a) self) -> Tensor(a)\n  dispatch:\n    CPU: v\n"
    with pytest.raises(SpecError, match="'v' is a view operator, so it needs a copy variant"):
        load_spec("spec.yaml", None, native_text=text)
    spec = load_spec("spec.yaml", None, LoadOptions(group_views=False), native_text=text)
    assert spec.view_grouped == spec.functions
