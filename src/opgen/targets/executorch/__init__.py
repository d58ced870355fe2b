"""`opgen executorch`: ExecuTorch's kernel registrations and headers, as its
`python -m executorch.codegen.gen` writes them.

ExecuTorch builds a kernel library from kernel YAMLs (`opgen.spec.executorch`): the
runtime's operators, each kernel under its kernel key. The codegen writes how the
runtime calls them (the unboxing registrations), their C++ API and declarations and,
for operators of ExecuTorch's own, their schemas and kernels for PyTorch. The C++
conventions are `opgen.api.executorch` (ExecuTorch's types and signatures) and
`opgen.api.executorch_unboxing` (arguments taken off the runtime's stack).

command           the flags (upstream's) and the `TARGET`
options           ExecutorchOptions: the flags as given, the usage errors; ExecutorchPart
run               ExecutorchRun, the model (the selected operators, their kernels and
                  signatures), and `read`
generate          the emitters, headers then sources (`EMITTERS`), and `emit`
functions_header  Functions.h: each operator's inline call of its kernel
native_headers    NativeFunctions.h and CustomOpsNativeFunctions.h: the kernels' declarations
unboxed_kernels   RegisterCodegenUnboxedKernels*.cpp (or RegisterKernels*.cpp and .h)
custom_ops        RegisterCPUCustomOps.cpp, RegisterCPUStub.cpp, RegisterSchema.cpp
"""
