"""opgen's reading of ExecuTorch's kernel YAMLs against upstream's codegen, live, field by field.

The reference YAMLs are ExecuTorch's own, kept outside the project
(`OPGEN_EXECUTORCH_REFERENCE`, default `../shared/executorch` beside the
checkout; the tests skip without them). Upstream is the installed
`executorch.codegen` (the `executorch` wheel, on the installed torch's
torchgen): `parse_yaml_files`, which rewrites a functions YAML with its `op:`
entries translated (`translate_native_yaml`) and reads it and a custom-ops
YAML with torchgen, and then every key's string, which its generator renders
for each key. Both sides read against torch's packaged `native_functions.yaml`
and `tags.yaml`.

Each reference YAML is read as a functions YAML (`--functions-yaml-path`) and,
if it has only `func:` entries, as a custom-ops YAML too. Where upstream
accepts it, the two readings must agree on the operators in order, every
field of each `NativeFunction` that torchgen's model records (as
`torchgen_model.model_record` reads them, but the dispatch tables, which only
decide the kernels of a file without `kernels:` and are compared through them,
and, for a functions YAML, the lines, which upstream takes from its rewritten
file), and the kernel index: each operator's keys in order, each key's string
and its kernel's namespace and name. Where upstream rejects it, opgen must
too. Small YAMLs check what the reference files do not use: aliases of several
dtypes, the order of `arg_meta`, kernel namespaces, the kernels of `dispatch:`.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
from executorch.codegen.gen import parse_yaml_files
from torchgen.selective_build.selector import SelectiveBuilder

from opgen.diagnostics import SpecError
from opgen.spec import Spec, load_spec
from opgen.spec.executorch import ETParsedYaml, ETReadOptions, load_executorch_yaml
from opgen.tooling.dump import function_record

from .executorch_reference import KERNEL_YAMLS, has_op_entries, reference
from .torchgen_model import model_record

# The reference YAMLs upstream rejects against torch 2.13's spec: ExecuTorch's ATen-mode
# list names operators torch does not have (conv1d.out), as opgen reports too.
UPSTREAM_REJECTS = {"kernels/aten/functions.yaml"}


def upstream_reading(path: Path, aten: Path, tags: Path, *, custom_ops: bool) -> Any:
    """Upstream's reading of a kernel YAML (its ETParsedYaml); raises where it stops.

    As its generator does, every key is rendered (`gen_unboxing` sorts by the strings):
    a dtype its ScalarType does not have fails only there.
    """
    parsed, _ = parse_yaml_files(
        tags_yaml_path=str(tags),
        aten_yaml_path=str(aten),
        native_yaml_path=None if custom_ops else str(path),
        custom_ops_yaml_path=str(path) if custom_ops else None,
        selector=SelectiveBuilder.get_nop_selector(),
        use_aten_lib=False,
    )
    for kernels in parsed.kernel_index.index.values():
        for key in kernels:
            key.to_native_string()
    return parsed


def kernel_index_of(index: Any) -> list[tuple[str, list[tuple[str, str, str]]]]:
    """An index, either side's: per operator, its keys' strings and kernels, in order."""
    return [
        (str(name), [(k.to_native_string(), m.cpp_namespace, m.kernel) for k, m in kernels.items()])
        for name, kernels in index.index.items()
    ]


def upstream_records(parsed: Any, custom_ops: bool) -> list[dict[str, Any]]:
    return [_comparable(model_record(f, {}), custom_ops) for f in parsed.native_functions]


def opgen_records(parsed: ETParsedYaml, aten: Spec, custom_ops: bool) -> list[dict[str, Any]]:
    # The records' dispatch tables are left out: a spec without kernels is enough.
    spec = Spec(
        functions=parsed.native_functions,
        backend_indices={},
        grouped=parsed.native_functions,
        view_grouped=parsed.native_functions,
        tags=aten.tags,
        entry_count=len(parsed.native_functions),
        sources={},
    )
    return [_comparable(function_record(spec, f), custom_ops) for f in parsed.native_functions]


def _comparable(record: dict[str, Any], custom_ops: bool) -> dict[str, Any]:
    dropped = {"dispatch"} if custom_ops else {"dispatch", "line"}
    return {k: v for k, v in record.items() if k not in dropped}


@functools.cache
def aten_spec(native: Path, tags: Path) -> Spec:
    return load_spec(str(native), str(tags))


def compare(path: Path, native_dir: Path, custom_ops: bool) -> None:
    native, tags = native_dir / "native_functions.yaml", native_dir / "tags.yaml"
    spec = aten_spec(native, tags)
    theirs = upstream_reading(path, native, tags, custom_ops=custom_ops)
    ours = load_executorch_yaml(str(path), spec, ETReadOptions(custom_ops=custom_ops))
    names = [f"{f.namespace}::{f.func.name}" for f in ours.native_functions]
    assert names == [f"{f.namespace}::{f.func.name}" for f in theirs.native_functions]
    assert opgen_records(ours, spec, custom_ops) == upstream_records(theirs, custom_ops)
    assert kernel_index_of(ours.kernel_index) == kernel_index_of(theirs.kernel_index)


ACCEPTED = [name for name in KERNEL_YAMLS if name not in UPSTREAM_REJECTS]


@pytest.mark.parametrize("name", ACCEPTED)
def test_functions_yaml_reads_as_upstream_reads_it(name: str, torchgen_native_dir: Path) -> None:
    compare(reference(name), torchgen_native_dir, custom_ops=False)


@pytest.mark.parametrize("name", [name for name in ACCEPTED if not has_op_entries(name)])
def test_custom_ops_yaml_reads_as_upstream_reads_it(name: str, torchgen_native_dir: Path) -> None:
    compare(reference(name), torchgen_native_dir, custom_ops=True)


@pytest.mark.parametrize("name", sorted(UPSTREAM_REJECTS))
def test_both_reject(name: str, torchgen_native_dir: Path) -> None:
    path = reference(name)
    native, tags = torchgen_native_dir / "native_functions.yaml", torchgen_native_dir / "tags.yaml"
    with pytest.raises(Exception):  # noqa: B017 - any error will do
        upstream_reading(path, native, tags, custom_ops=False)
    with pytest.raises(SpecError):
        load_executorch_yaml(str(path), aten_spec(native, tags))


# Small kernel YAMLs for what the reference files do not use.
SNIPPETS = {
    # One alias of two dtypes in three arguments, two dim orders (one of a single
    # dimension, which prints with a trailing comma), arguments written out of order.
    "aliases": """
