"""A graph input written in place (a static KV cache, updated at `cache_position`) is a device
write of the new rows into the input's resident device copy: written back into the caller's
tensor after each call, never sent again while nothing else writes it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from spyre_mlir.dialects import spyre_isa
from spyre_mlir.frontend.backend import STATS, get_device_model
from spyre_mlir.sim.memory import DeviceError
from spyre_mlir.sim.numerics import DL16

CACHE = (1, 2, 8, 64)
"""(batch, kv heads, max length, head dim): 2 x 8 rows of one stick each."""
CACHE_BYTES = 2 * 8 * 128


def update(cache: torch.Tensor, pos: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """HF's static-cache update, then a read of the whole updated cache."""
    cache.index_copy_(2, pos, k * 2)
    return cache.sum(-1)


def _rounded(x: torch.Tensor) -> np.ndarray:
    return DL16.round(x.numpy().astype(np.float32))


def _steps(fn, cache, positions, seed=0):
    """Run fn over the positions, with the same k as eager on a copy; the transfers per call."""
    gen = torch.Generator().manual_seed(seed)
    eager = cache.clone()
    sent = []
    prof = get_device_model().profile
    for p in positions:
        k = _rounded(torch.randn(1, 2, 1, 64, generator=gen))
        k = torch.from_numpy(k)
        before = prof.transfers_bytes
        fn(cache, torch.tensor([p]), k)
        sent.append(prof.transfers_bytes - before)
        update(eager, torch.tensor([p]), k)
        # the rows are DL16 values times 2: exact on the device, so the caches agree bit for bit
        np.testing.assert_array_equal(cache.numpy(), eager.numpy())
    return sent


def test_a_cache_written_in_place_stays_on_the_device():
    compiled = torch.compile(update, backend="spyre")
    n = len(STATS.graphs)
    cache = torch.zeros(CACHE)
    with torch.no_grad():
        sent = _steps(compiled, cache, [0, 1, 2, 5, 7])
    (graph,) = STATS.graphs[n:]
    assert not graph.cpu_fallback, graph.cpu_fallback
    # the first call sends the cache; the later ones only k (2 sticks) and bring back the sums
    assert sent[0] - sent[1] == CACHE_BYTES, sent
    assert len(set(sent[1:])) == 1, sent


def test_a_cache_written_elsewhere_is_sent_again():
    compiled = torch.compile(update, backend="spyre")
    cache = torch.zeros(CACHE)
    with torch.no_grad():
        first = _steps(compiled, cache, [0, 1])
        cache.zero_()  # a reset between generations, as StaticCache.reset does
        again = _steps(compiled, cache, [3], seed=1)
        cache[0, 1, 4] = 7.0  # a write of one row
        third = _steps(compiled, cache, [2], seed=2)
    assert again[0] == first[0] and third[0] == first[0], (first, again, third)


def test_an_index_out_of_range_is_refused():
    compiled = torch.compile(update, backend="spyre")
    with torch.no_grad(), pytest.raises(DeviceError, match="index 8 is out of range for 8 rows"):
        compiled(torch.zeros(CACHE), torch.tensor([8]), torch.ones(1, 2, 1, 64))


def test_a_cache_the_graph_reads_before_the_update_stays_correct():
    """The old contents read too: the update cannot write in place, and runs on the host."""

    def read_then_update(cache, pos, k):
        old = cache.sum(-1)
        cache.index_copy_(2, pos, k)
        return old, cache.sum(-1)

    compiled = torch.compile(read_then_update, backend="spyre")
    cache, eager = torch.ones(CACHE), torch.ones(CACHE)
    k = torch.from_numpy(_rounded(torch.randn(1, 2, 1, 64)))
    with torch.no_grad(), pytest.warns(UserWarning, match="index_put"):
        got = compiled(cache, torch.tensor([3]), k)
    want = read_then_update(eager, torch.tensor([3]), k)
    np.testing.assert_array_equal(cache.numpy(), eager.numpy())
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=2 * DL16.unit_roundoff * 64)


@pytest.mark.slow
def test_a_static_cache_llama_generates_with_no_cpu_op():
    from helpers import tiny_llama

    model = tiny_llama()
    ids = torch.randint(0, 256, (1, 7))
    with torch.no_grad():
        want = model.generate(ids, max_new_tokens=6, do_sample=False, cache_implementation="static")
        model.forward = torch.compile(model.forward, backend="spyre")
        n = len(STATS.graphs)
        got = model.generate(ids, max_new_tokens=6, do_sample=False, cache_implementation="static")
    graphs = STATS.graphs[n:]
    assert len(graphs) == 2  # prefill and decode
    for g in graphs:
        assert not g.cpu_fallback, (g.name, g.cpu_fallback)
    assert got.tolist() == want.tolist()


