"""Reading the inputs into an `AutogradRun`, and each file family's emitter over it, in
torchgen's order."""

from __future__ import annotations

from opgen.autograd.model import DerivativeInfos
from opgen.spec.model import LoadOptions, Spec, load_spec
from opgen.spec.selection import OperatorSelection
from opgen.targets.autograd.functions import emit_functions
from opgen.targets.autograd.inplace_or_view import emit_inplace_or_view
from opgen.targets.autograd.options import AutogradOptions
from opgen.targets.autograd.run import OUT, AutogradRun
from opgen.targets.autograd.trace_type import emit_trace_type
from opgen.targets.autograd.variable_factories import emit_variable_factories
from opgen.targets.autograd.variable_type import emit_variable_type
from opgen.targets.autograd.view_funcs import emit_view_funcs
from opgen.targets.autograd_dir import generated
from opgen.targets.contract import Generated
from opgen.targets.emitters import Emitter, run_emitters

# (part of autograd proper, emitter), in the order gen_autograd generates. With
# --disable-autograd only the families marked False are generated.
EMITTERS: tuple[tuple[bool, Emitter[AutogradRun]], ...] = (
    (True, emit_variable_type),
    (True, emit_inplace_or_view),
    (True, emit_trace_type),
    (False, emit_functions),
    (False, emit_variable_factories),
    (False, emit_view_funcs),
)


def read(
    options: AutogradOptions,
    *,
    spec: Spec | None = None,
    derivatives: DerivativeInfos | None = None,
    selection: OperatorSelection | None = None,
) -> AutogradRun:
    """The model of the inputs the options name; raises SpecError for bad input.

    A caller that has read the spec, its derivatives or the operator selection already
    (`opgen generate-code`, for every target it runs) hands them in; they are then not
    read again. `derivatives` must have been read against `spec`.
    """
    from opgen.autograd.load_derivatives import load_derivative_infos
    from opgen.autograd.match import match_differentiability_info

    if selection is None:
        selection = OperatorSelection.from_flags(None, options.op_selection_yaml_path)
    if spec is None:
        spec = load_spec(
            options.native_yaml, options.tags_yaml, LoadOptions(release=options.release)
        )
    if derivatives is None:
        derivatives = load_derivative_infos(spec, options.derivatives_yaml)
    return AutogradRun.of(options, spec, selection, derivatives, match_differentiability_info)


def emit(run: AutogradRun, options: AutogradOptions) -> Generated:
    """Every family the options ask for (`--disable-autograd` drops autograd proper)."""
    emitters = [emit for proper, emit in EMITTERS if not (proper and options.disable_autograd)]
    out = run.output_set()
    return generated(out, run_emitters(run, emitters, {OUT: out}), options)
