"""The YAML readers of the spec language: values that know where they were written.

load           YAML text to values with source locations: the subset reader, else PyYAML
subset         a pure-Python reader of the block YAML spec files use (None for anything else)
full           any YAML through PyYAML's C composer, with duplicate-key detection
syntax_errors  PyYAML's syntax errors in plain words, at the offending character
values         YamlMap, YamlList, YamlDocument: values whose locations are computed on demand
located        where each character of a string value is written, also over several lines
"""