def roll_in(cache: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """A full sliding window's update, as HF's StaticSlidingWindowLayer writes it: the rows rolled
    by one, the new row last, the result copied back into the cache; then a read of it."""
    rolled = cache.roll(-1, dims=-2)
    rolled[:, :, torch.tensor([-1])] = k * 2
    cache.copy_(rolled)
    return cache.sum(-1)


def test_a_cache_rewritten_whole_stays_on_the_device():
    """The roll's result is a buffer of the program's own, in the cache's layout: it becomes the
    cache's device copy (runtime/host.py, `adopted`), so later calls send only k."""
    compiled = torch.compile(roll_in, backend="spyre")
    n = len(STATS.graphs)
    cache = torch.from_numpy(_rounded(torch.randn(CACHE, generator=torch.Generator().manual_seed(3))))
    eager = cache.clone()
    gen = torch.Generator().manual_seed(4)
    prof = get_device_model().profile
    sent = []
    with torch.no_grad():
        for _ in range(4):
            k = torch.from_numpy(_rounded(torch.randn(1, 2, 1, 64, generator=gen)))
            before = prof.transfers_bytes
            compiled(cache, k)
            sent.append(prof.transfers_bytes - before)
            roll_in(eager, k)
            np.testing.assert_array_equal(cache.numpy(), eager.numpy())  # moves of DL16 values: exact
    (graph,) = STATS.graphs[n:]
    assert not graph.cpu_fallback, graph.cpu_fallback
    assert sent[0] - sent[1] == CACHE_BYTES, sent
    assert len(set(sent[1:])) == 1, sent


def update_other(cache: torch.Tensor, pos: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Another program writing the same cache (another bucket of a served model's step)."""
    cache.index_copy_(2, pos, k * 2)
    return cache.amax(-1)


def test_two_graphs_share_the_cache_on_the_device():
    """A cache two compiled graphs write in place is one device copy: each graph finds the other's
    writes there (runtime/resident.py `ResidentArguments`), and neither sends it again."""
    first = torch.compile(update, backend="spyre")
    second = torch.compile(update_other, backend="spyre")
    cache = torch.zeros(CACHE)
    eager = cache.clone()
    gen = torch.Generator().manual_seed(5)
    prof = get_device_model().profile
    sent = []
    with torch.no_grad():
        for i, (fn, ref) in enumerate([(first, update), (second, update_other)] * 3):
            k = torch.from_numpy(_rounded(torch.randn(1, 2, 1, 64, generator=gen)))
            before = prof.transfers_bytes
            got = fn(cache, torch.tensor([i]), k)
            sent.append(prof.transfers_bytes - before)
            want = ref(eager, torch.tensor([i]), k)
            np.testing.assert_array_equal(cache.numpy(), eager.numpy())
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2 * DL16.unit_roundoff * 64)
    # the first call sends the cache, no later call of either graph does: k alone (2 sticks)
    assert sent[0] - sent[2] == CACHE_BYTES, sent
    assert set(sent[2:]) == {sent[2]} and sent[1] in (sent[2], sent[2] + CACHE_BYTES), sent


def test_two_graphs_hold_one_copy_of_a_weight():
    """A parameter two compiled graphs read is uploaded once for both (the card holds a model's
    weights once for all its programs)."""
    w = torch.nn.Parameter(torch.randn(128, 128), requires_grad=False)
    f = torch.compile(lambda x: x @ w, backend="spyre")
    g = torch.compile(lambda x: torch.relu(x @ w), backend="spyre")
    prof = get_device_model().profile
    x = torch.randn(4, 128)
    with torch.no_grad():
        f(x)
        before = prof.transfer_bytes_by_kind.get("argument", 0)
        g(x)
        sent = prof.transfer_bytes_by_kind.get("argument", 0) - before
    assert sent < 128 * 128 * 2, sent  # x alone: the weight's copy is f's


BLOCKS, BLOCK, WIDTH = 12, 16, 128
"""A paged cache (vLLM's): 12 blocks of 16 slots, a row of 128 values (2 sticks) per slot."""


def paged_update(cache: torch.Tensor, slots: torch.Tensor, pages: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """The step's rows written at their slots, then the step's pages read back (the start of
    spyre_mlir/vllm/attention.py's paged attention)."""
    cache[:, slots] = rows.unsqueeze(0) * 2
    return cache.view(BLOCKS, BLOCK * WIDTH)[pages].view(-1, WIDTH).sum(-1)


def test_pages_are_gathered_from_the_cache_as_it_is():
    """The gather reads the picked pages from the cache's own layout (spyre.table_rows): no
    kernel moves the whole cache, and the cache stays on the device between calls."""
    compiled = torch.compile(paged_update, backend="spyre")
    n = len(STATS.graphs)
    cache = torch.zeros(1, BLOCKS * BLOCK, WIDTH)
    eager = cache.clone()
    gen = torch.Generator().manual_seed(6)
    prof = get_device_model().profile
    cache_bytes = BLOCKS * BLOCK * WIDTH * 2
    with torch.no_grad():
        for _ in range(3):
            slots = torch.randperm(BLOCKS * BLOCK, generator=gen)[:5]
            pages = torch.randint(0, BLOCKS, (3,), generator=gen)
            rows = torch.from_numpy(_rounded(torch.randn(5, WIDTH, generator=gen)))
            first = len(prof.kernels)
            got = compiled(cache, slots, pages, rows)
            want = paged_update(eager, slots, pages, rows)
            np.testing.assert_array_equal(cache.numpy(), eager.numpy())
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2 * DL16.unit_roundoff * WIDTH)
            moved = [(k.name, k.ddr_read_bytes) for k in prof.kernels[first:] if k.ddr_read_bytes >= cache_bytes]
            assert not moved, moved
    (graph,) = STATS.graphs[n:]
    assert not graph.cpu_fallback, graph.cpu_fallback


def test_page_gather_takes_each_cores_rows_at_once():
    """A gather from a cache in its own row layout (3 sticks a row) plans LX by a row's sticks,
    not by the table's rows: each core's 16 rows fit, so each core gathers them in one
    instruction (a table of 1,024 rows counted as a row's sticks once split them into chunks)."""
    blocks, block, width = 64, 16, 192

    def pages_of(cache: torch.Tensor, slots: torch.Tensor, rows: torch.Tensor, pages: torch.Tensor) -> torch.Tensor:
        cache[:, slots] = rows.unsqueeze(0)
        picked = cache.view(-1, block, width)[pages[:, None], torch.arange(block)[None, :]]
        return picked.view(-1, 3, 64).permute(1, 0, 2) * 2

    compiled = torch.compile(pages_of, backend="spyre")
    n = len(STATS.graphs)
    gen = torch.Generator().manual_seed(7)
    cache = torch.from_numpy(_rounded(torch.randn(1, blocks * block, width, generator=gen)))
    eager = cache.clone()
    slots, pages = torch.arange(4), torch.randperm(blocks, generator=gen)[:32]
    rows = torch.from_numpy(_rounded(torch.randn(4, width, generator=gen)))
    with torch.no_grad():
        got = compiled(cache, slots, rows, pages)
    want = pages_of(eager, slots, rows, pages)
    np.testing.assert_array_equal(got.numpy(), want.numpy())  # rows moved, doubled: exact in DL16
    (graph,) = STATS.graphs[n:]
    module = graph.module()
    assert module is not None
    gathers = [op for op in module.walk() if isinstance(op, spyre_isa.DmaGatherOp)]
    assert gathers and {op.count.value.data for op in gathers} == {
        len(pages) * block // get_device_model().config.cores
    }, [str(op) for op in gathers]


def decode_attention(
    q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, pages: torch.Tensor
) -> torch.Tensor:
    """A decode step's attention as spyre_mlir/vllm/attention.py traces it: 2 requests of 4
    pages of 16 slots (64 keys: whole blocks of K^T), 2 KV heads of 64 (2 sticks a row), 2
    query heads per KV head; each request's query heads against its own pages."""
    requests, kv_heads, n_rep, dim = 2, 2, 2, 64

    def per_head(cache: torch.Tensor) -> torch.Tensor:  # (KVH, requests, keys, dim)
        picked = cache.view(-1, BLOCK, kv_heads * dim)[pages[:, None], torch.arange(BLOCK)[None, :]]
        return picked.view(requests, -1, kv_heads, dim).permute(2, 0, 1, 3)

    query = q.view(requests, kv_heads, n_rep, dim).permute(1, 0, 2, 3)
    out = torch.nn.functional.scaled_dot_product_attention(query, per_head(k_cache), per_head(v_cache), scale=0.125)
    return out.permute(1, 0, 2, 3).reshape(requests, kv_heads * n_rep, dim)


def test_pages_are_read_by_the_ops_that_need_them():
    """Each gather of the pages shares its kernel with the ops that alone read its rows
    (spyre.GatheredOperand): the keys' with their relayout and the scores product, the values'
    with the context product. The same bits as with the gathers' own kernels
    (`gathered_operands` off), three launches fewer, and neither the gathered rows nor K^T
    written to DDR and read back: the keys' DDR traffic less by three times their bytes
    (the gather's store, the relayout's load and store), the values' by two."""
    gen = torch.Generator().manual_seed(8)
    k_cache, v_cache = (torch.from_numpy(_rounded(torch.randn(1, BLOCKS * BLOCK, 128, generator=gen))) for _ in "kv")
    q = torch.from_numpy(_rounded(torch.randn(2, 4, 64, generator=gen)))
    pages = torch.randperm(BLOCKS, generator=gen)[:8]
    prof = get_device_model().profile
    runs = {}
    for disable in ([], ["gathered_operands"]):
        compiled = torch.compile(decode_attention, backend="spyre", options={"disable": disable, "strict": True})
        first = len(prof.kernels)
        with torch.no_grad():
            out = compiled(q, k_cache, v_cache, pages)
        kernels = prof.kernels[first:]
        runs[bool(disable)] = (out, len(kernels), sum(k.ddr_read_bytes + k.ddr_write_bytes for k in kernels))
    (fused, n_fused, bytes_fused), (apart, n_apart, bytes_apart) = runs[False], runs[True]
    np.testing.assert_array_equal(fused.numpy(), apart.numpy())
    want = decode_attention(q, k_cache, v_cache, pages)
    # the scores rounded to DL16 (|s| u), shifted by their maximum and rounded again (2 |s| u),
    # the exponentials and their sum (a few u): the weights' relative error, over a weighted
    # mean of the values (exact in DL16), then the output's rounding
    keys = k_cache.view(-1, BLOCK, 128)[pages].view(2, -1, 2, 64).permute(2, 0, 1, 3)
    s = 0.125 * (q.view(2, 2, 2, 64).permute(1, 0, 2, 3) @ keys.transpose(-1, -2)).abs().max()
    bound = float((4 * s + 4) * DL16.unit_roundoff * v_cache.abs().max())
    np.testing.assert_allclose(fused.numpy(), want.numpy(), rtol=0, atol=bound)
    gathered = 2 * len(pages) * BLOCK * 128 * 2  # both caches' picked rows, DL16
    assert n_fused == n_apart - 3, (n_fused, n_apart)
    assert bytes_apart - bytes_fused >= 5 * gathered // 2, (bytes_apart, bytes_fused, gathered)


def test_a_cache_written_on_the_host_is_refreshed_on_the_card_without_a_transfer():
    """Rows written into the cache outside any program (a KV transfer from another card):
    `refresh_resident` writes them into the card's copy in place, the next call computes from
    them and sends nothing of the cache; without it, the next call finds its copy stale and
    sends the whole cache again. The program is compiled as vLLM's steps are (spyre_mlir/vllm/
    runner.py: traced by make_fx, functionalised, `compile_graph` outside aot_autograd)."""
    from torch.fx.experimental.proxy_tensor import make_fx

    from spyre_mlir.frontend.backend import BackendOptions, compile_graph, refresh_resident
    from spyre_mlir.frontend.decompositions import decompositions

    cache = torch.zeros(CACHE)
    example = (cache, torch.tensor([0]), torch.zeros(1, 2, 1, 64))
    functional = torch.func.functionalize(update, remove="mutations")
    gm = make_fx(functional, decomposition_table=decompositions())(*example)
    program = compile_graph(gm, example, get_device_model().config, BackendOptions(strict=True), set())
    eager = cache.clone()
    prof = get_device_model().profile

    def step(p: int, k: torch.Tensor) -> int:
        before = prof.transfers_bytes
        program(cache, torch.tensor([p]), k)
        update(eager, torch.tensor([p]), k)
        np.testing.assert_array_equal(cache.numpy(), eager.numpy())
        return prof.transfers_bytes - before

    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        steady = [step(p, torch.from_numpy(_rounded(torch.randn(1, 2, 1, 64, generator=gen)))) for p in (0, 1)][-1]
        for refresh in (True, False):
            rows = torch.from_numpy(_rounded(torch.randn(1, 2, 3, 64, generator=gen)))
            cache[:, :, 4:7] = rows  # a version bump: the card's copy is stale until refreshed
            eager[:, :, 4:7] = rows
            if refresh:
                assert refresh_resident(cache) == 1
            k = torch.from_numpy(_rounded(torch.randn(1, 2, 1, 64, generator=gen)))
            sent = step(2, k)  # the sums read rows 4 to 6: the card computed from the new rows
            assert sent == (steady if refresh else steady + CACHE_BYTES), (refresh, sent, steady)
    assert refresh_resident(torch.zeros(CACHE)) == 0  # a tensor the card holds no copy of
