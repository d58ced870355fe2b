"""`opgen backend`: the command line of `python -m torchgen.gen_backend_stubs`, flag for flag.

Upstream reads the spec it ships (`torchgen/packaged/ATen`, or `aten/src/ATen`
in a PyTorch checkout); opgen reads the installed torchgen's packaged ATen
the same way, without importing it, or the ATen directory `--source-path`
names. `--dry-run` takes an optional value, as upstream's `type=bool` flag
does: any non-empty value, `False` included, means a dry run.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import TextIO

from opgen.diagnostics import SpecError
from opgen.output import OutputSet, TemplateDir, write_files
from opgen.spec.external_backend import ExternalBackend, listed_operators, read_external_backend
from opgen.spec.model import LoadOptions, Spec, load_spec
from opgen.spec.yaml.load import load_yaml, read_text
from opgen.template import Template

GENERATOR = "torchgen/gen_backend_stubs.py"


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags `opgen backend` and `opgen lazy` share: upstream's, and --source-path."""
    add = parser.add_argument
    add(
        "-s",
        "--source-yaml",
        "--source_yaml",
        required=True,
        metavar="YAML",
        help="the backend YAML (backend:, cpp_namespace:, supported:, ...)",
    )
    add("-o", "--output-dir", "--output_dir", required=True, metavar="DIR", help="output directory")
    add(
        "--dry-run",
        "--dry_run",
        nargs="?",
        const=True,
        default=False,
        type=lambda value: bool(value),
        metavar="VALUE",
        help="write nothing (as upstream, any non-empty VALUE counts, even False)",
    )
    add(
        "--impl-path",
        "--impl_path",
        metavar="FILE",
        help="check that this C++ file defines every kernel the YAML lists",
    )
    add(
        "--source-path",
        metavar="DIR",
        help="the ATen directory: native/native_functions.yaml, native/tags.yaml and "
        "templates/ (default: the installed torchgen's packaged ATen)",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(parser)


def aten_dir(source_path: str | None) -> Path:
    """The ATen directory the flags name, else the installed torchgen's packaged one."""
    if source_path is not None:
        return Path(source_path)
    from opgen.installed_torchgen import packaged_aten

    found = packaged_aten()
    if found is None:
        raise SpecError(
            "no ATen directory to read the spec and templates from: pass --source-path DIR "
            "(the default, torchgen's packaged ATen or a PyTorch checkout's aten/src/ATen, "
            "was not found: torchgen is not installed)"
        )
    return found


def load_inputs(args: argparse.Namespace) -> tuple[Path, Spec, ExternalBackend]:
    """The ATen directory, the spec and the backend YAML read against it.

    Only the spec entries the YAML's operators need are read (`opgen.spec.partial`),
    unless the YAML has errors or its key may already be the spec's: the whole spec
    then gives the exact diagnostics.
    """
    aten = aten_dir(args.source_path)
    native, tags = (
        str(aten / "native" / "native_functions.yaml"),
        str(aten / "native" / "tags.yaml"),
    )
    doc = load_yaml(args.source_yaml)
    backend_name, names = listed_operators(doc)
    if backend_name is not None and not _may_have_kernels(read_text(native), backend_name):
        try:
            spec = load_spec(native, tags, LoadOptions(only_operators=names))
            return aten, spec, read_external_backend(doc, spec)
        except SpecError:
            pass
    spec = load_spec(native, tags)
    return aten, spec, read_external_backend(doc, spec)


def _may_have_kernels(native_text: str, backend: str) -> bool:
    """Whether the spec may give kernels for the backend's keys: whether a line names them
    as a dispatch key (`    CPU, XLA: kernel`)."""
    keys = "|".join(re.escape(k) for k in (backend, f"Autograd{backend}"))
    dispatch_line = re.compile(rf"\s+(?:[\w ]+,\s*)*(?:{keys})\s*[,:]")
    found = native_text.find(backend)
    while found >= 0:  # only the lines that name the key at all
        start = native_text.rfind("\n", 0, found) + 1
        end = native_text.find("\n", found)
        line = native_text[start : end if end >= 0 else len(native_text)]
        if dispatch_line.match(line):
            return True
        found = native_text.find(backend, found + len(backend))
    return False


def output_set(output_dir: str, aten: Path, generator: str) -> OutputSet:
    templates = TemplateDir(os.path.join(aten, "templates"), Template.from_file)
    return OutputSet(output_dir, templates, generator=generator)


def run_backend(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from opgen.api.signatures import SignatureSet
    from opgen.targets.backend.files import (
        BackendRun,
        RegistrationStyle,
        add_native_functions_header,
        add_registrations,
    )
    from opgen.targets.backend.kernel_check import check_kernel_definitions

    aten, spec, backend = load_inputs(args)
    args.retain(spec)
    if backend.backend_key is None:  # nothing listed: upstream writes nothing
        return 0
    run = BackendRun(backend, backend.kernel_class, spec.functions, spec.grouped, SignatureSet())
    if args.impl_path is not None:
        check_kernel_definitions(run, args.impl_path)
    files = output_set(args.output_dir, aten, GENERATOR)
    add_native_functions_header(files, run)
    add_registrations(files, run, RegistrationStyle(args.output_dir))
    write_files([files], dry_run=args.dry_run, make_roots=not args.dry_run)
    return 0
