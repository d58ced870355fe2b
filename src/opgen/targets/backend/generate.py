"""`opgen backend`'s generation: the backend YAML read against the spec, and its files.

The spec and templates come from `--source-path` or, as upstream reads the spec it
ships, from the installed torchgen's packaged ATen (found without importing it).
`load_inputs` is shared with `opgen lazy`, which writes these files and more.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from opgen.diagnostics import SpecError
from opgen.output import OutputSet, TemplateDir
from opgen.spec.external_backend import ExternalBackend, listed_operators, read_external_backend
from opgen.spec.model import LoadOptions, Spec, load_spec
from opgen.spec.yaml.load import load_yaml, read_text
from opgen.targets.backend.options import BackendOptions
from opgen.targets.contract import Generated
from opgen.template import Template

GENERATOR = "torchgen/gen_backend_stubs.py"


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


def load_inputs(options: BackendOptions) -> tuple[Path, Spec, ExternalBackend]:
    """The ATen directory, the spec and the backend YAML read against it.

    Only the spec entries the YAML's operators need are read (`opgen.spec.partial`),
    unless the YAML has errors or its key may already be the spec's: the whole spec
    then gives the exact diagnostics.
    """
    aten = aten_dir(options.source_path)
    native, tags = (
        str(aten / "native" / "native_functions.yaml"),
        str(aten / "native" / "tags.yaml"),
    )
    doc = load_yaml(options.source_yaml)
    backend_name, names = listed_operators(doc)
    if backend_name is not None and not _may_have_kernels(read_text(native), backend_name):
        try:
            spec = load_spec(
                native, tags, LoadOptions(only_operators=names, release=options.run.release)
            )
            return aten, spec, read_external_backend(doc, spec)
        except SpecError:
            pass
    spec = load_spec(native, tags, LoadOptions(release=options.run.release))
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


def generate(options: BackendOptions) -> Generated:
    """The kernel class header and the registrations; nothing if the YAML lists no kernels."""
    from opgen.api.signatures import SignatureSet
    from opgen.targets.backend.files import (
        BackendRun,
        RegistrationStyle,
        add_native_functions_header,
        add_registrations,
    )
    from opgen.targets.backend.kernel_check import check_kernel_definitions

    aten, spec, backend = load_inputs(options)
    if backend.backend_key is None:  # nothing listed: upstream writes nothing
        return Generated((), model=spec)
    run = BackendRun(backend, backend.kernel_class, spec.functions, spec.grouped, SignatureSet())
    if options.impl_path is not None:
        check_kernel_definitions(run, options.impl_path)
    output_dir = options.run.output_dir
    files = output_set(output_dir, aten, GENERATOR)
    add_native_functions_header(files, run)
    add_registrations(files, run, RegistrationStyle(output_dir))
    return Generated((files,), model=spec)
