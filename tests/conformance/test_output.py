"""opgen.output against torchgen's FileManager and gen.py, live.

The same writes (plain, templated, sharded, sharded with a template, text
returned as a string) go once through torchgen's `FileManager` and once through
`OutputSet` + `write_files`, each in its own directory with the same relative
roots; the resulting trees and dependency lists must be identical, in real and
in dry-run mode. A second test runs `python -m torchgen.gen --dry-run -o` on a
two-operator spec and rebuilds its dependency files with `dependency_files`.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import types
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

tg_utils = pytest.importorskip("torchgen.utils")
from torchgen.code_template import CodeTemplate  # noqa: E402

from opgen.output import (  # noqa: E402
    OutputSet,
    TemplateDir,
    dependency_files,
)
from opgen.writer import write_files, write_if_changed  # noqa: E402

TEMPLATES = {
    "Plain.h": "// ${generated_comment}\n#pragma once\n$body\n",
    "Op.h": "// ${generated_comment}\nvoid ${name}(${,args});\n",
    "Register.cpp": (
        "// ${generated_comment}\n"
        "// shard ${shard_id} of ${backend}\n"
        "${definitions}\n\n"
        "void init() {\n"
        "  ${registrations}\n"
        "}\n"
    ),
    "Stub.pyi": '# ${generated_comment}\n"""Module."""\n\n\n\n@overload\ndef f(): ...\n',
}

# Operator-like keys; enough of them that every shard gets some.
OPS = [f"{name}.{overload}" for name in ["add", "mul", "conv2d", "sum"] for overload in "abcde"]

Env = dict[str, Any]


def shard_env(op: str) -> dict[str, list[str]]:
    return {"definitions": [f"void {op}_impl();"], "registrations": [f'm.impl("{op}");']}


NUM_SHARDS = 4  # not 3: 256 % 3 == 1 would hide the byte order of the hash
BASE_ENV: Env = {"backend": "CPU", "definitions": ["// first"]}
SHARDED_KEYS = {"definitions", "registrations"}


@pytest.fixture
def torchgen_as_main(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make torchgen name its generator as `python -m torchgen.gen` would."""
    main = types.ModuleType("__main__")
    main.__file__ = str(tg_utils.TORCHGEN_ROOT / "gen.py")
    monkeypatch.setitem(sys.modules, "__main__", main)


@pytest.fixture
def template_dir(tmp_path: Path) -> Path:
    root = tmp_path / "templates"
    root.mkdir()
    for name, text in TEMPLATES.items():
        (root / name).write_text(text)
    return root


def run_torchgen(template_dir: Path, dry_run: bool) -> None:
    aten = tg_utils.FileManager("build/aten", template_dir, dry_run)
    core = tg_utils.FileManager("build/aten/core", template_dir, dry_run)
    aten.write("Plain.h", lambda: {"body": "int x;"})
    for name in ["abs", "neg"]:
        aten.write_with_template(f"ops/{name}.h", "Op.h", lambda n=name: op_env(n))
    aten.write_sharded(
        "Register.cpp",
        OPS,
        key_fn=str,
        env_callable=shard_env,
        num_shards=NUM_SHARDS,
        base_env=BASE_ENV,
        sharded_keys=SHARDED_KEYS,
    )
    aten.write_sharded_with_template(
        "RegisterCUDA.cu",
        "Register.cpp",
        OPS,
        key_fn=str,
        env_callable=shard_env,
        num_shards=NUM_SHARDS,
        base_env=BASE_ENV,
        sharded_keys=SHARDED_KEYS,
    )
    core.write("Stub.pyi", dict)
    core.write("raw.txt", lambda: '"""as is"""\n\n\ndef f(): ...\n')
    aten.write_outputs("gen", "deps/gen.cmake")
    core.write_outputs("core_gen", "deps/core_gen.cmake")


class UpstreamTemplate:
    """torchgen's own template engine, as the `Substitutable` opgen's writer takes, so
    that these tests compare the writers alone."""

    def __init__(self, path: str) -> None:
        self._template = CodeTemplate.from_file(path)
        found = CodeTemplate.substitution.findall(self._template.pattern)
        self.names = tuple(dict.fromkeys(name.strip("{,}") for _, name in found))

    def substitute(self, env: Mapping[str, object], /) -> str:
        return self._template.substitute(env)


def run_opgen(template_dir: Path, dry_run: bool) -> None:
    templates = TemplateDir(template_dir, UpstreamTemplate)
    aten = OutputSet("build/aten", templates)
    core = OutputSet("build/aten/core", templates)
    aten.add_template("Plain.h", {"body": "int x;"})
    for name in ["abs", "neg"]:
        aten.add_template(f"ops/{name}.h", op_env(name), template="Op.h")
    for path, template in [("Register.cpp", None), ("RegisterCUDA.cu", "Register.cpp")]:
        aten.add_sharded(
            path,
            OPS,
            key=str,
            env=shard_env,
            num_shards=NUM_SHARDS,
            base_env=BASE_ENV,
            sharded_keys=SHARDED_KEYS,
            template=template,
        )
    core.add_template("Stub.pyi", {})
    core.add("raw.txt", '"""as is"""\n\n\ndef f(): ...\n')
    write_files([aten, core], dry_run=dry_run)
    for depfile, text in dependency_files("deps/gen.cmake", [("", aten), ("core_", core)]).items():
        write_if_changed(depfile, text)


