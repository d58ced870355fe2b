"""examples/aten_mlx on real models: PyTorch programs exported with torch.export, run and
differentiated on MLX, against eager torch.

The package is built once per test session (tests/examples/aten_mlx_build.py) into a
temporary directory or under OPGEN_EXAMPLE_BUILD_DIR (kept between test sessions), unless
OPGEN_ATEN_MLX_PACKAGE names a directory holding one already built. Each model
is built from a small `transformers` config (or torch.nn) with seeded random weights,
nothing downloaded, exported and decomposed to the Core ATen opset
(`run_decompositions()`), loaded with `aten_mlx.load`, and run on MLX's CPU backend:

- every output equals eager torch's at rtol = atol = 1e-4 (float32);
- gradients of a scalar loss with respect to the program's parameters, by `mx.grad` of
  the pure `MlxProgram.run`, equal torch autograd's (`GRAD_TOLERANCE`);
- the runtime's own duties: symbolic sizes (torch.export.Dim) run at several sizes and
  checked against their ranges, keyword inputs, buffers a training-mode program mutates,
  getitem, constants, size checks (`_assert_scalar`), and refusal at load naming every
  missing operator at once.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

mx = pytest.importorskip("mlx.core")
np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tests.examples.aten_mlx_build import build_package  # noqa: E402

ROOT = Path(__file__).parents[2]
DEMO = ROOT / "examples" / "aten_mlx" / "demo.py"
TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}
# Gradients in float32 sum over every position and layer; both sides accumulate in a
# different order, so the bound is relative to the largest gradient of each parameter.
GRAD_TOLERANCE = 1e-4


@pytest.fixture(scope="session")
def package_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    built = os.environ.get("OPGEN_ATEN_MLX_PACKAGE")
    if built:
        return Path(built)
    kept = os.environ.get("OPGEN_EXAMPLE_BUILD_DIR")
    work = Path(kept) / "aten_mlx" if kept else tmp_path_factory.mktemp("aten_mlx")
    return build_package(work)


@pytest.fixture(scope="session")
def aten_mlx(package_dir: Path) -> Iterator[ModuleType]:
    sys.path.insert(0, str(package_dir))
    default = mx.default_device()
    mx.set_default_device(mx.cpu)
    try:
        import aten_mlx

        yield aten_mlx
    finally:
        mx.set_default_device(default)
        sys.path.remove(str(package_dir))


# Models: each a function of nothing returning (module, args, kwargs), built after
# torch.manual_seed(0).
TOKENS = (2, 8)
IMAGE = (2, 3, 32, 32)


def _tokens() -> Any:
    return torch.randint(4, 100, TOKENS, generator=torch.Generator().manual_seed(1))


def _image() -> Any:
    return torch.randn(IMAGE, generator=torch.Generator().manual_seed(1))


def _decoder(model: Any, config: Any, **sizes: Any) -> Callable[[], tuple[Any, ...]]:
    base = {
        "vocab_size": 100,
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "max_position_embeddings": 64,
        **sizes,
    }
    return lambda: (model(config(**base)), (_tokens(),), {"use_cache": False})


T = transformers
ENCODER = {
    "vocab_size": 100,
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "intermediate_size": 64,
    "max_position_embeddings": 64,
}


class SmallCNN(torch.nn.Module):
    """Convolutions (one grouped), BatchNorm, max and average pooling, nearest and
    bilinear upsampling, adaptive pooling and a linear head."""

    def __init__(self) -> None:
        super().__init__()
        nn = torch.nn
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1, groups=2)
        self.bn2 = nn.BatchNorm2d(16)
        self.avg = nn.AvgPool2d(2)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.up2 = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.conv3 = nn.Conv2d(16, 4, 1)
        self.head = nn.Linear(4, 5)

    def forward(self, x: Any) -> Any:
        x = self.pool(torch.relu(self.bn1(self.conv1(x))))
        x = self.avg(torch.relu(self.bn2(self.conv2(x))))
        x = self.conv3(self.up2(self.up(x)))
        return self.head(torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1))


def _encoder(model: Any, config: Any, **sizes: Any) -> Callable[[], tuple[Any, ...]]:
    return lambda: (model(config(**sizes)), (_tokens(),), {})


def _vision(model: Any, config: Any, **sizes: Any) -> Callable[[], tuple[Any, ...]]:
    return lambda: (model(config(**sizes)), (_image(),), {})


GPT2 = {
    "n_embd": 32,
    "n_layer": 2,
    "n_head": 4,
    "vocab_size": 100,
    "bos_token_id": 0,
    "eos_token_id": 0,
}
DISTILBERT = {"dim": 32, "n_layers": 2, "n_heads": 4, "hidden_dim": 64, "vocab_size": 100}
VIT = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "image_size": 32}
CONVNEXT = {"hidden_sizes": [8, 16], "depths": [1, 1]}
RESNET = {"embedding_size": 8, "hidden_sizes": [8, 16], "depths": [1, 1], "layer_type": "basic"}

MODELS: dict[str, Callable[[], tuple[Any, ...]]] = {
    "llama": _decoder(T.LlamaForCausalLM, T.LlamaConfig, num_key_value_heads=2),
    "qwen2": _decoder(T.Qwen2ForCausalLM, T.Qwen2Config, num_key_value_heads=2),
    "mistral": _decoder(T.MistralForCausalLM, T.MistralConfig, num_key_value_heads=2),
    "phi": _decoder(T.PhiForCausalLM, T.PhiConfig),
    "gemma": _decoder(T.GemmaForCausalLM, T.GemmaConfig, num_key_value_heads=2, head_dim=8),
    # torch 2.13 cannot decompose GPT-2's SDPA attention (run_decompositions raises on a
    # view of its non-contiguous output): its eager attention is exported instead.
    "gpt2": lambda: (
        T.GPT2LMHeadModel(T.GPT2Config(**GPT2, attn_implementation="eager")),
        (_tokens(),),
        {"use_cache": False},
    ),
    "bert": _encoder(T.BertModel, T.BertConfig, **ENCODER),
    "roberta": _encoder(T.RobertaModel, T.RobertaConfig, **ENCODER),
    "distilbert": _encoder(T.DistilBertModel, T.DistilBertConfig, **DISTILBERT),
    "vit": _vision(T.ViTModel, T.ViTConfig, **VIT, intermediate_size=64, patch_size=8),
    "resnet": _vision(T.ResNetModel, T.ResNetConfig, **RESNET),
    "convnext": _vision(T.ConvNextModel, T.ConvNextConfig, num_stages=2, **CONVNEXT),
    # Its activations vanish through 17 blocks at the default initializer_range (0.02).
    "mobilenetv2": _vision(
        T.MobileNetV2Model, T.MobileNetV2Config, depth_multiplier=0.35, initializer_range=0.1
    ),
    "cnn": lambda: (SmallCNN(), (_image(),), {}),
}


def build(name: str) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    torch.manual_seed(0)
    model, args, kwargs = MODELS[name]()
    _randomize_batch_norm(model)
    return model.eval(), args, kwargs


def _randomize_batch_norm(model: Any) -> None:
    """BatchNorm's statistics and affine parameters away from their initial 0 and 1, for
    the normalisation to be seen."""
    generator = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
                module.running_mean.normal_(0, 0.1, generator=generator)
                module.running_var.uniform_(0.5, 1.5, generator=generator)
                module.weight.uniform_(0.5, 1.5, generator=generator)
                module.bias.normal_(0, 0.1, generator=generator)


def export(model: Any, args: Any, kwargs: Any, **options: Any) -> Any:
    return torch.export.export(model, args, kwargs, **options).run_decompositions()


@functools.cache
def exported(name: str) -> Any:
    """MODELS[name] exported once per test session: `build` makes the same model again (the
    same seed), for eager torch."""
    model, args, kwargs = build(name)
    return export(model, args, kwargs)


def leaves(output: Any) -> list[Any]:
    return [t for t in torch.utils._pytree.tree_leaves(output) if isinstance(t, torch.Tensor)]


def as_numpy(value: Any) -> Any:
    return np.array(value, copy=False) if isinstance(value, mx.array) else value.numpy()


def max_difference(got: Any, want: Any) -> float:
    return float(np.max(np.abs(as_numpy(got) - as_numpy(want)), initial=0.0))


def assert_same(got: Any, want: Any, **tolerance: float) -> None:
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(as_numpy(got), as_numpy(want), **(tolerance or TOLERANCE))


@pytest.mark.parametrize("name", list(MODELS))
def test_model_matches_eager_torch(aten_mlx: ModuleType, name: str) -> None:
    model, args, kwargs = build(name)
    program = aten_mlx.load(exported(name), decompose=False)
    with torch.no_grad():
        want = leaves(model(*args, **kwargs))
    got = program(*args, **kwargs)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == aten_mlx._runtime.dtype(w.dtype)
        assert_same(g, w)
    scale = max(float(w.abs().max()) for w in want)
    assert scale > 1e-2  # a comparison of values, not of zeros
    difference = max(map(max_difference, got, want))
    print(f"{name}: max abs difference {difference:.3g} (largest output {scale:.3g})")


def _assert_gradients(got: dict[str, Any], model: Any) -> float:
    """Each gradient MLX computed against torch's, relative to the largest entry of
    torch's; the largest relative difference."""
    worst = 0.0
    for name, parameter in model.named_parameters():
        if name in got and parameter.grad is None:  # a parameter the loss does not read
            assert not np.any(as_numpy(got[name])), name
        elif name in got:
            want = parameter.grad
            scale = max(float(want.abs().max()), 1e-6)
            difference = max_difference(got[name], want) / scale
            assert difference <= GRAD_TOLERANCE, (name, difference)
            worst = max(worst, difference)
    return worst


