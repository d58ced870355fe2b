"""What `opgen aten` writes for torch 2.10 to 2.12 where the release suite does not look.

tests/conformance/test_releases.py compares whole trees of each release's own spec
with its torchgen's, in two configurations; these cases are for what those runs
never reach: ROCm builds (`releases.ROCM_CUDA_GUARD`), an operator only later specs
have (`VMAP_QUANTIZED_FLASH_ATTENTION`), the older fallback-op table
format (`AOTI_FEATURE_VERSIONS`), skipped shim arguments with non-null defaults
(`AOTI_SKIPPED_ARGUMENT_DEFAULTS`) and --headeronly-install-dir before it existed
(`HEADERONLY_ENUM_TAG`). Each is a small input and the exact text torchgen of that
release makes of it.
"""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import pytest

from opgen.api.signatures import SignatureSet
from opgen.cli import main
from opgen.diagnostics import SpecError
from opgen.releases import Release
from opgen.spec import LoadOptions, load_spec
from opgen.spec.keys import DispatchKey
from opgen.spec.schema import FunctionSchema
from opgen.targets.aten.aoti_abi import arguments
from opgen.targets.aten.aoti_table import FallbackEntry, OpVersions, read_fallback_tables
from opgen.targets.aten.dispatch_plan import KernelTable
from opgen.targets.aten.registration import extra_cuda_headers
from opgen.targets.aten.structured_kernels import StructuredWrappers
from opgen.targets.aten.vmap import returns_symint, vmap_plumbing

RELEASE_2_10 = Release(2, 10)
RELEASE_2_11 = Release(2, 11)
RELEASE_2_12 = Release(2, 12)
RELEASE_2_13 = Release(2, 13)

# -- ROCm: the guard of CUDA kernels ----------------------------------------------------

SGN = """\
- func: sgn(Tensor self) -> Tensor
  structured_delegate: sgn.out
- func: sgn.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CUDA: sgn_out
"""
MASQUERADING_HEADERS = """\
#include <ATen/hip/impl/HIPGuardImplMasqueradingAsCUDA.h>
#include <ATen/hip/ATenHIPGeneral.h>
#include <ATen/hip/HIPDevice.h>
#include <ATen/hip/HIPContext.h>"""
HIP_HEADERS = """\
#include <c10/hip/HIPGuard.h>
#include <ATen/hip/ATenHIPGeneral.h>
#include <ATen/hip/HIPDevice.h>
#include <ATen/hip/HIPContext.h>"""
CUDA_HEADERS = """\
#include <c10/cuda/CUDAGuard.h>
#include <ATen/cuda/ATenCUDAGeneral.h>
#include <ATen/cuda/CUDADevice.h>
#include <ATen/cuda/CUDAContext.h>"""


def guard_lines(tmp_path: Path, release: Release, *, rocm: bool) -> list[str]:
    """The guard member of each class of sgn's CUDA kernels (functional, out=)."""
    path = tmp_path / "native_functions.yaml"
    path.write_text(SGN, encoding="utf-8")
    spec = load_spec(str(path), None, LoadOptions(release=release))
    (g,) = spec.groups
    wrappers = StructuredWrappers(SignatureSet(), release=release, rocm=rocm)
    plan = KernelTable.of(spec, (DispatchKey.CUDA,)).plan(DispatchKey.CUDA)
    item = plan.of(g)
    assert item is not None
    texts = [
        wrappers.definition(plan.index, p, item.primary)
        for p in item.kernels
        if p.f in (g.functional, g.out)
    ]
    return [line for text in texts for line in text.splitlines() if line.endswith(" guard_;")]


def test_rocm_kernels_before_2_11_guard_cuda_with_hips_masquerading_guard(tmp_path: Path) -> None:
    assert (
        guard_lines(tmp_path, RELEASE_2_10, rocm=True)
        == ["    c10::hip::OptionalHIPGuardMasqueradingAsCUDA guard_;"] * 2
    )
    assert extra_cuda_headers(True, RELEASE_2_10) == MASQUERADING_HEADERS


@pytest.mark.parametrize("release", [RELEASE_2_11, RELEASE_2_13])
def test_rocm_kernels_from_2_11_guard_cuda_with_the_cuda_guard(
    tmp_path: Path, release: Release
) -> None:
    assert (
        guard_lines(tmp_path, release, rocm=True)
        == ["    c10::cuda::OptionalCUDAGuard guard_;"] * 2
    )
    assert extra_cuda_headers(True, release) == HIP_HEADERS


def test_cuda_builds_of_every_release_use_the_cuda_guard(tmp_path: Path) -> None:
    assert (
        guard_lines(tmp_path, RELEASE_2_10, rocm=False)
        == ["    c10::cuda::OptionalCUDAGuard guard_;"] * 2
    )
    assert extra_cuda_headers(False, RELEASE_2_10) == CUDA_HEADERS


# -- vmap plumbing ------------------------------------------------------------------------

