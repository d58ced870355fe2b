"""YAML text to plain values that remember where they came from.

Mappings become `YamlMap` and sequences `YamlList`, which give the `Location`
of every key, value and item on demand (`opgen.spec.yaml.values`). Duplicate
keys, which PyYAML silently lets through, are errors.

Two readers give the same values and locations. Spec files are written in a
small part of YAML (block mappings and sequences, one-line scalars, a few flow
sequences and literal blocks), which `subset` reads in pure Python; any
other document, including every one with an error, goes to PyYAML
(`full`), imported only then. The fast path exists because reading is in
the serial part of every run: importing PyYAML costs ~15 ms, and building
values from its nodes ~50 ms on torch's spec.

Reading a file reports a missing file, bytes that are not UTF-8, YAML syntax
errors and an empty document as located `SpecError`s.
"""

from __future__ import annotations

from opgen.diagnostics import Location, SpecError
from opgen.spec.yaml.subset import read_subset
from opgen.spec.yaml.values import YamlDocument, YamlList, YamlMap

__all__ = ["YamlDocument", "YamlList", "YamlMap", "load_yaml", "parse_yaml", "read_text"]


def read_text(path: str) -> str:
    """The file's text, decoded as UTF-8; a SpecError if it cannot be read."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise SpecError("no such file", Location(path, 1)) from None
    except IsADirectoryError:
        raise SpecError("is a directory, not a file", Location(path, 1)) from None
    except OSError as e:
        raise SpecError(f"cannot read file: {e.strerror}", Location(path, 1)) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise SpecError(
            f"the file is not valid UTF-8 (byte 0x{data[e.start]:02x})", Location(path, line, col)
        ) from None


def parse_yaml(path: str, text: str) -> YamlDocument:
    """Compose and build one YAML document; errors are located SpecErrors."""
    document = read_subset(path, text)
    if document is not None:
        return document
    from opgen.spec.yaml.full import read_full  # imports PyYAML: only when needed

    return read_full(path, text)


def load_yaml(path: str) -> YamlDocument:
    return parse_yaml(path, read_text(path))