def test_llama_gradients_match_autograd(aten_mlx: ModuleType) -> None:
    model, (tokens,), kwargs = build("llama")
    program = aten_mlx.load(exported("llama"))
    labels = torch.roll(tokens, -1, dims=1)

    def loss(parameters: dict[str, Any]) -> Any:
        logits = program.run(parameters, tokens)[0]
        picked = mx.take_along_axis(logits, mx.array(labels.numpy())[..., None], axis=-1)
        return mx.mean(mx.logsumexp(logits, axis=-1) - picked[..., 0])

    value, grads = mx.value_and_grad(loss)(program.parameters)
    logits = model(tokens, **kwargs).logits
    want = torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten())
    want.backward()
    assert abs(value.item() - want.item()) <= 1e-5
    assert set(grads) == set(program.parameters)
    print(f"llama: loss {value.item():.6f}, worst gradient {_assert_gradients(grads, model):.3g}")


def test_run_compiles(aten_mlx: ModuleType) -> None:
    """`run` is a pure function of arrays: mx.compile traces it once into one graph."""
    program = aten_mlx.load(exported("llama"))
    tokens = mx.array(_tokens().numpy())
    compiled = mx.compile(lambda parameters, t: program.run(parameters, t))
    assert_same(compiled(program.parameters, tokens)[0], program(tokens)[0], rtol=0, atol=1e-6)


