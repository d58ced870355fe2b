"""ExecuTorch's kernel YAMLs, read against an ATen spec into opgen's model.

ExecuTorch (PyTorch's on-device runtime) describes the kernels it builds in a
dialect of `native_functions.yaml`: an entry is `op: add.out`, an operator of
the ATen spec, or `func:` with the schema of an operator of its own, and lists
its `kernels:`, each with the C++ function that implements it and, under
`arg_meta:`, the dtypes and dim orders of the arguments it is for (through
`type_alias:` and `dim_order_alias:`), or `arg_meta: null` for the default
kernel. Reading gives the operators as `NativeFunction`s, read by the spec
language's own entry reader, and the kernel index: per operator, each kernel
key (`v1/6;0,1,2,3|...` or `default`) and its kernel. The rules are those of
ExecuTorch's codegen (`executorch.codegen`, on torchgen), each a located error.

kernel_keys       ETKernelKey: a kernel's key, its string, and the keys an `arg_meta` stands for
kernels           an entry's `kernels:`, `type_alias:` and `dim_order_alias:`: its keys and kernels
entries           one entry as the native_functions.yaml entry it stands for (`op:` translated)
across_entries    the rules between a file's operators (duplicates, delegates, keywords)
model             ETParsedYaml and ETKernelIndex: what reading a file gives
read              load_executorch_yaml(): a whole file, read and checked against an ATen spec
"""

from opgen.spec.executorch.kernel_keys import DEFAULT_KERNEL_KEY, ETKernelKey, ETKernelKeyOpArgMeta
from opgen.spec.executorch.model import ETKernelIndex, ETParsedYaml
from opgen.spec.executorch.read import ETReadOptions, load_executorch_yaml, read_executorch_yaml

__all__ = [
    "DEFAULT_KERNEL_KEY",
    "ETKernelIndex",
    "ETKernelKey",
    "ETKernelKeyOpArgMeta",
    "ETParsedYaml",
    "ETReadOptions",
    "load_executorch_yaml",
    "read_executorch_yaml",
]
