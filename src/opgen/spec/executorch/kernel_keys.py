"""Kernel keys: which of an operator's kernels the runtime picks for its arguments.

ExecuTorch may register several kernels for one operator, each under a key that
names, for some of its tensor arguments, a dtype and a dim order (the order of
the dimensions in memory, outermost first: `0, 1, 2, 3` is contiguous, `0, 2,
3, 1` channels-last). The runtime builds the same string from the tensors it is
given and looks it up; the kernel under `default` serves every other case. The
string of a key is `v1/` and, per argument in the key's order, the dtype's code
and the dim order: `v1/6;0,1,2,3|6;0,1,2,3` (Float, contiguous, twice).

Kernel YAMLs do not write keys out: they name a type alias and a dim-order
alias per argument, and an alias of several dtypes stands for each of them, so
one kernel gets a key for every combination (`ETKernelKey.gen_from_yaml`). The
names are upstream's (`executorch.codegen.model`), so that a reader of its
codegen finds them here.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from opgen.frozen import frozen

KERNEL_KEY_VERSION = 1

# The dtypes a kernel key can name, with their codes in ExecuTorch's ScalarType (the
# subset upstream's codegen knows, `executorch.codegen.model.ScalarType`).
DTYPE_CODES: Mapping[str, int] = MappingProxyType(
    {"Byte": 0, "Char": 1, "Short": 2, "Int": 3, "Long": 4, "Float": 6, "Double": 7, "Bool": 11}
)


@frozen
class ETKernelKeyOpArgMeta:
    """One argument of a key: its dtype (a name of `DTYPE_CODES`) and dim order."""

    arg_name: str  # the argument, by its name in the schema
    dtype: str  # the dtype the kernel takes for it (`Float`)
    dim_order: tuple[int, ...]  # the order of its dimensions in memory, outermost first

    def to_native_string(self) -> str:
        # Upstream prints the tuple and strips its parentheses, so a dim order of one
        # dimension keeps the tuple's trailing comma: `6;0,`.
        return f"{DTYPE_CODES[self.dtype]};{str(self.dim_order)[1:-1].replace(' ', '')}"


@frozen
class ETKernelKey:
    """A kernel's key: its arguments' dtypes and dim orders, or `default`."""

    arg_meta: tuple[ETKernelKeyOpArgMeta, ...] = ()  # per tensor argument, in schema order
    default: bool = False  # the kernel for every case no other key matches
    version: int = KERNEL_KEY_VERSION  # the key format's version, `v1` in the string

    def to_native_string(self) -> str:
        """The string the runtime matches: `default`, or `v1/<dtype>;<dim order>|...`."""
        if self.default:
            return "default"
        return f"v{KERNEL_KEY_VERSION}/" + "|".join(a.to_native_string() for a in self.arg_meta)

    @staticmethod
    def gen_from_yaml(
        args: Mapping[str, tuple[str, str]],
        type_alias_map: Mapping[str, Sequence[str]],
        dim_order_alias_map: Mapping[str, Sequence[int]],
    ) -> list[ETKernelKey]:
        """The keys of one `arg_meta:`: argument name to (type alias, dim-order alias).

        Every alias must be defined (the reader checks). Each type alias the
        arguments use stands for each of its dtypes, and an argument using it gets
        the same dtype in one key as every other argument using it: the keys are the
        product of the used aliases' dtypes, the alias used first varying slowest.
        (Upstream takes the product over a set of the aliases, whose order changes
        with Python's hash seed when an entry uses two or more; this is one of its
        orders, and always the same.) Arguments keep the order of `args`.
        """
        used = list(dict.fromkeys(type_alias for type_alias, _ in args.values()))
        keys: list[ETKernelKey] = []
        for dtypes in itertools.product(*(type_alias_map[alias] for alias in used)):
            dtype_of = dict(zip(used, dtypes, strict=True))
            keys.append(
                ETKernelKey(
                    tuple(
                        ETKernelKeyOpArgMeta(name, dtype_of[t], tuple(dim_order_alias_map[d]))
                        for name, (t, d) in args.items()
                    )
                )
            )
        return keys


DEFAULT_KERNEL_KEY = ETKernelKey(default=True)
