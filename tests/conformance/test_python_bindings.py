"""The bindings files of `opgen python`, byte for byte against upstream's gen_python_functions.

python_variable_methods.cpp, python_torch_functions_<0..2>.cpp (+ Everything) and
python_{nn,fft,linalg,nested,sparse,special}_functions.cpp, rendered by
`emit_bindings` alone, must be exactly upstream's on torch's spec and on the
trimmed autograd variation. The edited variation has an operator the parser
cannot read (`bool[3]`): upstream fails on it, and opgen reports it at the
operator's schema. The malformed deprecated.yaml corpus
(tests/unit/test_malformed_deprecated.py) runs through upstream's
`load_signatures`: a case marked `upstream-rejects` must fail there too.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.malformed_corpus import DEPRECATED, TAGS

from opgen.diagnostics import SpecError
from opgen.targets.python.bindings import emit_bindings
from opgen.targets.python.generate import EMITTERS
from opgen.targets.python.python_functions import emit_python_functions
from opgen.targets.python.return_types import emit_return_types

from .aten_trees import Tree
from .autograd_trees import AutogradInputs, assert_family
from .python_trees import _ORACLE, opgen_python_files, python_variation

Variations = Callable[[str, bool], tuple[AutogradInputs, Tree]]

BINDINGS = re.compile(
    r"out/python_(variable_methods|torch_functions(_\d|Everything)"
    r"|(nn|fft|linalg|nested|sparse|special)_functions)\.cpp\Z"
)


def _is_binding(path: str) -> bool:
    return BINDINGS.match(path) is not None


def test_bindings_match_torchgen(autograd_inputs: AutogradInputs, torchgen_python: Tree) -> None:
    ours = opgen_python_files(autograd_inputs, [emit_bindings])
    assert len(ours) == 11
    assert_family(torchgen_python, ours, _is_binding)


def test_bindings_of_trimmed_variation_match_torchgen(
    torchgen_python_variations: Variations,
) -> None:
    inputs, theirs = torchgen_python_variations("trimmed", False)
    ours = opgen_python_files(inputs, [emit_bindings])
    assert b"// [deprecated] aten::add(" in ours["out/python_variable_methods.cpp"]
    assert_family(theirs, ours, _is_binding)


def test_an_operator_the_parser_cannot_read_is_an_error_like_upstream(
    autograd_inputs: AutogradInputs, tmp_path: Path
) -> None:
    inputs = python_variation("edited", tmp_path / "inputs", autograd_inputs)
    with pytest.raises(SpecError) as raised:
        opgen_python_files(inputs, [emit_bindings])
    message = raised.value.message
    assert message.startswith("no Python binding for opgen_triple: ")
    assert "bool[3]" in message
    location = raised.value.location
    assert location is not None and location.file == inputs.native_yaml
    arguments = [inputs.native_yaml, inputs.tags_yaml, str(tmp_path / "out"), inputs.autograd_dir]
    upstream = subprocess.run(
        [sys.executable, "-c", _ORACLE, *arguments], cwd=tmp_path, capture_output=True, text=True
    )
    assert upstream.returncode != 0
    assert "bool[3]" in upstream.stderr


def test_bindings_come_between_python_functions_and_return_types() -> None:
    order = [emit for _, emit in EMITTERS]
    index = order.index(emit_bindings)
    assert order.index(emit_python_functions) < index < order.index(emit_return_types)


# -- the malformed deprecated.yaml corpus ---------------------------------------------


REJECTED = [c for c in DEPRECATED.cases() if (c / "upstream-rejects").is_file()]


def _upstream_load_signatures(case: Path, tmp_path: Path) -> None:
    """torchgen's load_signatures on a copy of the case (it caches parsed specs by path)."""
    from torchgen.gen import parse_native_yaml
    from torchgen.packaged.autograd.gen_python_functions import (
        load_signatures,
        should_generate_py_binding,
    )

    native, tags = tmp_path / "native_functions.yaml", tmp_path / "tags.yaml"
    shutil.copyfile(DEPRECATED.native_for(case), native)
    shutil.copyfile(TAGS, tags)
    functions = parse_native_yaml(str(native), str(tags)).native_functions
    bound = [f for f in functions if should_generate_py_binding(f)]
    for method in (False, True):
        load_signatures(bound, str(case / "deprecated.yaml"), method=method)


@pytest.mark.parametrize("case", REJECTED, ids=[c.name for c in REJECTED])
def test_torchgen_rejects_the_malformed_deprecated_case(case: Path, tmp_path: Path) -> None:
    pytest.importorskip("torchgen")
    with pytest.raises(Exception):  # noqa: B017 - any error will do
        _upstream_load_signatures(case, tmp_path)


def test_torchgen_accepts_the_corpus_spec_with_torchs_deprecated_yaml_trimmed(
    tmp_path: Path,
) -> None:
    """The corpus's spec itself is fine: a deprecated.yaml of correct entries loads."""
    good = tmp_path / "good"
    good.mkdir()
    (good / "deprecated.yaml").write_text(
        "- name: add(Tensor self, Scalar alpha, Tensor other) -> Tensor\n"
        "  aten: add(self, other, alpha)\n"
    )
    _upstream_load_signatures(good, tmp_path)
