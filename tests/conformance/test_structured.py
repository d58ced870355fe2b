"""`opgen.api.structured` against upstream torchgen's structured API, live, on torch's spec.

For every structured operator group of torch's packaged spec this compares the parameters
of the structured kernel's `meta()`, `impl()` and outputs (each binding's definition and
name) and the `TORCH_IMPL_FUNC` head of every backend's structured kernel with what
torchgen's `torchgen.api.structured` and `StructuredImplSignature` give for the same group,
matched by the name of its out= function. The torchgen side runs inside
`native_function_manager(g)`, as its generators do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torchgen.api.structured as tg_structured
import torchgen.api.types as tgt
import torchgen.model as tgm
from torchgen.context import native_function_manager

import opgen.spec.groups as og
from opgen.api import structured

from .live_specs import LiveSpecs, live_specs


@pytest.fixture(scope="module")
def specs(torchgen_native_dir: Path) -> LiveSpecs:
    return live_specs(torchgen_native_dir)


def _bindings(bs: list[Any]) -> dict[str, list[str]]:
    return {"defn": [b.defn() for b in bs], "names": [b.name for b in bs]}


def _ours(specs: LiveSpecs, g: og.NativeFunctionsGroup) -> dict[str, Any]:
    impl_funcs = {
        str(key): structured.StructuredImplSignature(g, name=m.kernel).defn()
        for key, index in specs.ours.backend_indices.items()
        if (m := index.get_kernel(g)) is not None and m.structured
    }
    return {
        "meta": _bindings(structured.meta_arguments(g)),
        "impl": _bindings(structured.impl_arguments(g)),
        "out": _bindings(structured.out_arguments(g)),
        "impl_funcs": impl_funcs,
    }


def _theirs(specs: LiveSpecs, g: tgm.NativeFunctionsGroup) -> dict[str, Any]:
    with native_function_manager(g):
        impl_funcs = {
            str(key): tgt.StructuredImplSignature(g, name=m.kernel).defn()
            for key, index in specs.theirs.backend_indices.items()
            if (m := index.get_kernel(g)) is not None and m.structured
        }
        return {
            "meta": _bindings(tg_structured.meta_arguments(g)),
            "impl": _bindings(tg_structured.impl_arguments(g)),
            "out": _bindings(tg_structured.out_arguments(g)),
            "impl_funcs": impl_funcs,
        }


def test_same_structured_groups(specs: LiveSpecs) -> None:
    ours = [str(g.out.func.name) for g, _ in specs.groups() if g.structured]
    theirs = [str(g.out.func.name) for _, g in specs.groups() if g.structured]
    assert ours == theirs
    assert len(ours) > 250


def test_meta_impl_and_out_arguments(specs: LiveSpecs) -> None:
    mismatches = []
    compared = kernels = 0
    for ours, theirs in specs.groups():
        if not ours.structured:
            continue
        o, t = _ours(specs, ours), _theirs(specs, theirs)
        compared += 1
        kernels += len(t["impl_funcs"])
        if o != t:
            mismatches.append((str(ours.out.func.name), o, t))
    assert mismatches == []
    assert compared > 250
    assert kernels > 250  # every structured group has a structured kernel somewhere
