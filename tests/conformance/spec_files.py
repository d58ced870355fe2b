"""The specs the conformance tests run on: torch's packaged one and opgen's bundled example."""

from __future__ import annotations

from pathlib import Path

EXAMPLE_DIR = Path(__file__).parents[2] / "src" / "opgen" / "examples"


def spec_files(which: str, torchgen_native_dir: Path) -> tuple[str, str]:
    """native_functions.yaml and tags.yaml of spec `which` ("torch" or "example")."""
    d = torchgen_native_dir if which == "torch" else EXAMPLE_DIR
    return str(d / "native_functions.yaml"), str(d / "tags.yaml")
