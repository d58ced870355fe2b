"""Where the installed torchgen package keeps its data, found without importing it.

Upstream's generators read files that ship inside torchgen: the packaged ATen
spec and templates (`packaged/ATen`), the AOTInductor fallback-op table
(`aoti/fallback_ops.py`). opgen reads the same files when the user names no
other, but never imports torch or torchgen: `importlib.util.find_spec` finds a
top-level package's directory without running its code.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path


def package_dir() -> Path | None:
    """The directory of the installed torchgen package, if there is one."""
    spec = importlib.util.find_spec("torchgen")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def packaged_aten() -> Path | None:
    """torchgen's packaged ATen directory (native/, templates/), if torchgen is installed."""
    root = package_dir()
    if root is None:
        return None
    aten = root / "packaged" / "ATen"
    return aten if aten.is_dir() else None
