"""Eager ops on spyre tensors: each compiled once per signature and run by the device model,
within the DL16 bound that reference/evaluate.py propagates (spyre_mlir.testing.criteria); an op
the device cannot take runs on the CPU with one warning, or raises in strict mode."""

import warnings

import pytest
import torch
import torch.nn.functional as F
from helpers import Fn

import spyre_mlir
from spyre_mlir.sim.numerics import DL16
from spyre_mlir.testing.criteria import assert_within_device_bound, reference
from spyre_mlir.torch_device import eager, on_device
from spyre_mlir.torch_device.eager import SpyreDeviceError


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


X, Y = randn(8, 64, seed=1), randn(8, 64, seed=2)
POS = X.abs() + 0.5
W = randn(32, 64, seed=3)
B3, C3 = randn(2, 8, 64, seed=4), randn(2, 64, 16, seed=5)
IMG, KER, BIAS = randn(2, 3, 10, 12, seed=12), randn(4, 3, 3, 3, seed=13), randn(4, seed=14)

OPS = {
    "add": (torch.add, X, Y),
    "sub": (torch.sub, X, Y),
    "mul": (torch.mul, X, Y),
    "div": (torch.div, X, POS),
    "neg": (torch.neg, X),
    "abs": (torch.abs, X),
    "relu": (torch.relu, X),
    "exp": (torch.exp, X),
    "log": (torch.log, POS),
    "tanh": (torch.tanh, X),
    "sigmoid": (torch.sigmoid, X),
    "sin": (torch.sin, X),
    "cos": (torch.cos, X),
    "erf": (torch.erf, X),
    "gelu": (F.gelu, X),
    "gelu_tanh": (lambda a: F.gelu(a, approximate="tanh"), X),
    "silu": (F.silu, X),
    "sqrt": (torch.sqrt, POS),
    "rsqrt": (torch.rsqrt, POS),
    "reciprocal": (torch.reciprocal, POS),
    "square": (torch.square, X),
    "maximum": (torch.maximum, X, Y),
    "minimum": (torch.minimum, X, Y),
    "clamp": (lambda a: a.clamp(-0.5, 0.5), X),
    "where": (torch.where, X > 0, X, Y),
    "scalar_add": (lambda a: a + 1.5, X),
    "scalar_rsub": (lambda a: 1 - a, X),
    "softmax": (lambda a: a.softmax(-1), X),
    "layer_norm": (lambda a: F.layer_norm(a, (64,)), X),
    "rms_norm": (lambda a: a * torch.rsqrt(a.pow(2).mean(-1, keepdim=True) + 1e-6), X),
    "sum": (lambda a: a.sum(-1), X),
    "amax": (lambda a: a.amax(-1), X),
    "mm": (lambda a, b: a @ b.T, X, W),
    "linear": (F.linear, X, W),
    "bmm": (torch.bmm, B3, C3),
    "transpose_copy": (lambda a: a.t().contiguous(), X),
    "cat": (lambda a, b: torch.cat([a, b], 0), X, Y),
    "attention": (lambda q, k: torch.softmax(q @ k.transpose(-1, -2) * 0.125, -1) @ k, B3, B3 * 0.5),
    # PyTorch sends a convolution on another device to convolution_overrideable (kernels.py)
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, padding=1, stride=(1, 2)), IMG, KER, BIAS),
    "conv1d": (lambda x, w: F.conv1d(x, w, groups=3), IMG[:, :, 0], KER[:3, :1, 0]),
    # reductions along any dims: the dim moved to the stick dim and back
    "sum_dims": (lambda a: a.sum((0, 2)), B3),
    "mean_all": (lambda a: a.mean(), X),
    "amax_dim0": (lambda a: a.amax(0), X),
    "softmax_dim0": (lambda a: a.softmax(0), X),
    "log_softmax": (lambda a: a.log_softmax(-1), X),
    "log_softmax_dim1": (lambda a: a.log_softmax(1), B3),
    "var": (lambda a: a.var(-1), X),
    "var_mean_dim0": (lambda a: torch.var_mean(a, 0, correction=0)[0], X),
    "vector_norm": (lambda a: torch.linalg.vector_norm(a, dim=-1), X),
    "vector_norm_3": (lambda a: torch.linalg.vector_norm(a, 3.0), X),
    "addmv": (lambda m, v, b: torch.addmv(b, m, v, beta=0.5, alpha=2.0), W, X[0], X[1, :32]),
    "layer_norm_2d": (lambda a: F.layer_norm(a, (8, 64)), B3),
    "flip": (lambda a: a.flip((0, 1)), X),
    # avg pooling: a convolution with a window of ones (frontend/decompositions.py)
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 3, 2, 1), IMG),
    "adaptive_avg_pool2d": (lambda x: F.adaptive_avg_pool2d(x, (5, 4)), IMG),
    "addbmm": (lambda s, a, b: torch.addbmm(s, a, b, beta=0.5), B3[0, :, :16], B3, C3),
    "batch_norm_training": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), IMG, BIAS[:3], BIAS[1:]),
    "prod": (lambda a: a[:, :8].prod(-1), X),
    "cumprod": (lambda a: a[:5].cumprod(0), X),
    "cumsum": (lambda a: a[:8].cumsum(0), X),
    "cdist": (lambda a, b: torch.cdist(a, b), X, Y[:5]),
    "cdist_p3": (lambda a, b: torch.cdist(a, b, p=3.0), X, Y[:5]),
    "cumsum_last": (lambda a: a[:, :12].cumsum(-1), X),
}
MASKED = {
    # gather: slices chosen by masks the host makes from the index (the gathered dim moved first
    # when it is the last): the index goes to the host and the masks come back, by design
    "gather": (lambda a, i: a[:6].gather(0, i), X, (torch.arange(5 * 64).view(5, 64) * 7 % 6)),
    "gather_last": (lambda a, i: a[:, :10].gather(1, i), X, torch.arange(8 * 4).view(8, 4) * 3 % 10),
    "cross_entropy": (lambda a, t: F.cross_entropy(a[:, :10], t), X, torch.arange(8) * 3 % 10),
    "nll_loss_weighted": (lambda a, t, w: F.nll_loss(a[:, :6], t, w), X, torch.arange(8) % 6, X[2, :6].abs()),
}
QUICK = {"add", "exp", "softmax", "mm", "layer_norm", "scalar_rsub", "conv2d", "sum_dims", "log_softmax", "var"}


