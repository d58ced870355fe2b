"""`opgen autograd` on variations of torch's inputs, byte for byte against upstream gen_autograd.

The variations (`autograd_variations.VARIATIONS`) are built once per test session
in a temporary directory: `trimmed` (torch's spec and derivatives cut down to a
few dozen operators) and `edited` (`trimmed` plus opgen's own operators and
derivatives entries, using every form derivatives.yaml supports). For each:

- upstream accepts it and writes every file it writes for torch's own spec;
- the variation exercises what it was built for (asked of upstream's model);
- the whole tree of `opgen autograd` equals upstream's;
- each family emitter of `generate.EMITTERS`, run alone on upstream's
  derivatives model (converted to opgen's classes), writes exactly upstream's
  files of its family;
- opgen's derivatives model (`load_derivative_infos`, then
  `match_differentiability_info`) equals upstream's, converted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from opgen.targets.autograd.generate import EMITTERS
from opgen.targets.emitters import Emitted

from .aten_trees import Tree, assert_same_files
from .autograd_model_compare import infos_difference, matched_difference
from .autograd_trees import (
    AutogradInputs,
    assert_family,
    opgen_autograd_files,
    opgen_autograd_tree,
    torchgen_autograd_tree,
)
from .autograd_variations import (
    DATA,
    KEPT_OPERATORS,
    REMOVED_DERIVATIVES,
    VARIATIONS,
    edit_derivatives,
    schema_of,
    split_entries,
    trim_derivatives,
    trim_native_functions,
)

Variation = tuple[AutogradInputs, Tree]


@pytest.fixture(scope="session")
def autograd_variations(
    autograd_inputs: AutogradInputs, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], Variation]:
    """`variation(name)`: the variation's inputs and upstream's tree for them, built once."""
    found: dict[str, Variation] = {}

    def variation(name: str) -> Variation:
        if name not in found:
            root = tmp_path_factory.mktemp(f"autograd-variation-{name}")
            inputs = VARIATIONS[name](root / "inputs", autograd_inputs)
            # The oracle cache is keyed by input paths, not contents: never use it here.
            with pytest.MonkeyPatch.context() as patch:
                patch.delenv("OPGEN_ORACLE_DIR", raising=False)
                tree = torchgen_autograd_tree((), inputs, root / "torchgen")
            found[name] = (inputs, tree)
        return found[name]

    return variation


NAMES = sorted(VARIATIONS)

# What gen_autograd writes for any spec: shards are fixed in number.
UPSTREAM_FILES = sorted(
    [
        "out/Functions.h",
        "out/Functions.cpp",
        "out/VariableType.h",
        "out/VariableTypeEverything.cpp",
        "out/templates/VariableType.cpp",
        "out/ADInplaceOrViewTypeEverything.cpp",
        "out/TraceTypeEverything.cpp",
        "out/ViewFuncs.h",
        "out/ViewFuncs.cpp",
        "out/variable_factories.h",
        *(f"out/VariableType_{i}.cpp" for i in range(10)),
        *(f"out/ADInplaceOrViewType_{i}.cpp" for i in range(2)),
        *(f"out/TraceType_{i}.cpp" for i in range(10)),
    ]
)


# The inputs.


def test_trimmed_keeps_entries_verbatim(autograd_inputs: AutogradInputs) -> None:
    native, derivatives = (
        Path(p).read_text()
        for p in (
            autograd_inputs.native_yaml,
            Path(autograd_inputs.autograd_dir, "derivatives.yaml"),
        )
    )
    trimmed = trim_native_functions(native, KEPT_OPERATORS)
    _, kept = split_entries(trimmed, "func")
    assert all(e.text in native for e in kept)
    assert {e.operator for e in kept} >= set(KEPT_OPERATORS)
    names = {e.name for e in kept}
    # What the kept operators need to load: delegates and view_copy variants.
    assert {"add.out", "sub.out", "transpose_copy.int", "view_copy", "unbind_copy.int"} <= names
    _, entries = split_entries(trim_derivatives(derivatives, names), "name")
    assert entries and all(e.text in derivatives and e.name in names for e in entries)


def test_edited_applies_opgens_entries() -> None:
    base = (
        "# header\n"
        "- name: f(Tensor self) -> Tensor\n  self: grad\n\n"
        "- name: g(Tensor self) -> Tensor\n  self: grad\n\n"
        "- name: h(Tensor self) -> Tensor\n  self: grad\n"
    )
    edits = (
        "# ours\n"
        "- name: g(Tensor self) -> Tensor\n  self: grad * 2\n\n"
        "- name: k(Tensor self) -> Tensor\n  self: grad * 3\n"
    )
    assert edit_derivatives(base, edits, ["h(Tensor self) -> Tensor"]) == (
        "# header\n"
        "- name: f(Tensor self) -> Tensor\n  self: grad\n\n"
        "- name: g(Tensor self) -> Tensor\n  self: grad * 2\n\n"
        "- name: k(Tensor self) -> Tensor\n  self: grad * 3\n"
    )


def test_edited_derivatives_contain_opgens_entries(
    autograd_variations: Callable[[str], Variation],
) -> None:
    inputs, _ = autograd_variations("edited")
    text = Path(inputs.autograd_dir, "derivatives.yaml").read_text()
    schemas = [schema_of(e) for e in split_entries(text, "name")[1]]
    ours = [schema_of(e) for e in split_entries((DATA / "derivatives.yaml").read_text(), "name")[1]]
    assert set(ours) <= set(schemas)
    assert not set(REMOVED_DERIVATIVES) & set(schemas)


# The oracle side.


@pytest.mark.parametrize("name", NAMES)
def test_upstream_writes_every_file(
    name: str, autograd_variations: Callable[[str], Variation]
) -> None:
    _, theirs = autograd_variations(name)
    assert sorted(theirs.files) == UPSTREAM_FILES


def _upstream_model(inputs: AutogradInputs) -> tuple[dict[Any, Any], set[str], list[Any]]:
    from torchgen.api import cpp
    from torchgen.api.autograd import match_differentiability_info
    from torchgen.gen import parse_native_yaml
    from torchgen.packaged.autograd.load_derivatives import load_derivatives

    infos, keys = load_derivatives(
        str(Path(inputs.autograd_dir, "derivatives.yaml")), inputs.native_yaml, inputs.tags_yaml
    )
    native = parse_native_yaml(inputs.native_yaml, inputs.tags_yaml).native_functions
    fns = sorted(native, key=lambda f: cpp.name(f.func))
    return infos, keys, match_differentiability_info(fns, dict(infos))


# Values a formula's expression saves instead of a whole tensor (`self.sym_sizes()`
# saved as `self_sym_sizes`), by a piece of the expression that computes them.
SAVED_FORMS = (
    "sym_sizes()",
    "->sym_sizes()",
    "options()",
    "scalar_type()",
    "sym_size(-1)",
    "numel()",
    "sym_numel()",
    "dim()",
    "layout()",
    "is_conj()",
    "getSymIntBlockSize(self)",
    "strides_or_error(self",
    "to_args_sizes(",
    "to_args_sizes_symint(",
    "to_args_scalartypes(",
    "TensorGeometry(",
)


def _features(inputs: AutogradInputs) -> set[str]:
    """The derivatives.yaml forms upstream's model of `inputs` shows (and, for the
    forms upstream expands on reading, `auto_*`, the file's text)."""
    infos, keys, fns = _upstream_model(inputs)
    every = [i for fn in fns if fn.info for i in fn.info.values()]
    backward = [d for i in every for d in i.derivatives]
    forward = [
        d for fn in fns if fn.fw_derivatives for ds in fn.fw_derivatives.values() for d in ds
    ]
    originals = [d.original_formula for d in backward]
    saved = {s.expr for d in backward for s in (*d.saved_inputs, *d.saved_outputs)}
    text = Path(inputs.autograd_dir, "derivatives.yaml").read_text()
    checks: dict[str, bool] = {
        "multi-input key": any(len(d.var_names) > 1 for d in backward),
        "multi-output forward formula": any(len(d.var_names) > 1 for d in forward),
        "auto_element_wise": re.search(r": auto_element_wise$", text, re.MULTILINE) is not None,
        "auto_linear": re.search(r": auto_linear$", text, re.MULTILINE) is not None,
        "output_differentiability bools": any(i.output_differentiability for i in every),
        "output_differentiability condition": any(
            i.output_differentiability_conditions for i in every
        ),
        "not_implemented": any("not_implemented(" in f for f in originals),
        "non_differentiable": any(i.non_differentiable_arg_names for i in every),
        "grad_input_mask": any("grad_input_mask" in f for f in originals),
        "grads[i]": any(re.search(r"grads\[\d\]", f) for f in originals),
        "named gradients": any(i.used_named_gradients for i in every),
        "retain_variables": any("retain_variables" in f for f in originals),
        "wrap_opt_if": any("wrap_opt_if(" in f for f in originals),
        "saved result": any(s.startswith("result") for s in saved),
        "inplace reusing out-of-place": any(d.is_reusing_outplace_formula for d in forward),
        "original self": any(d.required_original_self_value for d in forward),
        "foreach derived": any(i.op and i.op.startswith("Foreach") for i in every),
        "view_copy derived": any(
            "view_copy" in i.func.tags for per_key in infos.values() for i in per_key.values()
        ),
    }
    return (
        {f"dispatch key {k}" for k in keys}
        | {feature for feature, present in checks.items() if present}
        | {f"saved {form}" for form in SAVED_FORMS if any(form in s for s in saved)}
    )


