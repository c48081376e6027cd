"""What a user runs, in the default configuration (the compile cache on, the default
DeviceConfig): graphs holding constant tensors, eager ops with Python scalars on the native
device, small transformers built from their configs, and functions that fork the RNG. Each is
compiled, then compiled again in a fresh Dynamo so that the second compile loads the entry the
first stored."""

from __future__ import annotations

import warnings

import pytest
import torch

from spyre_mlir.frontend.backend import STATS
from spyre_mlir.sim.numerics import DL16
from spyre_mlir.torch_device import on_device


def _twice(fn, *args):
    """fn compiled with the spyre backend and called, then again after Dynamo's reset: both
    results, and how many graphs the second call loaded from the compile cache."""
    outs = []
    loads = STATS.cache_loads
    for _ in range(2):
        torch._dynamo.reset()
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("error")  # a CPU fallback warns: none here
            outs.append(torch.compile(fn, backend="spyre")(*args))
    return outs, STATS.cache_loads - loads


def test_a_graph_holding_a_constant_tensor_compiles_and_loads():
    x = torch.randn(4, 64)
    (first, second), loads = _twice(lambda x: x * torch.tensor(2.5) + 1.0, x)
    want = x * 2.5 + 1.0
    # x rounded at the transfer, the product and the sum rounded once each at most
    bound = DL16.unit_roundoff * (2 * 2.5 * x.abs() + want.abs())
    assert torch.all((first - want).abs() <= bound)
    assert torch.equal(first, second)
    assert loads == 1
    assert STATS.graphs[-1].cpu_fallback == {}


def test_constants_of_other_values_are_other_entries():
    x = torch.randn(4, 64)
    loads = STATS.cache_loads
    a = torch.compile(lambda x: x * torch.tensor(3.25), backend="spyre")(x)
    torch._dynamo.reset()
    b = torch.compile(lambda x: x * torch.tensor(-0.5), backend="spyre")(x)
    assert STATS.cache_loads == loads  # the constant's bytes are in the key
    assert torch.allclose(a, x * 3.25, rtol=2 * DL16.unit_roundoff, atol=0)
    assert torch.allclose(b, x * -0.5, rtol=2 * DL16.unit_roundoff, atol=0)


def test_an_eager_op_with_a_python_scalar_runs_on_the_native_device():
    x = torch.randn(4, 64)
    runs = on_device.STATS["device_runs"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a CPU fallback warns
        y = x.to("spyre") * 1.1
    assert y.device.type == "spyre"
    assert on_device.STATS["device_runs"] == runs + 1
    want = DL16.round(x.numpy()) * 1.1
    assert torch.allclose(y.cpu(), torch.from_numpy(want), rtol=2 * DL16.unit_roundoff, atol=0)


@pytest.mark.parametrize("arch", ["llama", pytest.param("gpt2", marks=pytest.mark.slow)])
def test_two_layer_models_from_their_configs_compile_with_the_cache(arch: str):
    import transformers

    torch.manual_seed(0)
    if arch == "llama":
        config = transformers.LlamaConfig(
            num_hidden_layers=2,
            hidden_size=64,
            intermediate_size=128,
            num_attention_heads=4,
            num_key_value_heads=2,
            vocab_size=1000,
        )
    else:
        config = transformers.GPT2Config(
            n_layer=2, n_embd=64, n_head=4, vocab_size=1000, bos_token_id=0, eos_token_id=0
        )
    model = transformers.AutoModel.from_config(config).eval()
    ids = torch.randint(0, 1000, (1, 19))
    with torch.no_grad():
        eager = model(ids).last_hidden_state
    (first, second), loads = _twice(lambda ids: model(ids).last_hidden_state, ids)
    cos = torch.nn.functional.cosine_similarity(first.flatten(), eager.flatten(), dim=0)
    assert cos >= 0.999, cos
    assert torch.equal(first, second)
    assert loads >= 1
    assert all(not g.cpu_fallback for g in STATS.graphs[-loads:])


def test_a_function_that_forks_the_rng_compiles():
    """PyTorch's OpInfo samples of random-free ops still run under its `freeze_rng_state`, and
    `torch.random.fork_rng` reaches the accelerator's RNG functions: the native device's, once
    "spyre" is registered. Dynamo must not trace them."""
    q, k, v = (torch.randn(1, 2, 8, 64) for _ in range(3))

    def attend(q, k, v):
        with torch.random.fork_rng():
            return torch.nn.functional.scaled_dot_product_attention(q, k, v) + 0.0

    (got, _), _ = _twice(attend, q, k, v)
    want = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    assert torch.allclose(got, want, atol=0.01, rtol=0)
    assert STATS.graphs[-1].cpu_fallback == {}
