"""The ufunc kernels and the AOTInductor C shim, byte for byte against torchgen.

For every configuration of `aten_trees.CONFIGS`, opgen's emitters of these
families must produce exactly the files torchgen writes, with the same bytes:
`UfuncCPU_<op>.cpp`, `UfuncCPUKernel_<op>.cpp`, `UfuncCUDA_<op>.cu` and
`aoti/c_shim_<backend>.cpp` (all `--generate sources`).

The C shim headers are a checked-in ABI, so they get live tests: with
`--update-aoti-c-shim` torchgen writes them (and turns on the MPS and XPU
shims), and opgen must write the same tree; with those headers in place and
one made stale, torchgen fails (exit 1) and opgen raises a SpecError located in
the stale header, with the diff. The fallback-op table is read from beside
`--source-path`; a missing or malformed table is a located error.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from opgen import installed_torchgen
from opgen.cli import main
from opgen.diagnostics import SpecError
from opgen.targets.aten.aoti import emit_aoti_c_shim
from opgen.targets.aten.aoti_table import read_fallback_tables
from opgen.targets.aten.options import AtenPart
from opgen.targets.aten.ufunc import emit_ufunc_kernels
from opgen.targets.contract import UsageError

from .aten_trees import (
    CONFIGS,
    TreeOf,
    assert_same_files,
    family_files,
    layout_flags,
    opgen_files,
    read_tree,
)

FAMILY = re.compile(
    r"(out/(UfuncCPU_\w+\.cpp|UfuncCPUKernel_\w+\.cpp|UfuncCUDA_\w+\.cu)|aoti/.*)\Z"
)
EMITTERS = ((AtenPart.sources, emit_ufunc_kernels), (AtenPart.sources, emit_aoti_c_shim))


def _family(files: dict[str, bytes]) -> dict[str, bytes]:
    return {p: data for p, data in files.items() if FAMILY.match(p)}


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_family_matches_torchgen(
    config: str,
    torchgen_aten_tree: TreeOf,
    torchgen_aten_dir: Path,
    tmp_path: Path,
) -> None:
    flags = CONFIGS[config]
    theirs = _family(torchgen_aten_tree(config).files)
    ours = _family(family_files(flags, torchgen_aten_dir, tmp_path / "opgen", EMITTERS))
    assert_same_files(theirs, ours)


def test_missing_headers_are_reported(torchgen_aten_dir: Path, tmp_path: Path) -> None:
    out = io.StringIO()
    flags = [*layout_flags(torchgen_aten_dir, tmp_path), "--generate", "sources", "--dry-run"]
    assert main(["aten", *flags], out=out) == 0
    aoti = tmp_path / "aoti"
    expected = "".join(f"{aoti}/c_shim_{d}.h not found\n" for d in ("cpu", "cuda", "aten"))
    assert out.getvalue() == expected


# -- the checked-in headers, against torchgen live -----------------------------------

UPDATE = ("--generate", "sources", "--update-aoti-c-shim")
CHECK = ("--generate", "sources")


def _torchgen(
    flags: tuple[str, ...], aten_dir: Path, root: Path
) -> subprocess.CompletedProcess[str]:
    root.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "torchgen.gen", *layout_flags(aten_dir, root), *flags]
    return subprocess.run(command, cwd=root, capture_output=True, text=True)


@pytest.fixture(scope="module")
def updated_tree(torchgen_aten_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """torchgen's tree after `--update-aoti-c-shim` (headers written)."""
    root = tmp_path_factory.mktemp("aoti-update") / "torchgen"
    done = _torchgen(UPDATE, torchgen_aten_dir, root)
    assert done.returncode == 0, done.stderr
    return root


def test_update_writes_the_same_headers(
    updated_tree: Path, torchgen_aten_dir: Path, tmp_path: Path
) -> None:
    theirs = _family(read_tree(updated_tree).files)
    assert "aoti/c_shim_cpu.h" in theirs and "aoti/c_shim_xpu.h" in theirs
    assert_same_files(theirs, _family(family_files(UPDATE, torchgen_aten_dir, tmp_path, EMITTERS)))


def _with_headers(updated_tree: Path, root: Path) -> None:
    shutil.copytree(updated_tree / "aoti", root / "aoti")
    for cpp in (root / "aoti").glob("*.cpp"):
        cpp.unlink()


