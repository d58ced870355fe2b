"""The generation of `opgen executorch-oplist` and `opgen executorch-op-variants`.

`generate(options)` selects the operators (`selected_operators`) and writes
`selected_operators.yaml` (or the file `--output_path` names); `generate_op_variants`
writes `selected_op_variants.h` from such a file (`op_variants`). Both are the Python API
too, each with its options (`options`).
"""

from __future__ import annotations

from opgen.output import OutputSet
from opgen.targets.contract import Generated
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


def generate(options: OplistOptions) -> Generated:
    selection = select_operators(options)
    files = OutputSet(options.run.output_dir)
    files.add(options.output_name, selected_operators_yaml(selection))
    return Generated([files], model=selection)


def generate_op_variants(options: OpVariantsOptions) -> Generated:
    operators, warnings = kept_dtypes(options.yaml_file_path)
    files = OutputSet(options.run.output_dir)
    files.add(HEADER_NAME, op_variants_header(operators))
    return Generated([files], warnings=warnings)
