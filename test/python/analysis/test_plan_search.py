"""The matmul plan search (analysis/cost.py) skips a split whose lower bound exceeds the best
estimate so far: the bounds must never exceed an estimate of theirs, and the pruned search
must choose what trying every split, chain and chunking chooses."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spyre_mlir.analysis import cost
from spyre_mlir.target.config import DEFAULT_CONFIG
from spyre_mlir.testing.hypothesis import example_count

SHAPES = [
    cost.MatmulShape(1, 128, 768, 768),
    cost.MatmulShape(1, 128, 768, 3072),
    cost.MatmulShape(1, 128, 3072, 768),
    cost.MatmulShape(1, 128, 384, 1536),
    cost.MatmulShape(12, 128, 32, 128, True),
    cost.MatmulShape(1, 100, 200, 300),
    cost.MatmulShape(4, 77, 64, 77, True),
    cost.MatmulShape(1, 1, 4096, 64),
]


def _exhaustive(shape, config, budget, double_buffer, multicast, split_k):
    """plan_matmul without pruning: the least estimate over every (split, chain), the first in
    enumeration order among equals."""
    best = None
    for split, chain, _, estimate in cost.every_plan(shape, config, budget, double_buffer, multicast, split_k):
        if best is None or estimate.seconds < best[2].seconds:
            best = (split, chain, estimate)
    return best


@pytest.mark.parametrize("cores", [pytest.param(32, marks=pytest.mark.slow), 8])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_pruned_search_chooses_what_the_exhaustive_one_does(shape, cores):
    config = DEFAULT_CONFIG.replace(cores=cores)
    budget = config.planner_lx_bytes // 128
    for double_buffer, multicast, split_k in itertools.product((True, False), (True, False), (True, False)):
        assert cost.plan_matmul(shape, config, budget, double_buffer, multicast, None, split_k) == _exhaustive(
            shape, config, budget, double_buffer, multicast, split_k
        )


@settings(max_examples=example_count(60, 20), deadline=None)
@given(
    batch=st.integers(1, 4),
    m=st.integers(1, 600),
    k=st.integers(1, 2000),
    n=st.integers(1, 2000),
    cores=st.sampled_from([32, 8, 3]),
    double_buffer=st.booleans(),
    data=st.data(),
)
def test_a_split_bound_never_exceeds_an_estimate_of_the_split(batch, m, k, n, cores, double_buffer, data):
    shape = cost.MatmulShape(batch, m, k, n, batch > 1)
    config = DEFAULT_CONFIG.replace(cores=cores)
    split = data.draw(st.sampled_from(cost.candidate_splits(shape.dims, cores, split_k=True)))
    chain = data.draw(st.sampled_from(cost.multicast_chains(split.get("m", 1), True)))
    chunks = {
        d.name: 1 if d.name == "b" else data.draw(st.integers(1, 8), label=f"chunks {d.name}") for d in shape.dims
    }
    est = cost.matmul_estimate(shape, split, chunks, config, double_buffer, chain)
    assert cost._pt_bound(shape, split, config) <= est.seconds
    assert cost._ddr_bound(shape, split, config, allow_multicast=True) <= est.seconds * (1 + 1e-12)


def test_no_core_spans_more_than_the_limit_in_a_tensor():
    """An LM head's weight (4096 x 49159, 403 MB in DL16): a k split spans nearly all of it on
    each core (B's stick columns are its outer dim), over the 256 MB one core may address in one
    tensor; the plan keeps every core within the limit, and its time near the weight's DDR time."""
    config = DEFAULT_CONFIG
    shape = cost.MatmulShape(1, 1, 4096, 49159)
    weight = 4096 * 769 * 64 * 2
    assert cost.widest_span(shape, {"n": 1, "m": 1, "k": 2}, config) >= weight - 4096 * 128
    assert cost.widest_span(shape, {"n": 2, "m": 1, "k": 1}, config) >= weight // 2
    split, _, estimate = cost.plan_matmul(shape, config, config.planner_lx_bytes // 128, True, True, None, True)
    assert cost.widest_span(shape, split, config) <= config.per_core_span_bytes
    assert estimate.seconds < 1.1 * weight / config.ddr_bytes_per_s


def test_the_planning_passes_plan_for_the_corelets_the_device_drives():
    """A Granite-8B FFN product (1024 x 4096 x 12800) is PT-bound on one corelet per core, and
    its best plan there moves B twice (a B tile per m chunk); with both corelets driven the PT
    time halves and that plan is DDR-bound. The planning passes take `corelets_used` from the
    module's target: the kernel gets the split, chain and chunks the estimate for its corelets
    chooses, and on two corelets the two-corelet plan moves fewer bytes and is faster."""
    from xdsl.parser import Parser

    from spyre_mlir.dialects import spyre
    from spyre_mlir.pipeline import pipeline_passes
    from spyre_mlir.tools.spyre_opt import make_tool_context
    from spyre_mlir.transforms.spyre_plan_scratchpad import SpyrePlanScratchpadPass

    text = """
    func.func @f(%a: !torch.vtensor<[1024,4096],f32>, %b: !torch.vtensor<[4096,12800],f32>) -> !torch.vtensor<[1024,12800],f32> {
      %0 = torch.aten.mm %a, %b : !torch.vtensor<[1024,4096],f32>, !torch.vtensor<[4096,12800],f32> -> !torch.vtensor<[1024,12800],f32>
      return %0 : !torch.vtensor<[1024,12800],f32>
    }"""
    shape = cost.MatmulShape(1, 1024, 4096, 12800)
    budget = DEFAULT_CONFIG.planner_lx_bytes // 128
    two = DEFAULT_CONFIG.replace(corelets_used=2)
    on_two = {}
    for corelets in (1, 2):
        config = DEFAULT_CONFIG.replace(corelets_used=corelets)
        ctx = make_tool_context()
        module = Parser(ctx, text).parse_module()
        spyre.set_module_target(module, config)
        for p in pipeline_passes():
            p.apply(ctx, module)
            if isinstance(p, SpyrePlanScratchpadPass):
                break
        (kernel,) = [k for k in module.walk() if isinstance(k, spyre.KernelOp)]
        assert kernel.split is not None and kernel.chunks is not None
        split, chunks = kernel.split.as_dict(), kernel.chunks.as_dict()
        chain = kernel.multicast.chain.data if kernel.multicast is not None else 1
        planned, multicast, _ = cost.plan_matmul(shape, config, budget, True, True, None, True)
        assert (split, chain) == ({"k": 1, **planned}, multicast)
        assert chunks == cost.best_chunks(shape, planned, config, budget, True, multicast)[0]
        on_two[corelets] = cost.matmul_estimate(shape, split, chunks, two, True, chain)
    assert on_two[1].bound == "ddr"
    assert on_two[2].ddr_bytes < on_two[1].ddr_bytes
    assert on_two[2].seconds < on_two[1].seconds


def test_a_device_config_refuses_more_corelets_than_a_core_has():
    with pytest.raises(ValueError, match="corelets_used must be 1 .. corelets_per_core"):
        DEFAULT_CONFIG.replace(corelets_used=3).validate()
