"""`opgen.api.python` against upstream torchgen's Python API, live, on torch's packaged spec.

For every function of torch's spec, as a function and (if it is one) as a Tensor method,
this compares the `PythonArgParser` signature string (also without outputs and without
SymInts), the `.pyi` definition and its vararg form, and the structseq class of the returns
with what `torchgen.api.python` gives. It then pairs each function with its out= variant
(same name and same signature without outputs, as the Python bindings do) and compares the
merged `PythonSignatureGroup` signatures, and it binds every entry of torch's
`deprecated.yaml` to the functions it calls and compares the deprecated signatures with
torchgen's `load_deprecated_signatures`. A Python signature that cannot be made (an error
on either side) is recorded as an error and must fail on both sides.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
import torchgen.api.python as tgp
import torchgen.model as tgm
import yaml
from torchgen.context import native_function_manager
from torchgen.packaged.autograd.gen_python_functions import load_deprecated_signatures

import opgen.api.python as op
import opgen.spec.native as on
from opgen.api import pyi
from opgen.releases import Release
from opgen.spec.keys import Variant
from opgen.spec.schema import FunctionSchema

from .live_specs import LiveSpecs, live_specs

HINTS = pyi.hints_for(Release(2, 13))  # the hints of torch 2.13's stubs


def _pyi(sig: Any, method: str, **kwargs: Any) -> Any:
    """A `.pyi` rendering of opgen's signature (told the release's hints) or torchgen's."""
    render = getattr(sig, method)
    return render(HINTS, **kwargs) if type(sig).__module__.startswith("opgen") else render(**kwargs)


ERROR = "error"
METHODS = [False, True]
T = TypeVar("T")


@pytest.fixture(scope="module")
def specs(torchgen_native_dir: Path) -> LiveSpecs:
    return live_specs(torchgen_native_dir)


@pytest.fixture(scope="module")
def deprecated_yaml(torchgen_native_dir: Path) -> Path:
    return torchgen_native_dir.parents[1] / "autograd" / "deprecated.yaml"


def _attempt(call: Callable[[], T]) -> T | str:
    try:
        return call()
    except (AssertionError, RuntimeError, ValueError, KeyError, IndexError):
        return ERROR


def _structseq(call: Callable[[], tuple[str, str] | None]) -> tuple[str, str] | None:
    """The structseq class, or None where there is none or it cannot be made."""
    try:
        return call()
    except (AssertionError, RuntimeError, ValueError, KeyError, IndexError):
        return None


def _rendered(sig: Any, structseq: Callable[[], tuple[str, str] | None]) -> dict[str, Any]:
    """Everything a signature renders; `sig` is opgen's or torchgen's PythonSignature."""
    return {
        "str": _attempt(sig.signature_str),
        "str_skip_outputs": _attempt(lambda: sig.signature_str(skip_outputs=True)),
        "str_no_symint": _attempt(lambda: sig.signature_str(symint=False)),
        "pyi": _attempt(lambda: _pyi(sig, "signature_str_pyi")),
        "pyi_skip_outputs": _attempt(lambda: _pyi(sig, "signature_str_pyi", skip_outputs=True)),
        "pyi_vararg": _attempt(lambda: _pyi(sig, "signature_str_pyi_vararg")),
        "structseq": _structseq(structseq),
    }


def _ours(f: on.NativeFunction, method: bool) -> dict[str, Any] | str:
    sig = _attempt(lambda: op.signature(f, method=method))
    if isinstance(sig, str):
        return sig
    return _rendered(sig, lambda: sig.returns_structseq_pyi(HINTS))


def _theirs(f: tgm.NativeFunction, method: bool) -> dict[str, Any] | str:
    with native_function_manager(f):
        sig = _attempt(lambda: tgp.signature(f, method=method))
        if isinstance(sig, str):
            return sig
        return _rendered(sig, lambda: tgp.returns_structseq_pyi(sig))


def _has_method(ours: on.NativeFunction, theirs: tgm.NativeFunction) -> bool:
    has = Variant.method in ours.variants
    assert has == (tgm.Variant.method in theirs.variants)
    return has


@pytest.mark.parametrize("method", METHODS, ids=["function", "method"])
def test_signatures(specs: LiveSpecs, method: bool) -> None:
    mismatches = []
    compared = structseqs = 0
    for ours, theirs in specs.functions():
        if method and not _has_method(ours, theirs):
            continue
        o, t = _ours(ours, method), _theirs(theirs, method)
        compared += 1
        structseqs += isinstance(t, dict) and t["structseq"] is not None
        if o != t:
            mismatches.append((str(ours.func.name), o, t))
    assert mismatches == []
    assert compared > (500 if method else 3000)
    assert structseqs > 10


