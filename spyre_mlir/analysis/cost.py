"""Estimated time of a planned matmul kernel, from the device model's own cost functions
(target/cycles.py: PT passes, SFP vectors, DMA latency; DeviceConfig: DDR bandwidth shared by
all cores, the LX port per core). spyre-divide-work (strategy=cost) and spyre-plan-scratchpad
rank candidate splits and chunkings with it; the simulated time of the chosen program is the
measurement (bench/ablation.py prints both).

For a split and a chunking, every core's chunks are walked as convert-spyre-to-isa walks them
(an A tile is loaded when its (b, m, k) range changes, a B tile when its (b, n, k) range
changes; after the last k chunk the accumulator is rounded and stored), giving per core

    pt    = sum of pt_passes(rows, columns, k) over its chunks            (cycles)
    sfp   = the vectors the rounding copies touch
    dma   = its DMA instructions, bytes = the sticks they move x 128

and then

    ddr   = sum of every core's DMA bytes / DDR bytes per cycle    (one shared bandwidth)
    port  = max over cores of its DMA bytes / LX port bytes per cycle
    busy  = max over cores of max(pt, sfp)
    dma   = per DMA engine of a core: its instructions' latency + its bytes at the full rate
    time  = fill + max(contended(compute, rest, port),    (double-buffered: DMA hides behind compute;
                       max(busy, rest, port) + last) + drain  rest = ddr after the fill, last = the
                                                          last chunk's PT after its loads)
    time  = sum over chunks of (load + compute + store)   (single-buffered: every step waits)

With a k split (split k = p), a core whose k range is not the last receives the next part's
fp32 sums (acc_in) and adds them (SFP), a core whose range is not the first sends its sums
(ring, LX port) instead of storing; the last tile's exchange adds to the drain.

where fill is the first chunk's loads and drain the last chunk's store, each at its share of
the DDR bandwidth.

Contention: PT, DDR and the LX port each have a demand (cycles it would take alone). Where one
dominates, the time is its demand; where two or three are near one another, each waits on the
others now and then (a B tile late down a chain holds the PT, a PT pass holds the next load's
buffer), and the simulation takes longer than the largest demand. `contended` combines the
demands by their p-norm, p = CONTENTION_NORM = 8: the largest demand plus a share of the others
that grows as they near it (two equal demands: 1.09 times one; one at 80% of the largest adds
2%, one at half of it 0.05%). p was chosen on the Granite-8B-shaped layer's products at 1024
rows on both corelets, where PT, DDR and the port are all near saturation and the p-norm
ranks the candidate plans as their simulated times do, and checked on the one-corelet products
of bench/ablation.py, where the PT dominates and a smaller p (6) chose chunkings that simulate
slower (bench/plans.py prints the estimates with and without the term beside the simulated
time of every plan it runs); where one resource dominates the estimate is the maximum's.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from spyre_mlir.analysis.buffers import MULTICAST_BUFFERS, a_block_sticks, matmul_tiles
from spyre_mlir.dialects import spyre
from spyre_mlir.dialects.spyre.iteration import Box, IterDim, core_boxes, parts
from spyre_mlir.layout import Layout
from spyre_mlir.target import cycles
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.target.constants import F16_LANES, STICK_BYTES
from spyre_mlir.target.cycles import dma_engine_cycles, host_transfer_seconds, sfp_cycles

MULTICAST_PIECE = 64
"""Sticks (8 KiB) per ring send down a multicast chain (convert-spyre-to-isa): a piece moves on
as soon as it has landed, so the chain fills in (g - 1) piece hops, not (g - 1) tile hops."""


CONTENTION_NORM = 8
"""The p of `contended`'s p-norm (module docstring, "Contention")."""


def contended(*demands: float) -> float:
    """The time of work whose resources (PT, DDR, LX port), each needing `demands[i]` cycles
    on its own, run side by side: their p-norm, which is the largest demand when one dominates
    and more when several are near it (module docstring, "Contention")."""
    top = max(demands)
    if top <= 0:
        return 0.0
    return top * sum((d / top) ** CONTENTION_NORM for d in demands) ** (1 / CONTENTION_NORM)


