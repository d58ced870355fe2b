"""Corpora of malformed inputs beside a spec: one directory per case, exact diagnostics.

A corpus (`tests/malformed_derivatives/`, `tests/malformed_deprecated/`) holds
one directory per case with the bad input file, an optional
`native_functions.yaml` (else the corpus's shared one), `expected.txt` (the
exact stderr of `opgen check NATIVE --<flag> INPUT`, with the case directory
written `$DIR` and the corpus's `$CORPUS`) and, where upstream rejects the
case too, an empty `upstream-rejects` marker; a case without it opens with a
`# ` comment saying why opgen rejects what upstream accepts. Every case uses
`tests/malformed/tags.yaml`. With OPGEN_UPDATE_EXPECTED=1 the expectations
are rewritten from opgen's output (review the diff).
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from pathlib import Path

from opgen.cli import main

TAGS = Path(__file__).parent / "malformed" / "tags.yaml"


@dataclass(frozen=True)
class Corpus:
    root: Path
    input_name: str  # the bad file of each case: "derivatives.yaml"
    flag: str  # the `opgen check` option that reads it: "--derivatives"

    def cases(self) -> list[Path]:
        return sorted(p for p in self.root.iterdir() if (p / self.input_name).is_file())

    def native_for(self, case: Path) -> Path:
        own = case / "native_functions.yaml"
        return own if own.is_file() else self.root / "native_functions.yaml"

    def check(self, case: Path, input_file: Path | None = None) -> tuple[int, str, str]:
        """`opgen check` of the case (or of `input_file` beside its spec): status, out, err."""
        out, err = io.StringIO(), io.StringIO()
        bad = input_file or case / self.input_name
        argv = ["check", str(self.native_for(case)), "--tags", str(TAGS), self.flag, str(bad)]
        status = main(argv, out, err)
        return status, out.getvalue(), err.getvalue()

    def assert_expected(self, case: Path) -> None:
        """The case fails (status 1, no traceback) with exactly its expected diagnostics."""
        status, out, err = self.check(case)
        assert "Traceback" not in err
        assert (status, out) == (1, "")
        printed = err.replace(str(case), "$DIR").replace(str(self.root), "$CORPUS")
        expected = case / "expected.txt"
        if os.environ.get("OPGEN_UPDATE_EXPECTED") == "1":
            expected.write_text(printed, encoding="utf-8")
        assert printed == expected.read_text(encoding="utf-8")

    def unexplained_opgen_only_cases(self) -> list[str]:
        """Cases upstream accepts whose input does not open with a `# ` comment."""
        return [
            case.name
            for case in self.cases()
            if not (case / "upstream-rejects").is_file()
            and not (case / self.input_name).read_text(encoding="utf-8").startswith("# ")
        ]


DERIVATIVES = Corpus(
    Path(__file__).parent / "malformed_derivatives", "derivatives.yaml", "--derivatives"
)
DEPRECATED = Corpus(
    Path(__file__).parent / "malformed_deprecated", "deprecated.yaml", "--deprecated"
)
BACKEND = Corpus(Path(__file__).parent / "malformed_backend", "backend.yaml", "--backend")
