"""A checkout of one release read beside the torchgen of another: the AOTInductor
fallback-op table is never taken from the other release.

The checkout is torch 2.12.1's ATen sources and its `version.txt`, without `torchgen/`
(from the release cache, `releases.py`); the installed torchgen is torch 2.13's. opgen
finds the release (2.12) from the checkout, looks for the table beside it, finds only
the installed torchgen's, and stops with a usage error that says so, before writing
anything. Naming 2.12.1's own table makes the same run succeed.
"""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest

from opgen.cli import main
from opgen.installed_torchgen import package_dir

from .releases import release_root

OTHER = "2.12.1"


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("checkout")
    aten = root / "aten" / "src" / "ATen"
    shutil.copytree(release_root(OTHER) / "torchgen" / "packaged" / "ATen", aten)
    (root / "version.txt").write_text(f"{OTHER}\n")
    return root


def run(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    return main(list(argv), out=io.StringIO(), err=err), err.getvalue()


def test_the_installed_torchgens_table_of_another_release_is_a_usage_error(
    checkout: Path, tmp_path: Path
) -> None:
    installed = package_dir()
    assert installed is not None
    version = Path(installed).parent / "torch" / "version.py"
    found = re.search(r"^__version__ = '([^']+)'", version.read_text(), re.M)
    assert found is not None and found[1].startswith("2.13.")
    out = tmp_path / "out"
    aoti = tmp_path / "aoti"
    source = str(checkout / "aten" / "src" / "ATen")
    status, err = run("aten", "-s", source, "-d", str(out), "--aoti-install-dir", str(aoti))
    table = Path(installed) / "aoti" / "fallback_ops.py"
    assert (status, err) == (
        2,
        "opgen aten: error: the AOTInductor fallback-op table of torch 2.12 was not found "
        f"beside --source-path (looked for {checkout}/aten/aoti/fallback_ops.py and "
        f"{checkout}/torchgen/aoti/fallback_ops.py); the installed torchgen's, {table}, is "
        f"torch {found[1]}'s (from {version}), and a run for torch 2.12 does not read "
        "another release's table. Run from the torch 2.12 checkout or wheel whose torchgen/ "
        "holds aoti/fallback_ops.py, or name torch 2.12's table with --aoti-fallback-ops "
        "FILE\n",
    )
    assert not out.exists() and not aoti.exists()


def test_the_releases_own_table_named_explicitly(checkout: Path, tmp_path: Path) -> None:
    table = release_root(OTHER) / "torchgen" / "aoti" / "fallback_ops.py"
    aten = str(checkout / "aten" / "src" / "ATen")
    argv = ["aten", "-s", aten, "-d", str(tmp_path / "out"), "--aoti-fallback-ops", str(table)]
    argv += ["--aoti-install-dir", str(tmp_path / "aoti")]
    assert run(*argv) == (0, "")
    assert (tmp_path / "out" / "RegisterCPU_0.cpp").is_file()
