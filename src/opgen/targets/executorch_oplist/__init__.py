"""`opgen executorch-oplist` and `opgen executorch-op-variants`: ExecuTorch's selective
build, as its `gen_oplist` and `gen_selected_op_variants` do it.

`executorch-oplist` selects the operators a build keeps, from a model (`.pte`, read by
`opgen.pte`), a kernel YAML, or names given on the command line, and writes
`selected_operators.yaml`; `executorch-op-variants` turns that file's kernel keys into
`selected_op_variants.h`, the dtypes each kernel is built for.

command            `executorch-oplist`'s flags (gen_oplist's) and its `TARGET`
variants_command   `executorch-op-variants`'s flags (gen_selected_op_variants') and `TARGET`
options            both commands' options, and reading `--root_ops` and `--ops_dict`
kernel_yaml        the operator names of an ExecuTorch kernel YAML
selected_operators the selection gen_oplist makes (an `OperatorSelection`), its kernel keys,
                   and `selected_operators.yaml`'s document
op_variants        `selected_op_variants.h` from a `selected_operators.yaml`
generate           each command's run: `read` and `emit`, `read_op_variants` and
                   `emit_op_variants`
"""