def piece_rows(n_sticks: int) -> int:
    """Rows of a B tile ([n stick][row]) one multicast ring send carries."""
    return max(1, MULTICAST_PIECE // max(1, n_sticks))


@dataclass(frozen=True)
class MatmulShape:
    batch: int
    m: int
    k: int
    n: int
    batched: bool = False
    """A bmm (iteration dim b, even of extent 1)."""

    @property
    def dims(self) -> list[IterDim]:
        batch = [IterDim("b", self.batch)] if self.batched else []
        return [
            *batch,
            IterDim("n", math.ceil(self.n / F16_LANES)),
            IterDim("m", self.m),
            IterDim("k", math.ceil(self.k / F16_LANES), parallel=False),
        ]


@dataclass(frozen=True)
class Estimate:
    seconds: float
    ddr_bytes: int
    pt_cycles: float
    """Of the busiest core."""
    bound: str
    """What limits it: "pt", "sfp", "ddr" or "port"."""
    a_stationary: bool = False
    """Each core keeps its whole A block in LX (buffers.STATIONARY_A_ROWS)."""


class _CoreWork(NamedTuple):  # the estimate unpacks it (thousands of times a search)
    loads: int
    """Load instructions."""
    b_loads: int
    """Of which B tiles."""
    b_sticks: int
    """Sticks of B loaded."""
    first_b_sticks: int
    b_rows: int
    """Rows of a B tile (its k chunk)."""
    stores: int
    """Store instructions (one per output tile)."""
    load_sticks: int
    store_sticks: int
    pt: float
    sfp: float
    first_load_sticks: int
    last_store_sticks: int
    chunks: int


def _parts(size: int, count: int) -> tuple[int, int, int]:
    """work.parts(size, count) in closed form: (how many, the size of each but the last, the last)."""
    per = -(-size // count)
    n = -(-size // per)
    return n, per, size - per * (n - 1)


@functools.lru_cache(maxsize=64)
def _core_work_memo(shape: MatmulShape, config: DeviceConfig) -> dict[tuple, _CoreWork]:
    """_core_work's memo for one shape and device, by (box, chunks, a_resident, out_resident)
    items: the plan search asks again for each chain length, and hashing the shape and the
    config once per estimate instead of once per core class halves the search's time."""
    return {}


def _core_work(
    shape: MatmulShape,
    box: dict,
    chunks: dict[str, int],
    config: DeviceConfig,
    a_resident: bool = False,
    out_resident: bool = False,
    a_stationary: bool = False,
) -> _CoreWork:
    """_core_work_of, memoised."""
    memo = _core_work_memo(shape, config)
    key = (tuple(box.items()), tuple(chunks.items()), a_resident, out_resident, a_stationary)
    w = memo.get(key)
    if w is None:
        w = memo[key] = _core_work_of(shape, box, chunks, config, a_resident, out_resident, a_stationary)
    return w


def _core_work_of(
    shape: MatmulShape,
    box: dict,
    chunks: dict[str, int],
    config: DeviceConfig,
    a_resident: bool,
    out_resident: bool,
    a_stationary: bool = False,
) -> _CoreWork:
    """What one core's program does, counted in closed form for the loop order the code
    generator uses (per matrix: n chunks, then m, then k innermost): an A tile is reloaded
    whenever its (m, k) range changes between consecutive chunks, a B tile whenever its (n, k)
    range does. `a_resident`: A is already in LX (no A loads); `out_resident`: the output
    stays in LX (no stores) — spyre-resident-chains; `a_stationary`: the whole A block is
    loaded once per matrix, before the first chunk (buffers.STATIONARY_A_ROWS)."""
    mats = box.get("b", (0, 1))[1] - box.get("b", (0, 1))[0]
    (n0, n1), (m0, m1), (k0, k1) = box["n"], box["m"], box["k"]
    cn, n_per, n_last = _parts(n1 - n0, chunks.get("n", 1))
    cm, m_per, m_last = _parts(m1 - m0, chunks.get("m", 1))
    ck, k_per, _ = _parts(k1 - k0, chunks.get("k", 1))
    rows_k = min(shape.k, k1 * F16_LANES) - k0 * F16_LANES  # contraction rows of the box
    cols = min(shape.n, n1 * F16_LANES) - n0 * F16_LANES
    a_box = (k1 - k0) * (m1 - m0)  # sticks
    b_box = (n1 - n0) * rows_k
    c_box = (n1 - n0) * (m1 - m0)
    once = a_stationary or (ck == 1 and cm == 1)  # A loaded once per matrix
    a_reloads = 0 if a_resident else 1 if once else cn
    b_reloads = cm if ck > 1 else 1
    a_loads = 0 if a_resident else 1 if once else cn * cm * ck
    b_loads = cn * cm * ck if ck > 1 else cn
    # PT passes are separable: ceil(rows / 8) per m part, ceil(cols / 64) per n part, k rows;
    # every n part but the last holds whole sticks, the last the ragged columns
    row_passes = (cm - 1) * -(-m_per // config.pt_rows) + -(-m_last // config.pt_rows)
    col_passes = (cn - 1) * n_per + -(-(cols - F16_LANES * n_per * (cn - 1)) // config.pt_lanes)
    pt = row_passes * col_passes * rows_k / config.corelets_used
    sfp = sfp_cycles(config, 2 * c_box, False)
    first_b = n_per * min(rows_k, F16_LANES * k_per)
    first = (0 if a_resident else a_box if a_stationary else k_per * m_per) + first_b
    last = 0 if out_resident else n_last * m_last
    stored = 0 if out_resident else 1
    return _CoreWork(
        loads=mats * (a_loads + b_loads),
        b_loads=mats * b_loads,
        b_sticks=mats * b_reloads * b_box,
        first_b_sticks=first_b,
        b_rows=min(rows_k, F16_LANES * k_per),
        stores=stored * mats * cn * cm,
        load_sticks=mats * (a_reloads * a_box + b_reloads * b_box),
        store_sticks=stored * mats * c_box,
        pt=mats * pt,
        sfp=mats * sfp,
        first_load_sticks=first,
        last_store_sticks=last,
        chunks=mats * cn * cm * ck,
    )


def matmul_shape(mm) -> MatmulShape:
    """The shape of a spyre.matmul (batched when its operands have rank 3)."""
    from spyre_mlir.dialects import spyre

    a, b = spyre.device_layout(mm.lhs.type), spyre.device_layout(mm.rhs.type)
    batch = a.shape[0] if len(a.shape) == 3 else 1
    return MatmulShape(batch, a.shape[-2], a.shape[-1], b.shape[-1], len(a.shape) == 3)


@functools.lru_cache(maxsize=4096)
def _core_classes(
    shape: MatmulShape, split: tuple[tuple[str, int], ...], cores: int, group: int
) -> list[tuple[dict, tuple, int, int]]:
    """The distinct kinds of core of a split: (a box, its items, its chain position class, how
    many), where the class is 0 first / 1 middle / 2 last of a multicast chain (0 without one)."""
    boxes = [b for b in core_boxes(shape.dims, dict(split), cores) if b is not None]
    kp = len(parts(math.ceil(shape.k / F16_LANES), dict(split).get("k", 1)))  # k parts (core_boxes')
    classes: dict[tuple, list] = {}
    for index, box in enumerate(boxes):
        pos = index // kp % group  # m varies fastest after k: a chain is every kp-th core
        role = 0 if group == 1 or pos == 0 else 2 if pos == group - 1 else 1
        key = (tuple((lo, hi) if name == "k" else hi - lo for name, (lo, hi) in box.items()), role)
        if key in classes:
            classes[key][2] += 1
        else:
            classes[key] = [box, role, 1]
    return [(box, tuple(box.items()), role, count) for box, role, count in classes.values()]


def matmul_estimate(
    shape: MatmulShape,
    split: dict[str, int],
    chunks: dict[str, int],
    config: DeviceConfig,
    double_buffer: bool,
    multicast: int = 1,
    a_resident: bool = False,
    out_resident: bool = False,
    a_stationary: bool = False,
) -> Estimate:
    """With `multicast` = g > 1, the cores that share B tiles (split m > 1) form chains of g
    consecutive cores over the ring: the first loads each tile from DDR, every other but the
    last passes it on (ring engine: hop latency per piece + bytes at the ring's rate); the
    start-up (one piece per hop, then a tile) adds to the fill. `a_resident` / `out_resident`
    (spyre-resident-chains): A is read from LX where an earlier launch left it / the output
    is left in LX for a later launch: no DMA, no DDR traffic, no fill or drain for them.
    `a_stationary`: each core loads its whole A block once per matrix (_core_work_of)."""
    group = multicast
    classes = _core_classes(shape, tuple(split.items()), config.cores, group)
    k_end = math.ceil(shape.k / F16_LANES)
    ddr_rate = config.ddr_bytes_per_s / config.clock_hz
    port_rate = config.lx_port_bytes_per_cycle
    stream_rate = min(ddr_rate, port_rate)
    lat = config.ddr_latency_cycles
    total_bytes = 0
    busy = compute = port = serial = fill = drain = pt_max = sfp_max = drain_extra = waits = last_pt = 0.0
    first_sticks = last_sticks = 0
    hop, ring_rate = config.ring_hop_latency_cycles, config.ring_bytes_per_cycle
    k_split = split.get("k", 1) > 1
    memo, chunk_items = _core_work_memo(shape, config), tuple(chunks.items())
    for box, box_items, role, count in classes:
        key = (box_items, chunk_items, a_resident, out_resident, a_stationary)  # _core_work's key, items precomputed
        w = memo.get(key)
        if w is None:
            w = memo[key] = _core_work_of(shape, box, chunks, config, a_resident, out_resident, a_stationary)
        # the core's work as locals (the search makes ~4k estimates a shape)
        (
            loads,
            b_loads,
            b_sticks,
            first_b_sticks,
            b_rows,
            stores,
            load_sticks,
            store_sticks,
            pt,
            sfp,
            first_load_sticks,
            last_store_sticks,
            steps,
        ) = w
        ring = partial_drain = 0.0
        sent_partial = 0
        if k_split:  # the partial sums go over the ring to the previous k part
            acc_bytes = 2 * store_sticks * STICK_BYTES  # fp32: two sticks per output stick
            last_acc = 2 * last_store_sticks * STICK_BYTES
            if box["k"][1] < k_end:  # receives the next part's sums and adds them (SFP)
                sfp = 2 * sfp
                partial_drain += sfp_cycles(config, 2 * last_store_sticks, False)
            if box["k"][0] > 0:  # sends its sums (ring, LX port); the first part rounds and stores
                ring += stores * hop + acc_bytes / ring_rate
                partial_drain += hop + last_acc / ring_rate
                store_sticks = stores = last_store_sticks = 0
                sent_partial = acc_bytes
        sent = 0
        if group > 1:
            if role > 0:  # B arrives over the ring instead of from DDR (written through the LX port)
                load_sticks, loads = load_sticks - b_sticks, loads - b_loads
                sent = b_sticks * STICK_BYTES
            piece_sticks = first_b_sticks // max(1, b_rows)
            if role < 2:  # and is passed on, in pieces
                sends = b_loads * -(-b_rows // piece_rows(piece_sticks))
                ring += sends * hop + b_sticks * STICK_BYTES / ring_rate
                sent += b_sticks * STICK_BYTES  # read through the LX port
            piece = min(first_b_sticks, piece_sticks * piece_rows(piece_sticks))
            fill = max(
                fill, (group - 1) * (hop + piece * STICK_BYTES / ring_rate) + first_b_sticks * STICK_BYTES / ring_rate
            )
        core_bytes = (load_sticks + store_sticks) * STICK_BYTES
        total_bytes += core_bytes * count
        # each DMA waits its latency, then streams; a queued engine overlaps the latencies
        # with the bytes (target/cycles.py; contention with the other cores is the `ddr` term)
        load_stream = load_sticks * STICK_BYTES / stream_rate
        store_stream = store_sticks * STICK_BYTES / stream_rate
        dma_in = dma_engine_cycles(config, loads, load_stream)
        dma_out = dma_engine_cycles(config, stores, store_stream)
        pt_max, sfp_max = max(pt_max, pt), max(sfp_max, sfp)
        compute = max(compute, pt, sfp, ring)
        # the DMA engines' time after the first tiles' loads (the fill's)
        first_in = first_load_sticks * STICK_BYTES / stream_rate
        busy = max(busy, dma_in - first_in, dma_out)
        last_pt = max(last_pt, pt / steps)  # the last chunk's products, after its loads
        port = max(port, (core_bytes + sent + sent_partial) / port_rate)
        drain_extra = max(drain_extra, partial_drain)
        # the first tiles of every core stream at once, sharing the DDR (a multicast chain's
        # later cores receive their first B tile over the ring: the `fill` above)
        first_sticks += count * (first_load_sticks - (first_b_sticks if group > 1 and role > 0 else 0))
        last_sticks += count * last_store_sticks
        serial = max(serial, dma_in + pt + sfp + dma_out)
        waits = max(waits, dma_in - load_stream, dma_out - store_stream)
    # latencies that do not hide behind transfers move no bytes: the cores' programs run in
    # step, so theirs coincide and the DDR idles through them (sim/timing.py); the first
    # load's is in `fill`
    ddr = total_bytes / ddr_rate + max(0.0, waits - lat)
    fill = max(fill, lat + first_sticks * STICK_BYTES / ddr_rate)
    drain = (
        (lat if last_sticks else 0) + last_sticks * STICK_BYTES / ddr_rate + drain_extra
    )  # (after the last k parts' sums arrive)
    if double_buffer:
        # the first tiles' loads (fill), then the rest of the transfers beside the products,
        # the last tiles' products after the last load, the last store (drain)
        rest = ddr - first_sticks * STICK_BYTES / ddr_rate
        cycles = fill + max(contended(compute, rest, port), max(busy, rest, port) + last_pt) + drain
    else:
        cycles = max(serial, ddr)
    bound = max((("pt", pt_max), ("sfp", sfp_max), ("ddr", ddr), ("port", port)), key=lambda kv: kv[1])[0]
    return Estimate(cycles / config.clock_hz, total_bytes, pt_max, bound, a_stationary)


def matmul_buffers(
    shape: MatmulShape,
    ext: dict[str, int],
    double_buffer: bool,
    epilogue: tuple[int, int, int, int] | None = None,
    multicast: int = 1,
    a_resident: bool = False,
    a_block: int = 0,
) -> dict[str, int]:
    """LX sticks of each buffer for a chunk of extent `ext`; with double buffering the tiles
    DMA streams through (A, B, the output) get a second copy, suffix `_1`. An epilogue
    (buffers.epilogue_sticks) adds its tiles as one buffer `epilogue` (the planner splits it),
    its result tile (double buffered there) in place of the output tile.
    A resident A (`a_resident`) needs no buffer, a stationary one its block (`a_block` sticks)
    in place of the tile (both rules: buffers.matmul_tiles)."""
    m, n, k = ext["m"], ext["n"], ext["k"]
    bufs = matmul_tiles(m, n, k, a_resident, epilogue is not None, a_block)
    if double_buffer:
        for name in ("lhs", "rhs", "out"):
            if name in bufs:
                bufs[f"{name}_1"] = bufs[name]
    if multicast > 1:
        for i in range(1, MULTICAST_BUFFERS):
            bufs[f"rhs_{i}"] = bufs["rhs"]
    if epilogue is not None:
        per_mn, per_n, per_m, fixed = epilogue
        bufs["epilogue"] = (per_mn + (1 if double_buffer else 0)) * m * n + per_n * n + per_m * m + fixed
    return bufs


def _powers(limit: int) -> list[int]:
    out, p = [], 1
    while p < limit:
        out.append(p)
        p *= 2
    out.append(limit)
    return sorted(set(out))


def candidate_splits(dims: Sequence[IterDim], cores: int, split_k: bool = False) -> list[dict[str, int]]:
    """Parts per parallel dim (powers of two, or the whole dim), product <= cores. With
    `split_k`, a matmul's contraction dim k too (powers of two, at most 4 parts, each of at least
    2 sticks): its parts' partial sums are added over the ring."""

    def options(d: IterDim) -> list[int]:
        if d.parallel:
            return _powers(min(d.size, cores))
        if split_k and d.name == "k":
            return [p for p in _powers(max(1, min(4, d.size // 2))) if p & (p - 1) == 0]
        return [1]

    out = []
    for combo in itertools.product(*(options(d) for d in dims)):
        if math.prod(combo) <= cores:
            out.append({d.name: c for d, c in zip(dims, combo)})
    return out


def best_chunks(
    shape: MatmulShape,
    split: dict[str, int],
    config: DeviceConfig,
    budget_sticks: int,
    double_buffer: bool,
    multicast: int = 1,
    epilogue: tuple[int, int, int, int] | None = None,
    a_resident: bool = False,
    out_resident: bool = False,
    stationary: bool = True,
) -> tuple[dict[str, int], Estimate] | None:
    """The chunking of a split that fits `budget_sticks` of LX per core with the least
    estimated time (None: no chunking fits). Memoised: models repeat their shapes.
    `a_resident` / `out_resident`: as matmul_estimate's; `stationary`: A may stay whole in LX
    where its blocks are small enough (the estimate's `a_stationary` says whether it does)."""
    found = _best_chunks(
        shape,
        tuple(split.items()),
        config,
        budget_sticks,
        double_buffer,
        multicast,
        epilogue,
        a_resident,
        out_resident,
        stationary,
    )
    return None if found is None else (dict(found[0]), found[1])


def plan_matmul(
    shape: MatmulShape,
    config: DeviceConfig,
    budget_sticks: int,
    double_buffer: bool,
    allow_multicast: bool,
    epilogue: tuple[int, int, int, int] | None = None,
    split_k: bool = False,
    stationary: bool = True,
) -> tuple[dict[str, int], bool, Estimate] | None:
    """The split and multicast chain length (1: none) with the least estimated time, over
    every candidate split (with `split_k`, of k too), chain length dividing its m split, and
    best chunking."""
    try:
        return _plan_matmul(shape, config, budget_sticks, double_buffer, allow_multicast, epilogue, split_k, stationary)
    finally:
        # the per-core work memo serves one shape's search (its keys hold the shape): ~16 MiB
        # after a BERT-size model's searches, of no use once they are done
        _core_work_memo.cache_clear()


@functools.lru_cache(maxsize=1024)
def _plan_matmul(
    shape: MatmulShape,
    config: DeviceConfig,
    budget_sticks: int,
    double_buffer: bool,
    allow_multicast: bool,
    epilogue,
    split_k: bool,
    stationary: bool = True,
):
    """The least estimate over (split, chain), the first in enumeration order among equals.
    Splits are tried by a lower bound, and a split whose bound exceeds the best estimate so far
    is not chunked at all: every estimate is at least its busiest core's PT time and its DDR
    bytes' time, and no chunking has fewer PT passes or DDR bytes than one chunk per dim."""
    splits = candidate_splits(shape.dims, config.cores, split_k)
    # what one core may address (none within the limit: the sanitizer names the overrun at launch)
    splits = [split for split in splits if widest_span(shape, split, config) <= config.per_core_span_bytes] or splits
    bounds = [
        max(_pt_bound(shape, split, config), _ddr_bound(shape, split, config, allow_multicast, stationary))
        for split in splits
    ]
    best, best_at = None, None
    for at in sorted(range(len(splits)), key=lambda i: bounds[i]):
        if best is not None and bounds[at] > best[2].seconds:
            break
        split = splits[at]
        for ci, multicast in enumerate(multicast_chains(split.get("m", 1), allow_multicast)):
            found = best_chunks(
                shape, split, config, budget_sticks, double_buffer, multicast, epilogue, stationary=stationary
            )
            if found is None:
                continue
            if (
                best is None
                or best_at is None
                or found[1].seconds < best[2].seconds
                or (found[1].seconds == best[2].seconds and (at, ci) < best_at)
            ):
                best, best_at = (split, multicast, found[1]), (at, ci)
    return best


def every_plan(
    shape: MatmulShape,
    config: DeviceConfig,
    budget_sticks: int,
    double_buffer: bool,
    allow_multicast: bool,
    split_k: bool,
) -> list[tuple[dict[str, int], int, dict[str, int], Estimate]]:
    """Every (split, chain) `plan_matmul` considers, unpruned, in its enumeration order, with
    its best chunking and estimate (split, chain, chunks, estimate): what the pruned search
    must agree with, and what bench/plans.py ranks."""
    splits = candidate_splits(shape.dims, config.cores, split_k)
    within = [split for split in splits if widest_span(shape, split, config) <= config.per_core_span_bytes]
    found = []
    for split in within or splits:
        for chain in multicast_chains(split.get("m", 1), allow_multicast):
            best = best_chunks(shape, split, config, budget_sticks, double_buffer, chain)
            if best is not None:
                found.append((split, chain, best[0], best[1]))
    return found


def widest_span(shape: MatmulShape, split: dict[str, int], config: DeviceConfig) -> int:
    """The most bytes any core of `split` spans in one operand (from the first byte it reads or
    writes to the last), in the generic layouts the lowering gives a matmul: A (M, K) and the
    output (M, N) rows of sticks along K and N, B (K, N) as stick columns of K rows, batches
    outermost. A k split spans nearly all of B on each core: B's stick columns are its outer
    dim, a k range its rows within every column."""
    kt, nt = math.ceil(shape.k / F16_LANES), math.ceil(shape.n / F16_LANES)
    widest = 0
    for box in core_boxes(shape.dims, split, config.cores):
        if box is None:
            continue
        (b0, b1), (n0, n1), (m0, m1), (k0, k1) = box.get("b", (0, 1)), box["n"], box["m"], box["k"]
        rows0, rows1 = k0 * F16_LANES, min(shape.k, k1 * F16_LANES)
        spans = (  # (sticks per batch, first stick, last stick) of A, B and the output
            (kt * shape.m, k0 * shape.m + m0, (k1 - 1) * shape.m + m1 - 1),
            (nt * shape.k, n0 * shape.k + rows0, (n1 - 1) * shape.k + rows1 - 1),
            (nt * shape.m, n0 * shape.m + m0, (n1 - 1) * shape.m + m1 - 1),
        )
        for per_batch, first, last in spans:
            widest = max(widest, ((b1 - 1 - b0) * per_batch + last - first + 1) * STICK_BYTES)
    return widest


def multicast_chains(m_parts: int, allowed: bool = True) -> list[int]:
    """The chain lengths g a split with `m_parts` row parts may share B tiles over: divisors
    of m_parts that are powers of two, or m_parts itself (1: no chain)."""
    if not allowed:
        return [1]
    return [g for g in range(1, m_parts + 1) if m_parts % g == 0 and (g & (g - 1) == 0 or g == m_parts)]


def _pt_bound(shape: MatmulShape, split: dict[str, int], config: DeviceConfig) -> float:
    """Seconds no plan of `split` beats: the busiest core's PT passes with one chunk per dim."""
    boxes = [b for b in core_boxes(shape.dims, split, config.cores) if b is not None]
    one = {d.name: 1 for d in shape.dims}
    return max(_core_work(shape, box, one, config).pt for box in boxes) / config.clock_hz


def _ddr_bound(
    shape: MatmulShape, split: dict[str, int], config: DeviceConfig, allow_multicast: bool, stationary: bool = True
) -> float:
    """Seconds no plan of `split` beats: its DDR bytes with one chunk per dim (every tile
    loaded once) over the longest chain, at the DDR's rate. An estimate is at least its DDR
    bytes over that rate (`matmul_estimate`: cycles >= ddr), chunking only adds reloads, and a
    longer chain only takes B loads away (its later cores receive B over the ring)."""
    one = {d.name: 1 for d in shape.dims}
    group = max(multicast_chains(split.get("m", 1), allow_multicast))
    classes = _core_classes(shape, tuple(split.items()), config.cores, group)
    stationary = stationary and a_block_sticks([c[0] for c in classes]) > 0  # A loaded once: the fewest bytes
    sticks = 0
    for box, _, role, count in classes:
        w = _core_work(shape, box, one, config, a_stationary=stationary)
        load, store = w.load_sticks, w.store_sticks
        if group > 1 and role > 0:
            load -= w.b_sticks
        if split.get("k", 1) > 1 and box["k"][0] > 0:  # a later k part sends its sums over the ring
            store = 0
        sticks += count * (load + store)
    return sticks * STICK_BYTES / config.ddr_bytes_per_s


@functools.lru_cache(maxsize=4096)
def _best_chunks(
    shape: MatmulShape,
    split_items: tuple,
    config: DeviceConfig,
    budget_sticks: int,
    double_buffer: bool,
    multicast: int,
    epilogue,
    a_resident: bool = False,
    out_resident: bool = False,
    stationary: bool = True,
):
    split = dict(split_items)
    dims = shape.dims
    boxes = [b for b in core_boxes(dims, split, config.cores) if b is not None]
    widest = {d.name: max(b[d.name][1] - b[d.name][0] for b in boxes) for d in dims}  # = max_chunk(..., 1)
    best = None
    options = [[1] if d.name == "b" else _powers(max(1, widest[d.name])) for d in dims]

    def need(ext: dict[str, int], block: int) -> int:
        sticks = sum(matmul_buffers(shape, ext, double_buffer, epilogue, multicast, a_resident, block).values())
        if split.get("k", 1) > 1:
            sticks += matmul_tiles(ext["m"], ext["n"], ext["k"])["acc"]  # acc_in: the next k part's sums
        return sticks  # (tiles hold one matrix at a time)

    for combo in itertools.product(*options):
        chunks = {d.name: c for d, c in zip(dims, combo)}
        ext = {name: -(-w // chunks[name]) for name, w in widest.items()}  # = max_chunk(..., chunks)
        if need(ext, 0) > budget_sticks:
            continue
        est = matmul_estimate(shape, split, chunks, config, double_buffer, multicast, a_resident, out_resident)
        if best is None or est.seconds < best[1].seconds:
            best = (tuple(chunks.items()), est)
    # A stationary with those chunks, where it is faster and fits: it saves A's reloads and
    # keeps the chunks (another chunking would regroup the sums and shrink the first B tile,
    # which early loads start before the barrier)
    a_block = a_block_sticks(boxes, a_resident, multicast) if stationary else 0
    if best is not None and a_block:
        chunks = dict(best[0])
        ext = {name: -(-w // chunks[name]) for name, w in widest.items()}
        if need(ext, a_block) <= budget_sticks:
            est = matmul_estimate(
                shape, split, chunks, config, double_buffer, multicast, a_resident, out_resident, True
            )
            if est.seconds < best[1].seconds:
                best = (best[0], est)
    return best


def relayout_seconds(layout: Layout, config: DeviceConfig) -> float:
    """Estimated time of a restickify through DDR, one kernel of its launch sequence: it loads
    and stores every stick of the tensor once, and the shared DDR bandwidth bounds it (as it
    does in the simulation: a 5.24 MB transpose takes 52.25 us of device time, 2 x 5.24 MB /
    204.8 GB/s = 51.2 us; bench/relayout.py), plus the card's dispatch of the next kernel."""
    return 2 * layout.nbytes / config.ddr_bytes_per_s + config.dispatch_overhead_s


def host_round_trip_seconds(layout: Layout, config: DeviceConfig) -> float:
    """Estimated time of taking a device tensor through the host and back between two device
    kernels: its `from_device` and `to_device` (latency and bytes each), the host op's own time,
    and a new launch sequence, since the host waited for the value (the kernel after it pays
    `launch_overhead_s` instead of `dispatch_overhead_s`). The profile reports the same round
    trips of a call (`Profile.host_round_trips`, `Profile.host_round_trip_s`)."""
    return (
        2 * host_transfer_seconds(layout.nbytes, config)
        + config.host_op_s
        + config.launch_overhead_s
        - config.dispatch_overhead_s
    )


def attention_seconds(
    att: spyre.Attention, split: dict[str, int], config: DeviceConfig, multicast: bool = False
) -> float:
    """Estimated time of an attention kernel (spyre.Attention) under `split` (its dims b, p,
    h): the larger of its PT passes on the busiest core and its DDR traffic at the shared
    bandwidth, where every core loads the whole K^T and V of each matrix it takes (with
    `multicast`, the cores of one matrix load them once: `attention_chain`), q's rows and the
    context once, and the group's other inputs (a mask) once per core and matrix where they
    are the same for every head, else once per row."""
    dims = att.dims()
    boxes = [b for b in core_boxes(dims, split, config.cores) if b is not None]
    (k1, n1), (k2, n2) = (spyre.device_layout(v.type).shape[-2:] for v in (att.scores.rhs, att.context.rhs))
    r = math.ceil(n1 / F16_LANES)
    per_matrix = (k1 * r + k2 * math.ceil(n2 / F16_LANES)) * STICK_BYTES
    sticks = 0
    pt = 0.0
    extra = [st for _, st in att.inputs()]
    chained = multicast and attention_chain(boxes) > 1
    loaded: set[tuple[int, int]] = set()
    for box in boxes:
        mats = box["b"][1] - box["b"][0]
        pos = box["p"][1] - box["p"][0]
        rows = mats * pos * (box["h"][1] - box["h"][0])
        if not chained or box["b"] not in loaded:
            sticks += mats * per_matrix // STICK_BYTES
            loaded.add(box["b"])
        sticks += rows * (math.ceil(k1 / F16_LANES) + math.ceil(n2 / F16_LANES))
        for st in extra:
            sticks += (mats * pos if att.same_for_every_head(st) else rows) * (r if st[-1] else 1)
        passes = cycles.pt_passes(config, rows, n1, k1) + cycles.pt_passes(config, rows, n2, k2)
        pt = max(pt, passes / config.clock_hz)
    return max(pt, sticks * STICK_BYTES / config.ddr_bytes_per_s)


def attention_chain(boxes: Sequence[Box | None]) -> int:
    """The cores per matrix of an attention kernel's boxes when K^T and V can pass down chains
    of them over the ring: each core takes one matrix, and the cores of a matrix are
    consecutive and equally many; else 1."""
    by_matrix: dict[tuple[int, int], list[int]] = {}
    for core, box in enumerate(boxes):
        if box is not None:
            by_matrix.setdefault(box["b"], []).append(core)
    sizes = {len(cores) for cores in by_matrix.values()}
    if (
        any(b1 - b0 != 1 for b0, b1 in by_matrix)
        or len(sizes) != 1
        or any(cores != list(range(cores[0], cores[0] + len(cores))) for cores in by_matrix.values())
    ):
        return 1
    return sizes.pop()