- op: add.out
  type_alias:
    T0: [Double, Float]
  dim_order_alias:
    D0: [0, 1, 2, 3]
    D1: [0]
  kernels:
    - arg_meta: null
      kernel_name: torch::executor::add_out
    - arg_meta:
        self: [T0, D0]
        out: [T0, D1]
        other: [T0, D0]
      kernel_name: a::b::c::add_out_fast
    - arg_meta: {}
      kernel_name: add_out_nothing
""",
    # The same, as a custom operator (a custom-ops YAML keeps arg_meta's order).
    "custom": """
- func: my_ops::scale.out(Tensor x, Tensor y, *, Tensor(a!) out) -> Tensor(a!)
  type_alias:
    T0: [Bool, Byte, Char, Short, Int, Long]
  dim_order_alias:
    D0: [1, 0]
  kernels:
    - arg_meta:
        y: [T0, D0]
        x: [T0, D0]
      kernel_name: my_ops::scale_out
""",
    # No `kernels:` anywhere: the dispatch tables' kernels, the last key of each
    # operator's in the file's order of keys (after the rewrite sorts each table).
    "dispatch": """
- op: add.out
  dispatch:
    CUDA: add_out_cuda
    CPU: torch::executor::add_out_cpu
- op: mul.out
- op: sub.out
  structured: True
- func: my_ops::foo(Tensor x) -> Tensor
  dispatch:
    CompositeExplicitAutograd: my_ops::foo
- op: clamp.out
  dispatch:
    Meta: clamp_out_meta
    CPU: clamp_out_cpu
""",
}


@pytest.mark.parametrize("snippet", sorted(SNIPPETS))
def test_snippets_read_as_upstream_reads_them(
    snippet: str, torchgen_native_dir: Path, tmp_path: Path
) -> None:
    path = tmp_path / f"{snippet}.yaml"
    path.write_text(SNIPPETS[snippet].lstrip(), encoding="utf-8")
    compare(path, torchgen_native_dir, custom_ops=False)
    if not any(line.startswith("- op:") for line in SNIPPETS[snippet].splitlines()):
        compare(path, torchgen_native_dir, custom_ops=True)


def test_two_type_aliases_give_upstreams_keys(torchgen_native_dir: Path, tmp_path: Path) -> None:
    """Upstream's order of the keys of two aliases follows Python's hash seed; opgen's is
    one of its orders, always the same: compared as sets, and opgen's order is stated in
    tests/unit/test_executorch_spec.py."""
    path = tmp_path / "two.yaml"
    path.write_text(
        "- op: add.out\n  type_alias:\n    T0: [Float, Double]\n    T1: [Int, Long]\n"
        "  dim_order_alias:\n    D0: [0, 1]\n  kernels:\n    - arg_meta:\n"
        "        self: [T0, D0]\n        other: [T1, D0]\n        out: [T0, D0]\n"
        "      kernel_name: add_out_mixed\n",
        encoding="utf-8",
    )
    native, tags = torchgen_native_dir / "native_functions.yaml", torchgen_native_dir / "tags.yaml"
    theirs = upstream_reading(path, native, tags, custom_ops=False)
    ours = load_executorch_yaml(str(path), aten_spec(native, tags))
    [(_, their_keys)] = kernel_index_of(theirs.kernel_index)
    [(_, our_keys)] = kernel_index_of(ours.kernel_index)
    assert sorted(our_keys) == sorted(their_keys)
    assert len(our_keys) == 4
