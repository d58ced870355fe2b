"""Upstream torchgen on the malformed-backend corpus (layout: tests/malformed_corpus.py).

Each case goes through what `python -m torchgen.gen_backend_stubs` and
`gen_lazy_tensor` do with a backend YAML, up to the files they write: the
spec is parsed, the YAML read by `parse_backend_yaml` and
`parse_native_functions_keys`, and then, when the file lists a kernel, the
class header and the registrations are generated (templates:
torchgen/packaged/ATen/templates) and the `non_native` IR nodes built. Some
mistakes show only there: a namespace of three levels, a wrapper with nowhere
to copy to, a `non_native` entry without a schema.

A case marked `upstream-rejects` must make one of those steps raise; every
other case (which opgen rejects on purpose, its YAML says why in a comment on
the first line) must pass them all. torchgen caches parsed specs by path and
`parse_backend_yaml` adds the backend's index to the cached result, so each
case parses a fresh copy of its spec.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.malformed_corpus import BACKEND, TAGS

pytest.importorskip("torchgen")

from torchgen import gen, gen_backend_stubs, gen_lazy_tensor
from torchgen.dest.lazy_ir import GenTSLazyIR, generate_non_native_lazy_ir_nodes
from torchgen.selective_build.selector import SelectiveBuilder
from torchgen.utils import FileManager

from .torchgen_lazy import value_class

TEMPLATES = Path(gen.__file__).parent / "packaged" / "ATen" / "templates"


def run_upstream(case: Path, tmp_path: Path) -> None:
    """Upstream's reading and generation of the case's backend YAML; raises where it stops."""
    native, tags = tmp_path / "native_functions.yaml", tmp_path / "tags.yaml"
    shutil.copyfile(BACKEND.native_for(case), native)
    shutil.copyfile(TAGS, tags)
    source = str(case / BACKEND.input_name)
    parsed = gen.parse_native_yaml(str(native), str(tags))
    grouped = gen.get_grouped_native_functions(parsed.native_functions)
    backend = gen_backend_stubs.parse_backend_yaml(source, grouped, parsed.backend_indices)
    # Returns empty lists for a backend that is not lazy (no full_codegen, non_native, ir_gen).
    _, non_native, _ = gen_lazy_tensor.parse_native_functions_keys(source, grouped)
    key, autograd_key, indices = backend.backend_key, backend.autograd_key, backend.backend_indices
    if key is None:
        return  # gen_backend_stubs.run stops here: no kernel, nothing to generate
    class_name = backend.class_name or indices[key].native_function_class_name()
    fm = FileManager(install_dir=tmp_path / "out", template_dir=TEMPLATES, dry_run=False)
    gen_backend_stubs.gen_dispatchkey_nativefunc_headers(
        fm, class_name, backend.cpp_namespace, indices, grouped, key, autograd_key
    )
    for dispatch_key in [k for k in (key, autograd_key) if k is not None]:
        gen_backend_stubs.gen_dispatcher_registrations(
            fm,
            "out",
            class_name,
            indices,
            grouped,
            key,
            dispatch_key,
            SelectiveBuilder.get_nop_selector(),
        )
    lazy_ir = GenTSLazyIR(indices[key], "TorchScript", "Node", True)
    with value_class("torch::lazy::Value"):  # what run_gen_lazy_tensor sets by default
        generate_non_native_lazy_ir_nodes(non_native, lazy_ir)


REJECTED = [c for c in BACKEND.cases() if (c / "upstream-rejects").is_file()]
ACCEPTED = [c for c in BACKEND.cases() if not (c / "upstream-rejects").is_file()]


@pytest.mark.parametrize("case", REJECTED, ids=[c.name for c in REJECTED])
def test_upstream_rejects(case: Path, tmp_path: Path) -> None:
    with pytest.raises(Exception):  # noqa: B017 - any error will do
        run_upstream(case, tmp_path)


@pytest.mark.parametrize("case", ACCEPTED, ids=[c.name for c in ACCEPTED])
def test_upstream_accepts_what_opgen_rejects_on_purpose(case: Path, tmp_path: Path) -> None:
    run_upstream(case, tmp_path)
    assert (tmp_path / "out" / "XLANativeFunctions.h").is_file()
