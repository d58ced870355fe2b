"""One `opgen executorch` run's model (`read`): the operators and kernels the flags select.

The operators are, in order, the functions YAML's (or, with `--use-aten-lib`, every
operator of the ATen spec, ATen's kernels being the runtime's) and then the custom-ops
YAML's, each kept only if the selection selects it; the kernel index is both files'
(a custom op's key replacing the functions YAML's), restricted to those operators.
A YAML path that is not given, does not exist or names an empty file stands for a
file without operators, as upstream reads it (with a warning for a missing file).

Without `--use-aten-lib`, the ATen spec only gives the schemas of `op:` entries, so
those are taken from their entries' `func:` lines (`spec.partial.written_schemas`),
and only operators derived by `autogen:` have their families read
(`LoadOptions.only_operators`); should that fail, or the kernel YAML be wrong, it is
read again against the families, then the whole spec, so that its diagnostics (a
misspelt operator's nearest name) are the same either way. Entries of the ATen spec
outside those are not checked.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from opgen.api.executorch import ExecutorchCppSignature
from opgen.api.signatures import SignatureSet
from opgen.api.translate import UnsatError
from opgen.cached import cached
from opgen.diagnostics import Diagnostic, Location, SpecError
from opgen.frozen import field, frozen
from opgen.output import OutputSet, TemplateDir
from opgen.releases import NAMED_DIMENSIONS, Release
from opgen.spec.backend import BackendMetadata
from opgen.spec.executorch import (
    DEFAULT_KERNEL_KEY,
    ETKernelIndex,
    ETParsedYaml,
    ETReadOptions,
    read_executorch_yaml,
)
from opgen.spec.model import LoadOptions, Spec, load_spec
from opgen.spec.native import NativeFunction
from opgen.spec.partial import written_schemas
from opgen.spec.schema import FunctionSchema, OperatorName
from opgen.spec.selection import OperatorSelection
from opgen.spec.syntax import SchemaError
from opgen.spec.tags import read_tags
from opgen.spec.yaml.load import YamlDocument, YamlList, YamlMap, load_yaml, read_text
from opgen.targets.emitters import Emitted
from opgen.targets.executorch.options import GENERATOR, ExecutorchOptions
from opgen.template import Template

# The kernel a single-kernel view gives an operator without a default kernel, as
# upstream's `_to_backend_index` does: no name, no namespace.
NAMELESS_KERNEL = BackendMetadata("", False, "")


# The name of the run's one set of files (<install-dir>), as emitters hand it back.
OUT = "out"


@frozen(eq=False)
class ExecutorchRun:
    """Everything one run's emitters read."""

    options: ExecutorchOptions
    release: Release
    selection: OperatorSelection
    functions: tuple[NativeFunction, ...]  # selected: the kernel YAML's, then the custom ops'
    custom_ops: tuple[NativeFunction, ...]  # the selected custom ops
    kernel_index: ETKernelIndex
    # Each function's signatures in ATen's conventions (with --use-aten-lib, and for the
    # custom ops' PyTorch registrations), derived once when an emitter first asks (a
    # memo of pure functions: what it holds never changes what it gives).
    signatures: SignatureSet
    templates: TemplateDir  # <source-path>/templates
    warnings: tuple[Diagnostic, ...] = ()  # found while reading the kernel YAMLs
    # Each function's ExecuTorch signature, by identity, built when the run is read
    # (without --use-aten-lib: with it, kernels take ATen's): the header, the kernel
    # declarations and the unboxing all use it.
    executorch_signatures: Mapping[int, ExecutorchCppSignature] = field(
        default_factory=dict, repr=False
    )

    def executorch_signature(self, f: NativeFunction) -> ExecutorchCppSignature:
        """`f`'s signature in ExecuTorch's convention (`f` one of `functions`)."""
        return self.executorch_signatures[id(f)]

    def output_set(self) -> OutputSet:
        """A fresh, empty set of the run's files, for one emitter to fill."""
        return OutputSet(self.options.install_dir, self.templates, generator=GENERATOR)

    @cached
    def _custom_op_ids(self) -> frozenset[int]:
        return frozenset(id(f) for f in self.custom_ops)

    def is_custom_op(self, f: NativeFunction) -> bool:
        return id(f) in self._custom_op_ids

    def single_kernels(self) -> Mapping[OperatorName, BackendMetadata]:
        """Each operator's one kernel: its default kernel, or `NAMELESS_KERNEL` for one that
        has a single kernel under another key; a SpecError for an operator with several.

        The headers, and the PyTorch registrations of custom ops, know one kernel per
        operator, as a dispatch table does (upstream's `ETKernelIndex._to_backend_index`).
        """
        single: dict[OperatorName, BackendMetadata] = {}
        for name, kernels in self.kernel_index.index.items():
            if len(kernels) != 1:
                raise SpecError(
                    f"'{name}' has {len(kernels)} kernels (kernel keys "
                    f"{', '.join(k.to_native_string() for k in kernels)}), and the headers and "
                    "the custom ops' PyTorch registrations take one kernel per operator (only "
                    "the kernel registrations, --generate sources, take several)",
                    self._location_of(name),
                )
            single[name] = kernels.get(DEFAULT_KERNEL_KEY, NAMELESS_KERNEL)
        return single

    def _location_of(self, name: OperatorName) -> Location | None:
        return next((f.loc for f in self.functions if f.func.name == name), None)


