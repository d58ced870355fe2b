"""The runs of `opgen executorch-oplist` and `opgen executorch-op-variants`.

`read(options)` selects the operators (`selected_operators`), and `emit` writes
`selected_operators.yaml` (or the file `--output_path` names); `read_op_variants` reads
a `selected_operators.yaml` into each operator's kept dtypes (`op_variants`), and
`emit_op_variants` writes `selected_op_variants.h` from them. Both are the Python API
too, each with its options (`options`), through `opgen.targets.contract.generate`.
"""

from __future__ import annotations

from collections.abc import Sequence

from opgen.diagnostics import Diagnostic
from opgen.frozen import frozen
from opgen.output import OutputSet
from opgen.spec.selection import OperatorSelection
from opgen.targets.contract import Generated
from opgen.targets.emitters import Emitted, Emitter, run_emitters
from opgen.targets.executorch_oplist.op_variants import (
    HEADER_NAME,
    kept_dtypes,
    op_variants_header,
)
from opgen.targets.executorch_oplist.options import OplistOptions, OpVariantsOptions
from opgen.targets.executorch_oplist.selected_operators import (
    select_operators,
    selected_operators_yaml,
)

OUTPUT = "output"  # the one set's name, of either command


@frozen(eq=False)
class OplistModel:
    """The operators gen_oplist selects, and where their file goes."""

    selection: OperatorSelection
    output_dir: str
    output_name: str


@frozen(eq=False)
class OpVariantsModel:
    """Each operator of a `selected_operators.yaml` with the dtypes its kernels keep."""

    operators: Sequence[tuple[str, Sequence[str] | None]]  # None: every dtype
    warnings: Sequence[Diagnostic]  # found while reading the file
    output_dir: str


def read(options: OplistOptions) -> OplistModel:
    return OplistModel(select_operators(options), options.run.output_dir, options.output_name)


def emit(model: OplistModel, options: OplistOptions) -> Generated:
    emitted = run_emitters(model, OPLIST_EMITTERS, {OUTPUT: OutputSet(model.output_dir)})
    return Generated(tuple(emitted.files.values()))


def emit_selected_operators(model: OplistModel) -> Emitted:
    files = OutputSet(model.output_dir)
    files.add(model.output_name, selected_operators_yaml(model.selection))
    return Emitted({OUTPUT: files})


OPLIST_EMITTERS: tuple[Emitter[OplistModel], ...] = (emit_selected_operators,)


def read_op_variants(options: OpVariantsOptions) -> OpVariantsModel:
    operators, warnings = kept_dtypes(options.yaml_file_path)
    return OpVariantsModel(
        tuple((op, None if dtypes is None else tuple(dtypes)) for op, dtypes in operators),
        tuple(warnings),
        options.run.output_dir,
    )


def emit_op_variants(model: OpVariantsModel, options: OpVariantsOptions) -> Generated:
    emitted = run_emitters(model, OP_VARIANTS_EMITTERS, {OUTPUT: OutputSet(model.output_dir)})
    return Generated(tuple(emitted.files.values()), warnings=model.warnings)


def emit_op_variants_header(model: OpVariantsModel) -> Emitted:
    files = OutputSet(model.output_dir)
    files.add(HEADER_NAME, op_variants_header(model.operators))
    return Emitted({OUTPUT: files})


OP_VARIANTS_EMITTERS: tuple[Emitter[OpVariantsModel], ...] = (emit_op_variants_header,)
