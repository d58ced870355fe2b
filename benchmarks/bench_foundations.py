"""opgen's home-made foundations, each against the well-kept library it replaces.

1. frozen: `opgen.frozen.frozen` against `dataclasses.dataclass(frozen=True)`.
   Fresh processes import every opgen module (defining all of opgen's frozen
   classes), then load torch's spec with `load_spec` (the cyclic GC paused, as
   the CLI pauses it), which builds tens of thousands of frozen objects; each
   times its import and its load. On the dataclasses side a stand-in
   `opgen.frozen` module, put in `sys.modules` before anything imports it,
   makes the same classes with `dataclasses.dataclass(frozen=True, eq=...,
   slots=...)`; both sides must load the same spec. In this process, per call:
   defining a class, and constructing, hashing, comparing and reading
   instances shaped like opgen's `OptionalType`, `Annotation` and `Argument`.
2. YAML: the subset reader (`spec/yaml/subset.py`) against PyYAML's C composer
   as opgen would use it (`spec/yaml/full.py`), on torch's
   native_functions.yaml, tags.yaml and derivatives.yaml. The two are first
   checked to give the same values and the same Location for every mapping,
   key, value and item. Fresh processes import one reader (the full one
   imports PyYAML) and read the three files, timing the import and each read;
   the texts and the readers' common dependencies are loaded before the timer
   starts, and the package `__init__`s, which import the whole model, are
   skipped. In this process, per call: each file read again, warm.
3. forked: `opgen.forked.run_forked` against `multiprocessing`'s fork-context
   `Pool` (`map`, `close`, `join`) and `concurrent.futures.ProcessPoolExecutor`
   (fork context); the tasks also run in order in one process, for reference.
   Fresh processes build a model of ~250 MB of small Python objects (untimed),
   then time importing the pool's module, starting the pool, running 256 tasks
   and ending the pool. Each task returns two short path pairs, as
   `writer.write_files`'s tasks return the files they staged; the tasks either
   do nothing else (what is left is the pool's own cost, including forking a
   process of that size) or render a slice of the model to text (so workers
   also copy the pages whose reference counts they touch).

Whole-process figures are medians over `--rounds` rounds in which the sides
alternate, each run a fresh process, after one untimed warm-up run per side;
their ratio is the median of the per-round ratios. Where the measured work is
all in one process, the ratio of its CPU times (`time.process_time`) is shown
too ("cpu"): it is less disturbed by other load on the machine. Per-call
figures are medians over repetitions, the sides alternating, the cyclic GC
paused; their ratio is that of the medians. A ratio is the library's time over
opgen's (above 1: opgen is faster); "saved" is the difference of the medians.

    python benchmarks/bench_foundations.py [--rounds 7] [--only frozen|yaml|forked] [--jobs N]
"""

from __future__ import annotations

# A measured child process imports this module before its timer starts, so the
# imports here are kept to modules that both sides of every comparison import
# anyway (opgen imports all of them); the parent imports the rest where used.
import gc
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
TASKS = 256  # the forked section's tasks; `writer.write_files` makes up to 1,024
FUNCTIONS = 100_000  # the forked section's model: ~250 MB of objects
ARGUMENTS = 6  # per function of that model

# ---------------------------------------------------------------------------
# Measured children: `bench_foundations.py --child KIND ARG...` prints, as its
# last line, a JSON object: the spans it timed and what the parent checks.


class Clock:
    """Named spans of wall and CPU time, each from the end of the one before."""

    def __init__(self) -> None:
        self.spans: dict[str, tuple[float, float]] = {}
        self._wall, self._cpu = time.perf_counter(), time.process_time()

    def lap(self, name: str) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        self.spans[name] = (wall - self._wall, cpu - self._cpu)
        self._wall, self._cpu = wall, cpu


def child_main(kind: str, args: list[str]) -> int:
    gc.disable()  # as `opgen.cli` runs its commands
    if kind == "frozen":
        result = frozen_child(args[0], args[1], args[2], args[3:])
    elif kind == "yaml":
        result = yaml_child(args[0], args[1:])
    else:
        result = forked_child(args[0], int(args[1]), args[2])
    print(json.dumps(result))
    sys.stdout.flush()
    os._exit(0)  # as `opgen.cli.entry` leaves: without tearing the model down