def read(options: ExecutorchOptions) -> ExecutorchRun:
    """The model of the inputs the flags name; raises SpecError for bad input."""
    assert options.aten_yaml_path is not None and options.tags_path is not None
    if options.generate and not options.run.dry_run:
        _check_template_dir(options.template_dir)
    selection = OperatorSelection.from_flags(
        options.op_registration_whitelist, options.op_selection_yaml_path
    )
    warnings = list(selection.warnings)
    release = options.release
    spec: Spec | None = None
    if options.use_aten_lib:  # the functions YAML is not read: ATen's kernels are
        spec = load_spec(options.aten_yaml_path, options.tags_path, LoadOptions(release=release))
        functions = [f for f in spec.functions if selection.is_native_function_selected(f)]
        index = ETKernelIndex.from_backend_indices(list(spec.backend_indices.values()))
    else:
        functions, index = [], ETKernelIndex({})
        doc = _document(options.functions_yaml_path, warnings)
        if doc is not None:
            parsed, spec = _read_functions_yaml(options, doc)
            warnings.extend(parsed.warnings)
            functions, index = _selected(parsed, selection)
    custom_ops: list[NativeFunction] = []
    doc = _document(options.custom_ops_yaml_path, warnings)
    if doc is not None:
        spec = spec or _tags_only(options)
        parsed = read_executorch_yaml(doc, spec, ETReadOptions(custom_ops=True, release=release))
        warnings.extend(parsed.warnings)
        custom_ops, custom_index = _selected(parsed, selection)
        index = ETKernelIndex.merge_indices(index, custom_index)
    functions = [*functions, *custom_ops]
    names = {f.func.name for f in functions}
    index = ETKernelIndex({n: kernels for n, kernels in index.index.items() if n in names})
    executorch_signatures = (
        {}
        if options.use_aten_lib
        else {id(f): ExecutorchCppSignature.from_native_function(f) for f in functions}
    )
    return ExecutorchRun(
        options=options,
        release=release,
        selection=selection,
        functions=tuple(functions),
        custom_ops=tuple(custom_ops),
        kernel_index=index,
        signatures=SignatureSet(),
        templates=TemplateDir(options.template_dir, Template.from_file),
        warnings=tuple(warnings),
        executorch_signatures=executorch_signatures,
    )


def emitted(files: OutputSet) -> Emitted:
    """What an emitter of the run made: its files, in the run's one set."""
    return Emitted({OUT: files})


def _check_template_dir(template_dir: str) -> None:
    """The templates must be there before anything is rendered (a dry run renders nothing)."""
    if os.path.isdir(template_dir):
        return
    source = os.path.dirname(template_dir)
    hint = ""
    if os.path.isfile(os.path.join(source, "Functions.h")):
        hint = f"; it is the templates' own directory: --source-path {os.path.dirname(source)}"
    raise SpecError(
        f"no templates: --source-path names the directory holding templates/{hint}",
        Location(template_dir, 0),
    )


def _document(path: str | None, warnings: list[Diagnostic]) -> YamlDocument | None:
    """The kernel YAML at `path`; None for none (not given, missing or empty)."""
    if path is None:
        return None
    if not os.path.exists(path):
        warnings.append(
            Diagnostic(
                Location(path, 0), "no such file; read as a file without operators", "warning"
            )
        )
        return None
    if os.stat(path).st_size == 0:
        return None
    return load_yaml(path)