# What torch's own entries, trimmed, still show.
TRIMMED_FEATURES = {
    "dispatch key Default",
    "dispatch key AutogradNestedTensor",
    "dispatch key AutogradCUDA",
    "multi-input key",
    "auto_element_wise",
    "auto_linear",
    "output_differentiability bools",
    "output_differentiability condition",
    "not_implemented",
    "non_differentiable",
    "grad_input_mask",
    "grads[i]",
    "named gradients",
    "retain_variables",
    "wrap_opt_if",
    "saved result",
    "inplace reusing out-of-place",
    "original self",
    "foreach derived",
    "view_copy derived",
    "saved sym_sizes()",
    "saved options()",
}

# What the edited variation adds: opgen's entries use every form.
EDITED_FEATURES = TRIMMED_FEATURES | {
    "dispatch key AutogradCPU",
    "dispatch key AutogradMPS",
    "dispatch key AutogradPrivateUse1",
    "multi-output forward formula",
    "saved ->sym_sizes()",
    "saved scalar_type()",
    "saved sym_size(-1)",
    "saved numel()",
    "saved sym_numel()",
    "saved dim()",
    "saved layout()",
    "saved is_conj()",
    "saved getSymIntBlockSize(self)",
    "saved strides_or_error(self",
    "saved to_args_sizes(",
    "saved to_args_sizes_symint(",
    "saved to_args_scalartypes(",
    "saved TensorGeometry(",
}