@pytest.mark.parametrize(
    "name",
    [
        "cnn",
        "resnet",
        "convnext",
        "mobilenetv2",
        "gpt2",
        "bert",
        "vit",
    ],
)
def test_gradients_match_autograd(aten_mlx: ModuleType, name: str) -> None:
    """A loss that weighs every element of the first output differently (a fixed random
    projection), for gradients of a useful size in every parameter."""
    model, args, kwargs = build(name)
    program = aten_mlx.load(exported(name))
    want = leaves(model(*args, **kwargs))[0]
    weights = torch.randn(want.shape, generator=torch.Generator().manual_seed(2))
    projection = mx.array(weights.numpy())

    def loss(parameters: dict[str, Any]) -> Any:
        return mx.mean(program.run(parameters, *args, **kwargs)[0] * projection)

    value, grads = mx.value_and_grad(loss)(program.parameters)
    expected = (want * weights).mean()
    expected.backward()
    assert abs(value.item() - expected.item()) <= 1e-5
    # Tied weights (GPT-2's lm_head and wte) are one parameter, as in named_parameters().
    assert set(grads) == {n for n, _ in model.named_parameters()}
    print(f"{name}: loss {value.item():.6f}, worst gradient {_assert_gradients(grads, model):.3g}")


def test_some_parameters_differentiated(aten_mlx: ModuleType) -> None:
    """`run` takes some of the parameters: the others are the program's own."""
    model, (image,), _ = build("cnn")
    program = aten_mlx.load(exported("cnn"))
    head = {k: v for k, v in program.parameters.items() if k.startswith("head.")}
    grads = mx.grad(lambda p: mx.sum(program.run(p, image)[0]))(head)
    assert set(grads) == set(head)
    model(image).sum().backward()
    _assert_gradients(grads, model)