def _read_functions_yaml(
    options: ExecutorchOptions, doc: YamlDocument
) -> tuple[ETParsedYaml, Spec]:
    """A functions YAML read against the schemas of the ATen operators its `op:` entries
    name; against the entries of their families if those cannot be taken alone, and
    against the whole spec after an error, so that the diagnostics are the same either
    way; and the spec it was read against (its tags, at least)."""
    read_options = ETReadOptions(release=options.release)
    names = frozenset(_operator_names(doc))
    try:
        spec = _tags_only(options)
        schemas = _schemas(options, names)
        return read_executorch_yaml(doc, spec, read_options, schemas=schemas), spec
    except SpecError:
        pass
    spec = _spec(options, names)
    try:
        return read_executorch_yaml(doc, spec, read_options), spec
    except SpecError:
        spec = _spec(options, None)
        return read_executorch_yaml(doc, spec, read_options), spec


def _schemas(options: ExecutorchOptions, names: frozenset[str]) -> dict[str, FunctionSchema]:
    """The schemas of the ATen operators `names`, by namespaced name: from their entries'
    `func:` lines, and for those no entry writes plainly (derived by `autogen:`), from
    their families, read whole (without the views their `_copy` variants group with: the
    schemas do not need them). A SpecError if a schema does not parse."""
    assert options.aten_yaml_path is not None
    written = written_schemas(read_text(options.aten_yaml_path), names)
    named_dimensions = options.release.has(NAMED_DIMENSIONS)
    schemas: dict[str, FunctionSchema] = {}
    for namespace, text in written.values():
        try:
            schema = FunctionSchema.parse(text, named_dimensions=named_dimensions)
        except SchemaError as error:
            raise SpecError(str(error)) from None
        schemas[f"{namespace}::{schema.name}"] = schema
    missing = names - written.keys()
    if missing:
        for f in _spec(options, missing, view_families=False).functions:
            schemas.setdefault(f"{f.namespace}::{f.func.name}", f.func)
    return schemas


def _spec(
    options: ExecutorchOptions, only: frozenset[str] | None, view_families: bool = True
) -> Spec:
    assert options.aten_yaml_path is not None
    load = LoadOptions(only_operators=only, view_families=view_families, release=options.release)
    return load_spec(options.aten_yaml_path, options.tags_path, load)


def _tags_only(options: ExecutorchOptions) -> Spec:
    """A spec of no operators with the ATen spec's tags: what a custom-ops YAML, which names
    no ATen operator, is read against (the ATen spec must still be there, as upstream
    reads it)."""
    assert options.aten_yaml_path is not None and options.tags_path is not None
    if not os.path.isfile(options.aten_yaml_path):
        read_text(options.aten_yaml_path)  # the error of a missing or unreadable file
    tags = read_tags(load_yaml(options.tags_path))
    return Spec(
        functions=(),
        backend_indices={},
        grouped=(),
        view_grouped=(),
        tags=tags,
        entry_count=0,
        sources={},
    )


def _operator_names(doc: YamlDocument) -> list[str]:
    """The operator names of the `op:` entries, without namespace (`add.out`)."""
    names = []
    for entry in doc.root if isinstance(doc.root, YamlList) else ():
        op = entry.get("op") if isinstance(entry, YamlMap) else None
        if isinstance(op, str):
            names.append(op.rpartition("::")[2])
    return names


def _selected(
    parsed: ETParsedYaml, selection: OperatorSelection
) -> tuple[list[NativeFunction], ETKernelIndex]:
    """The operators the selection selects, and the kernels of those."""
    functions = [f for f in parsed.native_functions if selection.is_native_function_selected(f)]
    names = {f.func.name for f in functions}
    index = parsed.kernel_index.index
    return functions, ETKernelIndex({n: kernels for n, kernels in index.items() if n in names})


@contextmanager
def unsupported(f: NativeFunction) -> Iterator[None]:
    """Turns a type or argument of `f` that a convention cannot express into an error at
    `f`'s entry."""
    try:
        yield
    # NoExecutorchType, NoCppType, an EValue that cannot be read; a kernel's argument
    # that the wrapper's cannot give.
    except (ValueError, UnsatError) as e:
        raise SpecError(f"'{f.func.name}': {e}", f.loc) from None


def operator_name(f: NativeFunction) -> str:
    """`namespace::name.overload`, as selections and registrations name an operator."""
    return f"{f.namespace}::{f.func.name}"


def group_by_namespace(functions: Sequence[NativeFunction]) -> dict[str, list[NativeFunction]]:
    """The functions by operator namespace, namespaces in order of first appearance."""
    grouped: dict[str, list[NativeFunction]] = {}
    for f in functions:
        grouped.setdefault(f.namespace, []).append(f)
    return grouped