@pytest.mark.parametrize(
    ("name", "features"), [("trimmed", TRIMMED_FEATURES), ("edited", EDITED_FEATURES)]
)
def test_variation_exercises_its_forms(
    name: str, features: set[str], autograd_variations: Callable[[str], Variation]
) -> None:
    inputs, _ = autograd_variations(name)
    assert features - _features(inputs) == set()


# opgen against upstream.


@pytest.mark.parametrize("name", NAMES)
def test_tree_matches_torchgen(
    name: str, autograd_variations: Callable[[str], Variation], tmp_path: Path
) -> None:
    inputs, theirs = autograd_variations(name)
    ours = opgen_autograd_tree((), inputs, tmp_path / "opgen")
    assert_same_files(theirs.files, ours.files)


def family_of(path: str) -> str:
    """The file family a path belongs to: `out/TraceType_3.cpp` -> `TraceType`."""
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
    return re.sub(r"(_\d+|Everything)\Z", "", stem)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("emit", [emit for _, emit in EMITTERS], ids=lambda emit: emit.__name__)
def test_family_of_upstream_model_matches_torchgen(
    name: str, emit: Callable[..., Emitted], autograd_variations: Callable[[str], Variation]
) -> None:
    inputs, theirs = autograd_variations(name)
    ours = opgen_autograd_files((), inputs, [emit], upstream_model=True)
    families = {family_of(p) for p in ours}
    assert families, f"{emit.__name__} wrote nothing"
    assert_family(theirs, ours, lambda path: family_of(path) in families)


# The derivatives model.


def _opgen_model(inputs: AutogradInputs) -> tuple[Any, Any, Any]:
    from opgen.api import cpp
    from opgen.autograd.load_derivatives import load_derivative_infos
    from opgen.autograd.match import match_differentiability_info
    from opgen.spec.model import load_spec

    from .torchgen_autograd import torchgen_autograd

    spec = load_spec(inputs.native_yaml, inputs.tags_yaml)
    theirs = torchgen_autograd(spec, inputs.native_yaml, inputs.tags_yaml, inputs.autograd_dir)
    ours = load_derivative_infos(spec, str(Path(inputs.autograd_dir, "derivatives.yaml")))
    functions = sorted(spec.functions, key=lambda f: cpp.name(f.func))
    return theirs, ours, match_differentiability_info(functions, ours)


@pytest.mark.parametrize("name", NAMES)
def test_derivative_infos_match_torchgen(
    name: str, autograd_variations: Callable[[str], Variation]
) -> None:
    inputs, _ = autograd_variations(name)
    theirs, ours, _ = _opgen_model(inputs)
    assert ours.used_dispatch_keys == theirs.infos.used_dispatch_keys
    assert [str(s) for s in ours.infos] == [str(s) for s in theirs.infos.infos]
    for schema, per_key in theirs.infos.infos.items():
        found = infos_difference(ours.infos[schema], per_key)
        assert found is None, f"{schema}: {found}"


@pytest.mark.parametrize("name", NAMES)
def test_matched_functions_match_torchgen(
    name: str, autograd_variations: Callable[[str], Variation]
) -> None:
    inputs, _ = autograd_variations(name)
    theirs, _, matched = _opgen_model(inputs)
    assert matched_difference(matched, theirs.fns_with_diff_infos) is None
