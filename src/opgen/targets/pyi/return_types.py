"""Facts about `torch/return_types.pyi` besides its structseq classes.

The module declares, beside one class per structseq the spec gives, a
function that registers structseqs with pytree and the list of all of them;
both are defined in Python (`torch/return_types.py`). Checked against the
stubs of torch 2.13.
"""

from __future__ import annotations

from opgen.targets.pyi.stubs import Attribute, Definition, Import

REGISTER = Definition("pytree_register_structseq", ("cls: type",), "None")
ALL_RETURN_TYPES = Attribute("all_return_types", "list[type]", "...")

IMPORTS: tuple[tuple[Import, ...], ...] = (
    (Import("typing", ("Final", "NoReturn")), Import("typing_extensions", ("Self",))),
    (
        Import("torch", ("SymInt", "Tensor")),
        Import(
            "torch.types",
            (
                "_bool",
                "_device",
                "_dtype",
                "_float",
                "_int",
                "_layout",
                "_qscheme",
                "_size",
                "Number",
            ),
        ),
    ),
)