@pytest.mark.parametrize("name", [n if n in QUICK else pytest.param(n, marks=pytest.mark.slow) for n in OPS])
def test_eager_op_runs_on_the_device_within_the_dl16_bound(name):
    fn, *inputs = OPS[name]
    (exact,), (bound,) = reference(Fn(fn), *inputs, numerics=DL16)
    operands = [x.to("spyre") for x in inputs]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a CPU fallback warns: that fails here
        fn(*operands)  # compiles (and uploads the constants a graph keeps resident)
        with spyre_mlir.profile() as prof:
            y = fn(*operands)
    assert y.device.type == "spyre"
    assert prof.kernels and prof.transfers_bytes == 0, f"no kernel on the device, or a host round trip: {prof}"
    assert_within_device_bound(y.cpu(), exact, bound, DL16)


@pytest.mark.parametrize("name", MASKED)
def test_eager_op_with_host_masks_runs_on_the_device_within_the_dl16_bound(name):
    fn, *inputs = MASKED[name]
    (exact,), (bound,) = reference(Fn(fn), *inputs, numerics=DL16)
    operands = [x.to("spyre") for x in inputs]
    with warnings.catch_warnings(), eager.placements() as placed:
        warnings.simplefilter("error")  # a CPU fallback warns: that fails here
        with spyre_mlir.profile() as prof:
            y = fn(*operands)
    assert "device" in {p.where for p in placed} and "cpu" not in {p.where for p in placed}
    assert prof.kernels and prof.host_round_trips == 0
    assert set(prof.transfer_bytes_by_kind) <= {"index", "intermediate"}  # the index out, the masks in
    assert_within_device_bound(y.cpu(), exact, bound, DL16)


