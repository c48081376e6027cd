"""Mixture-of-experts layers on the device: the corpus's MoE models (transformers' grouped_mm
experts) match eager within the model criterion with no float op on the CPU, and the
decompositions their routing and dispatch go through (spyre_mlir/frontend/decompositions.py:
topk, grouped_mm_fallback, sum over leading dims) match PyTorch over odd shapes within the DL16
bound."""

from __future__ import annotations

import pytest
import torch
import transformers.integrations.moe  # noqa: F401  (registers torch.ops.transformers.grouped_mm_fallback)
from helpers import Fn, check
from helpers import seeded_randn as randn

from spyre_mlir.frontend.backend import STATS
from spyre_mlir.report.sweep import load_bench
from spyre_mlir.testing.criteria import U32, compare_model_outputs

ROUTING = ("torch.aten.topk", "torch.transformers.grouped_mm_fallback", "torch.aten.index.Tensor", "torch.aten.histc")


@pytest.mark.parametrize(
    "name",
    [pytest.param(m, marks=pytest.mark.slow) for m in ("mixtral", "qwen3-moe", "granitemoe")],
)
def test_moe_model_on_the_device(name):
    corpus = load_bench("corpus")  # in sys.modules (its dataclasses look their module up), the cache setting kept

    torch._dynamo.reset()
    model, inputs = corpus.build(name)
    before = len(STATS.graphs)
    with torch.no_grad():
        eager = model(*inputs)
        compiled = torch.compile(model, backend="spyre")(*inputs)
    reports = STATS.graphs[before:]
    assert reports, "no graph reached the spyre backend"
    for report in reports:
        assert not report.cpu_fallback, f"ran on the CPU: {dict(report.cpu_fallback)}"
        assert not any(op in report.host_by_design for op in ROUTING if op != "torch.aten.histc")
    cmp = compare_model_outputs(compiled, eager, corpus.LAYERS)
    assert cmp.passed, str(cmp)


@pytest.mark.parametrize(
    ("shape", "k", "dim", "largest"),
    [
        ((7, 1), 1, -1, True),
        ((5, 63), 3, -1, True),
        ((3, 65), 2, -1, False),
        ((100,), 5, 0, True),
        ((65, 3), 2, 0, True),
        ((2, 257, 4), 2, -1, True),
    ],
)
def test_topk_values_and_indices(shape, k, dim, largest):
    x = randn(*shape, seed=11)
    check(lambda v: torch.topk(v, k, dim, largest)[0], x)
    torch._dynamo.reset()
    with torch.no_grad():
        got = torch.compile(Fn(lambda v: torch.topk(v, k, dim, largest)[1]), backend="spyre")(x)
    assert torch.equal(got, torch.topk(x, k, dim, largest)[1])  # ranked on the host from exact inputs


def test_topk_along_a_long_dim_stays_one_op():
    x = randn(3, 300, seed=12)
    before = len(STATS.graphs)
    check(lambda v: torch.topk(v, 4)[0] * 2.0, x, device_only=False)
    assert STATS.graphs[before].cpu_fallback.get("torch.aten.topk") == 1


def _grouped_mm(a, w, offs):
    return torch.ops.transformers.grouped_mm_fallback(a, w, offs)


@pytest.mark.parametrize(
    ("rows", "k", "n", "offs"),
    [
        (65, 100, 63, [10, 10, 60]),  # an empty group; rows past the last offset are 0
        (1, 64, 65, [0, 1]),
        (46, 257, 128, [5, 20, 33, 46]),
    ],
)
def test_grouped_mm_dense(rows, k, n, offs):
    a = randn(rows, k, seed=13, scale=0.3)
    w = randn(len(offs), k, n, seed=14, scale=0.3)
    check(_grouped_mm, a, w, torch.tensor(offs, dtype=torch.int32))


def test_grouped_mm_of_many_experts_stays_one_op():
    """Beyond DENSE_EXPERTS_MAX experts the dense form would cost more than it saves: the grouped
    matmul stays one op, on the CPU, and right."""
    from spyre_mlir.frontend.decompositions import DENSE_EXPERTS_MAX

    experts = DENSE_EXPERTS_MAX + 1
    a, w = randn(23, 64, seed=17), randn(experts, 64, 64, seed=18, scale=0.2)
    offs = torch.tensor([2 * (e + 1) for e in range(experts - 1)] + [23], dtype=torch.int32)
    torch._dynamo.reset()
    before = len(STATS.graphs)
    with torch.no_grad():
        y = torch.compile(Fn(_grouped_mm), backend="spyre")(a, w, offs)
    assert STATS.graphs[before].cpu_fallback.get("torch.transformers.grouped_mm_fallback") == 1
    # PyTorch's own kernel on the host, in fp32: eager's answer up to the order of its sums
    # (docs/numerics.md: |r1 - r2| <= 2 gamma(K - 1) |a| @ |w|)
    want, k = _grouped_mm(a, w, offs), a.shape[1]
    gamma = (k - 1) * U32 / (1 - (k - 1) * U32)
    starts = [0, *offs.tolist()[:-1]]
    for e, (lo, hi) in enumerate(zip(starts, offs.tolist())):
        bound = 2 * gamma * (a[lo:hi].abs().double() @ w[e].abs().double())
        assert ((y[lo:hi].double() - want[lo:hi].double()).abs() <= bound).all(), e


def test_grouped_mm_of_transposed_weights():
    a = randn(23, 64, seed=15)
    w = randn(4, 256, 64, seed=16, scale=0.2)
    check(lambda x, v, o: _grouped_mm(x, v.transpose(1, 2), o), a, w, torch.tensor([3, 9, 9, 23], dtype=torch.int32))


def test_routing_weights_gathered_into_expert_order():
    """A reduction's result (one element per stick), flattened, gathered at host indices and
    broadcast over rows: the routing weights of transformers' grouped_mm experts."""
    idx = torch.randperm(46, generator=torch.Generator().manual_seed(18))
    check(
        lambda p, y, i: y * p.sum(-1).reshape(-1)[i].unsqueeze(-1),
        randn(23, 2, 4, seed=17),
        randn(46, 64, seed=19),
        idx,
    )


@pytest.mark.parametrize(
    ("shape", "dims", "keepdim"),
    [((23, 2, 64), (1,), True), ((3, 5, 65), (0, 1), False), ((4, 1, 7, 100), (0,), False)],
)
def test_sum_over_leading_dims(shape, dims, keepdim):
    check(lambda v: v.sum(dims, keepdim=keepdim), randn(*shape, seed=20))


def test_counts_of_integer_ids_are_host_work():
    ids = torch.tensor([3, 0, 0, 2, 3, 3], dtype=torch.int64)
    x = randn(6, 4, seed=21)
    before = len(STATS.graphs)
    check(lambda v, i: v * torch.histc(i.float(), bins=4, min=0, max=3), x, ids)
    assert STATS.graphs[before].host_by_design.get("torch.aten.histc") == 1
