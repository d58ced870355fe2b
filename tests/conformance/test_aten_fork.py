"""`opgen aten` on an out-of-tree fork of the spec, against `python -m torchgen.gen`.

Backends that fork the spec (Intel's torch-xpu-ops is one) run the generator on
a source tree of their own: their `native_functions.yaml`, which names only
their backends' dispatch keys, with PyTorch's templates linked beside it.
`data/xpu_fork` is such a spec; each run lays it out as
`<tmp>/aten/src/ATen/native/{native_functions,tags}.yaml` with
`<tmp>/aten/src/ATen/templates` a link to torchgen's packaged templates.

The build runs two commands in one output root (`fork_commands`): the headers
as a dry run that writes only the dependency lists, then the full run that
writes everything, the AOTInductor C shim included. Both generators run the
pair into roots of the same layout, and every file is compared byte for byte.

One difference is torchgen's, not opgen's: for a ufunc operator whose dispatch
table names no CPU or CUDA kernel, torchgen adds those two keys from a set, so
the order of the `structured_ufunc_<op>_CPU`/`_CUDA` declarations in the native
headers follows PYTHONHASHSEED. torchgen runs under each of `SEEDS` (they give
both orders, which the tests assert); opgen's copy of a file that varies must
equal one of torchgen's, every other file must equal torchgen's exactly, and
opgen's output must not depend on the seed.

Set OPGEN_ORACLE_DIR to keep torchgen's trees between test sessions (keyed by the
seed, the commands' flags and the bytes of the spec).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from opgen.cli import main

from .aten_trees import DATA, Tree, assert_same_files, oracle_tree, read_tree, unified_diff

FORK = DATA / "xpu_fork"
SPEC_FILES = ("native_functions.yaml", "tags.yaml")
BACKENDS = ("XPU", "SparseXPU", "SparseCsrXPU", "NestedTensorXPU")
# Under these, torchgen writes both orders of the CPU and CUDA ufunc kernels.
SEEDS = (0, 1, 2, 3, 4, 5)
# The files whose bytes follow torchgen's hash seed: the native headers of the
# fork's two ufunc operators (add.out names no kernel, mul.out only the fork's).
SEED_DEPENDENT = {"out/ops/add_native.h", "out/ops/mul_native.h"}

# The flags of the fork's build, apart from paths (which `fork_commands` adds).
COMMON = ("--per-operator-headers", "--backend-whitelist", *BACKENDS, "--xpu")
DEPENDENCIES = ("--generate", "headers", "--dry-run")
FULL = ("--static-dispatch-backend", "--update-aoti-c-shim", "--extend-aoti-c-shim")


def fork_commands(source: Path, root: Path) -> tuple[list[str], list[str]]:
    """The arguments of the build's two runs (after `torchgen.gen` or `opgen aten`)."""
    common = [
        "-s",
        str(source),
        "--install-dir",
        str(root / "out"),
        "--headeronly-install-dir",
        str(root / "headeronly"),
        *COMMON,
    ]
    dependencies = [
        *common,
        *DEPENDENCIES,
        "--output-dependencies",
        str(root / "deps/generated.cmake"),
    ]
    full = [*common, *FULL, f"--aoti-install-dir={root / 'aoti'}"]
    return dependencies, full


