"""The calling conventions generated code speaks, derived from function schemas.

One module per convention (cpp, dispatcher, native, structured, python), each
made of pure functions of the model. Each module opens with a description of
its convention and how it differs from the others.
"""
