"""Length buckets (frontend/buckets.py): a graph whose length Dynamo made symbolic runs padded
to its bucket, one compile per bucket, where the rewrite proves the padding harmless; elsewhere
one compile per length, with a warning naming the op."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sympy
import torch
from helpers import tiny_llama

from spyre_mlir.frontend.backend import STATS
from spyre_mlir.frontend.buckets import BUCKETS, BucketPlan, bucket_for
from spyre_mlir.sim.numerics import DL16
from spyre_mlir.testing.criteria import accumulation_bound


def _dl16(*shape: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.from_numpy(DL16.round(torch.randn(*shape, generator=g).numpy()))


def test_a_length_takes_the_smallest_bucket_that_fits():
    assert [bucket_for(n, 10**9) for n in (1, 16, 17, 100, 1024)] == [16, 16, 32, 128, 1024]
    assert bucket_for(20, 31) == 20  # bucket 32 is longer than the buffer: its own length
    assert bucket_for(BUCKETS[-1] + 1, 10**9) == BUCKETS[-1] + 1


def _compiled_at(fn, lengths, **options):
    """fn compiled once, called at each length (Dynamo makes the length symbolic at the second):
    the outputs, and the programs the calls made (compiled, or loaded from the compile cache)."""
    compiled = torch.compile(fn, backend="spyre", options=options)
    outs, first = [], STATS.compiles + STATS.cache_loads
    with torch.no_grad():
        for i, n in enumerate(lengths):
            outs.append(compiled(_dl16(n, 64, seed=i), _dl16(64, 64, seed=100)))
    return outs, STATS.compiles + STATS.cache_loads - first


def rows_and_gram(x, w):
    """Row-wise products, and a product over the rows (a sum over the padded dim)."""
    return x @ w, x.t() @ x


def test_lengths_in_one_bucket_share_one_program_within_the_fp32_bound():
    torch._dynamo.reset()
    lengths = [5, 9, 11, 14]
    outs, compiles = _compiled_at(rows_and_gram, lengths)
    assert compiles == 2, compiles  # length 5 static; 9, 11 and 14 in bucket 16
    torch._dynamo.reset()
    exact, apart = _compiled_at(rows_and_gram, lengths, buckets=False)
    assert apart == 4, apart
    for i, n in enumerate(lengths):
        x, w = _dl16(n, 64, seed=i).numpy(), _dl16(64, 64, seed=100).numpy()
        for (a, b), got, want in zip(((x, w), (x.T, x)), outs[i], exact[i]):
            assert got.shape == want.shape
            bound = accumulation_bound(a, b, got.numpy(), want.numpy(), DL16)
            assert np.all(np.abs(got.numpy() - want.numpy()) <= bound), n


def mean_over_rows(x, w):
    return (x @ w).mean(0)


def test_a_mean_over_the_length_compiles_each_length_and_says_why():
    torch._dynamo.reset()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outs, compiles = _compiled_at(mean_over_rows, [5, 9, 11])
    assert compiles == 3, compiles
    said = [str(w.message) for w in caught if "no length buckets" in str(w.message)]
    assert said and "mean.dim over the padded dim 0 depends on the row count" in said[0], said
    for i, n in enumerate([5, 9, 11]):
        want = mean_over_rows(_dl16(n, 64, seed=i), _dl16(64, 64, seed=100))
        assert torch.allclose(outs[i], want, rtol=0, atol=16 * DL16.unit_roundoff * want.abs().max().item())


@pytest.mark.slow
def test_four_prompts_in_one_bucket_make_three_compiles_and_eagers_tokens():
    """HF generate with a static cache (a fixed max_length, so one decode graph): prompt lengths
    5, 9, 11, 14 make the first prefill (static), one bucket-16 prefill and the decode graph;
    a prompt of 20 does not fit bucket 32 in the 23-row cache and compiles at its length.

    The tokens are eager's up to a near-tie of eager's logits, where the device's DL16 logits
    may take the other token (and the continuations part): shown at the first token that
    differs as eager's margin between the two tokens within twice the device's deviation from
    eager's logits on the common prefix (a prefill of it), that deviation itself small
    (cosine >= 0.999, the decoder families' criterion)."""
    torch._dynamo.reset()
    model = tiny_llama(pad_token_id=0, bos_token_id=1, eos_token_id=None)
    gen = torch.Generator().manual_seed(1)
    prompts = [torch.randint(2, 256, (1, n), generator=gen) for n in (5, 9, 11, 14, 20)]
    run = dict(do_sample=False, cache_implementation="static", max_length=24)
    eager = model.forward
    with torch.no_grad():
        want = [model.generate(p, **run) for p in prompts]
        model.forward = torch.compile(model.forward, backend="spyre")
        first, graphs = STATS.compiles, len(STATS.graphs)
        got = []
        for p in prompts:
            got.append(model.generate(p, **run))
            if len(got) == 4:
                assert STATS.compiles - first == 3
        assert STATS.compiles - first == 4
        for report in STATS.graphs[graphs:]:
            assert not report.cpu_fallback, (report.name, report.cpu_fallback)
        parted = 0
        for p, g, w in zip(prompts, got, want):
            differ = (g != w)[0].nonzero()
            if not len(differ):
                continue
            n = int(differ[0])
            parted += 1
            e, d = eager(w[:, :n]).logits[0, -1], model.forward(w[:, :n]).logits[0, -1]
            margin = float(e[w[0, n]] - e[g[0, n]])
            assert 0 <= margin <= 2 * float((d - e).abs().max()), (p.shape, n, margin)
            assert float(torch.nn.functional.cosine_similarity(d, e, dim=0)) >= 0.999
    assert parted <= 1, [(g, w) for g, w in zip(got, want)]  # near-ties are rare: at most one of five


def test_a_padded_calls_outputs_have_the_strides_of_their_own_length():
    """aot_autograd rebuilds an output that aliases another tensor from the strides the program
    gives it (MoE blocks of switch_transformers and nllb-moe, whose reshape of their input is
    such an output), so an output at the real length is a tensor of its own, size-1 dims'
    strides included, never a view with the bucket's strides."""
    plan = BucketPlan(torch.fx.GraphModule({}, torch.fx.Graph()), sympy.Symbol("s0"), {}, [(1,), ()], [])
    padded, other = torch.randn(1, 16, 64), torch.randn(3)
    out, same = plan.unpad([padded, other], 11)
    assert out.shape == (1, 11, 64) and out.stride() == (704, 64, 1) and torch.equal(out, padded[:, :11])
    assert same is other