def spec_digest() -> str:
    """The fork's spec files, hashed: a changed spec must not reuse a kept torchgen tree."""
    digest = hashlib.sha1()
    for name in SPEC_FILES:
        digest.update((FORK / name).read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def fork_source(torchgen_aten_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fork's ATen source directory: its spec, and torchgen's templates linked beside it."""
    aten = tmp_path_factory.mktemp("xpu-fork").resolve() / "aten" / "src" / "ATen"
    (aten / "native").mkdir(parents=True)
    for name in SPEC_FILES:
        (aten / "native" / name).write_bytes((FORK / name).read_bytes())
    (aten / "templates").symlink_to(torchgen_aten_dir / "templates", target_is_directory=True)
    return aten


def torchgen_fork_tree(seed: int, source: Path, root: Path) -> Tree:
    """torchgen's tree after both runs, under PYTHONHASHSEED=`seed`."""
    script = "\n".join(
        shlex.join([sys.executable, "-m", "torchgen.gen", *arguments])
        for arguments in fork_commands(source, root)
    )
    command = ["env", f"PYTHONHASHSEED={seed}", "sh", "-ec", script]
    key = ("aten-fork", seed, COMMON, DEPENDENCIES, FULL, spec_digest())
    return oracle_tree(command, root, key=key)


def opgen_fork_tree(source: Path, root: Path) -> Tree:
    """opgen's tree after both runs, in this process, run in `root` as the build runs it."""
    root.mkdir(parents=True)
    with contextlib.chdir(root):
        for arguments in fork_commands(source, root):
            status = main(["aten", *arguments])
            assert status == 0, f"opgen aten {' '.join(arguments)} exited with {status}"
    return read_tree(root)


def opgen_process_tree(seed: int, source: Path, root: Path) -> Tree:
    """opgen's tree after both runs, each a process of its own under PYTHONHASHSEED=`seed`."""
    root.mkdir(parents=True)
    environment = {**os.environ, "PYTHONHASHSEED": str(seed)}
    for arguments in fork_commands(source, root):
        command = [sys.executable, "-m", "opgen", "aten", *arguments]
        done = subprocess.run(command, cwd=root, env=environment, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    return read_tree(root)


@pytest.fixture(scope="module")
def torchgen_trees(fork_source: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[int, Tree]:
    """torchgen's tree under each of SEEDS."""
    base = tmp_path_factory.mktemp("xpu-fork-torchgen").resolve()
    return {seed: torchgen_fork_tree(seed, fork_source, base / f"seed{seed}") for seed in SEEDS}


@pytest.fixture(scope="module")
def opgen_tree(fork_source: Path, tmp_path_factory: pytest.TempPathFactory) -> Tree:
    return opgen_fork_tree(
        fork_source, tmp_path_factory.mktemp("xpu-fork-opgen").resolve() / "root"
    )


def variants(trees: Mapping[int, Tree], path: str) -> set[bytes]:
    """The different contents torchgen gave `path` across the seeds."""
    return {tree.files[path] for tree in trees.values()}


def test_torchgen_depends_on_the_seed_only_in_the_ufunc_headers(
    torchgen_trees: dict[int, Tree],
) -> None:
    paths = {seed: sorted(tree.files) for seed, tree in torchgen_trees.items()}
    assert all(p == paths[SEEDS[0]] for p in paths.values())
    varying = {p for p in paths[SEEDS[0]] if len(variants(torchgen_trees, p)) > 1}
    assert varying == SEED_DEPENDENT
    assert all(len(variants(torchgen_trees, p)) == 2 for p in SEED_DEPENDENT)


def test_dependency_lists_match_torchgen(torchgen_trees: dict[int, Tree], opgen_tree: Tree) -> None:
    theirs = torchgen_trees[SEEDS[0]].under("deps/")
    assert sorted(theirs) == [
        "deps/core_generated.cmake",
        "deps/cpu_vec_generated.cmake",
        "deps/cuda_generated.cmake",
        "deps/generated.cmake",
        "deps/ops_generated.cmake",
        "deps/xpu_generated.cmake",
    ]
    assert_same_files(theirs, opgen_tree.under("deps/"))


def test_outputs_match_torchgen(torchgen_trees: dict[int, Tree], opgen_tree: Tree) -> None:
    """Every file as torchgen writes it; a seed-dependent one as under one of the seeds."""
    theirs = torchgen_trees[SEEDS[0]].files
    ours = opgen_tree.files
    assert sorted(ours) == sorted(theirs)
    assert "aoti/c_shim_xpu.h" in ours and "headeronly/enum_tag.h" in ours
    fixed = set(theirs) - SEED_DEPENDENT
    assert_same_files({p: theirs[p] for p in fixed}, {p: ours[p] for p in fixed})
    for path in sorted(SEED_DEPENDENT):
        assert ours[path] in variants(torchgen_trees, path), unified_diff(
            path, theirs[path], ours[path]
        )


def test_opgen_does_not_depend_on_the_seed(
    fork_source: Path, opgen_tree: Tree, tmp_path: Path
) -> None:
    """Also: the same bytes in separate processes as in this one."""
    for seed in SEEDS:
        tree = opgen_process_tree(seed, fork_source, tmp_path.resolve() / f"seed{seed}")
        assert_same_files(opgen_tree.files, tree.files)