def frozen_child(side: str, native: str, tags: str, modules: list[str]) -> dict[str, Any]:
    gc.enable()  # `python -m opgen` imports its modules before `entry()` pauses the GC
    defined = 0
    clock = Clock()
    if side == "dataclasses":
        import dataclasses
        import types

        import opgen  # the package `__init__` holds only the version

        def frozen(cls: Any = None, /, *, eq: bool = True, slots: bool = False) -> Any:
            nonlocal defined
            defined += 1
            make = dataclasses.dataclass(frozen=True, eq=eq, slots=slots)
            return make if cls is None else make(cls)

        stand_in = types.ModuleType("opgen.frozen")
        stand_in.frozen = frozen  # type: ignore[attr-defined]
        for name in ("field", "fields", "replace", "Field", "MISSING", "FrozenInstanceError"):
            setattr(stand_in, name, getattr(dataclasses, name))
        sys.modules["opgen.frozen"] = stand_in
        opgen.frozen = stand_in
    import importlib

    for module in modules:
        importlib.import_module(module)
    clock.lap("import")
    gc.disable()
    from opgen.spec import load_spec

    functions = load_spec(native, tags).functions
    clock.lap("load")
    check = [len(functions), str(functions[0].func), str(functions[-1].func)]
    return {"spans": clock.spans, "classes": defined, "check": check}


def yaml_child(side: str, paths: list[str]) -> dict[str, Any]:
    import types

    # The package `__init__`s import the whole model, and the subset reader with it.
    for package in ("opgen.spec", "opgen.spec.yaml"):
        stub = types.ModuleType(package)
        stub.__path__ = [os.path.join(SRC, *package.split("."))]
        sys.modules[package] = stub
    import opgen.spec.yaml.values  # noqa: F401  (what both readers build: imported untimed)

    texts = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            texts.append(f.read())
    clock = Clock()
    read: Callable[[str, str], object]
    if side == "subset":
        from opgen.spec.yaml.subset import read_subset

        read = read_subset
    else:
        from opgen.spec.yaml.full import read_full

        read = read_full
    clock.lap("import")
    for path, text in zip(paths, texts, strict=True):
        document = read(path, text)
        clock.lap(os.path.basename(path))
        if document is None:
            raise RuntimeError(f"{path} is not in the subset: the fast path was not taken")
    return {"spans": clock.spans}


class Argument:
    """The forked section's model: plain objects with an instance `__dict__`, as opgen's."""

    def __init__(self, name: str, type: str, default: str | None) -> None:
        self.name = name
        self.type = type
        self.default = default


class Function:
    def __init__(
        self,
        name: str,
        arguments: tuple[Argument, ...],
        tags: frozenset[str],
        kernels: dict[str, str],
    ) -> None:
        self.name = name
        self.arguments = arguments
        self.tags = tags
        self.kernels = kernels


def build_model(functions: int) -> list[Function]:
    return [
        Function(
            f"op_{i}",
            tuple(
                Argument(f"arg{i}_{j}", f"Tensor{j}?", None if j % 2 else str(j))
                for j in range(ARGUMENTS)
            ),
            frozenset({"core", f"tag{i % 50}"}),
            {"CPU": f"cpu_op_{i}", "CUDA": f"cuda_op_{i}"},
        )
        for i in range(functions)
    ]


def render(model: Sequence[Function], start: int, stop: int) -> list[tuple[str, str]]:
    """A slice of the model rendered to text, which is dropped, as if staged in a file;
    two (staged, final) path pairs."""
    lines = []
    for function in model[start:stop]:
        arguments = ", ".join(
            [
                f"{a.type} {a.name}" if a.default is None else f"{a.type} {a.name}={a.default}"
                for a in function.arguments
            ]
        )
        kernel = function.kernels["CPU"]
        lines.append(f"TORCH_API Tensor {function.name}({arguments}); // {kernel}")
    size = len("\n".join(lines))
    return [(f"/tmp/stage-{start}-{size}", f"out/part_{start}.h"), ("/tmp/stage", "out/x.h")]


