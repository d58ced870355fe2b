"""Warnings of the tools, written as every opgen diagnostic is: located, with the source line.

The CLI renders the errors that end a command (`SpecError`s reach `main`);
the tools' warnings do not end it, so the tools write them here, the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

from opgen.diagnostics import Diagnostic, render


def write_diagnostics(diagnostics: Iterable[Diagnostic], err: TextIO) -> None:
    sources: dict[str, list[str]] = {}
    for d in diagnostics:
        if d.location is not None and d.location.file not in sources:
            try:
                with open(d.location.file, encoding="utf-8", errors="replace") as f:
                    sources[d.location.file] = f.read().splitlines()
            except OSError:
                sources[d.location.file] = []
        err.write(render(d, sources) + "\n")
