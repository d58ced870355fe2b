"""aten_mlx against hand-written MLX: a whole Llama, and single operator calls.

**A whole model.** A Llama built from a small `transformers` config with random weights is
exported with torch.export, decomposed (run_decompositions) and loaded with
`aten_mlx.load`; the same weights go into mlx-lm's hand-written Llama
(`mlx_lm.models.llama`). Both run a forward pass of a prompt on MLX's CPU backend,
evaluated with `mx.eval`, in alternating rounds in one process after a warm-up; the
figure is the median of each side's times and their ratio (target: at most 1.2x mlx-lm).
Eager torch on the CPU is timed beside them. The outputs are compared first.

**Per call.** Each generated function called directly against the plain `mlx.core` call it
lowers to (the same arrays, no evaluation: what is timed is the call and the graph node it
builds), for add, mul by a scalar, sum over a dim, addmm and convolution; each side's
arguments are made once, as a loaded program holds its constants; medians of
alternating batches (target: at most 1.1x).

    python benchmarks/bench_aten_mlx.py [--package-dir DIR] [--rounds N] [--prompts 16,64]

`--package-dir`: a directory holding the built package (tests/examples/aten_mlx_build.py
builds one); default: the installed `aten_mlx`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

# A small Llama: MLX's CPU backend multiplies matrices much more slowly than torch does on
# this machine, so a small model keeps the comparison about the generated path.
LLAMA = {
    "vocab_size": 1024,
    "hidden_size": 128,
    "intermediate_size": 256,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 256,
    "rms_norm_eps": 1e-5,
    "rope_theta": 10000.0,
    "tie_word_embeddings": False,
}


def median_pair(a: Callable[[], Any], b: Callable[[], Any], rounds: int) -> tuple[float, float]:
    """Medians of `a`'s and `b`'s times over `rounds` alternating rounds."""
    times_a: list[float] = []
    times_b: list[float] = []
    for i in range(rounds):
        order = ((a, times_a), (b, times_b))
        for run, times in order if i % 2 == 0 else order[::-1]:
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
    return statistics.median(times_a), statistics.median(times_b)


def whole_model(aten_mlx: Any, prompts: list[int], rounds: int) -> list[str]:
    import mlx.core as mx
    import numpy as np
    import torch
    from mlx_lm.models import llama
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(**LLAMA)).eval()
    args = llama.ModelArgs(model_type="llama", **LLAMA)
    reference = llama.Model(args)
    weights = {k: mx.array(v.detach().numpy()) for k, v in model.state_dict().items()}
    reference.load_weights(list(reference.sanitize(weights).items()))
    mx.eval(reference.parameters())
    lines = []
    for length in prompts:
        ids = torch.randint(0, LLAMA["vocab_size"], (1, length))
        program = torch.export.export(model, (ids,), kwargs={"use_cache": False})
        loaded = aten_mlx.load(program.run_decompositions())
        tokens = mx.array(ids.numpy())

        def ours(loaded: Any = loaded, ids: Any = ids) -> None:
            mx.eval(loaded(ids)[0])

        def theirs(tokens: Any = tokens) -> None:
            mx.eval(reference(tokens))

        with torch.no_grad():
            expected = model(ids, use_cache=False).logits.numpy()
        difference = max(
            float(np.abs(np.array(loaded(ids)[0]) - expected).max()),
            float(np.abs(np.array(reference(tokens)) - expected).max()),
        )
        for _ in range(3):
            ours()
            theirs()
        generated, hand_written = median_pair(ours, theirs, rounds)

        def eager(ids: Any = ids) -> None:
            with torch.no_grad():
                model(ids, use_cache=False)

        eager_time = statistics.median(_times(eager, rounds))
        lines.append(
            f"Llama forward, {length}-token prompt: aten_mlx {generated * 1e3:.2f} ms, "
            f"mlx-lm {hand_written * 1e3:.2f} ms, ratio {generated / hand_written:.3f}x; "
            f"eager torch {eager_time * 1e3:.2f} ms (max difference from torch {difference:.1e})"
        )
    return lines


def _times(run: Callable[[], Any], rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return times


def per_call(aten_mlx: Any, rounds: int, batch: int = 2000) -> list[str]:
    import mlx.core as mx

    ops = aten_mlx.OPERATORS
    x = mx.random.normal((64, 64))
    y = mx.random.normal((64, 64))
    image = mx.random.normal((1, 8, 16, 16))
    kernel = mx.random.normal((8, 8, 3, 3))
    image_nhwc = mx.transpose(image, (0, 2, 3, 1))
    kernel_ohwi = mx.transpose(kernel, (0, 2, 3, 1))
    mx.eval(x, y, image, kernel, image_nhwc, kernel_ohwi)
    add, mul = ops["aten::add.Tensor"], ops["aten::mul.Tensor"]
    total, addmm = ops["aten::sum.dim_IntList"], ops["aten::addmm"]
    dims, axis = [1], [1]
    cases: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
        ("add", lambda: add(x, y), lambda: mx.add(x, y)),
        ("mul by a scalar", lambda: mul(x, 2.0), lambda: mx.multiply(x, 2.0)),
        ("sum over a dim", lambda: total(x, dims), lambda: mx.sum(x, axis=axis)),
        ("addmm", lambda: addmm(x, x, y), lambda: mx.addmm(x, x, y)),
    ]
    convolution = ops.get("aten::convolution")
    if convolution is not None:

        def conv_plain() -> Any:
            nhwc = mx.transpose(image, (0, 2, 3, 1))
            ohwi = mx.transpose(kernel, (0, 2, 3, 1))
            out = mx.conv_general(nhwc, ohwi, stride=1, padding=1)
            return mx.transpose(out, (0, 3, 1, 2))

        ones, zeros = [1, 1], [0, 0]
        cases.append(
            (
                "convolution",
                lambda: convolution(image, kernel, None, ones, ones, ones, False, zeros, 1),
                conv_plain,
            )
        )
    lines = []
    for name, generated, plain in cases:

        def many(call: Callable[[], Any]) -> Callable[[], None]:
            def run() -> None:
                for _ in range(batch):
                    call()

            return run

        ours, theirs = median_pair(many(generated), many(plain), rounds)
        each, plain_each = ours / batch * 1e6, theirs / batch * 1e6
        lines.append(
            f"{name}: aten_mlx {each:.2f} us, mlx.core {plain_each:.2f} us, "
            f"ratio {ours / theirs:.3f}x"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--package-dir", help="the directory holding the built aten_mlx")
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--prompts", default="16,64")
    parser.add_argument("--only", choices=["model", "calls"])
    args = parser.parse_args()
    if args.package_dir:
        sys.path.insert(0, args.package_dir)
    import aten_mlx
    import mlx.core as mx

    mx.set_default_device(mx.cpu)
    if args.only != "model":
        print("\n".join(per_call(aten_mlx, args.rounds)))
    if args.only != "calls":
        prompts = [int(p) for p in args.prompts.split(",")]
        print("\n".join(whole_model(aten_mlx, prompts, args.rounds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
