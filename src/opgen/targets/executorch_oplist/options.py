"""The options of `opgen executorch-oplist` and `opgen executorch-op-variants`, and the
reading of the flags that carry data: `--root_ops` and `--ops_dict`.

As gen_oplist reads them: `--root_ops` is split at commas if it has any, else at
spaces, each piece stripped and empty ones dropped; `--ops_dict` is a JSON object from
operator names to lists whose items are kernel keys (anything starting with `v1` after
leading whitespace, kept as written) or dtype names, which become the key of that dtype
with no dim order (`Float` -> `v1/6;`); an empty list stands for the `default` kernel.
"""

from __future__ import annotations

import json

from opgen.frozen import frozen
from opgen.releases import NEWEST, Release
from opgen.targets.contract import RunOptions, UsageError

# The dtype names `--ops_dict` accepts, with their ScalarType numbers: gen_oplist's own
# table (ExecuTorch's ScalarType, less the types its kernels do not implement).
OPS_DICT_DTYPES: dict[str, int] = {
    "Byte": 0, "Char": 1, "Short": 2, "Int": 3, "Long": 4, "Float": 6, "Double": 7,
    "Bool": 11, "QInt8": 12, "QUInt8": 13, "QInt32": 14, "QUInt4X2": 16, "QUInt2X4": 17,
}  # fmt: skip

DEFAULT_KERNEL = "default"  # the kernel key of an operator's default (any dtype) kernel


@frozen
class OplistOptions:
    """What to select operators from, and where `selected_operators.yaml` goes."""

    output_name: str  # the file's name, in run.output_dir
    run: RunOptions
    model_file_path: str | None = None  # a .pte (or bundled program)
    ops_schema_yaml_path: str | None = None  # an ExecuTorch kernel YAML
    root_ops: tuple[str, ...] = ()
    # Operator to kernel keys (a dtype already turned into its key; () for the default).
    ops_dict: tuple[tuple[str, tuple[str, ...]], ...] = ()
    include_all_operators: bool = False
    release: Release = NEWEST  # whose rules the kernel YAML's `func:` schemas are read by


@frozen
class OpVariantsOptions:
    """Where `selected_operators.yaml` is, and where `selected_op_variants.h` goes."""

    yaml_file_path: str
    run: RunOptions


def parse_root_ops(text: str) -> tuple[str, ...]:
    """`--root_ops`: the operator names, in order."""
    delimiter = "," if "," in text else " "
    return tuple(name for name in (piece.strip() for piece in text.split(delimiter)) if name)


def parse_ops_dict(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`--ops_dict`: each operator's kernel keys; a UsageError if it is not such an object."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise UsageError(f"--ops_dict is not valid JSON: {e}") from None
    if not isinstance(value, dict):
        raise UsageError(
            "--ops_dict must be a JSON object from operator names to lists of dtypes or "
            f"kernel keys, not {type(value).__name__}"
        )
    ops = []
    for op, keys in value.items():
        if not (isinstance(keys, list) and all(isinstance(k, str) for k in keys)):
            raise UsageError(
                f"--ops_dict: the kernels of '{op}' must be a list of dtype names or kernel "
                f"keys (strings), not {json.dumps(keys)}"
            )
        ops.append((op, tuple(kernel_key(k, op) for k in keys)))
    return tuple(ops)


def kernel_key(key_or_dtype: str, op: str) -> str:
    """A kernel key as written, or the key of a dtype name, for `op` of `--ops_dict`."""
    if key_or_dtype.lstrip().startswith("v1"):
        return key_or_dtype
    dtype = OPS_DICT_DTYPES.get(key_or_dtype)
    if dtype is None:
        raise UsageError(
            f"--ops_dict: '{key_or_dtype}' (for '{op}') is neither a kernel key ('v1/...') "
            f"nor a dtype; the dtypes are {', '.join(OPS_DICT_DTYPES)}"
        )
    return f"v1/{dtype};"
