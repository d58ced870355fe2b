"""Where the installed torchgen package keeps its data, found without importing it.

Upstream's generators read files that ship inside torchgen: the packaged ATen
spec and templates (`packaged/ATen`), the AOTInductor fallback-op table
(`aoti/fallback_ops.py`). opgen reads the same files when the user names no
other, but never imports torch or torchgen: `importlib.util.find_spec` finds a
top-level package's directory without running its code.
"""

from __future__ import annotations

import sys
from pathlib import Path


def package_dir() -> Path | None:
    """The directory of the installed torchgen package, if there is one."""
    for entry in sys.path:  # a plain installation, found without importing importlib.util
        candidate = Path(entry or ".") / "torchgen"
        if (candidate / "__init__.py").is_file():
            return candidate
    import importlib.util  # finders of other kinds, such as editable installations use

    spec = importlib.util.find_spec("torchgen")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def packaged_aten() -> Path | None:
    """The ATen directory (native/, templates/) upstream's generators read by default.

    That is `aten/src/ATen` beside torchgen in a PyTorch checkout, else the
    installed package's `packaged/ATen`; None if there is neither.
    """
    root = package_dir()
    if root is None:
        return None
    for aten in (root.parent / "aten" / "src" / "ATen", root / "packaged" / "ATen"):
        if (aten / "native" / "native_functions.yaml").is_file():
            return aten
    return None
