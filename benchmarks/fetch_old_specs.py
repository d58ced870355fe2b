"""Fetch older PyTorch specs for `opgen diff`'s real-version conformance test.

python benchmarks/fetch_old_specs.py DIR [VERSION ...]   (default: 2.0.1 2.2.2 2.4.1 2.6.0 2.9.1)

For each version, downloads torch's wheel with pip into DIR/.wheels (kept, so a
second run downloads nothing) and extracts only the spec files,
torchgen/packaged/ATen/native/{native_functions,tags}.yaml, into DIR/VERSION/.
Then run the test on them:

    OPGEN_OLD_SPECS=DIR python -m pytest tests/conformance/test_diff_torch_rules.py

The wheel is the macOS arm64 one for CPython 3.11 (about 60 MB, against about
800 MB for the Linux CUDA one); the spec files are the same in every wheel of a
version. `--platform` picks another. Nothing here imports torch.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import zipfile
from pathlib import Path

DEFAULT_VERSIONS = ("2.0.1", "2.2.2", "2.4.1", "2.6.0", "2.9.1")
SPEC_DIR = "torchgen/packaged/ATen/native/"
SPEC_FILES = ("native_functions.yaml", "tags.yaml")


def wheel(version: str, cache: Path, platform: str) -> Path:
    """torch `version`'s wheel in `cache`, downloaded with pip unless it is there."""
    found = sorted(cache.glob(f"torch-{version}-*.whl"))
    if found:
        return found[0]
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", f"torch=={version}",
        "--platform", platform, "--python-version", "3.11", "--only-binary=:all:",
        "--dest", str(cache),
    ]  # fmt: skip
    subprocess.run(command, check=True)
    found = sorted(cache.glob(f"torch-{version}-*.whl"))
    if not found:
        raise SystemExit(f"pip downloaded no wheel of torch {version} into {cache}")
    return found[0]


def extract(wheel_path: Path, into: Path) -> None:
    into.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel_path) as archive:
        for name in SPEC_FILES:
            (into / name).write_bytes(archive.read(SPEC_DIR + name))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", metavar="DIR", help="where to put VERSION/ directories")
    parser.add_argument("versions", metavar="VERSION", nargs="*", default=DEFAULT_VERSIONS)
    parser.add_argument("--platform", default="macosx_11_0_arm64", help="the wheel's platform")
    args = parser.parse_args()
    root = Path(args.dir)
    cache = root / ".wheels"
    cache.mkdir(parents=True, exist_ok=True)
    for version in args.versions:
        extract(wheel(version, cache, args.platform), root / version)
        print(f"{root / version}: {', '.join(SPEC_FILES)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