QUANTIZED_FLASH = """\
- func: _scaled_dot_product_flash_attention.quantized(Tensor query, float scale)
    -> (Tensor output, SymInt max_q)
"""
QUANTIZED_FLASH_PLUMBING = """\
template <typename batch_rule_t, batch_rule_t batch_rule>
::std::tuple<at::Tensor,c10::SymInt> _scaled_dot_product_flash_attention_quantized_generated_\
plumbing(const at::Tensor & query, double scale) {
  c10::impl::ExcludeDispatchKeyGuard guard(DispatchKey::FuncTorchBatched);
  auto maybe_layer = maybeCurrentDynamicLayer();
  vmap_check_escaped(maybe_layer, "gen_vmap_plumbing");
  int64_t cur_level = maybe_layer->layerId();
  if (!isBatchedAtLevel(query, cur_level)) {
    return at::_ops::_scaled_dot_product_flash_attention_quantized::call(query, scale);
  }
  auto [query_value, query_bdim] = unwrapTensorAtLevel(query, cur_level);
  auto results = batch_rule(query_value, query_bdim, scale);
  return std::make_tuple(makeBatched(std::get<0>(results), std::get<1>(results), cur_level), \
std::get<2>(results));
}"""


def quantized_flash_plumbing(tmp_path: Path, release: Release) -> str | None:
    path = tmp_path / "native_functions.yaml"
    path.write_text(QUANTIZED_FLASH, encoding="utf-8")
    (f,) = load_spec(str(path), None, LoadOptions(release=release)).functions
    return vmap_plumbing(f, SignatureSet().of(f).dispatcher, returns_symint(release))


def test_quantized_flash_attention_gets_vmap_plumbing_from_2_11(tmp_path: Path) -> None:
    assert quantized_flash_plumbing(tmp_path, RELEASE_2_10) is None
    assert quantized_flash_plumbing(tmp_path, RELEASE_2_11) == QUANTIZED_FLASH_PLUMBING


# -- the AOTInductor fallback-op table ----------------------------------------------------

TABLE = """\
inductor_fallback_ops: dict[str, dict[str, list[str]]] = {
    "aten.foo.default": {"v3": ["c"], "v2": ["a", "b"]},
    "aten.bar.default": {"v2": {"new_args": ["a"], "since": "TORCH_VERSION_2_13_0"}},
    "aten.baz.default": {"since": "TORCH_VERSION_2_12_0"},
}
aten_shimified_ops: dict[str, dict[str, list[str]]] = {}
"""


def table_entry(tmp_path: Path, op: str) -> tuple[str, FallbackEntry]:
    path = tmp_path / "fallback_ops.py"
    path.write_text(TABLE, encoding="utf-8")
    return str(path), read_fallback_tables(str(path)).inductor_fallback_ops[op]


def test_before_2_13_a_version_is_the_list_of_the_arguments_it_added(tmp_path: Path) -> None:
    _, entry = table_entry(tmp_path, "aten.foo.default")
    assert entry.versions("aten.foo.default", gated=False) == OpVersions(
        {1: (), 2: ("a", "b"), 3: ("c",)}, {}
    )


@pytest.mark.parametrize(
    ("op", "gated", "message"),
    [
        (
            "aten.bar.default",
            False,
            "version v2 of aten.bar.default must be a list of argument names",
        ),
        (
            "aten.baz.default",
            False,
            "version key 'since' of aten.baz.default must be 'v' and a number",
        ),
        (
            "aten.foo.default",
            True,
            "version v2 of aten.foo.default must be a dict "
            "{'new_args': [...], 'since': 'TORCH_VERSION_X_Y_Z'}",
        ),
    ],
)
def test_each_table_format_rejects_the_other(
    tmp_path: Path, op: str, gated: bool, message: str
) -> None:
    path, entry = table_entry(tmp_path, op)
    with pytest.raises(SpecError) as caught:
        entry.versions(op, gated=gated)
    assert caught.value.message == message
    line = TABLE.splitlines().index(next(s for s in TABLE.splitlines() if op in s)) + 1
    assert (caught.value.location.file, caught.value.location.line) == (path, line)


def test_older_shim_versions_pass_skipped_arguments_their_defaults_from_2_12() -> None:
    schema = FunctionSchema.parse("foo(Tensor self, bool flag=False, int? n=None) -> Tensor")
    flat, skipped = schema.arguments.flat_all, {"flag", "n"}
    params = ["AtenTensorHandle self"]
    self_expr = "resolve_tensor_dispatch_flags(self)"
    assert arguments(flat, skipped, defaults=True) == (
        params,
        [self_expr, "false", "::std::nullopt"],
    )
    assert arguments(flat, skipped, defaults=False) == (
        params,
        [self_expr, "std::nullopt", "std::nullopt"],
    )


# -- enum_tag.h ---------------------------------------------------------------------------


def test_headeronly_install_dir_is_a_usage_error_before_2_12(tmp_path: Path) -> None:
    def run(version: str) -> tuple[int, str]:
        err = io.StringIO()
        argv = ["aten", "-s", str(tmp_path / "missing"), "--torch-version", version]
        argv += ["--headeronly-install-dir", str(tmp_path / "h"), "--dry-run"]
        return main(argv, out=io.StringIO(), err=err), err.getvalue()

    assert run("2.11") == (
        2,
        textwrap.dedent("""\
            opgen aten: error: --headeronly-install-dir: torch 2.11's torchgen has no such flag \
(it writes enum_tag.h into <install-dir>/core)
        """),
    )
    assert run("2.12")[0] != 2  # accepted (the missing spec is another error)
    assert list(tmp_path.iterdir()) == []
