"""The directly built YAML scalars are exactly what PyYAML's dumper writes.

Declarations.yaml is written without PyYAML's representer (see
`opgen.targets.aten.yaml_text`); these properties check its two shortcuts
against the dumper torchgen uses: strings it writes plain without asking PyYAML,
and floats.
"""

from __future__ import annotations

import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from opgen.targets.aten import yaml_text
from opgen.targets.aten.yaml_text import YamlScalars, is_plain, yaml_float

DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # torchgen's choice


def dumped_value(value: object, depth: int) -> str:
    """PyYAML's text for `value` as a mapping value `depth` sequences deep."""
    node: object = {"k": value}
    for _ in range(depth - 1):
        node = {"k": [node]}
    text: str = yaml.dump([node], Dumper=DUMPER, default_flow_style=False, width=1e9)
    prefix = "".join(f"{'  ' * i}- k:\n" for i in range(depth - 1)) + "  " * (depth - 1) + "- k: "
    assert text.startswith(prefix) and text.endswith("\n")
    return text[len(prefix) : -1]


ASCII_TEXT = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=30)


@given(ASCII_TEXT | st.text(max_size=10), st.integers(1, 3))
@example("aten::add(Tensor self, Tensor other) -> Tensor", 1)
@example("const at::Tensor &", 2)
@example("a -> *", 2)
@example("True", 1)
@example("x #y", 1)
@example("x:", 1)
@example("x: y", 1)
@example("key: ", 1)
@example("::std::optional<bool>", 1)
@example("::std::tuple<at::Tensor,at::Tensor> (const at::Tensor &, int64_t)", 2)
@example("::", 1)
@example("::x: y", 1)
def test_plain_strings_are_what_pyyaml_writes(s: str, depth: int) -> None:
    if is_plain(s):
        assert dumped_value(s, depth) == s


@given(ASCII_TEXT | st.text(max_size=10), st.integers(1, 3))
def test_every_string_is_what_pyyaml_writes(s: str, depth: int) -> None:
    assert YamlScalars().string(s, depth) == dumped_value(s, depth)


@given(st.sampled_from([*"#,[]{}&*!|>'\"%@`?:-", "::", ""]), ASCII_TEXT, st.integers(1, 3))
@example("", "", 1)
@example("{", "}", 2)
@example('"', 'valid"', 1)
@example("'", "it's'", 1)
def test_strings_after_an_indicator_are_what_pyyaml_writes(
    first: str, rest: str, depth: int
) -> None:
    s = first + rest
    assert YamlScalars().string(s, depth) == dumped_value(s, depth)


@pytest.mark.parametrize(
    ("s", "text"),
    [
        ("::std::optional<at::Device>", "::std::optional<at::Device>"),
        ("", "''"),
        ("{}", "'{}'"),
        ('"valid"', "'\"valid\"'"),
        ("'same'", "'''same'''"),
    ],
)
def test_the_strings_of_atens_spec_need_no_pyyaml(
    s: str, text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_pyyaml(s: str, depth: int) -> str:
        raise AssertionError(f"PyYAML asked for {s!r}")

    monkeypatch.setattr(yaml_text, "_dumped", no_pyyaml)
    assert YamlScalars().string(s, 1) == text


@given(st.none() | st.booleans() | st.integers())
def test_other_scalars_are_what_pyyaml_writes(value: object) -> None:
    assert YamlScalars().scalar(value, 1) == dumped_value(value, 1)


@given(st.floats())
@example(1e-05)
@example(1e20)
@example(0.3333333333333333)
def test_floats_are_what_pyyaml_writes(x: float) -> None:
    assert yaml_float(x) == dumped_value(x, 1)
