"""python_enum_tag.cpp: the operator tags (tags.yaml) as the Python enum `torch.Tag`."""

from __future__ import annotations

from opgen.targets.emitters import Emitted
from opgen.targets.python.run import PythonRun, emitted


def emit_enum_tag(run: PythonRun) -> Emitted:
    # One `.value(...)` line per tag, sorted; the text starts with a newline, which the
    # template's block placeholder keeps as an empty line.
    values = "".join(f'\n.value("{tag}", at::Tag::{tag})' for tag in sorted(run.spec.tags))
    out = run.output_set()
    out.add_template("python_enum_tag.cpp", {"enum_of_valid_tags": values})
    return emitted(out)
