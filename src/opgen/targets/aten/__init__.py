"""The ATen target: the files `python -m torchgen.gen` writes, byte for byte.

`read(options)` reads every input the flags name into an `AtenRun`, immutable: the
spec, the release, the operator selection, and what the parts asked for need (the
kernel table, the native AOT declarations, the AOTInductor fallback-op table and the
checked-in shim headers). `emit(run, options)` runs each file family's emitter over
it. An emitter is a pure function of the run that returns what it made (`Emitted`:
fresh output sets over the run's templates, and notes); it belongs to one
`--generate` part (headers, sources or declarations_yaml). Families share what they
compute through the run's `SignatureSet`, so every signature is derived once whatever
number of files print it.

command                    the flags of `torchgen.gen`, and `TARGET`
options                    AtenOptions, AtenPart, and the choices that follow from the flags
run                        AtenRun, the model; AtenOutputs, the output sets of one emitter
generate                   `read`, the emitters in torchgen's order (`EMITTERS`), `emit`

The file families (torchgen's name of the file, or of its generator, in brackets):

operators                  `at::_ops` structs: Operators.h/.cpp [ComputeOperators]
functions                  the C++ API: Functions.h/.cpp, TensorBody.h, RedispatchFunctions
operator_headers           the operator and function headers (`headers` part)
per_operator               `ops/<op>.h`, `<op>_ops.h`, `<op>_native.h`, `<op>_meta.h`
header_fragments           the per-function texts those headers share
native_headers             NativeFunctions.h and NativeMetaFunctions.h
dispatch_plan              which kernels a dispatch key gets: the kernel table and each
                           key's plan, which the next two render
registration               `Register<Key>.cpp` [RegisterDispatchKey]
structured_kernels         the structured-kernel wrappers in `Register<Key>.cpp`
native_aot                 the aot.py native AOT declarations (torch 2.15 on), read with the run
native_aot_files           NativeAotStubs.h/.cpp, the stubs of those declarations
dispatch_headers           `<Key>Functions.h`, `<Key>Functions_inl.h`, `ops/<op>_<key>_dispatch.h`
static_dispatch            `at::_ops` bodies that call a backend's kernel directly
backend_select             RegisterBackendSelect.cpp
schema_registration        RegisterSchema.cpp
functionalization          RegisterFunctionalization_<N>.cpp [gen_functionalization_type]
functionalization_kernels  the Functionalize kernels of view and mutating operators
view_meta                  ViewMetaClasses.h/.cpp and FunctionalInverses.h
view_copy                  CompositeViewCopyKernels.cpp
ufunc                      UfuncCPU_<op>.cpp, UfuncCPUKernel_<op>.cpp, UfuncCUDA_<op>.cu
vmap                       VmapGeneratedPlumbing.h [gen_vmap_plumbing]
aoti                       the AOTInductor C shim [gen_aoti_c_shim]
aoti_abi                   how schema types cross the shim's C ABI
aoti_table                 the fallback-op table, read from torchgen/aoti/fallback_ops.py
op_lists                   ATenOpList.cpp, aten_interned_strings.h, enum_tag.h,
                           RegistrationDeclarations.h
declarations_yaml          Declarations.yaml
yaml_text                  YAML text as PyYAML's dumper writes it, without PyYAML
"""