def nothing(model: Sequence[Function], start: int, stop: int) -> list[tuple[str, str]]:
    """No work, the same results: what is left is the pool's own cost."""
    return [(f"/tmp/stage-{start}-{stop}", f"out/part_{start}.h"), ("/tmp/stage", "out/x.h")]


Work = Callable[[Sequence[Function], int, int], list[tuple[str, str]]]
WORKLOADS: dict[str, Work] = {"render": render, "nothing": nothing}

# `multiprocessing` pickles each task, so its tasks are a module-level function
# of a task number that finds the (inherited) model and work in these globals.
MODEL: list[Function] = []
BOUNDS: list[int] = []
WORK: list[Work] = []


def task_number(index: int) -> list[tuple[str, str]]:
    return WORK[0](MODEL, BOUNDS[index], BOUNDS[index + 1])


def forked_child(side: str, workers: int, workload: str) -> dict[str, Any]:
    import functools

    MODEL.extend(build_model(FUNCTIONS))
    BOUNDS.extend(len(MODEL) * i // TASKS for i in range(TASKS + 1))
    work = WORKLOADS[workload]
    WORK.append(work)
    model_mib = _resident_mib()
    results: list[list[tuple[str, str]]]
    clock = Clock()
    if side == "forked":
        from opgen.forked import run_forked

        tasks = [functools.partial(work, MODEL, BOUNDS[i], BOUNDS[i + 1]) for i in range(TASKS)]
        results = run_forked(tasks, workers)
    elif side == "Pool":
        import multiprocessing

        clock.lap("import")
        pool = multiprocessing.get_context("fork").Pool(workers)
        clock.lap("start")
        results = pool.map(task_number, range(TASKS))
        pool.close()
        pool.join()
    elif side == "ProcessPoolExecutor":
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        fork = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(workers, mp_context=fork) as executor:
            results = list(executor.map(task_number, range(TASKS)))
    else:
        results = [task_number(i) for i in range(TASKS)]
    clock.lap("rest")
    spans = clock.spans
    spans["total"] = (sum(wall for wall, _ in spans.values()), 0.0)  # CPU: children uncounted
    return {"spans": spans, "model_mib": model_mib, "check": json.dumps(results)}


def _resident_mib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    return 0


# ---------------------------------------------------------------------------
# The parent: runs the children, times per-call costs in process, reports.

Runs = list[dict[str, Any]]


class Compared(NamedTuple):
    ours: float  # median seconds
    theirs: float
    ratio: float  # the library's over opgen's

    def saved_ms(self) -> float:
        return (self.theirs - self.ours) * 1e3


def run_child(args: Sequence[str]) -> dict[str, Any]:
    import subprocess

    command = [sys.executable, os.path.abspath(__file__), "--child", *args]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    result: dict[str, Any] = json.loads(output.splitlines()[-1])
    return result


def alternate(sides: Mapping[str, list[str]], rounds: int) -> dict[str, Runs]:
    """Each side's child results over `rounds` rounds, sides alternating, after a warm-up each."""
    for args in sides.values():
        run_child(args)
    results: dict[str, Runs] = {side: [] for side in sides}
    for _ in range(rounds):
        for side, args in sides.items():
            results[side].append(run_child(args))
    return results


def per_call(
    sides: Mapping[str, Callable[[], object]], number: int, repeat: int
) -> dict[str, list[float]]:
    """Seconds per call of each side, `repeat` times, sides alternating, the GC paused."""
    times: dict[str, list[float]] = {side: [] for side in sides}
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeat):
            for side, call in sides.items():
                start = time.perf_counter()
                for _ in range(number):
                    call()
                times[side].append((time.perf_counter() - start) / number)
            gc.collect()  # what the repetition left behind, untimed
    finally:
        gc.enable()
    return times


