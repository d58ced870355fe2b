"""`opgen diff` against PyTorch's own compatibility checks, live, on torch's spec.

For every operator in both specs whose schema changed, opgen's verdicts must be
torch's: backward-compatible exactly when `parse_schema(new)
.is_backward_compatible_with(parse_schema(old))`, forward-compatible exactly
when `check_forward_compatible_with` says so (an exception from torch's check,
which it raises for some incompatible pairs, counts as not compatible).

The pairs: torch 2.13's packaged spec against copies of it mutated at test time
(every kind of change in spec_mutations.MUTATIONS, each applied to a deterministic sample of
the operators it applies to; no PyTorch text is stored here), and, when the
environment variable OPGEN_OLD_SPECS names a directory of older specs
(`<version>/native_functions.yaml` and `tags.yaml`, as
`benchmarks/fetch_old_specs.py` writes it), real version pairs: each older
version against the next and against torch 2.13's, where every removed
operator must be reported backward-incompatible too. torch 2.13 cannot parse
the `Dimname` types of older specs; pairs it cannot parse are counted, not
compared.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from opgen.spec.compat.values import default_value, is_subtype, list_size
from opgen.spec.model import LoadOptions, Spec, load_spec
from opgen.spec.types import parse_annotated_type
from opgen.tooling.diff.findings import Finding, diff_specs, display_name

from .spec_mutations import MUTATIONS, load_mutated, mutate_spec

torch = pytest.importorskip("torch")
parse_schema = torch._C.parse_schema


def _torch_reads(schema: str) -> bool:
    """Whether torch parses `schema` (it refuses, say, a required positional argument after
    one with a default, which opgen's reading for comparison lets through)."""
    try:
        parse_schema(schema)
    except RuntimeError:
        return False
    return True


# -- verdicts -------------------------------------------------------------------------------


@dataclass
class Agreement:
    compared: int = 0
    unparsable: int = 0
    backward_disagree: list[str] | None = None
    forward_disagree: list[str] | None = None


def torch_verdicts(old: str, new: str) -> tuple[bool, bool] | None:
    """torch's (backward, forward) verdicts; None when it cannot parse a schema."""
    try:
        o, n = parse_schema(old), parse_schema(new)
    except RuntimeError:
        return None
    try:
        backward = bool(n.is_backward_compatible_with(o))
    except (IndexError, RuntimeError):  # torch indexes past the end for some breaks
        backward = False
    try:
        forward = bool(n.check_forward_compatible_with(o)[0])
    except (IndexError, RuntimeError):
        forward = False
    return backward, forward


def compare_verdicts(old: Spec, new: Spec, findings: Sequence[Finding]) -> Agreement:
    by_name: dict[str, list[Finding]] = {}
    for f in findings:
        by_name.setdefault(f.name, []).append(f)
    old_functions = {(f.namespace, str(f.func.name)): f for f in old.functions}
    agreement = Agreement(backward_disagree=[], forward_disagree=[])
    assert agreement.backward_disagree is not None and agreement.forward_disagree is not None
    for n in new.functions:
        o = old_functions.get((n.namespace, str(n.func.name)))
        if o is None or o.func.text == n.func.text:
            continue
        verdicts = torch_verdicts(f"{o.namespace}::{o.func}", f"{n.namespace}::{n.func}")
        if verdicts is None:
            agreement.unparsable += 1
            continue
        agreement.compared += 1
        mine = by_name.get(display_name(n), [])
        backward = not any("backward" in f.breaks for f in mine)
        forward = not any("forward" in f.breaks for f in mine)
        pair = f"{o.func}  =>  {n.func}"
        if backward != verdicts[0]:
            agreement.backward_disagree.append(f"torch says {verdicts[0]}: {pair}")
        if forward != verdicts[1]:
            agreement.forward_disagree.append(f"torch says {verdicts[1]}: {pair}")
    return agreement


def test_verdicts_agree_with_torch_on_mutated_specs(
    torchgen_native_dir: Path, tmp_path: Path
) -> None:
    native = torchgen_native_dir / "native_functions.yaml"
    tags = str(torchgen_native_dir / "tags.yaml")
    original = native.read_text()
    mutated = mutate_spec(original, _torch_reads)
    new = load_mutated(original, mutated, tmp_path / "native_functions.yaml", tags)
    old = load_spec(str(native), tags, LoadOptions(for_comparison=True))
    findings = diff_specs(old, new)
    agreement = compare_verdicts(old, new, findings)
    assert agreement.backward_disagree == []
    assert agreement.forward_disagree == []
    assert agreement.unparsable == 0
    assert agreement.compared >= 2000, agreement.compared
    kinds = set(mutated.kinds.values())
    assert kinds == {*MUTATIONS, "rename-operator"}, set(MUTATIONS) - kinds
    removed = {f.name for f in findings if f.rule in ("operator-removed", "overload-removed")}
    assert mutated.renamed <= removed
    assert all(f.category == "backward-incompatible" for f in findings if f.name in removed)


def test_the_spec_against_itself_has_no_findings(torchgen_native_dir: Path) -> None:
    native = str(torchgen_native_dir / "native_functions.yaml")
    tags = str(torchgen_native_dir / "tags.yaml")
    options = LoadOptions(for_comparison=True)
    assert diff_specs(load_spec(native, tags, options), load_spec(native, tags, options)) == []


# -- the pieces: subtyping and default values, against torch's --------------------------------

BASES = [
    "Tensor", "int", "SymInt", "float", "bool", "str", "Scalar", "ScalarType", "Layout",
    "MemoryFormat", "Device", "DeviceIndex", "Generator", "Storage", "Stream", "QScheme", "SymBool",
]  # fmt: skip
TYPES = [b + suffix for b in BASES for suffix in ("", "?", "[]", "[]?", "[2]", "[2]?", "?[]")]


def test_type_relation_agrees_with_torch() -> None:
    """Old type A, new type B: backward-compatible exactly when torch says so, for all pairs."""
    disagree = []
    for a in TYPES:
        old_arg = parse_annotated_type(a, 0)[0]
        for b in TYPES:
            new_arg = parse_annotated_type(b, 0)[0]
            old, new = f"f({a} x) -> ()", f"f({b} x) -> ()"
            theirs = parse_schema(new).is_backward_compatible_with(parse_schema(old))
            mine = (list_size(old_arg) == list_size(new_arg)) and is_subtype(old_arg, new_arg)
            if mine != theirs:
                disagree.append(f"{a} -> {b}: torch says {theirs}")
    assert disagree == []


EXTRA_DEFAULTS = [
    ("float", "1"), ("float", "1.5"), ("float?", "1"), ("float?", "1.5"), ("Scalar", "1"),
    ("Scalar", "1.0"), ("Scalar", "-2"), ("int", "-1"), ("int[2]", "1"), ("int[2]", "[1,1]"),
    ("float[]", "[1,2]"), ("float[2]", "1"), ("bool[3]", "[True,False,True]"),
    ("ScalarType", "long"), ("ScalarType", "float32"), ("ScalarType", "bfloat16"),
    ("ScalarType?", "int"), ("Layout", "strided"), ("MemoryFormat", "contiguous_format"),
    ("int", "Mean"), ("str", '"a\\nb"'), ("str", "'x'"), ("Device", '"cpu"'),
    ("Device?", '"cpu"'), ("SymInt[2]", "1"), ("int", "True"), ("float", "1e-05"),
    ("float", "0.00001"), ("float", "-0.0"),
]  # fmt: skip


def _torch_value(value: object) -> tuple[str, object]:
    """A default as torch's Python binding returns it, in `values.Value` form."""
    if isinstance(value, list):
        return ("list", tuple(_torch_value(v) for v in value))
    if isinstance(value, torch.device):
        return ("device", str(value))
    if value is None:
        return ("none", None)
    kinds = {bool: "bool", int: "int", float: "float", str: "str"}
    return (kinds[type(value)], value)


def test_default_values_agree_with_torch(torchgen_native_dir: Path) -> None:
    spec = load_spec(
        str(torchgen_native_dir / "native_functions.yaml"), None, LoadOptions(for_comparison=True)
    )
    pairs = {
        (str(a.type), a.default)
        for f in spec.functions
        for a in f.func.arguments.flat_all
        if a.default is not None
    }
    pairs |= set(EXTRA_DEFAULTS)
    disagree = []
    for type_text, default in sorted(pairs):
        assert default is not None
        theirs = _torch_value(
            parse_schema(f"f({type_text} x={default}) -> ()").arguments[0].default_value
        )
        mine = default_value(parse_annotated_type(type_text, 0)[0], default)
        if mine != theirs:
            disagree.append(f"{type_text} x={default}: torch {theirs}, opgen {mine}")
    assert disagree == []
    assert len(pairs) > 100


# -- real version pairs -------------------------------------------------------------------------

OLD_SPECS = os.environ.get("OPGEN_OLD_SPECS")


def _versions() -> list[Path]:
    if not OLD_SPECS:
        return []
    root = Path(OLD_SPECS)
    found = [d for d in root.iterdir() if (d / "native_functions.yaml").is_file()]
    return sorted(found, key=lambda d: tuple(int(p) for p in re.findall(r"\d+", d.name)))


def _pairs() -> list[tuple[Path, Path | None]]:
    """Each older version against the next one and against torch's (None)."""
    versions = _versions()
    return [*itertools.pairwise(versions), *((v, None) for v in versions)]


@pytest.mark.skipif(not OLD_SPECS, reason="OPGEN_OLD_SPECS names no directory of older specs")
@pytest.mark.parametrize(
    "pair", _pairs(), ids=lambda p: f"{p[0].name}->{p[1].name if p[1] else 'torch'}"
)
def test_real_version_pair(pair: tuple[Path, Path | None], torchgen_native_dir: Path) -> None:
    old_dir, newer = pair
    new_dir = newer or torchgen_native_dir
    options = LoadOptions(for_comparison=True)
    old = load_spec(str(old_dir / "native_functions.yaml"), str(old_dir / "tags.yaml"), options)
    new = load_spec(str(new_dir / "native_functions.yaml"), str(new_dir / "tags.yaml"), options)
    findings = diff_specs(old, new)
    new_names = {(f.namespace, str(f.func.name)) for f in new.functions}
    gone = {
        display_name(f) for f in old.functions if (f.namespace, str(f.func.name)) not in new_names
    }
    reported = {
        f.name
        for f in findings
        if f.rule in ("operator-removed", "overload-removed")
        and f.category == "backward-incompatible"
    }
    assert reported == gone
    agreement = compare_verdicts(old, new, findings)
    print(
        f"{old_dir.name} -> {newer.name if newer else 'torch'}: {len(gone)} removed, "
        f"{agreement.compared} changed "
        f"operators compared, {agreement.unparsable} not parsed by torch 2.13"
    )
    assert agreement.backward_disagree == []
    assert agreement.forward_disagree == []
