"""Whole output trees of `python -m torchgen.gen` and `opgen aten`, for comparing byte for byte.

Each configuration is a list of flags. The torchgen side runs once per
configuration and test session (it takes about 16 s); set OPGEN_ORACLE_DIR to
keep its trees between test sessions while developing (they are keyed by the
torch version and the flags, and never committed).
"""

from __future__ import annotations

import difflib
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).parent / "data"

# The configurations the ATen target must reproduce.
CONFIGS: dict[str, tuple[str, ...]] = {
    "default": (),
    "per_operator": (
        "--per-operator-headers",
        "--mps",
        "--xpu",
        "--static-dispatch-backend",
        "CPU",
        "--backend-whitelist",
        "CPU",
        "MPS",
        "XPU",
        "CompositeImplicitAutograd",
        "CompositeExplicitAutograd",
    ),
    "selection": ("--op-selection-yaml-path", str(DATA / "selection.yaml")),
    "headers": ("--generate", "headers"),
    "sources": ("--generate", "sources"),
}


@dataclass(frozen=True)
class Tree:
    """The files one run wrote, by path relative to the run's root directory."""

    root: Path
    files: dict[str, bytes]

    def under(self, prefix: str) -> dict[str, bytes]:
        return {p: data for p, data in self.files.items() if p.startswith(prefix)}


def layout_flags(source_path: Path, root: Path) -> list[str]:
    """Where a run reads and writes: every output root under `root`."""
    return [
        "-s",
        str(source_path),
        "-d",
        str(root / "out"),
        "--aoti-install-dir",
        str(root / "aoti"),
        "-o",
        str(root / "deps" / "generated.cmake"),
    ]


# A test-session fixture's trees by configuration (`conftest.torchgen_aten_tree`).
TreeOf = Callable[[str], Tree]


def read_tree(root: Path) -> Tree:
    """The files under `root`; dependency lists name `root` as `<root>`, to compare across runs."""
    files = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            rel = p.relative_to(root).as_posix()
            data = p.read_bytes()
            if rel.startswith("deps/"):
                data = data.replace(str(root.resolve()).encode(), b"<root>")
            files[rel] = data
    return Tree(root, files)


def torchgen_tree(flags: tuple[str, ...], source_path: Path, root: Path) -> Tree:
    command = [sys.executable, "-m", "torchgen.gen", *layout_flags(source_path, root), *flags]
    return oracle_tree(command, root, key=flags)


def oracle_tree(
    command: list[str], root: Path, *, key: object, env: dict[str, str] | None = None
) -> Tree:
    """The tree `command` (an upstream run) writes into a fresh `root`, run in `root`.

    With OPGEN_ORACLE_DIR set, trees are kept there between test sessions, by the
    torch version and `key` (which must tell apart every run a test session makes).
    """
    cache = _cache_dir(key)
    if cache is not None and (cache / "done").exists():
        return read_tree(cache / "tree")
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    subprocess.run(command, check=True, cwd=root, capture_output=True, env=env)
    tree = read_tree(root)
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        for rel, data in tree.files.items():
            (cache / "tree" / rel).parent.mkdir(parents=True, exist_ok=True)
            (cache / "tree" / rel).write_bytes(data)
        (cache / "done").touch()
    return tree


def opgen_tree(flags: tuple[str, ...], source_path: Path, root: Path) -> Tree:
    from opgen.cli import main

    root.mkdir(parents=True, exist_ok=True)
    status = main(["aten", *layout_flags(source_path, root), *flags])
    assert status == 0, f"opgen aten {' '.join(flags)} exited with {status}"
    return read_tree(root)


def _cache_dir(key: object) -> Path | None:
    base = os.environ.get("OPGEN_ORACLE_DIR")
    if not base:
        return None
    import torch

    digest = hashlib.sha1(repr((torch.__version__, key)).encode()).hexdigest()[:16]
    return Path(base) / digest


def opgen_files(
    flags: tuple[str, ...], source_path: Path, root: Path, emitters: list[object]
) -> dict[str, bytes]:
    """What the given emitters alone produce, rendered in memory, by path relative to `root`.

    For testing one file family before the whole target is done.
    """
    from opgen.cli import build_parser
    from opgen.targets.aten.command import options_from
    from opgen.targets.aten.generate import read

    args = build_parser().parse_args(["aten", *layout_flags(source_path, root), *flags])
    run = read(options_from(args))
    files: dict[str, bytes] = {}
    for emit in emitters:
        emitted = emit(run)  # type: ignore[operator]
        for output_set in emitted.files.values():
            for path in output_set.paths():
                rel = (Path(output_set.root) / path).relative_to(root).as_posix()
                files[rel] = output_set.text(path).encode()
    return files


def generated_parts(flags: tuple[str, ...]) -> set[object]:
    """The `--generate` parts the flags ask for (all three by default)."""
    from opgen.targets.aten.options import AtenPart

    if "--generate" not in flags:
        return set(AtenPart)
    return {AtenPart(flags[flags.index("--generate") + 1])}


def family_files(
    flags: tuple[str, ...],
    source_path: Path,
    root: Path,
    emitters: tuple[tuple[object, object], ...],
) -> dict[str, bytes]:
    """`opgen_files` of the (part, emitter) pairs whose part the flags generate."""
    parts = generated_parts(flags)
    chosen = [emit for part, emit in emitters if part in parts]
    return opgen_files(flags, source_path, root, chosen)


def unified_diff(path: str, theirs: bytes, ours: bytes, lines: int = 40) -> str:
    """The first `lines` lines of the diff from torchgen's file to opgen's."""
    diff = difflib.unified_diff(
        theirs.decode().splitlines(),
        ours.decode().splitlines(),
        f"torchgen/{path}",
        f"opgen/{path}",
        lineterm="",
    )
    return "\n".join(list(diff)[:lines])


def assert_same_files(theirs: dict[str, bytes], ours: dict[str, bytes]) -> None:
    """The same paths with the same bytes; on failure, the count and the first file's diff."""
    assert sorted(ours) == sorted(theirs)
    differing = [p for p in sorted(theirs) if ours[p] != theirs[p]]
    if differing:
        first = differing[0]
        raise AssertionError(
            f"{len(differing)} files differ, first {first}:\n"
            + unified_diff(first, theirs[first], ours[first])
        )