def median(values: Sequence[float]) -> float:
    import statistics

    return statistics.median(values)


def show(seconds: float) -> str:
    if abs(seconds) >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    if abs(seconds) >= 1e-6:
        return f"{seconds * 1e6:.2f} us"
    return f"{seconds * 1e9:.0f} ns"


def header(title: str) -> None:
    columns = f"{'opgen':>10} {'library':>10} {'ratio':>7} {'saved':>10} {'cpu':>6}"
    print(f"  {title:<50}{columns}")


def row(title: str, ours: float, theirs: float, ratio: float, cpu: float | None = None) -> None:
    cpu_ratio = "" if cpu is None else f"{cpu:.2f}x"
    print(
        f"  {title:<50}{show(ours):>10} {show(theirs):>10} {ratio:>6.2f}x "
        f"{show(theirs - ours):>10} {cpu_ratio:>6}"
    )


def span_sums(runs: Runs, names: Sequence[str], clock: int) -> list[float]:
    """Per run, the spans `names` added up; `clock` 0 for wall time, 1 for CPU time."""
    return [sum(run["spans"][name][clock] for name in names) for run in runs]


def paired_row(
    title: str, ours: Runs, theirs: Runs, names: Sequence[str], *, cpu: bool = True
) -> Compared:
    """Print the spans `names` added up: both medians, the median paired ratio, the saving."""

    def paired_ratio(clock: int) -> float:
        pairs = zip(span_sums(ours, names, clock), span_sums(theirs, names, clock), strict=True)
        return median([t / o for o, t in pairs])

    compared = Compared(
        median(span_sums(ours, names, 0)), median(span_sums(theirs, names, 0)), paired_ratio(0)
    )
    row(title, *compared, paired_ratio(1) if cpu else None)
    return compared


def per_call_row(title: str, times: Mapping[str, list[float]], per: int = 1) -> Compared:
    """Print both medians (per `per`-th of a call), their ratio and the saving."""
    ours, theirs = median(times["ours"]) / per, median(times["theirs"]) / per
    compared = Compared(ours, theirs, theirs / ours)
    row(title, *compared)
    return compared


# frozen ---------------------------------------------------------------------


def opgen_modules() -> list[str]:
    """Every opgen module but `__main__` (which runs the CLI) and PyYAML's reader."""
    modules = []
    for directory, _, files in os.walk(os.path.join(SRC, "opgen")):
        package = os.path.relpath(directory, SRC).replace(os.sep, ".")
        for file in files:
            if file.endswith(".py") and "__pycache__" not in package:
                name = file.removesuffix(".py")
                modules.append(package if name == "__init__" else f"{package}.{name}")
    return sorted(set(modules) - {"opgen.__main__", "opgen.spec.yaml.full"})