def test_symbolic_sizes_run_at_several_sizes(aten_mlx: ModuleType) -> None:
    model, (tokens,), _ = build("llama")
    batch, seq = torch.export.Dim("batch", max=8), torch.export.Dim("seq", min=2, max=32)
    mask = torch.ones(TOKENS, dtype=torch.long)
    program = aten_mlx.load(
        export(
            model,
            (tokens,),
            {"attention_mask": mask, "use_cache": False},
            dynamic_shapes={
                "input_ids": {0: batch, 1: seq},
                "attention_mask": {0: batch, 1: seq},
                "use_cache": None,
            },
        )
    )
    for size in [(2, 8), (1, 5), (3, 17)]:
        tokens = torch.randint(4, 100, size)
        mask = torch.ones(size, dtype=torch.long)
        mask[0, :2] = 0  # left padding
        with torch.no_grad():
            want = model(tokens, attention_mask=mask, use_cache=False).logits
        assert_same(program(tokens, attention_mask=mask, use_cache=False)[0], want)
    with pytest.raises(ValueError, match=r"input_ids must be int64 of shape \(s\d+, s\d+\) with"):
        program(torch.randint(4, 100, (2, 33)), torch.ones(2, 33, dtype=torch.long))
    with pytest.raises(ValueError, match="attention_mask must be int64"):
        program(torch.randint(4, 100, (2, 8)), torch.ones(2, 7, dtype=torch.long))


def test_inputs_are_checked_against_the_traced_ones(aten_mlx: ModuleType) -> None:
    program = aten_mlx.load(exported("llama"))
    tokens = mx.array(_tokens().numpy())
    with pytest.raises(ValueError, match=r"input_ids must be int64 of shape \(2, 8\), not int32"):
        program(tokens.astype(mx.int32))
    with pytest.raises(ValueError, match=r"of shape \(2, 8\), not int64 of shape \(2, 9\)"):
        program(mx.zeros((2, 9), dtype=mx.int64))
    assert_same(program(_tokens().numpy())[0], program(tokens)[0], rtol=0, atol=0)  # NumPy in


class Keywords(torch.nn.Module):
    def forward(self, x: Any, *, scale: Any, shift: Any = None, twice: bool = False) -> Any:
        y = x * scale + shift
        return (y * 2 if twice else y), y.sum()


def test_keyword_inputs(aten_mlx: ModuleType) -> None:
    x, scale, shift = torch.randn(3, 4), torch.randn(4), torch.randn(3, 4)
    program = aten_mlx.load(
        export(Keywords(), (x,), {"shift": shift, "scale": scale, "twice": True})
    )
    assert program.user_inputs == ("x", "shift", "scale")
    want = Keywords()(x, scale=scale, shift=shift, twice=True)
    for got in [
        program(x, scale=scale, shift=shift, twice=True),  # in any order
        program(x, shift=shift, scale=scale, twice=True),
        program(x, shift, scale),  # the program's inputs in order
    ]:
        assert len(got) == 2
        assert_same(got[0], want[0])
        assert_same(got[1], want[1])
    with pytest.raises(ValueError, match="exported with twice=True"):
        program(x, scale=scale, shift=shift, twice=False)
    with pytest.raises(TypeError, match=r"takes its 3 inputs \(x, shift, scale\)"):
        program(x, scale=scale)


