"""The derivatives model against upstream's: torch's derivatives.yaml, read by both.

opgen's `load_derivative_infos` must give what torchgen's `load_derivatives`
gives (converted to opgen's classes by `torchgen_autograd`): the same schemas
in the same order, the same dispatch keys, and every field of every info,
backward and forward derivative equal. `match_differentiability_info` must
pair the same functions with the same infos, for every function and for a
selective build. Where upstream's value depends on set iteration order (the
inputs a forward formula needs; the saved values of a derived foreach info)
only the members are compared.

The malformed-derivatives corpus (tests/malformed_derivatives, see
tests/unit/test_malformed_derivatives.py) runs through upstream's whole
gen_autograd: a case marked `upstream-rejects` must fail there too, and the
others (which opgen rejects on purpose) must not.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from tests.malformed_corpus import DERIVATIVES, TAGS

from opgen.api import cpp
from opgen.autograd.load_derivatives import load_derivative_infos
from opgen.autograd.match import match_differentiability_info
from opgen.autograd.model import (
    DerivativeInfos,
    NativeFunctionWithDifferentiabilityInfo,
)
from opgen.spec import Spec, load_spec
from opgen.spec.selection import OperatorSelection

from .aten_trees import DATA
from .autograd_model_compare import infos_difference, matched_difference
from .autograd_trees import AutogradInputs

pytest.importorskip("torchgen")

from torchgen.selective_build.selector import SelectiveBuilder

from .torchgen_autograd import TorchgenAutograd, torchgen_autograd

SELECTION = DATA / "autograd_selection.yaml"


@pytest.fixture(scope="module")
def spec(autograd_inputs: AutogradInputs) -> Spec:
    return load_spec(autograd_inputs.native_yaml, autograd_inputs.tags_yaml)


@pytest.fixture(scope="module")
def ours(spec: Spec, autograd_inputs: AutogradInputs) -> DerivativeInfos:
    return load_derivative_infos(
        spec, os.path.join(autograd_inputs.autograd_dir, "derivatives.yaml")
    )


@pytest.fixture(scope="module")
def theirs(spec: Spec, autograd_inputs: AutogradInputs) -> TorchgenAutograd:
    inputs = autograd_inputs
    return torchgen_autograd(spec, inputs.native_yaml, inputs.tags_yaml, inputs.autograd_dir)


# -- the model -------------------------------------------------------------------


def test_the_same_operators_in_the_same_order(
    ours: DerivativeInfos, theirs: TorchgenAutograd
) -> None:
    assert [str(s) for s in ours.infos] == [str(s) for s in theirs.infos.infos]
    assert ours.used_dispatch_keys == theirs.infos.used_dispatch_keys


def test_every_info_is_upstreams(ours: DerivativeInfos, theirs: TorchgenAutograd) -> None:
    for schema, per_key in ours.infos.items():
        found = infos_difference(per_key, theirs.infos.infos[schema])
        assert found is None, f"{schema}: {found}"


def test_the_model_covers_the_dialect(ours: DerivativeInfos) -> None:
    """torch's file exercises every part of the model the comparison above checks."""
    infos = [info for per_key in ours.infos.values() for info in per_key.values()]
    forward = [d for info in infos for d in info.forward_derivatives]
    assert any(info.output_differentiability_conditions for info in infos)
    assert any(info.non_differentiable_arg_names for info in infos)
    assert any(info.used_named_gradients for info in infos)
    assert any(info.name.endswith("_copy.") for info in infos)
    assert any(d.formula.endswith(").conj()") for d in forward)  # auto_element_wise
    assert any(d.formula.startswith("at::") for d in forward)  # auto_linear
    assert {"Default", "AutogradNestedTensor", "AutogradCUDA"} <= ours.used_dispatch_keys


def _matched(
    spec: Spec, infos: DerivativeInfos, selection: OperatorSelection
) -> list[NativeFunctionWithDifferentiabilityInfo]:
    functions = [f for f in spec.functions if selection.is_native_function_selected_for_training(f)]
    functions.sort(key=lambda f: cpp.name(f.func))
    return match_differentiability_info(functions, infos)


def test_every_function_gets_upstreams_infos(
    spec: Spec, ours: DerivativeInfos, theirs: TorchgenAutograd
) -> None:
    matched = _matched(spec, ours, OperatorSelection.from_flags(None, None))
    assert matched_difference(matched, theirs.fns_with_diff_infos) is None
    derived = [info for fn in matched for info in (fn.info or {}).values() if info.func is fn.func]
    assert any((info.op or "").startswith("Foreach") for info in derived)


def test_a_selective_build_gets_upstreams_infos(
    spec: Spec, ours: DerivativeInfos, autograd_inputs: AutogradInputs
) -> None:
    inputs = autograd_inputs
    theirs = torchgen_autograd(
        spec,
        inputs.native_yaml,
        inputs.tags_yaml,
        inputs.autograd_dir,
        SelectiveBuilder.from_yaml_path(str(SELECTION)),
    )
    matched = _matched(spec, ours, OperatorSelection.from_flags(None, str(SELECTION)))
    assert 0 < len(matched) < len(spec.functions)
    assert matched_difference(matched, theirs.fns_with_diff_infos) is None


# -- the malformed corpus through upstream ------------------------------------------


def run_gen_autograd(case: Path, tmp_path: Path, autograd_dir: str) -> None:
    """Upstream's gen_autograd on a case, from fresh paths (torchgen caches by path)."""
    from torchgen.packaged.autograd.gen_autograd import gen_autograd

    shutil.copyfile(DERIVATIVES.native_for(case), tmp_path / "native_functions.yaml")
    shutil.copyfile(TAGS, tmp_path / "tags.yaml")
    autograd = tmp_path / "autograd"
    autograd.mkdir()
    shutil.copyfile(case / "derivatives.yaml", autograd / "derivatives.yaml")
    (autograd / "templates").symlink_to(Path(autograd_dir) / "templates")
    gen_autograd(
        str(tmp_path / "native_functions.yaml"),
        str(tmp_path / "tags.yaml"),
        str(tmp_path / "out"),
        str(autograd),
        SelectiveBuilder.get_nop_selector(),
    )


REJECTED = [c for c in DERIVATIVES.cases() if (c / "upstream-rejects").is_file()]
ACCEPTED = [c for c in DERIVATIVES.cases() if not (c / "upstream-rejects").is_file()]


@pytest.mark.parametrize("case", REJECTED, ids=[c.name for c in REJECTED])
def test_upstream_rejects(case: Path, tmp_path: Path, autograd_inputs: AutogradInputs) -> None:
    with pytest.raises(Exception):  # noqa: B017 - any error will do
        run_gen_autograd(case, tmp_path, autograd_inputs.autograd_dir)


@pytest.mark.parametrize("case", ACCEPTED, ids=[c.name for c in ACCEPTED])
def test_upstream_accepts_what_opgen_rejects_on_purpose(
    case: Path, tmp_path: Path, autograd_inputs: AutogradInputs
) -> None:
    run_gen_autograd(case, tmp_path, autograd_inputs.autograd_dir)