def bench_frozen(rounds: int, native: str, tags: str) -> str:
    import dataclasses

    from opgen.frozen import field as opgen_field
    from opgen.frozen import frozen

    print("frozen: opgen.frozen (opgen) against dataclasses.dataclass(frozen=True) (library)")
    modules = opgen_modules()
    sides = {side: ["frozen", side, native, tags, *modules] for side in ("frozen", "dataclasses")}
    results = alternate(sides, rounds)
    ours, theirs = results["frozen"], results["dataclasses"]
    if len({json.dumps(run["check"]) for run in ours + theirs}) != 1:
        raise RuntimeError("the two sides loaded different specs")
    header(f"fresh processes, {rounds} rounds")
    classes = theirs[0]["classes"]
    imports = paired_row(
        f"import {len(modules)} modules ({classes} frozen classes)", ours, theirs, ["import"]
    )
    load = paired_row("then load_spec(native_functions, tags)", ours, theirs, ["load"])
    both = paired_row("import + load_spec", ours, theirs, ["import", "load"])

    repeat = 15
    header(f"in this process, per call, medians of {repeat}")
    ours_decorator: Callable[[type], type] = frozen
    theirs_decorator: Callable[[type], type] = dataclasses.dataclass(frozen=True)
    decorators = {"ours": ours_decorator, "theirs": theirs_decorator}
    define = per_call_row(
        "define a class of 4 fields",
        per_call({side: _defining(decorate) for side, decorate in decorators.items()}, 20, repeat),
    )
    batch = 1000  # instances per call
    field_of = {"ours": opgen_field, "theirs": dataclasses.field}
    made = {side: _shapes(decorate, field_of[side]) for side, decorate in decorators.items()}
    construct = []
    for shape, name in enumerate(("OptionalType (1 field)", "Annotation (3)", "Argument (4+2)")):
        calls = {side: _constructing(classes[shape], batch) for side, classes in made.items()}
        construct.append(per_call_row(f"construct an {name}", per_call(calls, 20, repeat), batch))
    instances = {side: _constructing(classes[1], batch)() for side, classes in made.items()}
    twins = {side: _constructing(classes[1], batch)() for side, classes in made.items()}
    hashing = {side: _hashing(instances[side]) for side in made}
    comparing = {side: _comparing(instances[side], twins[side]) for side in made}
    reading = {side: _reading(instances[side], "alias_set") for side in made}
    uses = [
        per_call_row("hash an Annotation", per_call(hashing, 20, repeat), batch),
        per_call_row("compare two equal Annotations", per_call(comparing, 20, repeat), batch),
        per_call_row("read an Annotation's field", per_call(reading, 20, repeat), batch),
    ]
    arguments = {side: _constructing(classes[2], batch)() for side, classes in made.items()}
    reading = {side: _reading(arguments[side], "name") for side in made}
    title = "read an Argument's field (__dict__ was used)"
    uses.append(per_call_row(title, per_call(reading, 20, repeat), batch))
    built = [c.ratio for c in construct]
    used = [c.ratio for c in uses]
    return (
        f"frozen: importing opgen {imports.ours * 1e3:.0f} ms vs {imports.theirs * 1e3:.0f} ms "
        f"with dataclasses ({imports.ratio:.2f}x, {imports.saved_ms():.0f} ms saved); "
        f"load_spec {load.ratio:.2f}x; both {both.ratio:.2f}x ({both.saved_ms():.0f} ms); "
        f"per call: defining a class {define.ratio:.1f}x, constructing "
        f"{min(built):.2f}-{max(built):.2f}x, hashing, comparing, reading "
        f"{min(used):.2f}-{max(used):.2f}x"
    )


def _defining(decorate: Callable[[type], type]) -> Callable[[], type]:
    def define() -> type:
        class Argument:
            name: str
            type: object
            default: str | None
            annotation: object | None = None

        return decorate(Argument)

    return define


def _shapes(decorate: Callable[[type], type], field: Any) -> list[Any]:
    """Classes shaped like opgen's OptionalType, Annotation and Argument (spec/types.py,
    spec/arguments.py), their fields declared with `field` (each side's own)."""

    class OptionalType:
        elem: object

    class Annotation:
        alias_set: tuple[str, ...]
        is_write: bool
        alias_set_after: tuple[str, ...]

    class Argument:
        name: str
        type: object
        default: str | None
        annotation: object | None
        is_write: bool = field(init=False, repr=False, compare=False)
        text: str = field(init=False, repr=False, compare=False)

        def __post_init__(self) -> None:
            values = self.__dict__  # derived fields, set as opgen's Argument sets them
            values["is_write"] = self.annotation is not None
            values["text"] = f"{self.type} {self.name}"

    return [decorate(OptionalType), decorate(Annotation), decorate(Argument)]


def _constructing(cls: Any, batch: int) -> Callable[[], list[Any]]:
    names = [f"name{i}" for i in range(batch)]
    fields = [f for f in cls.__dataclass_fields__.values() if f.init]
    if len(fields) == 1:
        return lambda: [cls(name) for name in names]
    if len(fields) == 3:
        return lambda: [cls((name,), False, ()) for name in names]
    return lambda: [cls(name, "Tensor", None, None) for name in names]


def _hashing(instances: list[Any]) -> Callable[[], object]:
    return lambda: [hash(x) for x in instances]