def op_env(name: str) -> Env:
    return {"name": name, "args": ["const Tensor& self"]}


def snapshot(root: Path) -> dict[str, str | None]:
    """Every directory (None) and file (its text) under root, template dir excluded."""
    return {
        p.relative_to(root).as_posix(): p.read_text() if p.is_file() else None
        for p in sorted(root.rglob("*"))
        if "templates" not in p.parts
    }


@pytest.fixture
def both(
    tmp_path: Path, template_dir: Path, monkeypatch: pytest.MonkeyPatch, torchgen_as_main: None
) -> Iterator[Callable[[bool], tuple[dict[str, str | None], dict[str, str | None]]]]:
    def run(dry_run: bool) -> tuple[dict[str, str | None], dict[str, str | None]]:
        for name, runner in [("torchgen", run_torchgen), ("opgen", run_opgen)]:
            (tmp_path / name).mkdir(exist_ok=True)
            monkeypatch.chdir(tmp_path / name)
            runner(template_dir, dry_run)
        return snapshot(tmp_path / "torchgen"), snapshot(tmp_path / "opgen")

    yield run


def test_real_run_writes_the_same_files_and_dependency_lists(both: Any) -> None:
    theirs, ours = both(False)
    assert ours == theirs
    assert ours["build/aten/Plain.h"] == (
        "// @generated by torchgen/gen.py from Plain.h\n#pragma once\nint x;\n"
    )
    assert "build/aten/RegisterEverything.cpp" in ours
    assert ours["deps/gen.cmake"] is not None
    assert '"build/aten/RegisterEverything.cpp"' not in ours["deps/gen.cmake"]
    assert '"build/aten/RegisterCUDA_2.cu"' in ours["deps/gen.cmake"]


def test_dry_run_writes_only_the_same_dependency_lists(both: Any) -> None:
    theirs, ours = both(True)
    assert ours == theirs
    assert sorted(ours) == ["deps", "deps/core_gen.cmake", "deps/gen.cmake"]


def test_rerun_changes_nothing_in_either(both: Any, tmp_path: Path) -> None:
    both(False)
    stamps = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    theirs, ours = both(False)
    assert ours == theirs
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()} == stamps


TINY_SPEC = """\
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  variants: function, method
  dispatch:
    CPU, CUDA: add
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
  variants: function, method
  dispatch:
    CPU: mul
"""

# gen.py's file managers that write dependency lists, by prefix, with their install dirs.
DEP_ROOTS = {
    "": "build/aten",
    "cpu_vec_": "build/aten",
    "core_": "build/aten/core",
    "ops_": "build/aten/ops",
    "cuda_": "build/aten",
}


def test_gen_py_dependency_files_and_install_dirs(
    tmp_path: Path, torchgen_native_dir: Path
) -> None:
    source = tmp_path / "torchgen" / "src"
    (source / "native").mkdir(parents=True)
    (source / "native" / "native_functions.yaml").write_text(TINY_SPEC)
    shutil.copy(torchgen_native_dir / "tags.yaml", source / "native" / "tags.yaml")
    shutil.copytree(torchgen_native_dir.parent / "templates", source / "templates")
    subprocess.run(
        [
            *(sys.executable, "-m", "torchgen.gen", "-s", "src", "-d", "build/aten"),
            *("--aoti-install-dir", "build/aoti", "-o", "deps/gen.cmake"),
            *("--dry-run", "--per-operator-headers"),
        ],
        cwd=tmp_path / "torchgen",
        check=True,
        capture_output=True,
    )
    theirs = {p.name: p.read_text() for p in sorted((tmp_path / "torchgen" / "deps").iterdir())}

    ours_dir = tmp_path / "opgen"
    ours_dir.mkdir()
    sets: list[tuple[str, OutputSet]] = []
    rng = random.Random(0)
    for prefix, root in DEP_ROOTS.items():
        listed = [line.strip().strip('"') for line in theirs[f"{prefix}gen.cmake"].splitlines()]
        paths = [Path(p).relative_to(root).as_posix() for p in listed[2:-1]]
        rng.shuffle(paths)
        output_set = OutputSet(ours_dir / root)
        for path in paths:
            output_set.add(path, "")
        sets.append((prefix, output_set))
    files = dependency_files(ours_dir / "deps" / "gen.cmake", sets)
    relative = {
        path.name: text.replace(f"{ours_dir.as_posix()}/", "") for path, text in files.items()
    }
    assert relative == theirs
    assert "build/aten/ops/add_ops.h" in theirs["ops_gen.cmake"]

    # gen.py creates its install dirs even in a dry run; make_roots does the same.
    aoti, headeronly = OutputSet(ours_dir / "build/aoti"), OutputSet(ours_dir / "build/aten/core")
    write_files([s for _, s in sets] + [aoti, headeronly], dry_run=True, make_roots=True)
    theirs_dirs = snapshot(tmp_path / "torchgen" / "build")
    assert theirs_dirs == snapshot(ours_dir / "build")
    assert sorted(theirs_dirs) == ["aoti", "aten", "aten/core", "aten/ops"]
