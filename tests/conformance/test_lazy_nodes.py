"""`opgen lazy`'s per-function text against upstream torchgen's lazy generators, live.

For every function of torch's packaged spec, with an XLA-like backend index that has
a kernel for each (all SymInt-aware, or none), this compares with
`torchgen.dest.lazy_ir`:
- the IR node class (`GenLazyIR`, and `GenTSLazyIR` with TorchScript lowerings), with
  and without lazy shapes, and with another node base and IR value class;
- the declaration of the shape function (`GenLazyShapeInferenceDefinition`);
- the kernel (`GenLazyNativeFuncDefinition`) with upstream's default names and with
  torch_xla's, with its IR value class too;
and the nodes of `non_native:` entries (`generate_non_native_lazy_ir_nodes`): PyTorch's
own (`ts_native_functions.yaml`) and entries using every property and argument kind.
Where upstream raises for a function, opgen must raise `UnsupportedLazyOperator`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torchgen.api.lazy as tg_lazy

from opgen.api.lazy import LAZY_IR_PROPERTIES, LazyIrProperties, UnsupportedLazyOperator
from opgen.releases import NEWEST
from opgen.spec.schema import FunctionSchema
from opgen.targets.lazy.kernels import native_function_definitions, shape_inference_declarations
from opgen.targets.lazy.nodes import ir_node_classes, non_native_node
from opgen.targets.lazy.options import KernelStyle, LazyOptions, NodeStyle

from . import torchgen_lazy as upstream
from .live_specs import LiveSpecs, live_specs

IR_CONFIGS = {
    "plain": LazyOptions(),
    "plain-no-shape": LazyOptions(use_lazy_shape=False),
    "ts": LazyOptions(gen_ts_lowerings=True),
    "ts-no-shape": LazyOptions(gen_ts_lowerings=True, use_lazy_shape=False),
    "xla": LazyOptions(node_base="XlaNode", lazy_value_class="torch_xla::XlaValue"),
    "ts-xla-value": LazyOptions(gen_ts_lowerings=True, lazy_value_class="torch_xla::XlaValue"),
}

_XLA = LazyOptions(
    backend_namespace="torch_xla",
    create_from_first_tensor=True,
    get_device_fn="torch_xla::bridge::GetXlaDevice",
    create_tensor="XLATensor::Create",
    try_get_tensor="bridge::TryGetXlaTensor",
    get_tensor_or_wrap_number="bridge::GetXlaTensorOrCreateForWrappedNumber",
    lazy_tensor_ptr="XLATensorPtr",
    metrics_counter='TORCH_LAZY_FN_COUNTER_TIMED_TRACING("xla::")',
    create_aten_from_ltc_tensor="torch_xla::bridge::AtenFromXlaTensor",
    gen_forced_fallback_code=True,
)
KERNEL_CONFIGS = {
    "default": LazyOptions(),
    "xla": _XLA,
    "xla-value": dataclasses.replace(_XLA, lazy_value_class="torch_xla::XlaValue"),
}

# PyTorch's own `non_native:` entries (aten/src/ATen/native/ts_native_functions.yaml).
TS_NON_NATIVE: list[dict[str, Any]] = [
    {
        "func": "scalar(Scalar value, ScalarType type) -> Tensor",
        "opkind": "at::prim::Constant",
        "properties": ["ShapeCompute", "TreatScalarsAsConstants", "CanBeReusedDeclOnly"],
    },
    {"func": "expand(Tensor input, int[] size, bool is_scalar_expand) -> Tensor"},
    {"func": "view(Tensor input, int[] output_size) -> Tensor", "properties": ["ShapeCompute"]},
    {
        "func": "cast(Tensor input, ScalarType dtype, ScalarType? stype) -> Tensor",
        "opkind": "ltc_cast",
        "properties": ["ShapeCompute"],
    },
    {
        "func": "as_strided_view_update(Tensor target, Tensor input, int[] size, int[] stride, "
        "int storage_offset) -> Tensor",
        "opkind": "ltc_as_strided_view_update",
    },
    {"func": "as_strided(Tensor input, int[] size, int[] stride, int storage_offset) -> Tensor"},
    {
        "func": "diagonal_view_update(Tensor target, Tensor input, int offset, int dim1, "
        "int dim2) -> Tensor",
        "opkind": "ltc_diagonal_view_update",
        "properties": ["ShapeCompute"],
    },
    {"func": "diagonal(Tensor input, int offset, int dim1, int dim2) -> Tensor"},
    {
        "func": "narrow_view_update(Tensor input, Tensor source, int[] base_indices) -> Tensor",
        "opkind": "ltc_narrow_view_update",
    },
    {"func": "narrow(Tensor input, int[] base_indices, int[] sizes) -> Tensor"},
    {"func": "permute(Tensor input, int[] dims) -> Tensor"},
    {"func": "resize(Tensor input, int[] size) -> Tensor"},
    {
        "func": "select_view_update(Tensor target, Tensor source, int dim, int start, int end, "
        "int stride) -> Tensor",
        "opkind": "ltc_select_view_update",
        "properties": ["ShapeCompute"],
    },
    {"func": "select(Tensor input, int dim, int start, int end, int stride) -> Tensor"},
    {"func": "squeeze(Tensor input, int dim) -> Tensor"},
    {"func": "unsqueeze(Tensor input, int dim) -> Tensor"},
]

# Entries of our own: every property, and every kind of argument a node can hold.
OWN_NON_NATIVE: list[dict[str, Any]] = [
    {
        "func": "scalar(Scalar value, ScalarType type) -> Tensor",
        "properties": ["ShapeCompute", "TreatScalarsAsConstants"],
    },
    {
        "func": "expand(Tensor input, int[] size, bool is_scalar_expand) -> Tensor",
        "properties": ["ShapeCompute"],
    },
    {"func": "device_data() -> Tensor", "properties": ["CreateFnDeclOnly", "ShapeCompute"]},
    {
        "func": "generic_slice(Tensor input, int[] base_indices, int[] sizes) -> Tensor",
        "opkind": "xla_generic_slice",
        "properties": ["ShapePrecompute", "Lower", "CreateFn"],
    },
    {
        "func": "mixed.overload(Tensor self, Tensor? weight, Scalar alpha, Scalar? beta, "
        "str? mode, SymInt size, SymInt? limit, SymInt[] shape, float[]? scales, bool[3] mask, "
        '*, Generator? generator=None, str reduce="mean", Device? device=None) -> (Tensor, Tensor)',
        "properties": ["LowerDeclOnly", "CanBeReusedDeclOnly", "CreateFn"],
    },
    {
        "func": "constants(Scalar alpha, Scalar[] betas, Layout layout, MemoryFormat? format, "
        "Generator gen) -> Tensor",
        "properties": ["TreatScalarsAsConstants", "Lower", "CanBeReused"],
    },
    {"func": "stack_all(Tensor[] tensors, int dim) -> Tensor", "properties": ["Lower"]},
    {"func": "no_shape(Tensor a, Tensor b) -> Tensor", "properties": ["ShapeCompute", "Lower"]},
    # The last property of a group wins.
    {"func": "twice(Tensor a) -> Tensor", "properties": ["ShapeCompute", "ShapePrecompute"]},
]

# Entries upstream cannot generate.
UNSUPPORTED_NON_NATIVE = [
    "gather_all(Tensor self, Tensor?[] indices) -> Tensor",
    "on_stream(Tensor self, Stream stream) -> Tensor",
    "two_generators(Tensor self, *, Generator? a=None, Generator? b=None) -> Tensor",
]


@pytest.fixture(scope="module")
def specs(torchgen_native_dir: Path) -> LiveSpecs:
    return live_specs(torchgen_native_dir)


@dataclasses.dataclass(frozen=True)
class Indices:
    """Both sides' functions and backend indices."""

    pairs: list[tuple[Any, Any]]
    ours: Any
    theirs: Any