def _comparing(instances: list[Any], twins: list[Any]) -> Callable[[], object]:
    pairs = list(zip(instances, twins, strict=True))
    return lambda: [x == y for x, y in pairs]


def _reading(instances: list[Any], name: str) -> Callable[[], object]:
    """Reading a field the way opgen's code does: `x.field`, which CPython specialises."""
    if name == "name":
        return lambda: [x.name for x in instances]
    return lambda: [x.alias_set for x in instances]


# YAML -----------------------------------------------------------------------


def bench_yaml(rounds: int, paths: list[str]) -> str:
    import functools

    from opgen.spec.yaml.full import read_full
    from opgen.spec.yaml.load import read_text
    from opgen.spec.yaml.subset import read_subset

    print("YAML: the subset reader (opgen) against PyYAML's C composer, via full.py (library)")
    names = [os.path.basename(path) for path in paths]
    texts = [read_text(path) for path in paths]
    for path, text in zip(paths, texts, strict=True):
        subset, full = read_subset(path, text), read_full(path, text)
        if subset is None or subset.location != full.location:
            raise RuntimeError(f"the subset reader does not read {path} as PyYAML does")
        if not _same_located(subset.root, full.root):
            raise RuntimeError(f"the subset reader does not read {path} as PyYAML does")
    print("  checked: the same values and Locations from both readers")
    results = alternate({side: ["yaml", side, *paths] for side in ("subset", "full")}, rounds)
    ours, theirs = results["subset"], results["full"]
    header(f"fresh processes, {rounds} rounds")
    paired_row("import the reader (the full one imports PyYAML)", ours, theirs, ["import"])
    for name in names:
        paired_row(f"then read {name}", ours, theirs, [name])
    spec_load = ["import", names[0], names[1]]
    spec = paired_row("a spec load: import, native_functions, tags", ours, theirs, spec_load)
    paired_row("import and all three files", ours, theirs, ["import", *names])

    header("in this process, per call (warm, no import)")
    warm = []
    for path, text, name in zip(paths, texts, names, strict=True):
        repeat = 9 if len(text) > 300_000 else 21
        reads: dict[str, Callable[[], object]] = {
            "ours": functools.partial(read_subset, path, text),
            "theirs": functools.partial(read_full, path, text),
        }
        warm.append(per_call_row(f"read {name}, median of {repeat}", per_call(reads, 1, repeat)))
    return (
        f"yaml:   a spec load (importing the reader, reading native_functions and tags) "
        f"{spec.ours * 1e3:.0f} ms vs {spec.theirs * 1e3:.0f} ms with PyYAML ({spec.ratio:.2f}x, "
        f"{spec.saved_ms():.0f} ms saved); warm reads "
        f"{min(c.ratio for c in warm):.2f}-{max(c.ratio for c in warm):.2f}x"
    )


def _same_located(ours: object, theirs: object) -> bool:
    """Equal values of equal types, with equal Locations for every collection, key,
    value and item."""
    from opgen.spec.yaml.values import YamlList, YamlMap

    if type(ours) is not type(theirs):
        return False
    if isinstance(ours, YamlMap):
        assert isinstance(theirs, YamlMap)
        return (
            list(ours) == list(theirs)
            and ours.line == theirs.line
            and ours.location == theirs.location
            and all(
                ours.key_location(key) == theirs.key_location(key)
                and ours.value_location(key) == theirs.value_location(key)
                and _same_located(ours[key], theirs[key])
                for key in ours
            )
        )
    if isinstance(ours, YamlList):
        assert isinstance(theirs, YamlList)
        return (
            len(ours) == len(theirs)
            and ours.location == theirs.location
            and all(
                ours.item_locations[i] == theirs.item_locations[i]
                and _same_located(ours[i], theirs[i])
                for i in range(len(ours))
            )
        )
    return ours == theirs


# forked ---------------------------------------------------------------------