def test_training_mode_updates_buffers(aten_mlx: ModuleType) -> None:
    """BatchNorm exported in training mode: normalised by the batch's statistics, its
    running statistics written back, as torch writes them, call after call."""
    model, (image,), _ = build("cnn")
    model.train()
    program = aten_mlx.load(export(model, (image,), {}))
    assert "bn1.running_mean" in program.buffers
    for step in range(2):
        batch = image + step
        with torch.no_grad():
            want = model(batch)
        assert_same(program(batch)[0], want)
        for name, buffer in model.named_buffers():
            assert_same(program.buffers[name], buffer)
    assert int(program.buffers["bn1.num_batches_tracked"].item()) == 2
    # `run` is pure: it leaves the buffers as they are.
    before = {k: np.array(v) for k, v in program.buffers.items()}
    program.run(program.parameters, image)
    assert all(np.array_equal(before[k], np.array(v)) for k, v in program.buffers.items())


class Graphy(torch.nn.Module):
    """What exported graphs hold besides arithmetic: operators with several outputs
    (getitem), a tensor constant, a buffer, dtype conversions, scalar tensors, aliases."""

    def __init__(self) -> None:
        super().__init__()
        self.table = torch.arange(12.0).reshape(3, 4)  # a plain attribute: a constant
        self.register_buffer("offset", torch.full((4,), 0.5))

    def forward(self, x: Any) -> Any:
        top, where = x.max(dim=1)
        halves = torch.split(x, 2, dim=1)
        y = (halves[0].sum() + halves[1].mean()).to(torch.float64)
        z = torch.where(x > 0, x, torch.tensor(0.25)) + self.table + self.offset
        return top, where, y, z[..., :2], x.shape[0] * 2


def test_graph_nodes_besides_arithmetic(aten_mlx: ModuleType) -> None:
    x = torch.randn(3, 4)
    program = aten_mlx.load(export(Graphy(), (x,), {}))
    assert program.constants and program.buffers
    want = Graphy()(x)
    got = program(x)
    assert len(got) == len(want)
    for g, w in zip(got[:-1], want[:-1], strict=True):
        assert g.dtype == aten_mlx._runtime.dtype(w.dtype)
        assert_same(g, w)
    assert got[-1] == 6


class Checked(torch.nn.Module):
    def forward(self, x: Any, n: Any) -> Any:
        count = n.sum().item()
        torch._check(count >= 2)
        return x * count


def test_size_checks_run(aten_mlx: ModuleType) -> None:
    """`_assert_scalar` on a number read from a tensor runs."""
    x = torch.randn(3)
    program = aten_mlx.load(export(Checked(), (x, torch.tensor([1, 2])), {}))
    assert_same(program(x, torch.tensor([2, 3]))[0], x * 5)
    # torch raises RuntimeError; a lowering's refusal is a ValueError.
    with pytest.raises((RuntimeError, ValueError), match="Runtime assertion failed"):
        program(x, torch.tensor([0, 1]))


class Branchy(torch.nn.Module):
    def forward(self, x: Any) -> Any:
        y = x @ x.T + 1
        return torch.cond(y.sum() > 0, lambda v: v.sin(), lambda v: v.cos(), (y,))


def test_refuses_at_load_naming_every_missing_operator(
    aten_mlx: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = export(Branchy(), (torch.randn(3, 3),), {})
    for name in ["aten::mm", "aten::add.Tensor"]:
        monkeypatch.delitem(aten_mlx.OPERATORS, name)
    with pytest.raises(NotImplementedError) as refused:
        aten_mlx.load(program)
    message = str(refused.value)
    assert message.startswith("the program cannot run on MLX: it calls 3 operators"), message
    for name in ["aten::add.Tensor (1)", "aten::mm (1)", "torch.ops.higher_order.cond (1)"]:
        assert name in message
    assert "graph nodes of kind get_attr (2)" in message


def test_program_is_one_call_per_node(aten_mlx: ModuleType) -> None:
    """The runtime adds nothing per node: the function the graph becomes holds, after the
    inputs' checks and state, one line per graph node calling its function."""
    program = aten_mlx.load(exported("llama"), decompose=False)
    calls = [n for n in exported("llama").graph.nodes if n.op == "call_function"]
    body = [line for line in program.source.splitlines() if line.startswith("    v")]
    assert len(body) == len(calls)
    assert all(re.fullmatch(r"    v\d+ = _f\d+\(.*\)", line) for line in body), body


def test_demo_runs(package_dir: Path) -> None:
    assert len(DEMO.read_text().splitlines()) < 40
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(package_dir), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, str(DEMO)], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "max abs difference" in done.stdout, done.stdout