def test_batch_norm_with_update_runs_on_the_device_and_updates_its_statistics():
    """aten._batch_norm_with_update (what a BatchNorm module in training calls on some paths):
    by PyTorch's decomposition of its functional form, the running statistics written back."""
    mean, var, w, b = BIAS[:3], BIAS[1:].abs(), BIAS[1:] + 1.0, BIAS[:3] * 0.5
    norm = Fn(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True))
    (exact,), (bound,) = reference(norm, IMG, w, b, numerics=DL16)
    x, m, v = IMG.to("spyre"), mean.to("spyre"), var.to("spyre")
    with warnings.catch_warnings(), eager.placements() as placed:
        warnings.simplefilter("error")  # a CPU fallback warns: that fails here
        y = torch.ops.aten._batch_norm_with_update(x, w.to("spyre"), b.to("spyre"), m, v, 0.1, 1e-5)[0]
    assert [p.where for p in placed] == ["device"]
    assert_within_device_bound(y.cpu(), exact, bound, DL16)
    m_cpu, v_cpu = mean.clone(), var.clone()
    torch.ops.aten._batch_norm_with_update(IMG, w, b, m_cpu, v_cpu, 0.1, 1e-5)
    assert torch.allclose(m.cpu(), m_cpu, rtol=4 * DL16.unit_roundoff, atol=4 * DL16.unit_roundoff)
    assert not torch.equal(m.cpu(), mean)  # updated on the card (DL16 roundings: the input, the batch mean, the store)


def test_an_op_is_compiled_once_per_signature():
    a, b = randn(4, 128, seed=7).to("spyre"), randn(4, 128, seed=8).to("spyre")
    first = torch.tanh(a)
    compiles = on_device.STATS["compiles"]
    again = torch.tanh(b)
    assert on_device.STATS["compiles"] == compiles
    assert not torch.equal(first.cpu(), again.cpu())
    torch.tanh(randn(4, 192).to("spyre"))  # another shape: another signature
    assert on_device.STATS["compiles"] == compiles + 1


def test_in_place_ops_write_the_functional_result_into_their_operand():
    x = randn(8, 64, seed=9)
    t, u = x.to("spyre"), x.to("spyre")
    t.mul_(3.0).add_(1.0)
    expect = u * 3.0 + 1.0
    assert torch.equal(t.cpu(), expect.cpu())
    out = torch.empty(8, 64, device="spyre")
    torch.exp(u, out=out)
    assert torch.equal(out.cpu(), torch.exp(u).cpu())


def test_kernels_are_charged_to_the_stream():
    a = randn(64, 256).to("spyre")
    before = torch.spyre.clock()
    torch.spyre.synchronize()
    _ = a @ a.T
    assert torch.spyre.clock() > before


def test_an_op_the_device_cannot_take_warns_once_and_is_right():
    x = randn(8, 64, seed=11)
    t = x.to("spyre")
    on_cpu = torch.from_numpy(DL16.round(torch.lgamma(torch.from_numpy(DL16.round(x.numpy()))).numpy()))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = torch.lgamma(t)
        second = torch.lgamma(t)
    mine = [w for w in caught if "lgamma" in str(w.message)]
    assert len(mine) == 1 and "runs on the CPU" in str(mine[0].message)
    assert torch.equal(first.cpu(), on_cpu) and torch.equal(second.cpu(), on_cpu)
    assert first.device.type == "spyre"


def test_an_integer_operand_of_a_float_op_goes_to_the_device_as_floats():
    x, n = randn(8, 64, seed=17), torch.arange(64) % 7 + 1
    with warnings.catch_warnings(), eager.placements() as placed:
        warnings.simplefilter("error")
        y = x.to("spyre") / n.to("spyre")
    assert [p.where for p in placed] == ["device"]
    exact = torch.from_numpy(DL16.round(x.numpy())).double() / n  # n's values exact in DL16
    assert torch.all((y.cpu().double() - exact).abs() <= DL16.unit_roundoff * exact.abs())


