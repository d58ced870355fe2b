"""Each supported torch release's torchgen and stubs, fetched once, for the release suites.

torchgen is pure Python and the same in every wheel of a release, so the suite takes
it from the small macOS arm64 wheel (pip is asked for `macosx_15_0_arm64`, which
accepts the wheels tagged 11.0 and 14.0 alike) and unzips `torchgen/`, the `.pyi`
stubs, the docs modules the stubs take their docstrings from and `torch/version.py`
into `<cache>/<version>/`. Running that torchgen is a
matter of `PYTHONPATH=<cache>/<version>`.

The cache is `$OPGEN_TORCH_RELEASES`, else `~/.cache/opgen/torch-releases`; the
wheels stay in `<cache>/.wheels`, so a second fetch downloads nothing. Nothing is
skipped: a release that cannot be fetched fails the tests that need it.

    python tests/conformance/releases.py [VERSION ...]    fetch (default: VERSIONS)
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

from opgen.releases import SUPPORTED, TESTED_PATCHES, Release, parse_release


def _installed() -> Release | None:
    try:
        return parse_release(metadata.version("torch"))
    except metadata.PackageNotFoundError:
        return None


# The patch release of each supported minor release that the suite runs against,
# but the installed torch's: every other conformance suite runs that one, deeper.
VERSIONS = tuple(TESTED_PATCHES[release] for release in SUPPORTED if release != _installed())


def cache_dir() -> Path:
    found = os.environ.get("OPGEN_TORCH_RELEASES")
    return Path(found) if found else Path.home() / ".cache" / "opgen" / "torch-releases"


def release_root(version: str) -> Path:
    """`<cache>/<version>`, holding that release's `torchgen/` and `torch/*.pyi`."""
    root = cache_dir() / version
    done = root / ".complete"
    if not done.exists():
        _extract(_wheel(version, cache_dir() / ".wheels"), root)
        done.touch()
    # gen_backend_stubs before 2.12 reads the spec and templates from `<root>/aten/src`
    # only, as in a checkout; the packaged copies are the same files.
    checkout = root / "aten" / "src" / "ATen"
    if not checkout.is_symlink():
        checkout.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):  # another run made it
            checkout.symlink_to(Path("..", "..", "torchgen", "packaged", "ATen"))
    return root


def _wheel(version: str, wheels: Path) -> Path:
    found = sorted(wheels.glob(f"torch-{version}-*.whl"))
    if found:
        return found[0]
    wheels.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", f"torch=={version}",
        "--platform", "macosx_15_0_arm64", "--python-version", "3.11",
        "--only-binary=:all:", "--dest", str(wheels),
    ]  # fmt: skip
    # The machine's pip may cap torch through a constraint file; this download is data.
    environment = {**os.environ, "PIP_CONSTRAINT": os.devnull}
    subprocess.run(command, check=True, env=environment)
    found = sorted(wheels.glob(f"torch-{version}-*.whl"))
    if not found:
        raise RuntimeError(f"pip downloaded no wheel of torch {version} into {wheels}")
    return found[0]


def _wanted(name: str) -> bool:
    if name.startswith("torchgen/"):
        return "/__pycache__/" not in name
    if name in ("torch/version.py", "torch/_torch_docs.py", "torch/_tensor_docs.py"):
        return True  # the release, and the docstrings the stubs carry
    return name.startswith("torch/") and name.endswith(".pyi")


def _extract(wheel: Path, root: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if _wanted(name):
                archive.extract(name, root)


if __name__ == "__main__":
    for version in sys.argv[1:] or VERSIONS:
        print(release_root(version))
