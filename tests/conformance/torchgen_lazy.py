"""Upstream torchgen's lazy-tensor generators, called per function: the oracle of test_lazy_nodes.

`torchgen.dest.lazy_ir` takes an out-of-tree `BackendIndex` and, for the IR value
type, a global that `run_gen_lazy_tensor` sets (`setValueT`). `value_class` sets it
for a block and puts back upstream's default afterwards. Each generator's result is
its list of texts, or `RAISED` where upstream raises for the function (opgen must
raise `UnsupportedLazyOperator` there).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torchgen.api.dispatcher as tg_dispatcher
import torchgen.model as tg
from torchgen.api.lazy import setValueT
from torchgen.api.types import BaseCppType
from torchgen.dest.lazy_ir import (
    GenLazyIR,
    GenLazyNativeFuncDefinition,
    GenLazyShapeInferenceDefinition,
    GenTSLazyIR,
    generate_non_native_lazy_ir_nodes,
)

import opgen.spec.native as on
from opgen.api import dispatcher
from opgen.spec.backend import BackendIndex, BackendMetadata
from opgen.spec.keys import DispatchKey
from opgen.targets.lazy.options import LazyOptions

RAISED = ["<raised>"]
BACKEND = "XLA"
CPP_NAMESPACE = "torch_xla"


@contextmanager
def value_class(text: str) -> Iterator[None]:
    """Upstream's IR value type is `text` inside the block."""
    namespace, _, name = text.rpartition("::")
    setValueT(BaseCppType(namespace, name))
    try:
        yield
    finally:
        setValueT(BaseCppType("torch::lazy", "Value"))


def outcome(generate: Callable[[], list[str]]) -> list[str]:
    try:
        return generate()
    except AssertionError:
        return RAISED


def backend_indices(
    pairs: list[tuple[on.NativeFunction, tg.NativeFunction]], symint: Callable[[int], bool]
) -> tuple[BackendIndex, tg.BackendIndex]:
    """An XLA-like index with a kernel for every function, opgen's and upstream's.

    A function with SymInts has a SymInt kernel when `symint(position)` says so, as
    if listed under `symint:` in the backend YAML.
    """
    ours: dict[Any, BackendMetadata] = {}
    theirs: dict[tg.OperatorName, tg.BackendMetadata] = {}
    for i, (o, t) in enumerate(pairs):
        suffix = "_symint" if o.func.has_symint() and symint(i) else ""
        kernel = dispatcher.name(o.func) + suffix
        assert kernel == tg_dispatcher.name(t.func) + suffix
        ours[o.func.name] = BackendMetadata(kernel, False, CPP_NAMESPACE)
        theirs[t.func.name] = tg.BackendMetadata(kernel, False, CPP_NAMESPACE)
    key = DispatchKey(BACKEND)
    return (
        BackendIndex(key, False, False, True, ours),
        tg.BackendIndex(tg.DispatchKey.parse(BACKEND), False, False, True, theirs),
    )


def ir_generator(index: tg.BackendIndex, options: LazyOptions) -> GenLazyIR:
    generator = GenTSLazyIR if options.gen_ts_lowerings else GenLazyIR
    return generator(index, options.backend_name, options.node_base, options.use_lazy_shape)


def ir_node_classes(
    f: tg.NativeFunction, index: tg.BackendIndex, options: LazyOptions
) -> list[str]:
    return outcome(lambda: ir_generator(index, options)(f))


def shape_inference_declarations(f: tg.NativeFunction, index: tg.BackendIndex) -> list[str]:
    return outcome(lambda: GenLazyShapeInferenceDefinition(index, "torch::lazy::LazyTensor")(f))


def native_definitions_generator(
    index: tg.BackendIndex, options: LazyOptions
) -> GenLazyNativeFuncDefinition:
    fields = dataclasses.asdict(options)
    return GenLazyNativeFuncDefinition(
        f"{BACKEND}NativeFunctions",
        index,
        *[
            fields[name]
            for name in (
                "tensor_class",
                "gen_forced_fallback_code",
                "backend_namespace",
                "get_tensorlist",
                "get_tensor_or_wrap_number",
                "try_get_tensor",
                "metrics_counter",
                "create_tensor",
                "create_from_first_tensor",
                "create_aten_from_ltc_tensor",
                "tuple_aten_from_ltc_tensors",
                "lazy_tensor_ptr",
                "get_device_fn",
            )
        ],
    )


def non_native_nodes(entries: list[dict[str, Any]], options: LazyOptions) -> list[str]:
    """Upstream's `generate_non_native_lazy_ir_nodes` on `non_native:` entries."""
    index = tg.BackendIndex(tg.DispatchKey.parse(BACKEND), False, False, True, {})
    nodes: list[str] = generate_non_native_lazy_ir_nodes(entries, ir_generator(index, options))
    return nodes