# -- functional and out= pairs ---------------------------------------------------------


def _pairs_ours(
    specs: LiveSpecs, method: bool, *, methods_only: bool = False
) -> list[op.PythonSignatureNativeFunctionPair]:
    """A pair for each function with a Python signature; with `methods_only`, of each method.

    Like torchgen's `load_signatures`, `method=True` alone makes a method-style signature of
    every function, method or not (deprecated signatures are matched against all of them).
    """
    pairs = []
    for f in specs.ours.functions:
        if methods_only and Variant.method not in f.variants:
            continue
        try:
            pairs.append(op.PythonSignatureNativeFunctionPair(op.signature(f, method=method), f))
        except ValueError:
            continue
    return pairs


def _pairs_theirs(
    specs: LiveSpecs, method: bool, *, methods_only: bool = False
) -> list[tgp.PythonSignatureNativeFunctionPair]:
    pairs = []
    for f in specs.theirs.native_functions:
        if methods_only and tgm.Variant.method not in f.variants:
            continue
        with native_function_manager(f):
            try:
                sig = tgp.signature(f, method=method)
            except ValueError:
                continue
        pairs.append(tgp.PythonSignatureNativeFunctionPair(sig, f))
    return pairs


def _grouped(pairs: list[Any], from_pairs: Callable[[Any, Any], Any]) -> list[Any]:
    """Each functional pair with the out= pair of the same signature without outputs, if any.

    Works on either side's pairs; `from_pairs` is that side's `PythonSignatureGroup.from_pairs`.
    The first of several functions with the same key wins, on both sides alike.
    """
    bases: dict[str, Any] = {}
    outs: dict[str, Any] = {}
    for pair in pairs:
        key = pair.signature.signature_str(skip_outputs=True)
        (outs if pair.function.func.is_out_fn() else bases).setdefault(key, pair)
    return [from_pairs(base, outs.get(key)) for key, base in bases.items()]


def _group_record(g: Any) -> tuple[Any, ...]:
    sig = g.signature
    return (
        str(g.base.func.name),
        None if g.outplace is None else str(g.outplace.func.name),
        sig.signature_str(),
        sig.signature_str(symint=False),
        _attempt(lambda: _pyi(sig, "signature_str_pyi")),
        _attempt(lambda: _pyi(sig, "signature_str_pyi_vararg")),
    )


@pytest.mark.parametrize("method", METHODS, ids=["function", "method"])
def test_signature_groups(specs: LiveSpecs, method: bool) -> None:
    ours_pairs = _pairs_ours(specs, method, methods_only=method)
    theirs_pairs = _pairs_theirs(specs, method, methods_only=method)
    ours = [_group_record(g) for g in _grouped(ours_pairs, op.PythonSignatureGroup.from_pairs)]
    theirs = [_group_record(g) for g in _grouped(theirs_pairs, tgp.PythonSignatureGroup.from_pairs)]
    mismatches = [(o, t) for o, t in zip(ours, theirs, strict=True) if o != t]
    assert mismatches == []
    assert len(theirs) > (500 if method else 1500)
    if not method:  # out= variants are never methods
        assert sum(1 for r in theirs if r[1] is not None) > 500


# -- deprecated signatures -------------------------------------------------------------


def _deprecated_record(pair: Any) -> tuple[Any, ...]:
    sig = pair.signature
    return (
        str(sig.deprecated_schema),
        str(pair.function.func.name),
        sig.signature_str(),
        _pyi(sig, "signature_str_pyi"),
        _pyi(sig, "signature_str_pyi_vararg"),
        tuple(sig.deprecated_args_exprs),
    )


@pytest.mark.parametrize("method", METHODS, ids=["function", "method"])
def test_deprecated_signatures(specs: LiveSpecs, deprecated_yaml: Path, method: bool) -> None:
    entries = yaml.safe_load(deprecated_yaml.read_text())
    pairs = _pairs_ours(specs, method)
    ours = [
        _deprecated_record(pair)
        for entry in entries
        for pair in op.deprecated_signatures(
            pairs, FunctionSchema.parse(entry["name"]), entry["aten"], method=method
        )
    ]
    theirs = [
        _deprecated_record(pair)
        for pair in load_deprecated_signatures(
            _pairs_theirs(specs, method), str(deprecated_yaml), method=method, pyi=False
        )
    ]
    assert ours == theirs
    assert len({r[0] for r in theirs}) == len(entries) > 20
