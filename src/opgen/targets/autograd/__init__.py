"""`opgen autograd`: the files torchgen's autograd generator writes from `derivatives.yaml`.

A drop-in for `python -m torchgen.packaged.autograd.gen_autograd NATIVE TAGS OUT
AUTOGRAD_DIR`: the same inputs (templates, `derivatives.yaml` and `deprecated.yaml`
from AUTOGRAD_DIR) and the same files, byte for byte. `read` builds one `AutogradRun`,
the model: the spec, the derivatives model matched to every function
(`opgen.autograd`), the release and where the files go. Each file family is a module
with `emit_<family>(run) -> Emitted`, which makes its files in a fresh set; `emit`
runs them (`opgen.targets.emitters.run_emitters`).

command             the flags, and `TARGET`
options             AutogradOptions
run                 AutogradRun
generate            `read`, the emitters in torchgen's order (`EMITTERS`), and `emit`
functions           Functions.h/.cpp: the backward node classes [gen_autograd_functions]
variable_type       VariableType_<N>.cpp and VariableType.h: the Autograd kernels
                    [gen_variable_type]
autograd_kernel     what one VariableType kernel is built from (VariableTypeKernel)
variable_type_body  the statements of a VariableType kernel, in the order it runs them
saved_variables     what a kernel stores in its backward node
forward_ad          forward-mode AD in a kernel: the outputs' tangents
debug_checks        the debug-mode checks around a kernel's redispatch
kernel_lists        operator lists PyTorch keeps by hand that change the kernels
inplace_or_view     ADInplaceOrViewType_<N>.cpp [gen_inplace_or_view_type]
trace_type          TraceType_<N>.cpp: the Tracer kernels [gen_trace_type]
view_funcs          ViewFuncs.h/.cpp: a class that replays each view [gen_view_funcs]
variable_factories  variable_factories.h [gen_variable_factories]
wrappers            what the kernel wrappers of the three kernel files share
annotated_fn_args   annotated_fn_args.py [gen_annotated_fn_args]: its model, `read`, `emit`
annotated_command   `opgen annotated-fn-args`: its flags, and its `TARGET`
"""
