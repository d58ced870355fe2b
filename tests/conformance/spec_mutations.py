"""Copies of a spec with every kind of schema change, made at test time (`mutate_spec`).

`opgen diff`'s conformance test (test_diff_torch_rules.py) compares opgen's
verdicts with torch's on them. Each mutation kind in `MUTATIONS` is a function
from a schema (as `Sig`, its pieces as written) to the changed schema, or None
where it does not apply; `mutate_spec` applies each kind, in turn, to a
deterministic sample of the operators it applies to, each operator changed at
most once, keeping only changes the caller's `valid` accepts (torch's parser
refuses some schemas opgen reads for comparison). `load_mutated` loads the
result, undoing the changes opgen's loader rejects.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from opgen.diagnostics import SpecError
from opgen.spec.model import LoadOptions, Spec, load_spec

PER_KIND = 50  # operators per mutation kind (at most)
SEED = 20


# -- schemas as pieces ------------------------------------------------------------------


@dataclass
class Sig:
    name: str
    args: list[str]  # as written, with "*" where it is
    returns: list[str]

    @staticmethod
    def of(text: str) -> Sig:
        paren, arrow = text.index("("), text.rindex(") -> ")
        inner = text[paren + 1 : arrow]
        returns = text[arrow + 5 :]
        if returns.startswith("("):
            returns = returns[1:-1]
        return Sig(
            text[:paren], inner.split(", ") if inner else [], returns.split(", ") if returns else []
        )

    def __str__(self) -> str:
        returns = self.returns[0] if len(self.returns) == 1 else f"({', '.join(self.returns)})"
        return f"{self.name}({', '.join(self.args)}) -> {returns}"

    @property
    def star(self) -> int:
        return self.args.index("*") if "*" in self.args else len(self.args)

    def out_start(self) -> int:
        for i, a in enumerate(self.args):
            if i > self.star and "!" in a:
                return i
        return len(self.args)

    def non_out(self) -> list[int]:
        """Indices of the arguments that are neither '*' nor out arguments."""
        return [i for i in range(self.out_start()) if self.args[i] != "*"]


def _type(arg: str) -> str:
    return arg.partition("=")[0].rpartition(" ")[0]


def _name(arg: str) -> str:
    return arg.partition("=")[0].rpartition(" ")[2]


def _default(arg: str) -> str | None:
    return arg.partition("=")[2] or None


def _with(
    arg: str, *, type: str | None = None, name: str | None = None, default: object = ...
) -> str:
    text = f"{type or _type(arg)} {name or _name(arg)}"
    value = _default(arg) if default is ... else default
    return text if value is None else f"{text}={value}"


# -- mutations: each returns the mutated schema, or None where it does not apply ----------

Mutation = Callable[[Sig, random.Random], Sig | None]


def _pick(sig: Sig, rng: random.Random, ok: Callable[[str], bool]) -> int | None:
    choices = [i for i in sig.non_out() if ok(sig.args[i]) and _name(sig.args[i]) != "self"]
    return rng.choice(choices) if choices else None


def _replace(sig: Sig, i: int, arg: str | None) -> Sig:
    args = [*sig.args]
    if arg is None:
        del args[i]
    else:
        args[i] = arg
    if args and args[-1] == "*":
        args.pop()
    return Sig(sig.name, args, [*sig.returns])


def _insert(sig: Sig, i: int, arg: str) -> Sig:
    return Sig(sig.name, [*sig.args[:i], arg, *sig.args[i:]], [*sig.returns])


def rename_argument(sig: Sig, rng: random.Random) -> Sig | None:
    i = _pick(sig, rng, lambda a: True)
    return (
        None if i is None else _replace(sig, i, _with(sig.args[i], name=_name(sig.args[i]) + "_x"))
    )


def rename_out(sig: Sig, rng: random.Random) -> Sig | None:
    outs = range(sig.out_start(), len(sig.args))
    if not outs:
        return None
    i = rng.choice(list(outs))
    return _replace(sig, i, _with(sig.args[i], name=_name(sig.args[i]) + "_x"))


def remove_last(sig: Sig, rng: random.Random) -> Sig | None:
    indices = [i for i in sig.non_out() if _name(sig.args[i]) != "self"]
    return None if not indices else _replace(sig, indices[-1], None)


def remove_middle(sig: Sig, rng: random.Random) -> Sig | None:
    indices = [i for i in sig.non_out() if _name(sig.args[i]) != "self"]
    return None if len(indices) < 3 else _replace(sig, indices[len(indices) // 2], None)


def _add_at_positional_end(arg: str) -> Mutation:
    def mutate(sig: Sig, rng: random.Random) -> Sig | None:
        return _insert(sig, sig.star, arg)

    return mutate


def _add_at_kwarg_end(arg: str) -> Mutation:
    def mutate(sig: Sig, rng: random.Random) -> Sig | None:
        at = sig.out_start()
        if "*" not in sig.args:
            return Sig(sig.name, [*sig.args[:at], "*", arg, *sig.args[at:]], [*sig.returns])
        return _insert(sig, at, arg)

    return mutate


def insert_front(sig: Sig, rng: random.Random) -> Sig | None:
    return (
        None if not sig.args else _insert(sig, 1 if _name(sig.args[0]) == "self" else 0, "int zz=0")
    )


def swap_adjacent(sig: Sig, rng: random.Random) -> Sig | None:
    indices = [i for i in sig.non_out() if _name(sig.args[i]) != "self"]
    pairs = [(a, b) for a, b in itertools.pairwise(indices) if b == a + 1]
    if not pairs:
        return None
    a, b = rng.choice(pairs)
    args = [*sig.args]
    args[a], args[b] = args[b], args[a]
    return Sig(sig.name, args, [*sig.returns])


def make_keyword_only(sig: Sig, rng: random.Random) -> Sig | None:
    star = sig.star
    if star == 0 or _name(sig.args[star - 1]) == "self":
        return None
    args = [a for a in sig.args if a != "*"]
    return Sig(sig.name, [*args[: star - 1], "*", *args[star - 1 :]], [*sig.returns])


def make_positional(sig: Sig, rng: random.Random) -> Sig | None:
    star = sig.star
    if star + 1 >= sig.out_start():
        return None
    args = [*sig.args]
    args[star], args[star + 1] = args[star + 1], args[star]
    if star + 2 == len(args) or "!" in args[star + 2]:
        if star + 2 == len(args):
            args.pop()
        else:
            return None
    return Sig(sig.name, args, [*sig.returns])


def remove_default(sig: Sig, rng: random.Random) -> Sig | None:
    i = _pick(sig, rng, lambda a: _default(a) is not None)
    return None if i is None else _replace(sig, i, _with(sig.args[i], default=None))


_DEFAULTS = {
    "int": "0",
    "SymInt": "0",
    "float": "0.0",
    "bool": "False",
    "str": '"x"',
    "Scalar": "1",
}


def add_default(sig: Sig, rng: random.Random) -> Sig | None:
    def fits(a: str) -> bool:
        return _default(a) is None and (_type(a) in _DEFAULTS or _type(a).endswith("?"))

    i = _pick(sig, rng, fits)
    if i is None:
        return None
    t = _type(sig.args[i])
    return _replace(sig, i, _with(sig.args[i], default="None" if t.endswith("?") else _DEFAULTS[t]))


def change_default(sig: Sig, rng: random.Random) -> Sig | None:
    def new_value(a: str) -> str | None:
        value, t = _default(a), _type(a)
        if value in ("True", "False"):
            return "False" if value == "True" else "True"
        if value is not None and re.fullmatch(r"-?\d+", value):
            return str(int(value) + 1)
        if value is not None and re.fullmatch(r"-?[\d.e-]+", value):
            return repr(float(value) * 2 + 1)
        if value == "None" and t in ("int?", "SymInt?", "float?", "bool?"):
            return "0" if t != "bool?" else "False"
        return None

    i = _pick(sig, rng, lambda a: new_value(a) is not None)
    return (
        None if i is None else _replace(sig, i, _with(sig.args[i], default=new_value(sig.args[i])))
    )


def respell_default(sig: Sig, rng: random.Random) -> Sig | None:
    def respelled(a: str) -> str | None:
        value = _default(a)
        if value is None or not re.fullmatch(r"-?\d+(\.\d+)?", value):
            return None
        return f"{value}.0" if "." not in value else value + "0"

    i = _pick(sig, rng, lambda a: respelled(a) is not None)
    return (
        None if i is None else _replace(sig, i, _with(sig.args[i], default=respelled(sig.args[i])))
    )


def _retype(old: str, new: str, *, drop_none: bool = False) -> Mutation:
    """The type of one argument written `old` (alias-free) becomes `new`."""

    def mutate(sig: Sig, rng: random.Random) -> Sig | None:
        i = _pick(sig, rng, lambda a: _type(a) == old)
        if i is None:
            return None
        default = _default(sig.args[i])
        if drop_none and default == "None":
            default = None
        return _replace(sig, i, _with(sig.args[i], type=new, default=default))

    return mutate


def rename_alias(sig: Sig, rng: random.Random) -> Sig | None:
    text = str(sig)
    if "Tensor(a" not in text:
        return None
    return Sig.of(text.replace("Tensor(a", "Tensor(z").replace("(a|", "(z|"))


def drop_view_alias(sig: Sig, rng: random.Random) -> Sig | None:
    text = str(sig)
    if "Tensor(a)" not in text or "!" in text:
        return None
    return Sig.of(text.replace("Tensor(a)", "Tensor"))


def make_mutable(sig: Sig, rng: random.Random) -> Sig | None:
    i = _pick(sig, rng, lambda a: _type(a) == "Tensor")
    return (
        None
        if i is None or "!" in str(sig)
        else _replace(sig, i, _with(sig.args[i], type="Tensor(q!)"))
    )


def _return(change: Callable[[list[str]], list[str] | None]) -> Mutation:
    def mutate(sig: Sig, rng: random.Random) -> Sig | None:
        returns = change([*sig.returns])
        return None if returns is None else Sig(sig.name, [*sig.args], returns)

    return mutate


def _rename_return(returns: list[str]) -> list[str] | None:
    if len(returns) != 1 or "!" in returns[0]:
        return None
    kind, _, name = returns[0].partition(" ")
    return [f"{kind} {name or 'result'}_x"]


def add_out(sig: Sig, rng: random.Random) -> Sig | None:
    outs = sig.args[sig.out_start() :]
    if len(outs) != 1 or _type(outs[0]) != "Tensor(a!)" or sig.returns != ["Tensor(a!)"]:
        return None
    return Sig(sig.name, [*sig.args, "Tensor(y!) out_y"], ["Tensor(a!)", "Tensor(y!)"])


def reorder_kwargs(sig: Sig, rng: random.Random) -> Sig | None:
    kwargs = [i for i in range(sig.star + 1, sig.out_start())]
    if len(kwargs) < 2:
        return None
    a = rng.choice(kwargs[:-1])
    args = [*sig.args]
    args[a], args[a + 1] = args[a + 1], args[a]
    return Sig(sig.name, args, [*sig.returns])


def _combo(*mutations: Mutation) -> Mutation:
    def mutate(sig: Sig, rng: random.Random) -> Sig | None:
        for m in mutations:
            changed = m(sig, rng)
            if changed is None:
                return None
            sig = changed
        return sig

    return mutate


# The kinds that apply to few operators first, so that the general ones do not use them up.
MUTATIONS: dict[str, Mutation] = {
    "respell-default": respell_default,
    "symint-to-int": _retype("SymInt[]", "int[]"),
    "optional-to-int": _retype("int?", "int", drop_none=True),
    "optional-to-tensor": _retype("Tensor?", "Tensor", drop_none=True),
    "float-to-scalar": _retype("float", "Scalar"),
    "bool-to-int": _retype("bool", "int"),
    "list-size": _retype("int[1]", "int[2]"),
    "unsized-list": _retype("int[2]", "int[]"),
    "scalartype-to-int": _retype("ScalarType?", "int?"),
    "symint-return": _return(lambda r: None if r != ["int"] else ["SymInt"]),
    "remove-return": _return(lambda r: None if len(r) < 2 or "!" in r[0] else r[:-1]),
    "drop-view-alias": drop_view_alias,
    "make-mutable": make_mutable,
    "add-out": add_out,
    "rename-out": rename_out,
    "rename-alias": rename_alias,
    "make-positional": make_positional,
    "reorder-kwargs": reorder_kwargs,
    "int-to-symint": _retype("int", "SymInt"),
    "int-to-optional": _retype("int", "int?"),
    "int-to-float": _retype("int", "float"),
    "scalar-to-float": _retype("Scalar", "float"),
    "widen-and-default": _combo(_retype("int", "int?"), add_default),
    "remove-default": remove_default,
    "change-default": change_default,
    "add-default": add_default,
    "optional-return": _return(lambda r: None if r != ["Tensor"] else ["Tensor?"]),
    "list-return": _return(lambda r: None if r != ["Tensor"] else ["Tensor[]"]),
    "add-return": _return(lambda r: None if r != ["Tensor"] else ["Tensor", "Tensor"]),
    "rename-return": _return(_rename_return),
    "tensor-to-optional": _retype("Tensor", "Tensor?"),
    "tensor-to-list": _retype("Tensor", "Tensor[]"),
    "remove-middle-argument": remove_middle,
    "swap-adjacent": swap_adjacent,
    "make-keyword-only": make_keyword_only,
    "rename-argument": rename_argument,
    "remove-last-argument": remove_last,
    "add-positional-with-default": _add_at_positional_end("int added=1"),
    "add-kwarg-with-default": _add_at_kwarg_end("int added=1"),
    "add-required": _add_at_positional_end("int added"),
    "add-required-kwarg": _add_at_kwarg_end("int added"),
    "add-list-default": _add_at_positional_end("int[] added=[]"),
    "add-fixed-list-default": _add_at_kwarg_end("int[2] added=1"),
    "add-optional-none": _add_at_kwarg_end("Tensor? added=None"),
    "add-str-default": _add_at_positional_end('str added="x"'),
    "add-float-default": _add_at_kwarg_end("float added=0.5"),
    "insert-front": insert_front,
    "rename-and-add": _combo(rename_argument, _add_at_kwarg_end("int added=1")),
    "remove-and-add": _combo(remove_last, _add_at_positional_end("int added=1")),
}


# -- the mutated spec -----------------------------------------------------------------------

FUNC = re.compile(r"- func: (.*)$")


@dataclass
class Mutated:
    text: str
    kinds: dict[int, str]  # line of each mutated entry to its mutation kind
    renamed: set[str]  # operators renamed away (removed from the old spec's view)


def mutate_spec(text: str, valid: Callable[[str], bool]) -> Mutated:
    """Each mutation kind, in turn, on up to PER_KIND operators it applies to, each operator
    changed once; then a few operators renamed (removed, and added under another name)."""
    lines = text.split("\n")
    funcs = {i: m.group(1) for i, line in enumerate(lines) if (m := FUNC.match(line))}
    rng = random.Random(SEED)
    free = sorted(funcs)
    kinds: dict[int, str] = {}
    for kind, mutation in MUTATIONS.items():
        rng.shuffle(free)
        done = 0
        for i in free:
            if i in kinds or done >= PER_KIND:
                continue
            changed = mutation(Sig.of(funcs[i]), rng)
            if changed is not None and str(changed) != funcs[i] and valid(str(changed)):
                lines[i] = f"- func: {changed}"
                kinds[i] = kind
                done += 1
    renamed = set()
    for i in [i for i in sorted(funcs) if i not in kinds][::29]:
        name = funcs[i].partition("(")[0]
        base, dot, overload = name.partition(".")
        lines[i] = f"- func: {base}_zz{dot}{overload}{funcs[i][len(name) :]}"
        kinds[i] = "rename-operator"
        renamed.add(name)
    return Mutated("\n".join(lines), kinds, renamed)


def load_mutated(original: str, mutated: Mutated, path: Path, tags: str) -> Spec:
    """The mutated spec, loaded; mutations the loader rejects (a schema rule, say) are undone."""
    lines, before = mutated.text.split("\n"), original.split("\n")
    entry_of = _entry_lines(lines)
    for _ in range(50):
        path.write_text("\n".join(lines))
        try:
            return load_spec(str(path), tags, LoadOptions(for_comparison=True))
        except SpecError as error:
            for d in error.diagnostics:
                assert d.location is not None, d
                i = entry_of[d.location.line - 1]
                assert i in mutated.kinds, f"an unmutated entry fails: {d}"
                lines[i] = before[i]
                del mutated.kinds[i]
    raise AssertionError("the mutated spec does not load")


def _entry_lines(lines: Sequence[str]) -> list[int]:
    """For each line, the line of the `- func:` that starts its entry."""
    owner, current = [], 0
    for i, line in enumerate(lines):
        if line.startswith("- "):
            current = i
        owner.append(current)
    return owner