def bench_forked(rounds: int, workers: int) -> str:
    pools = ("forked", "Pool", "ProcessPoolExecutor")
    sides = [(pool, "nothing") for pool in pools] + [(pool, "render") for pool in pools]
    sides.append(("in order", "render"))
    results = alternate({f"{s} {w}": ["forked", s, str(workers), w] for s, w in sides}, rounds)
    for workload in WORKLOADS:
        checks = {
            run["check"] for side, runs in results.items() if workload in side for run in runs
        }
        if len(checks) != 1:
            raise RuntimeError(f"the sides returned different results ({workload})")
    model = median([run["model_mib"] for runs in results.values() for run in runs])
    print(
        f"forked: opgen.forked (opgen) against multiprocessing (library): {workers} workers, "
        f"{TASKS} tasks, a {model:.0f} MiB model"
    )
    compared: dict[str, Compared] = {}
    for workload, title in (
        ("nothing", f"tasks doing nothing (pool cost), {rounds} rounds"),
        ("render", f"tasks rendering the model, {rounds} rounds"),
    ):
        header(title)
        ours = results[f"forked {workload}"]
        for side, what in (
            ("Pool", "Pool: import, start, map, close, join"),
            ("ProcessPoolExecutor", "ProcessPoolExecutor: import, start, map, exit"),
        ):
            theirs = results[f"{side} {workload}"]
            compared[f"{side} {workload}"] = paired_row(what, ours, theirs, ["total"], cpu=False)
    serial = paired_row(
        "(reference: the same tasks in order, unforked)",
        results["forked render"],
        results["in order render"],
        ["total"],
        cpu=False,
    )
    pool_runs = results["Pool nothing"] + results["Pool render"]
    imports = median(span_sums(pool_runs, ["import"], 0))
    start = median(span_sums(pool_runs, ["start"], 0))
    print(
        f"  of Pool's time: import multiprocessing {show(imports)}, Pool({workers}) {show(start)}"
    )
    idle, busy = compared["Pool nothing"], compared["Pool render"]
    idle_executor = compared["ProcessPoolExecutor nothing"]
    busy_executor = compared["ProcessPoolExecutor render"]
    return (
        f"forked: {TASKS} empty tasks {idle.ours * 1e3:.0f} ms vs {idle.theirs * 1e3:.0f} ms "
        f"with multiprocessing.Pool ({idle.ratio:.2f}x, {idle.saved_ms():.0f} ms saved), "
        f"{idle_executor.theirs * 1e3:.0f} ms with ProcessPoolExecutor "
        f"({idle_executor.ratio:.2f}x); rendering {busy.ours * 1e3:.0f} ms vs "
        f"{busy.theirs * 1e3:.0f} ms ({busy.ratio:.2f}x) and {busy_executor.theirs * 1e3:.0f} ms "
        f"({busy_executor.ratio:.2f}x); in order, unforked, {serial.theirs * 1e3:.0f} ms"
    )


# ---------------------------------------------------------------------------


def main() -> int:
    import argparse

    from paired import compile_bytecode, torchgen_native_dir

    from opgen.jobs import default_jobs

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="whole-process rounds (default 7)")
    parser.add_argument("--only", choices=("frozen", "yaml", "forked"), help="one section only")
    parser.add_argument(
        "--jobs", type=int, default=default_jobs(), help="workers (default: opgen's default -j)"
    )
    args = parser.parse_args()
    native_dir = torchgen_native_dir()
    native, tags = str(native_dir / "native_functions.yaml"), str(native_dir / "tags.yaml")
    derivatives = str(native_dir.parents[1] / "autograd" / "derivatives.yaml")
    compile_bytecode()
    print(f"load average before: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)\n")
    summary = []
    if args.only in (None, "frozen"):
        summary.append(bench_frozen(args.rounds, native, tags))
        print()
    if args.only in (None, "yaml"):
        summary.append(bench_yaml(args.rounds, [native, tags, derivatives]))
        print()
    if args.only in (None, "forked"):
        summary.append(bench_forked(args.rounds, args.jobs))
        print()
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print("summary (ratio: the library's time over opgen's)")
    for line in summary:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        sys.exit(child_main(sys.argv[2], sys.argv[3:]))
    sys.exit(main())
