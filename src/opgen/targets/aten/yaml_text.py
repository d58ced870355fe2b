"""YAML text exactly as PyYAML's dumper writes it, built directly from strings.

torchgen writes Declarations.yaml with `yaml.dump(data, Dumper=CSafeDumper (or
SafeDumper without libyaml), default_flow_style=False, width=1e9)`. That call
spends most of its time in PyYAML's Python representer and serializer; the
document here is a fixed shape (a sequence of mappings whose values are
scalars or sequences of flat mappings), so it is written directly, and only
the scalars need PyYAML's rules:

- None is `null`, booleans `true`/`false`, ints `str(n)`;
- floats are `repr(x).lower()`, with `.0` put before an exponent that has no
  point (`1e-05` -> `1.0e-05`), and `.nan`, `.inf`, `-.inf`;
- a string is plain when the emitter allows a plain scalar in block context
  and reading it back plain gives a string; otherwise quoted. Strings that
  start with a letter or `_` (or `::` and then one: C++ types such as
  `::std::optional<bool>`), hold only printable ASCII, do not end in a space
  or `:`, contain no `: ` or ` #`, and are not a YAML 1.1 boolean or null word
  are always plain. The empty string, and printable ASCII that starts with an
  indicator that forbids a plain scalar (`{`, `"`, `#` ...), are single-quoted,
  with `'` doubled. Any other string is rendered once by PyYAML itself, in the
  same nesting depth (which decides how a multi-line scalar is indented), and
  the result is kept; ATen's spec has none, so PyYAML is not imported.

Layout facts: mappings in a sequence start `- ` and continue two columns in;
a sequence that is a mapping value is not indented further than its key
(`key:` then `- item` at the key's column); an empty sequence is `[]`.
"""

from __future__ import annotations

import math
import re

_PLAIN = re.compile(r"(?:::)?[A-Za-z_][\x20-\x7e]*")
# Empty, or starting with an indicator that rules out a plain scalar: single-quoted.
_SINGLE_QUOTED = re.compile(r"(?:[#,\[\]{}&*!|>'\"%@`][\x20-\x7e]*)?")
_NOT_PLAIN = re.compile(r": | #|[ :]\Z")
# Words a plain scalar would read back as a boolean or null (YAML 1.1, PyYAML's resolver).
_SPECIAL_WORDS = frozenset({"yes", "no", "true", "false", "on", "off", "null"})


def yaml_float(x: float) -> str:
    if math.isnan(x):
        return ".nan"
    if math.isinf(x):
        return ".inf" if x > 0 else "-.inf"
    text = repr(x).lower()
    if "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    return text


class YamlScalars:
    """Renders scalars; strings PyYAML must decide are rendered once per depth."""

    def __init__(self) -> None:
        self._strings: dict[int, dict[str, str]] = {}  # by depth

    def scalar(self, value: object, depth: int) -> str:
        """`value` as it follows `key: ` in a mapping `depth` sequences deep."""
        if isinstance(value, str):
            return self.string(value, depth)
        if value is None:
            return "null"
        if value is True:
            return "true"
        if value is False:
            return "false"
        if isinstance(value, int):
            return str(value)
        if isinstance(value, float):
            return yaml_float(value)
        raise TypeError(f"no YAML scalar for {type(value).__name__}")

    def string(self, s: str, depth: int) -> str:
        known = self._strings.get(depth)
        if known is None:
            known = self._strings[depth] = {}
        found = known.get(s)
        if found is None:
            if is_plain(s):
                found = s
            elif _SINGLE_QUOTED.fullmatch(s):
                found = "'" + s.replace("'", "''") + "'"
            else:
                found = _dumped(s, depth)
            known[s] = found
        return found


def is_plain(s: str) -> bool:
    """Whether PyYAML surely writes `s` plain (False: it may, or may not)."""
    return (
        bool(_PLAIN.fullmatch(s)) and not _NOT_PLAIN.search(s) and s.lower() not in _SPECIAL_WORDS
    )


def _dumped(s: str, depth: int) -> str:
    """PyYAML's rendering of `s` as a mapping value `depth` sequences deep."""
    import yaml  # only here: importing PyYAML costs more than most runs need it

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # SafeDumper without libyaml
    node: object = {"k": s}
    for _ in range(depth - 1):
        node = {"k": [node]}
    prefix = "".join(f"{'  ' * i}- k:\n" for i in range(depth - 1)) + "  " * (depth - 1) + "- k: "
    text: str = yaml.dump([node], Dumper=dumper, default_flow_style=False, width=1e9)
    assert text.startswith(prefix) and text.endswith("\n"), text
    return text[len(prefix) : -1]
