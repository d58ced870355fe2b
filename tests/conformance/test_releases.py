"""Every drop-in command against the torchgen of every supported torch release.

For each release of `releases.VERSIONS`, its own wheel's torchgen runs as the oracle
(`PYTHONPATH=<release>`) on that release's packaged spec, derivatives and templates,
and opgen runs on the same inputs with `--torch-version`: `aten` (the default tree,
AOTInductor shims included, and per-operator headers with the backends of
`aten_trees.CONFIGS`), `autograd`, `python`, `annotated-fn-args`, `backend`, `lazy`
(the TorchScript backend), `generate-code` (against generate_code.py's calls) and
`pyi` (def-equal to the stubs that release's wheel ships). The installed release is
left to the other test modules, which go deeper.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from opgen.cli import main
from opgen.releases import NAMED_DIMENSIONS, NEWEST, parse_release

from .aten_trees import CONFIGS, DATA, Tree, layout_flags, oracle_tree, read_tree
from .pytorch_checkout import ORACLE as GENERATE_CODE_ORACLE
from .pytorch_checkout import checkout
from .releases import VERSIONS, release_root
from .test_aten_tree import first_difference
from .test_pyi_stubs import (
    FILES,
    forms,
    fragment_class,
    members,
    module_statements,
    parse,
    tensor_base,
)

ORACLE_AUTOGRAD = """
import sys
import torchgen.packaged.autograd.gen_autograd as module
sys.modules["__main__"].__file__ = module.__file__
native, tags, out, autograd, which = sys.argv[1:]
if which == "autograd":
    from torchgen.selective_build.selector import SelectiveBuilder
    module.gen_autograd(native, tags, out, autograd, SelectiveBuilder.get_nop_selector())
elif which == "python":
    module.gen_autograd_python(native, tags, out, autograd)
else:
    import torchgen.packaged.autograd.gen_annotated_fn_args as annotated
    sys.modules["__main__"].__file__ = annotated.__file__
    annotated.gen_annotated(native, tags, out, autograd)
"""
LAZY_ORACLE = Path(__file__).parent / "lazy_oracle.py"
INSTALLED_TORCH = Path(str(importlib.util.find_spec("torch").origin)).parent  # type: ignore[union-attr]


class Release:
    """One release's inputs, and its torchgen run on them."""

    def __init__(self, version: str, scratch: Path) -> None:
        self.version = version
        self.root = release_root(version)
        self.packaged = self.root / "torchgen" / "packaged"
        self.scratch = scratch
        self.env = {**os.environ, "PYTHONPATH": str(self.root)}

    @property
    def aten(self) -> Path:
        return self.packaged / "ATen"

    @property
    def spec(self) -> tuple[str, str]:
        native = self.aten / "native"
        return str(native / "native_functions.yaml"), str(native / "tags.yaml")

    @property
    def autograd_dir(self) -> str:
        return str(self.packaged / "autograd")

    def oracle(self, command: list[str], name: str, key: object) -> Tree:
        root = self.scratch / "torchgen" / name
        return oracle_tree(command, root, key=(self.version, name, key), env=self.env)

    def opgen(self, name: str, *arguments: str) -> Tree:
        root = self.scratch / "opgen" / name
        root.mkdir(parents=True, exist_ok=True)
        command = arguments[0]
        status = main([command, "--torch-version", self.version, *arguments[1:]])
        assert status == 0, f"opgen {' '.join(arguments)} exited with {status}"
        return read_tree(root)


