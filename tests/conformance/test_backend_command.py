"""`opgen backend` writes what `python -m torchgen.gen_backend_stubs` writes, byte for byte.

Each backend YAML of `data/backends/` runs through both, with the same
relative output directory (the registrations include the class header by
that path), on torch's packaged spec. The YAMLs cover every key upstream
reads: an eager backend in the style of torch_xla (supported, full_codegen,
ir_gen, symint, autograd, non_native), a PrivateUse1 device in the style of
OpenReg (use_out_as_primary, device_guard, class_name), and a lazy
TorchScript-style backend whose out= and inplace variants get copying
wrappers. `--impl-path` fails and passes on the same C++ files as upstream's.
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from opgen.cli import main
from opgen.installed_torchgen import packaged_aten
from opgen.spec.external_backend import listed_operators
from opgen.spec.partial import family_parts
from opgen.spec.yaml.load import load_yaml, read_text
from opgen.targets.backend.generate import MIN_PART_ENTRIES

from .aten_trees import DATA, Tree, assert_same_files, oracle_tree, read_tree

BACKENDS = DATA / "backends"
CASES = ("xla", "privateuse1", "ts_lazy")
NATIVE = Path(packaged_aten() or "") / "native" / "native_functions.yaml"


def upstream_tree(yaml: Path, root: Path, *flags: str) -> Tree:
    command = [sys.executable, "-m", "torchgen.gen_backend_stubs", "-s", str(yaml), "-o", "out"]
    key = ("gen_backend_stubs", yaml.name, yaml.read_text(), flags)
    return oracle_tree([*command, *flags], root, key=key)


def opgen_tree(yaml: Path, root: Path, monkeypatch: pytest.MonkeyPatch, *flags: str) -> Tree:
    root.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(root)
    assert main(["backend", "-s", str(yaml), "-o", "out", *flags]) == 0
    return read_tree(root)


@pytest.mark.parametrize("jobs", ["1", "2", "3"])
@pytest.mark.parametrize("name", CASES)
def test_backend_tree_is_upstreams(
    name: str, jobs: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In one process, or in parts read by several (all but privateuse1's operators are
    enough for as many parts as processes)."""
    yaml = BACKENDS / f"{name}.yaml"
    names = listed_operators(load_yaml(str(yaml)))[1]
    parts = family_parts(read_text(str(NATIVE)), names, 3, MIN_PART_ENTRIES)
    assert len(parts) == (1 if name == "privateuse1" else 3)
    theirs = upstream_tree(yaml, tmp_path / "upstream")
    ours = opgen_tree(yaml, tmp_path / "opgen", monkeypatch, "-j", jobs)
    assert len(theirs.files) >= 2
    assert_same_files(theirs.files, ours.files)


def test_errors_are_a_runs_in_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A part that fails fails the run with the errors one process finds, in its order."""
    cpp = tmp_path / "impl.cpp"
    cpp.write_text(_DEFINES)
    monkeypatch.chdir(tmp_path)
    flags = ["-s", str(BACKENDS / "xla.yaml"), "-o", "out", "--impl-path", str(cpp)]
    reports = []
    for jobs in ("1", "3"):
        err = io.StringIO()
        assert main(["backend", *flags, "-j", jobs], io.StringIO(), err) == 1
        reports.append(err.getvalue())
    assert reports[0] == reports[1]
    assert reports[0].count(": error: ") > 20
    assert not (tmp_path / "out").exists()


def test_nothing_listed_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    yaml = tmp_path / "empty.yaml"
    yaml.write_text("backend: XLA\ncpp_namespace: torch_xla\nsupported:\n")
    assert upstream_tree(yaml, tmp_path / "upstream").files == {}
    assert opgen_tree(yaml, tmp_path / "opgen", monkeypatch).files == {}


def test_dry_run_and_rerun_write_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    yaml = BACKENDS / "privateuse1.yaml"
    # Upstream's --dry-run takes a value and any non-empty one counts, "False" too.
    assert opgen_tree(yaml, tmp_path, monkeypatch, "--dry-run", "False").files == {}
    first = opgen_tree(yaml, tmp_path, monkeypatch)
    stamps = {p: p.stat().st_mtime_ns for p in (tmp_path / "out").iterdir()}
    assert opgen_tree(yaml, tmp_path, monkeypatch).files == first.files
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "out").iterdir()} == stamps


_SMALL = (
    "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n  - abs\n  - add.Tensor\n  - add.Scalar\n"
)
_DEFINES = "at::Tensor XLANativeFunctions::abs(const at::Tensor& self) { return self; }\n"
_ADD = "at::Tensor XLANativeFunctions::add({}) {{ return self; }}\n"
_ADD_TENSOR = _ADD.format("const at::Tensor& self, const at::Tensor& o, const at::Scalar& a")
_ADD_SCALAR = _ADD.format("const at::Tensor& self, const at::Scalar& o, const at::Scalar& a")
# A qualified call is not a definition.
_CALL = "  return torch_xla::XLANativeFunctions::add(self, o, a);\n"


@pytest.mark.parametrize(
    ("impl", "ok"),
    [
        (_DEFINES + _ADD_TENSOR + _ADD_SCALAR, True),
        (_DEFINES + _ADD_TENSOR + _CALL, False),
        (_ADD_TENSOR + _ADD_SCALAR, False),
    ],
    ids=["complete", "overload_missing", "kernel_missing"],
)
def test_impl_path_check_agrees_with_upstream(
    impl: str, ok: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    yaml, cpp = tmp_path / "backend.yaml", tmp_path / "impl.cpp"
    yaml.write_text(_SMALL)
    cpp.write_text(impl)
    upstream = subprocess.run(
        [
            sys.executable,
            "-m",
            "torchgen.gen_backend_stubs",
            "-s",
            str(yaml),
            "-o",
            "up",
            "--impl-path",
            str(cpp),
        ],
        cwd=tmp_path,
        capture_output=True,
        check=False,
    )
    assert (upstream.returncode == 0) is ok
    monkeypatch.chdir(tmp_path)
    assert main(["backend", "-s", str(yaml), "-o", "ours", "--impl-path", str(cpp)]) == (
        0 if ok else 1
    )