def test_placements_record_where_each_op_ran():
    t = randn(8, 64, seed=15).to("spyre")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with eager.placements() as placed:
            torch.exp(t)
            t.t()
            torch.sort(t)
            torch.arange(4).to("spyre") + 1
    # exp and add reach the fallback in their out= form (PyTorch's structured kernels); t() is a
    # view kernel of the C++ runtime
    assert [(p.op, p.where) for p in placed] == [
        ("aten.exp.out", "device"),
        ("aten.sort.values_stable", "cpu"),
        ("aten.add.out", "host"),
    ]
    assert "the host's by nature" in placed[1].reason


def test_an_op_on_empty_tensors_makes_empty_results_without_work():
    e = torch.empty(0, 64).to("spyre")
    runs = on_device.STATS["device_runs"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no CPU fallback
        with eager.placements() as placed:
            y = torch.exp(e) + 1.0
            total = e.sum(0)  # 64 zeros: made from the shapes alone, no value of the card read
    assert y.device.type == "spyre" and y.shape == (0, 64)
    assert on_device.STATS["device_runs"] == runs  # no kernel ran
    assert torch.equal(total.cpu(), torch.zeros(64)) and total.device.type == "spyre"
    assert [p.where for p in placed] == ["device", "device", "host"]


def test_constants_made_from_numbers_are_made_on_the_host_by_design():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with eager.placements() as placed:
            r = torch.arange(0.0, 3.0, 0.5, device="spyre")
            grid = torch.linspace(-1, 1, 7, device="spyre")
    assert [p.where for p in placed] == ["host", "host"]
    assert torch.equal(r.cpu(), torch.arange(0.0, 3.0, 0.5))
    assert torch.equal(grid.cpu(), torch.from_numpy(DL16.round(torch.linspace(-1, 1, 7).numpy())))


def test_batch_norm_in_training_updates_the_running_statistics():
    """native_batch_norm updates its running statistics in place, which its schema does not
    say: on the card they are updated as on the CPU (by the device: the op is taken as
    `_native_batch_norm_legit`, whose `_functional` form returns them)."""
    x = randn(4, 3, 5, seed=16)
    mean, var = torch.zeros(3), torch.ones(3)
    d_mean, d_var = mean.to("spyre"), var.to("spyre")
    with warnings.catch_warnings(), eager.placements() as placed:
        warnings.simplefilter("ignore")
        F.batch_norm(x.to("spyre"), d_mean, d_var, training=True, momentum=0.5)
    assert [p.where for p in placed] == ["device"]
    F.batch_norm(torch.from_numpy(DL16.round(x.numpy())), mean, var, training=True, momentum=0.5)
    assert torch.allclose(d_mean.cpu(), mean, rtol=4 * DL16.unit_roundoff, atol=1e-6)
    assert torch.allclose(d_var.cpu(), var, rtol=4 * DL16.unit_roundoff, atol=0)
    assert not torch.equal(d_mean.cpu(), torch.zeros(3))


def test_strict_mode_raises_naming_the_op():
    t = randn(8, 64).to("spyre")
    torch.spyre.set_strict(True)
    try:
        with pytest.raises(SpyreDeviceError, match=r"aten\.sort.*the host's by nature"):
            torch.sort(t)
        assert torch.relu(t).device.type == "spyre"  # what the device takes still runs
    finally:
        torch.spyre.set_strict(False)


def test_integer_ops_run_on_the_host_by_design_without_a_warning():
    i = torch.arange(10).to("spyre")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        j = (i * 2 + 1) % 7
        assert bool((i >= 0).all())
    assert torch.equal(j.cpu(), (torch.arange(10) * 2 + 1) % 7)


def test_a_cpu_operand_is_refused_as_pytorch_refuses_mixed_devices():
    with pytest.raises(RuntimeError, match=r"same device.*spyre:0 and cpu"):
        torch.add(randn(3, 64).to("spyre"), randn(3, 64))
    with pytest.raises(RuntimeError, match=r"same device.*argument 'mat2'"):
        torch.mm(randn(3, 64).to("spyre"), randn(64, 8))
    # a 0-d CPU tensor is a scalar: PyTorch takes it with tensors of any device
    assert torch.equal((randn(3, 64).to("spyre") * torch.tensor(2.0)).cpu(), (randn(3, 64).to("spyre") * 2.0).cpu())
