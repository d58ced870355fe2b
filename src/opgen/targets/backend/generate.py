"""`opgen backend`'s run: `read` the backend YAML against the spec, `emit` its files.

The spec and templates come from `--source-path` or, as upstream reads the spec it
ships, from the installed torchgen's packaged ATen (found without importing it).
`in_parts` reads the spec and does a target's work on it, part by part in
parallel where it can: `read` makes each part's texts there, and the model holds them
merged (`files.BackendModel`), which the emitters (`files.EMITTERS`) fill templates
with. `opgen lazy` shares it, and writes these files and more.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Generic, TypeVar

from opgen.diagnostics import SpecError
from opgen.forked import ForkedFailure, run_forked
from opgen.frozen import frozen, replace
from opgen.output import TemplateDir
from opgen.spec.external_backend import ExternalBackend, listed_operators, read_external_backend
from opgen.spec.model import LoadOptions, Spec, empty_spec, load_spec
from opgen.spec.partial import family_parts
from opgen.spec.yaml.load import load_yaml, read_text
from opgen.targets.backend.options import BackendOptions
from opgen.targets.contract import Generated
from opgen.template import Template

if TYPE_CHECKING:
    from opgen.targets.backend.files import BackendModel, KeyTexts

R = TypeVar("R")

GENERATOR = "torchgen/gen_backend_stubs.py"


def aten_dir(source_path: str | None) -> str:
    """The ATen directory the flags name, else the installed torchgen's packaged one."""
    if source_path is not None:
        return source_path
    from opgen.installed_torchgen import packaged_aten

    found = packaged_aten()
    if found is None:
        raise SpecError(
            "no ATen directory to read the spec and templates from: pass --source-path DIR "
            "(the default, torchgen's packaged ATen or a PyTorch checkout's aten/src/ATen, "
            "was not found: torchgen is not installed)"
        )
    return found


# Reading a part of the spec in a process of its own costs a fork, and the work every
# part repeats (the tags, the common types); a part of fewer entries does not pay for it.
MIN_PART_ENTRIES = 64


@frozen(eq=False)
class Parts(Generic[R]):
    """What a run did on the spec: each part's result, and what the files need besides."""

    aten: str  # the ATen directory: templates
    # The backend YAML read against the whole spec; or, when the spec was read in parts,
    # against one of them: the file's settings, but only that part's kernels in `indices`.
    backend: ExternalBackend
    results: list[R]  # each part's, in part order
    models: list[Spec]  # the specs read in this process, to keep until it exits


def in_parts(options: BackendOptions, work: Callable[[Spec, ExternalBackend], R]) -> Parts[R]:
    """`work` done on the spec and the backend YAML read against it.

    Only the spec entries the YAML's operators need are read (`opgen.spec.partial`),
    split into parts of whole families (`family_parts`) that `options.jobs` processes
    read and work on in parallel, each part's results carrying where they go. If the
    YAML has errors, or its key may already be the spec's, or `work` fails on a part,
    the work is done again on one spec, the needed entries or else the whole spec, so
    that the errors are those of a run in one process.
    """
    aten = aten_dir(options.source_path)
    native, tags = (
        os.path.join(aten, "native", "native_functions.yaml"),
        os.path.join(aten, "native", "tags.yaml"),
    )
    read = LoadOptions(release=options.release, group_views=False)
    doc = load_yaml(options.source_yaml)
    backend_name, names = listed_operators(doc)
    text = read_text(native)
    models: list[Spec] = []
    backends: list[ExternalBackend] = []  # read in this process, against parts
    if backend_name is not None and not _may_have_kernels(text, backend_name):
        parts = family_parts(text, names, options.jobs, MIN_PART_ENTRIES)
        if len(parts) > 1:

            def part(operators: frozenset[str], part_text: str) -> Callable[[], R]:
                def run() -> R:
                    spec = load_spec(native, tags, read, native_text=part_text)
                    backend = read_external_backend(doc, spec, names - operators)
                    models.append(spec)
                    backends.append(backend)
                    return work(spec, backend)

                return run

            try:
                results = run_forked([part(*p) for p in parts], options.jobs)
                if not backends:  # the other processes took every part
                    backends.append(read_external_backend(doc, empty_spec(), names))
                return Parts(aten, backends[0], results, models)
            except ForkedFailure as failure:
                if not isinstance(failure.error, SpecError):
                    raise failure.error from failure
        try:
            spec = load_spec(native, tags, replace(read, only_operators=names), native_text=text)
            backend = read_external_backend(doc, spec)
        except SpecError:
            pass
        else:
            return Parts(aten, backend, [work(spec, backend)], [spec])
    spec = load_spec(native, tags, read, native_text=text)
    backend = read_external_backend(doc, spec)
    return Parts(aten, backend, [work(spec, backend)], [spec])