def test_current_headers_pass(
    updated_tree: Path,
    torchgen_aten_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _with_headers(updated_tree, tmp_path)
    ours = opgen_files(CHECK, torchgen_aten_dir, tmp_path, [emit_aoti_c_shim])
    assert capsys.readouterr().out == ""
    theirs = read_tree(updated_tree).files
    for backend in ("cpu", "cuda", "aten"):
        assert ours[f"aoti/c_shim_{backend}.cpp"] == theirs[f"aoti/c_shim_{backend}.cpp"]
    assert not [p for p in ours if p.endswith(".h")]


def test_stale_header_is_an_error(
    updated_tree: Path, torchgen_aten_dir: Path, tmp_path: Path
) -> None:
    header = tmp_path / "opgen" / "aoti" / "c_shim_cpu.h"
    _with_headers(updated_tree, tmp_path / "opgen")
    lines = header.read_text().splitlines(keepends=True)
    dropped = next(i for i, line in enumerate(lines) if line.startswith("AOTI_TORCH_EXPORT"))
    header.write_text("".join(lines[:dropped] + lines[dropped + 1 :]))
    _with_headers(updated_tree, tmp_path / "torchgen")
    shutil.copy(header, tmp_path / "torchgen" / "aoti" / "c_shim_cpu.h")

    done = _torchgen(CHECK, torchgen_aten_dir, tmp_path / "torchgen")
    assert done.returncode == 1
    assert "C shim header files have unexpectedly changed" in done.stderr

    with pytest.raises(SpecError) as raised:
        opgen_files(CHECK, torchgen_aten_dir, tmp_path / "opgen", [emit_aoti_c_shim])
    error = raised.value
    assert error.location is not None
    assert (error.location.file, error.location.line) == (str(header), dropped + 1)
    assert "--update-aoti-c-shim" in error.message
    assert f"\n+{lines[dropped].rstrip()}" in error.message


# -- the fallback-op table ------------------------------------------------------------


def _layout_without_table(aten_dir: Path, tmp_path: Path) -> Path:
    """A `<torchgen>/packaged/ATen` whose `<torchgen>/aoti` is under test control."""
    packaged = tmp_path / "torchgen" / "packaged"
    packaged.mkdir(parents=True)
    (packaged / "ATen").symlink_to(aten_dir, target_is_directory=True)
    return packaged / "ATen"


def test_table_not_beside_the_source_path_is_the_installed_torchgens(
    torchgen_aten_dir: Path, tmp_path: Path
) -> None:
    """An out-of-tree source tree has no table of its own: upstream reads its own."""
    aten = _layout_without_table(torchgen_aten_dir, tmp_path)
    ours = opgen_files(CHECK, aten, tmp_path / "out", [emit_aoti_c_shim])
    assert ours == opgen_files(CHECK, torchgen_aten_dir, tmp_path / "out", [emit_aoti_c_shim])


def test_missing_table_names_every_way_to_give_it(
    torchgen_aten_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(installed_torchgen, "package_dir", lambda: None)
    aten = _layout_without_table(torchgen_aten_dir, tmp_path)
    with pytest.raises(UsageError) as raised:
        opgen_files(CHECK, aten, tmp_path / "out", [emit_aoti_c_shim])
    beside = tmp_path / "torchgen" / "aoti" / "fallback_ops.py"
    assert raised.value.problems == (
        "the AOTInductor fallback-op table (torchgen/aoti/fallback_ops.py) was not "
        f"found: not beside --source-path (looked for {beside}), and torchgen is not "
        "installed; name it with "
        "--aoti-fallback-ops FILE",
    )


def test_table_given_by_flag(torchgen_aten_dir: Path, tmp_path: Path) -> None:
    table = tmp_path / "my_fallback_ops.py"
    table.write_text("inductor_fallback_ops = {'aten.nope.default': {'since': 'x'}}\n")
    flags = (*CHECK, "--aoti-fallback-ops", str(table))
    with pytest.raises(SpecError) as raised:
        opgen_files(flags, torchgen_aten_dir, tmp_path / "out", [emit_aoti_c_shim])
    assert str(raised.value).startswith(f"{table}:")
    missing = (*CHECK, "--aoti-fallback-ops", str(tmp_path / "none.py"))
    with pytest.raises(SpecError, match="given as --aoti-fallback-ops"):
        opgen_files(missing, torchgen_aten_dir, tmp_path / "out", [emit_aoti_c_shim])


def test_malformed_entry_is_located(torchgen_aten_dir: Path, tmp_path: Path) -> None:
    aten = _layout_without_table(torchgen_aten_dir, tmp_path)
    table = tmp_path / "torchgen" / "aoti" / "fallback_ops.py"
    table.parent.mkdir()
    table.write_text(
        "inductor_fallback_ops: dict = {\n"
        '    "aten.mm.default": {},\n'
        '    "aten.addmm.default": {"v2": {"new_args": ["x"], "since": "2.12"}},\n'
        "}\n"
        "aten_shimified_ops = {}\n"
    )
    with pytest.raises(SpecError) as raised:
        opgen_files(CHECK, aten, tmp_path / "out", [emit_aoti_c_shim])
    assert str(raised.value) == (
        f"{table}:3:5: error: 'since' of aten.addmm.default is '2.12', "
        "not of the form TORCH_VERSION_X_Y_Z"
    )


def test_table_is_not_executed(tmp_path: Path) -> None:
    table = tmp_path / "fallback_ops.py"
    table.write_text(
        "raise SystemExit(3)\n"
        "inductor_fallback_ops = {'aten.mm.default': {}}\n"
        "aten_shimified_ops: dict = {}\n"
    )
    tables = read_fallback_tables(str(table))
    assert list(tables.inductor_fallback_ops) == ["aten.mm.default"]
    table.write_text("inductor_fallback_ops = dict()\naten_shimified_ops = {}\n")
    with pytest.raises(SpecError) as raised:
        read_fallback_tables(str(table))
    assert str(raised.value) == (
        f"{table}:1:25: error: 'inductor_fallback_ops' must be assigned a dict literal"
    )
