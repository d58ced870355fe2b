"""The operator selection gen_oplist makes, and `selected_operators.yaml` as it writes it.

The sources, each optional, add up in this order, as in gen_oplist:

- `--root_ops`: each operator, with the `default` kernel;
- `--ops_dict`: each operator, with its kernel keys (or `default`);
- `--model_file_path`: every operator of the program's operator tables, and for each
  one a kernel calls, the kernel key of each distinct argument list of its calls
  (`kernel_key`);
- `--ops_schema_yaml_path`: each operator the kernel YAML names, with `default`.

An operator's kernel keys from several sources are merged, sorted as strings, without
repeats. Every operator is a root operator, used for training, without all overloads,
and its `debug_info` names the source: the schema YAML if given, else the model, else
`None`, as upstream writes it. The selection is an `OperatorSelection`, so what
gen_oplist selects is what `opgen aten --op-selection-yaml-path` would read back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from opgen.spec.selection import OperatorSelection, SelectedOperator
from opgen.targets.executorch_oplist.kernel_yaml import kernel_yaml_operators
from opgen.targets.executorch_oplist.options import DEFAULT_KERNEL, OplistOptions

if TYPE_CHECKING:  # the model reader imports the flatbuffers runtime: only when it reads
    from opgen.pte.program import ArgumentMeta

# The key of a kernel, in ExecuTorch's format (runtime/kernel/operator_registry.h):
# `v1/` then, for each tensor argument, `<ScalarType>;<dim order, comma-separated>`,
# joined by `|`.
KERNEL_KEY_VERSION = "v1"


def select_operators(options: OplistOptions) -> OperatorSelection:
    """The operators and kernel keys the options select."""
    operators: set[str] = set()
    kernels: dict[str, set[str]] = {}
    source: str | None = None

    def add(op: str, keys: Iterable[str]) -> None:
        operators.add(op)
        kernels.setdefault(op, set()).update(keys)

    for op in options.root_ops:
        add(op, [DEFAULT_KERNEL])
    for op, keys in options.ops_dict:
        add(op, keys or [DEFAULT_KERNEL])
    if options.model_file_path:
        from opgen.pte.program import read_program

        program = read_program(options.model_file_path)
        operators.update(program.names)
        for op, calls in program.kernel_calls.items():
            kernels.setdefault(op, set()).update(kernel_key(args) for args in calls)
        source = options.model_file_path
    if options.ops_schema_yaml_path:
        for op in kernel_yaml_operators(options.ops_schema_yaml_path, options.release):
            add(op, [DEFAULT_KERNEL])
        source = options.ops_schema_yaml_path
    debug_info = (str(source),)
    selected = {
        op: SelectedOperator(op, include_all_overloads=False, debug_info=debug_info)
        for op in sorted(operators)
    }
    return OperatorSelection(
        include_all_operators=options.include_all_operators,
        operators=MappingProxyType(selected),
        et_kernel_metadata=MappingProxyType({op: tuple(sorted(k)) for op, k in kernels.items()}),
    )


def kernel_key(arguments: Iterable[ArgumentMeta]) -> str:
    """The kernel key of one argument list of a program's kernel call: its tensors'
    dtypes and dim orders; `v1` alone if it has no tensor."""
    tensors = [
        f"{a.dtype};{','.join(map(str, a.dim_order or ()))}" for a in arguments if a.is_tensor
    ]
    return f"{KERNEL_KEY_VERSION}/{'|'.join(tensors)}" if tensors else KERNEL_KEY_VERSION


def selected_operators_yaml(selection: OperatorSelection) -> str:
    """`selected_operators.yaml` as gen_oplist writes it: PyYAML's `safe_dump`."""
    import yaml

    return yaml.safe_dump(selected_operators_document(selection), default_flow_style=False)


def selected_operators_document(selection: OperatorSelection) -> Mapping[str, object]:
    """The document gen_oplist dumps: every key, whether the selection uses it or not."""
    operators: dict[str, object] = {}
    for name, op in selection.operators.items():
        entry: dict[str, object] = {
            "is_root_operator": op.is_root_operator,
            "is_used_for_training": op.is_used_for_training,
            "include_all_overloads": op.include_all_overloads,
        }
        if op.debug_info is not None:
            entry["debug_info"] = list(op.debug_info)
        operators[name] = entry
    return {
        "operators": operators,
        "custom_classes": sorted(map(str, selection.custom_classes)),
        "build_features": sorted(map(str, selection.build_features)),
        "include_all_non_op_selectives": selection.include_all_non_op_selectives,
        "include_all_operators": selection.include_all_operators,
        "kernel_metadata": {tag: list(d) for tag, d in selection.kernel_metadata.items()},
        "et_kernel_metadata": {
            op: list(keys) if isinstance(keys, tuple) else keys
            for op, keys in selection.et_kernel_metadata.items()
        },
    }