@pytest.fixture(scope="module", params=["symint", "int"])
def indices(request: pytest.FixtureRequest, specs: LiveSpecs) -> Indices:
    """Every function with SymInts has a SymInt kernel ("symint"), or none has ("int")."""
    pairs = specs.functions()
    symint = request.param == "symint"
    ours, theirs = upstream.backend_indices(pairs, lambda _: symint)
    return Indices(pairs, ours, theirs)


def ours_or_raised(generate: Callable[[], list[str]]) -> list[str]:
    try:
        return generate()
    except UnsupportedLazyOperator:
        return upstream.RAISED


def compare(
    indices: Indices,
    ours: Callable[[Any], list[str]],
    theirs: Callable[[Any], list[str]],
) -> tuple[list[tuple[str, list[str], list[str]]], int, int]:
    """The mismatching functions, how many gave text, and how many raised (upstream)."""
    mismatches, texts, raised = [], 0, 0
    for o, t in indices.pairs:
        expected = theirs(t)
        got = ours_or_raised(functools.partial(ours, o))
        if got != expected:
            mismatches.append((str(o.func.name), got, expected))
        if expected is upstream.RAISED:
            raised += 1
        elif expected:
            texts += 1
    return mismatches, texts, raised


@pytest.mark.parametrize("config", IR_CONFIGS)
def test_ir_node_classes(indices: Indices, config: str) -> None:
    options = IR_CONFIGS[config]
    with upstream.value_class(options.lazy_value_class):
        mismatches, texts, raised = compare(
            indices,
            lambda f: ir_node_classes(f, indices.ours, NodeStyle.of(options, NEWEST)),
            lambda f: upstream.ir_node_classes(f, indices.theirs, options),
        )
    assert mismatches[:1] == [], f"{len(mismatches)} functions differ"
    assert texts > 3000 and raised > 0


