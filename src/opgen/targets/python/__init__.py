"""`opgen python`: the Python bindings torchgen's `gen_autograd_python` writes.

A drop-in for `torchgen.packaged.autograd.gen_autograd.gen_autograd_python(NATIVE,
TAGS, OUT, AUTOGRAD_DIR)`, which upstream has no command line for: the same inputs
(templates, `derivatives.yaml` and `deprecated.yaml` from AUTOGRAD_DIR) and the same
files, byte for byte. `read` builds one `PythonRun`, the model: the spec, the
derivatives model, the bindings' signatures, the release and where the files go. Each
file family is a module with `emit_<family>(run) -> Emitted`, which makes its files in
a fresh set; `emit` runs them (`opgen.targets.emitters.run_emitters`). Which functions
are bound, and how, is `opgen.python_bindings`.

command           the flags, and `TARGET`
options           PythonOptions
run               PythonRun
generate          `read`, the emitters in torchgen's order (`EMITTERS`), and `emit`
python_functions  python_functions.h/.cpp: the backward nodes as Python classes
bindings          python_torch_functions, python_variable_methods, python_<module>_functions
                  [gen_python_functions]
method_impl       one binding's C++: the function that parses a call and dispatches it
return_types      python_return_types.h/.cpp: the structseq classes of named returns
enum_tag          python_enum_tag.cpp: tags.yaml as the Python enum `torch.Tag`
view_meta_bindings  ViewMetaClassesPythonBinding.cpp (`--view-meta-bindings`, and
                  `opgen generate-code`): the Python classes of functionalization's
                  ViewMeta specializations; its model, `read` and `emit`
"""