def _may_have_kernels(native_text: str, backend: str) -> bool:
    """Whether the spec may give kernels for the backend's keys: whether a line names them
    as a dispatch key (`    CPU, XLA: kernel`)."""
    keys = {backend, f"Autograd{backend}"}
    found = native_text.find(backend)
    while found >= 0:  # only the lines that name the key at all
        start = native_text.rfind("\n", 0, found) + 1
        end = native_text.find("\n", found)
        line = native_text[start : end if end >= 0 else len(native_text)]
        listed, colon, _ = line.partition(":")  # an indented `CPU, XLA: kernel`
        if colon and line[:1].isspace() and keys & {k.strip() for k in listed.split(",")}:
            return True
        found = native_text.find(backend, found + len(backend))
    return False


def templates(aten: str) -> TemplateDir:
    """The ATen directory's templates, each compiled once for the run."""
    return TemplateDir(os.path.join(aten, "templates"), Template.from_file)


def read(options: BackendOptions) -> BackendModel:
    """The backend YAML read against the spec, and the texts of its kernel class and
    registrations; raises SpecError for bad input."""
    # What the parts use, imported before they fork.
    from opgen.targets.backend.files import BackendModel, RegistrationStyle, merged_key_texts

    if options.impl_path is not None:
        import opgen.targets.backend.kernel_check  # noqa: F401

    parts = in_parts(options, partial(_texts, options.impl_path))
    backend = parts.backend
    listed = backend.backend_key is not None  # else upstream writes nothing
    return BackendModel(
        backend,
        merged_key_texts(parts.results) if listed else {},
        backend.kernel_class if listed else "",
        RegistrationStyle(options.run.output_dir),
        templates(parts.aten),
        GENERATOR,
        options.release,
        tuple(parts.models),
    )


def emit(model: BackendModel, options: BackendOptions) -> Generated:
    """The kernel class header and the registrations; nothing if the YAML lists no kernels."""
    from opgen.targets.backend.files import EMITTERS, OUTPUT
    from opgen.targets.emitters import run_emitters

    notices = () if options.release_notice is None else (options.release_notice,)
    if model.backend.backend_key is None:  # nothing listed: upstream writes nothing
        return Generated((), notices=notices)
    emitted = run_emitters(model, EMITTERS, {OUTPUT: model.output_set()})
    return Generated(tuple(emitted.files.values()), notices=notices)


def _texts(impl_path: str | None, spec: Spec, backend: ExternalBackend) -> dict[str, KeyTexts]:
    """The texts of one part of the spec (or all of it)."""
    from opgen.api.signatures import SignatureSet
    from opgen.spec.groups import grouped_lines
    from opgen.targets.backend.files import BackendRun, key_texts

    if backend.backend_key is None:
        return {}
    positions = [("", line) for line in grouped_lines(spec.grouped)]
    run = BackendRun(
        backend, backend.kernel_class, spec.functions, spec.grouped, positions, SignatureSet()
    )
    if impl_path is not None:
        from opgen.targets.backend.kernel_check import check_kernel_definitions

        check_kernel_definitions(run, impl_path)
    return key_texts(run)