def test_shape_inference_declarations(indices: Indices) -> None:
    options = LazyOptions()
    mismatches, texts, raised = compare(
        indices,
        lambda f: shape_inference_declarations(f, indices.ours, options.lazy_value_class),
        lambda f: upstream.shape_inference_declarations(f, indices.theirs),
    )
    assert mismatches[:1] == [], f"{len(mismatches)} functions differ"
    assert texts > 1000 and raised > 0


@pytest.mark.parametrize("config", KERNEL_CONFIGS)
def test_native_function_definitions(indices: Indices, config: str) -> None:
    options = KERNEL_CONFIGS[config]
    generator = upstream.native_definitions_generator(indices.theirs, options)
    with upstream.value_class(options.lazy_value_class):
        mismatches, texts, raised = compare(
            indices,
            lambda f: native_function_definitions(
                f, indices.ours, options.lazy_value_class, KernelStyle.of(options)
            ),
            lambda f: upstream.outcome(lambda: generator(f)),
        )
    assert mismatches[:1] == [], f"{len(mismatches)} functions differ"
    assert texts > 2500 and raised > 0


@pytest.mark.parametrize("config", IR_CONFIGS)
@pytest.mark.parametrize("entries", ["ts_native_functions", "own"])
def test_non_native_nodes(config: str, entries: str) -> None:
    options = IR_CONFIGS[config]
    chosen = TS_NON_NATIVE if entries == "ts_native_functions" else OWN_NON_NATIVE
    with upstream.value_class(options.lazy_value_class):
        expected = upstream.non_native_nodes(chosen, options)
    got = [
        non_native_node(
            FunctionSchema.parse(e["func"]),
            e.get("properties", []),
            e.get("opkind"),
            NodeStyle.of(options, NEWEST),
        )
        for e in chosen
    ]
    assert got == expected


@pytest.mark.parametrize("func", UNSUPPORTED_NON_NATIVE)
def test_unsupported_non_native_nodes(func: str) -> None:
    options = LazyOptions()
    with upstream.value_class(options.lazy_value_class), pytest.raises(AssertionError):
        upstream.non_native_nodes([{"func": func}], options)
    with pytest.raises(UnsupportedLazyOperator):
        non_native_node(FunctionSchema.parse(func), [], None, NodeStyle.of(options, NEWEST))


def test_property_names_are_upstreams() -> None:
    names = {p for group in tg_lazy.LazyIrProperties.Properties for p in group}
    assert names == LAZY_IR_PROPERTIES


def test_unknown_property() -> None:
    with pytest.raises(ValueError, match="unknown lazy IR property 'WithLazyShape'"):
        LazyIrProperties.of("ShapeCache", "WithLazyShape")


def test_upstream_value_class_is_reset() -> None:
    with upstream.value_class("torch_xla::XlaValue"):
        assert str(tg_lazy.getValueT()) == "torch_xla::XlaValue"
    assert str(tg_lazy.getValueT()) == "torch::lazy::Value"


def test_symint_kernel_without_symint(specs: LiveSpecs) -> None:
    """`abs` listed under `symint:`: upstream declares its shape function, but has no
    signature for its kernel."""
    pairs = [(o, t) for o, t in specs.functions() if str(o.func.name) == "abs"]
    ours, theirs = upstream.backend_indices(pairs, lambda _: False)
    ours = dataclasses.replace(
        ours, index={n: dataclasses.replace(m, kernel="abs_symint") for n, m in ours.index.items()}
    )
    theirs = dataclasses.replace(
        theirs,
        index={n: dataclasses.replace(m, kernel="abs_symint") for n, m in theirs.index.items()},
    )
    [(o, t)] = pairs
    options = LazyOptions()
    expected = upstream.shape_inference_declarations(t, theirs)
    declared = "compute_shape_abs_symint(const at::Tensor & self);"
    assert expected == [f"TORCH_API std::vector<torch::lazy::Shape> {declared}"]
    assert shape_inference_declarations(o, ours, options.lazy_value_class) == expected
    generator = upstream.native_definitions_generator(theirs, options)
    assert upstream.outcome(lambda: generator(t)) is upstream.RAISED
    with pytest.raises(UnsupportedLazyOperator, match="cannot have a SymInt kernel"):
        native_function_definitions(o, ours, options.lazy_value_class, KernelStyle.of(options))
