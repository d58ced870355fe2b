"""The ATen target: the files `python -m torchgen.gen` writes, byte for byte.

`generate(options)` reads the spec and templates the flags name (`AtenRun`),
then runs each file family's emitter over it. An emitter is a plain function
of the run that adds files to the run's output sets; it belongs to one
`--generate` part (headers, sources or declarations_yaml). Families share what
they compute through the run's `SignatureSet`, so every signature is derived
once whatever number of files print it.
"""
