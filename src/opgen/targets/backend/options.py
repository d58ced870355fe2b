"""The flags of one `opgen backend` run (`opgen lazy` adds its own to them)."""

from __future__ import annotations

from opgen.frozen import frozen
from opgen.releases import NEWEST, Release
from opgen.targets.contract import RunOptions


@frozen
class BackendOptions:
    source_yaml: str  # the backend YAML (backend:, cpp_namespace:, supported:, ...)
    run: RunOptions  # -o/--output-dir is its output directory
    impl_path: str | None = None  # a C++ file that must define every listed kernel
    source_path: str | None = None  # the ATen directory; default: the installed torchgen's
    # Processes reading parts of the spec and generating their code (`in_parts`); the
    # output does not depend on it.
    jobs: int = 1
    # The torch release to generate for (`opgen.releases`), and what to say on stderr about
    # how it was chosen (`opgen.targets.torch_version`).
    release: Release = NEWEST
    release_notice: str | None = None
