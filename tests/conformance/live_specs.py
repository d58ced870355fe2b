"""Torch's packaged spec loaded twice, by opgen and by upstream torchgen, matched up.

The API-layer conformance tests (translate, structured, python) compare opgen's
result for each function or group with torchgen's result for the same one. This
module loads both models once per process and pairs them: functions by position
(both keep the spec's order, derived functions last), groups by the name of
their out= function.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import torchgen.model as tg
from torchgen.gen import ParsedYaml, get_grouped_native_functions, parse_native_yaml

import opgen.spec.groups as og
import opgen.spec.native as on
from opgen.spec import Spec, load_spec


@dataclass(frozen=True)
class LiveSpecs:
    ours: Spec
    theirs: ParsedYaml
    theirs_grouped: tuple[tg.NativeFunction | tg.NativeFunctionsGroup, ...]

    def functions(self) -> list[tuple[on.NativeFunction, tg.NativeFunction]]:
        """Every function, opgen's and torchgen's, in spec order."""
        pairs = list(zip(self.ours.functions, self.theirs.native_functions, strict=True))
        assert all(str(o.func) == str(t.func) for o, t in pairs)
        return pairs

    def groups(self) -> list[tuple[og.NativeFunctionsGroup, tg.NativeFunctionsGroup]]:
        """Every operator group, matched by its out= function's name."""
        theirs = {
            str(g.out.func.name): g
            for g in self.theirs_grouped
            if isinstance(g, tg.NativeFunctionsGroup)
        }
        ours = {str(g.out.func.name): g for g in self.ours.groups}
        assert sorted(ours) == sorted(theirs)
        return [(g, theirs[name]) for name, g in ours.items()]


def live_specs(native_dir: Path) -> LiveSpecs:
    return _load(str(native_dir / "native_functions.yaml"), str(native_dir / "tags.yaml"))


@functools.cache
def _load(native_yaml: str, tags_yaml: str) -> LiveSpecs:
    parsed = parse_native_yaml(native_yaml, tags_yaml)
    grouped = tuple(get_grouped_native_functions(parsed.native_functions))
    return LiveSpecs(load_spec(native_yaml, tags_yaml), parsed, grouped)