@pytest.fixture(scope="module")
def release(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Release:
    version: str = request.param
    return Release(version, tmp_path_factory.mktemp(f"release-{version}"))


by_release = pytest.mark.parametrize("release", VERSIONS, indirect=True)


@by_release
@pytest.mark.parametrize("config", ["default", "per_operator"])
def test_aten(release: Release, config: str) -> None:
    flags = CONFIGS[config]
    theirs = release.oracle(
        [sys.executable, "-m", "torchgen.gen", *layout(release, "torchgen", config), *flags],
        f"aten-{config}",
        flags,
    )
    ours = release.opgen(f"aten-{config}", "aten", *layout(release, "opgen", config), *flags)
    assert ours.files == theirs.files, first_difference(theirs, ours)


def layout(release: Release, side: str, config: str) -> list[str]:
    return layout_flags(release.aten, release.scratch / side / f"aten-{config}")


def autograd_dir_trees(release: Release, which: str) -> tuple[Tree, Tree]:
    native, tags = release.spec
    scratch = release.scratch
    inputs = [native, tags, str(scratch / "torchgen" / which / "out"), release.autograd_dir]
    theirs = release.oracle([sys.executable, "-c", ORACLE_AUTOGRAD, *inputs, which], which, ())
    out = str(scratch / "opgen" / which / "out")
    ours = release.opgen(which, which, native, tags, out, release.autograd_dir)
    return theirs, ours


@by_release
@pytest.mark.parametrize("which", ["autograd", "python", "annotated-fn-args"])
def test_autograd_dir_generators(release: Release, which: str) -> None:
    theirs, ours = autograd_dir_trees(release, which)
    assert ours.files == theirs.files, first_difference(theirs, ours)


@by_release
def test_backend(release: Release, monkeypatch: pytest.MonkeyPatch) -> None:
    yaml = str(DATA / "backends" / "xla.yaml")
    command = [sys.executable, "-m", "torchgen.gen_backend_stubs", "-s", yaml, "-o", "out"]
    theirs = release.oracle(command, "backend", yaml)
    (release.scratch / "opgen" / "backend").mkdir(parents=True)
    monkeypatch.chdir(release.scratch / "opgen" / "backend")
    source = str(release.aten)
    ours = release.opgen("backend", "backend", "-s", yaml, "-o", "out", "--source-path", source)
    assert ours.files == theirs.files, first_difference(theirs, ours)


@by_release
def test_lazy(release: Release, monkeypatch: pytest.MonkeyPatch) -> None:
    yaml = str(DATA / "backends" / "ts_lazy.yaml")
    kwargs = {
        **{"source_yaml": yaml, "output_dir": "out", "dry_run": False, "impl_path": None},
        **{"gen_ts_lowerings": True, "link": True},
    }
    command = [sys.executable, str(LAZY_ORACLE), json.dumps(kwargs)]
    theirs = release.oracle(command, "lazy", yaml)
    root = release.scratch / "opgen" / "lazy"
    root.mkdir(parents=True)
    monkeypatch.chdir(root)
    # The default shape-inference header is read relative to the working directory.
    (root / "torch").symlink_to(INSTALLED_TORCH / "include" / "torch")
    source = str(release.aten)
    try:
        ours = release.opgen(
            "lazy", "lazy", "-s", yaml, "-o", "out", "--source-path", source, "--gen-ts-lowerings"
        )
    finally:
        (root / "torch").unlink()
    assert ours.files == theirs.files, first_difference(theirs, ours)


@by_release
def test_generate_code(release: Release, monkeypatch: pytest.MonkeyPatch) -> None:
    """generate_code.py's calls, the TorchScript lazy backend included, in a checkout
    made of the release's packaged inputs (`pytorch_checkout`)."""
    flags = ["--gen-dir", "out", "--gen-lazy-ts-backend", "--per-operator-headers"]
    trees = {}
    for side in ("torchgen", "opgen"):
        root = release.scratch / side / "generate-code"
        checkout(root, release.packaged)
        native = root / "aten" / "src" / "ATen" / "native"
        inputs = [
            *("--native-functions-path", str(native / "native_functions.yaml")),
            *("--tags-path", str(native / "tags.yaml"), "--autograd-dir", release.autograd_dir),
        ]
        if side == "torchgen":
            command = [sys.executable, str(GENERATE_CODE_ORACLE), *inputs, *flags]
            subprocess.run(command, check=True, cwd=root, env=release.env, capture_output=True)
        else:
            monkeypatch.chdir(root)
            arguments = ["generate-code", "--torch-version", release.version, *inputs, *flags]
            assert main(arguments) == 0
        trees[side] = read_tree(root / "out")
    assert len(trees["opgen"].files) > 50
    assert trees["opgen"].files == trees["torchgen"].files, first_difference(
        trees["torchgen"], trees["opgen"]
    )


@pytest.fixture(scope="module")
def stubs(release: Release) -> Path:
    native, tags = release.spec
    out = release.scratch / "pyi"
    deprecated = str(Path(release.autograd_dir) / "deprecated.yaml")
    docs = str(release.root / "torch")
    arguments = [native, tags, str(out), "--deprecated", deprecated, "--docs", docs]
    assert main(["pyi", "--torch-version", release.version, *arguments]) == 0
    return out


@by_release
def test_pyi_functions_and_methods(release: Release, stubs: Path) -> None:
    wheel = release.root / "torch"
    ours = members(parse(stubs / "torch/_C/_VariableFunctions.pyi").body)
    theirs = members(parse(wheel / "_C/_VariableFunctions.pyi").body)
    assert forms(ours) == forms(theirs)
    assert [m.docstring for m in ours] == [m.docstring for m in theirs]
    methods = members(fragment_class(stubs).body)
    wheel_class = members(tensor_base(parse(wheel / "_C/__init__.pyi")).body)
    assert forms(methods) == forms(wheel_class[-len(methods) :])


@by_release
@pytest.mark.parametrize("path", sorted(FILES))
def test_pyi_modules(release: Release, stubs: Path, path: str) -> None:
    """Imports, `__all__`, classes (the structseqs) and every `def`."""
    ours, theirs = parse(stubs / path), parse(release.root / "torch" / FILES[path])
    assert module_statements(ours) == module_statements(theirs)
    assert forms(members(ours.body)) == forms(members(theirs.body))


@by_release
def test_check_accepts_the_releases_own_spec(release: Release) -> None:
    native, tags = release.spec
    out, err = io.StringIO(), io.StringIO()
    status = main(["check", native, "--tags", tags, "--torch-version", release.version], out, err)
    assert status == 0, err.getvalue()
    assert "error:" not in err.getvalue()  # torchgen's own spec has a few warnings
    assert out.getvalue().startswith(f"{native}: ok: ")


@by_release
def test_a_spec_with_named_dimensions_is_read_only_by_its_releases(release: Release) -> None:
    """2.10 to 2.12 declare operators on Dimnames; 2.13's rules no longer know the type."""
    native, tags = release.spec
    uses_dimnames = "Dimname" in Path(native).read_text()
    assert uses_dimnames == parse_release(release.version).has(NAMED_DIMENSIONS)
    if uses_dimnames:
        err = io.StringIO()
        arguments = ["check", native, "--tags", tags, "--torch-version", str(NEWEST)]
        assert main(arguments, io.StringIO(), err) == 1
        assert "error: unknown type 'Dimname'" in err.getvalue()
