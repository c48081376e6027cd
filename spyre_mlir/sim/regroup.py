"""A program's batched steps regrouped by their data flow: what later launches run.

The batched steps (sim/batch.py) merge the instructions that are at the same point of the
cooperative schedule. What stays apart is what one core does tile after tile (a matmul's
column tiles: ten steps each), because the tiles reuse the same LX buffers. Here the steps
are taken as one sequential program over LX rows (a step reads all its rows, then writes
them) and rewritten:

    rename    every write goes to fresh rows (scratch rows past the cores' LX); a read goes
              to the rows holding the value it would read. Only true dependencies remain.
    values    rows known to hold equal bytes share a number: a DMA load takes the number of
              its DDR stick (the value stored there earlier in the launch, if one was, else
              one number per stick), a ring send its source's, any other write a new one.
              A read goes to the first row that held its value, so copies fall dead.
    prune     the rows of a step (one per core) whose writes nothing reads are dropped;
              DDR stores and what the launch leaves in LX (`spyre.resident_out`) count as read.
    regroup   list scheduling: of the steps whose inputs are written, all of the signature
              (`Plan.signature`) that came first in the original order become one step, their
              rows concatenated; then the next.
    kept      a 16-bit store of computed values (an SFP function, a reduction) whose rows some
              step reads only as values (an SFP or reduction source, a product's A) keeps the
              fp32 values it stores in rows of `DeviceMemory.scratch_values`, and those reads
              take them there instead of decoding the bits; the bits are stored only if some
              read takes them (`_keep_values`). The same values, so the same bits.
    chains    a PT step that accumulates onto the sums of one PT step, sums nothing else
              reads, joins it: the k passes of an output tile become one step whose sums
              between passes never reach LX (`_fuse_chains`, `ChainStep`).
    copy back what `resident_out` leaves is copied from its fresh rows to its LX rows.
    allocate  fresh rows become scratch rows, a scratch row taken again once its value is dead
              (`_allocate`): scratch holds what is live at once, not all a launch writes; kept
              values take rows of their own the same way.

A PT step's rows become matrix products: rows reading the same B rows are one product of
their A stacked on that B, and products whose A stacks are the same rows one product of
that stack on their B side by side ((m * rows, k) @ (k, n * tiles): a matmul's column tiles
are one product). Each of a product's tiles is summed on its own, by plans.py's
`tile_products` as PtPlan sums it, so the way products are grouped does not change a result.
A product's B rows that hold sticks of a DDR argument as loaded (their values' origin,
`_rename`) are read from that argument's decoded copy when it is frozen (memory.DdrTensor
.freeze, DeviceMemory.decoded: the same values), as a strided view where the tiles lie on a
grid of it (BView). The copy is made in the arrangement where a B row's sticks are side by
side (memory.DecodedCopy), so that a weight laid out column of sticks by column is read in
place too. A load that nothing but such products reads is skipped then (`_FrozenLoad`).

DDR order is kept where it matters (exact sticks): a load or a store after a store of the
same stick, and a store after a load of it, stay after it.

Equal results are checked against the cooperative run, the definition, in
test_host_speed.py (bit for bit); time is untouched (the timing model replays the original
per-core instruction lists).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from spyre_mlir.sim.machine import Machine
from spyre_mlir.sim.plans import DmaPlan, Plan, PtPlan, Step, operand_matrix, tile_products
from spyre_mlir.target.constants import F16_LANES, F32_LANES, STICK_BYTES

if TYPE_CHECKING:
    from spyre_mlir.sim.memory import DdrTensor, DecodedCopy


class Unbatchable(Exception):
    """The program keeps the cooperative execution (a gather, a deadlock, an instruction with no batched form)."""


class _Node:
    """One batched step as reads and writes of LX rows (arrays with a row per core)."""

    __slots__ = (
        "ins",
        "cores",
        "order",
        "reads",
        "write",
        "ddr_keys",
        "ddr_pos",
        "loads",
        "preds",
        "b_origin",
        "for_products",
        "kept",
        "keeps",
        "bits",
        "links",
        "link_reads",
        "kept_rows",
        "kept_write",
    )

    def __init__(self, ins: Plan, cores: np.ndarray, order: int, reads: list[np.ndarray], write: np.ndarray | None):
        self.ins, self.cores, self.order = ins, cores, order
        self.reads, self.write = reads, write
        self.ddr_keys: np.ndarray | None = None
        """A DMA's DDR sticks, numbered over the program (`_rename`)."""
        self.ddr_pos: np.ndarray | None = None
        self.loads = False
        """A DMA load (else, with `ddr_keys`, a store)."""
        self.preds: set[int] = set()
        self.b_origin: np.ndarray | None = None
        """A PT's B rows: the DDR stick (arg << 40 | stick) each holds as loaded, else -1 (`_rename`)."""
        self.for_products = False
        """A DMA load only products read, from the argument (`_mark_product_loads`)."""
        self.kept: list[bool] = []
        """Per read: whether it takes its values as a step that keeps them stored them (`_keep_values`)."""
        self.keeps = False
        """A 16-bit store whose values are kept decoded beside its rows (`_keep_values`)."""
        self.bits = True
        """Whether its write's bits are stored (False: only its kept values are read)."""
        self.links: list[_Node] | None = None
        """A chain of products (`_fuse_chains`): its PT nodes, in order."""
        self.link_reads: list[list[int | None]] = []
        """A chain's: per link, per read of the link, its index in `reads` (None: the sums of
        the link before, which the chain holds)."""
        self.kept_rows: list[np.ndarray | None] = []
        """Per read taken as kept values: its rows of `DeviceMemory.scratch_values` (`_allocate`)."""
        self.kept_write: np.ndarray | None = None
        """A keeping write's rows of `DeviceMemory.scratch_values` (`_allocate`)."""


def _node(ins: Plan, cores: np.ndarray, order: int) -> _Node:
    """The rows a step reads and the rows it writes (none for a DMA store, which writes DDR),
    with a DMA's DDR sticks: an instruction's accesses, as any merged step of them."""
    accesses = ins.accesses()
    if accesses is None:
        raise Unbatchable(f"no regrouped form of {ins.where}")
    reads, write = accesses
    node = _Node(ins, cores, order, reads, write)
    ddr = ins.ddr_access()
    if ddr is not None:
        node.ddr_pos = ddr.pos
        node.ddr_keys = ddr.pos + (ddr.arg << 40)
        node.loads = ddr.load
    return node


def _known(a: np.ndarray | None) -> np.ndarray:
    """An array a node of its kind has (the write of a node that writes LX, a DMA's DDR keys)."""
    assert a is not None
    return a


def _compact(nodes: list[_Node], lx_rows: int) -> np.ndarray:
    """Number the LX rows the nodes touch 0, 1, ... (in place of their row numbers); the
    touched rows, ascending (compact row i is LX row touched[i])."""
    arrays = [(n, j) for n in nodes for j in range(len(n.reads))] + [(n, -1) for n in nodes if n.write is not None]

    def get(n: _Node, j: int) -> np.ndarray:
        return n.reads[j] if j >= 0 else _known(n.write)

    mark = np.zeros(lx_rows, dtype=bool)
    for n, j in arrays:
        mark[get(n, j)] = True
    touched = np.flatnonzero(mark)
    number = np.empty(lx_rows, dtype=np.int64)
    number[touched] = np.arange(touched.size)
    for n, j in arrays:  # array by array: one concatenation of them all is slower (its size)
        if j >= 0:
            n.reads[j] = number[n.reads[j]]
        else:
            n.write = number[_known(n.write)]
    return touched


def _rename(nodes: list[_Node], touched: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Rename every write to fresh rows and every read to the first row of its value
    (module docstring), in compact rows (`_compact`: the first `touched` rows are LX rows).
    Returns (canon, producer, origin, rows): the first row of the value each touched LX row
    holds at the end, the node (its `order`) that wrote each fresh row, the DDR stick whose
    bytes at the launch's start each row holds (its key, arg << 40 | stick; -1 for a value
    the launch computes or found in LX), and the number of rows (touched and fresh)."""
    total = touched + sum(n.write.size for n in nodes if n.write is not None)
    canon = np.arange(touched, dtype=np.int64)  # LX row -> the first row of the value it holds now
    val = np.empty(total, dtype=np.int64)  # row -> its value's number
    val[:touched] = canon
    lead = np.empty(total, dtype=np.int64)  # value -> its first row (set as values are made)
    lead[:touched] = canon
    producer = np.empty(total, dtype=np.int64)  # set as fresh rows are written
    producer[:touched] = -1
    val_key = np.full(total, -1, dtype=np.int64)  # value -> the DDR stick it was first loaded from
    origin = np.full(total, -1, dtype=np.int64)
    dma = [(n, n.ddr_keys) for n in nodes if n.ddr_keys is not None]
    ddr_val = np.zeros(0, dtype=np.int64)  # DDR stick (numbered) -> its value's number, -1 before any
    keys = np.zeros(0, dtype=np.int64)
    if dma:  # DDR sticks numbered too: what value each holds, once loaded or stored
        keys, inv = np.unique(np.concatenate([k.reshape(-1) for _, k in dma]), return_inverse=True)
        ddr_val = np.full(keys.size, -1, dtype=np.int64)
        at = 0
        for n, k in dma:
            n.ddr_keys, at = inv[at : at + k.size].reshape(k.shape), at + k.size
    nxt, nv = touched, touched
    for node in nodes:
        node.reads = [canon[r] for r in node.reads]
        if node.write is None:  # a DMA store: its sticks take the stored rows' values (the last repeat wins)
            ddr_val[_known(node.ddr_keys).reshape(-1)] = val[node.reads[0].reshape(-1)]
            continue
        w = node.write.reshape(-1)
        fresh = np.arange(nxt, nxt + w.size, dtype=np.int64)
        nxt += w.size
        if node.ins.COPIES:  # copies: values that have rows leading them
            v = val[node.reads[0].reshape(-1)]
        elif node.ddr_keys is not None:  # a DMA load
            k = node.ddr_keys.reshape(-1)
            new = ddr_val[k] < 0
            if new.any():  # sticks not seen before: new values, led by their first row here
                unseen, first = np.unique(k[new], return_index=True)
                ddr_val[unseen] = np.arange(nv, nv + unseen.size)
                lead[nv : nv + unseen.size] = fresh[new][first]
                val_key[nv : nv + unseen.size] = keys[unseen]
                nv += unseen.size
            v = ddr_val[k]
        else:  # new values, each led by its row
            v = np.arange(nv, nv + w.size, dtype=np.int64)
            lead[v] = fresh
            nv += w.size
        val[fresh] = v
        origin[fresh] = val_key[v]
        producer[fresh] = node.order
        canon[w] = lead[v]  # the last of repeated rows wins, as a step's write does
        node.write = fresh.reshape(node.write.shape)
    return canon, producer, origin, nxt


def _prune(nodes: list[_Node], live_out: np.ndarray, rows: int) -> list[_Node]:
    """Keep the rows (cores) of each node whose writes something later reads (backwards);
    a node keeps its arrays' kept rows only."""
    live = np.zeros(rows, dtype=bool)
    live[live_out] = True
    kept = []
    for node in reversed(nodes):
        if node.write is not None:
            keep = live[node.write.reshape(len(node.cores), -1)].any(axis=1)
            if not keep.all():
                if not keep.any():
                    continue
                node.cores, node.write = node.cores[keep], node.write[keep]
                node.reads = [r[keep] for r in node.reads]
                if node.ddr_keys is not None:
                    node.ddr_keys, node.ddr_pos = node.ddr_keys[keep], _known(node.ddr_pos)[keep]
        for r in node.reads:
            live[r.reshape(-1)] = True
        kept.append(node)
    kept.reverse()
    return kept


def _mark_product_loads(nodes: list[_Node], origin: np.ndarray, live_out: np.ndarray, rows: int) -> None:
    """Give every PT node its B rows' origins (`_rename`), and mark the DMA loads whose rows
    hold DDR sticks as loaded and are read by nothing but PT nodes' B operands
    (`_Node.for_products`): a product can take those from the argument's decoded copy
    (`GemmStep._b_operand`), and the load is then not needed (`_FrozenLoad`)."""
    other = np.zeros(rows, dtype=bool)  # rows read other than as a product's B
    other[live_out] = True
    for n in nodes:
        pt = isinstance(n.ins, PtPlan)
        if pt:
            n.b_origin = origin[n.reads[1]]
        for j, r in enumerate(n.reads):
            if not (pt and j == 1):
                other[r.reshape(-1)] = True
    for n in nodes:
        if n.loads and n.write is not None:
            w = n.write.reshape(-1)
            n.for_products = not other[w].any() and bool((origin[w] >= 0).all())


def _keep_values(nodes: list[_Node], producer: np.ndarray, touched: int, live_out: np.ndarray, rows: int) -> None:
    """Keep decoded what a 16-bit store of computed values writes (`Plan.stores_values`), for
    the reads that decode it (`Plan.decoding_reads`) and read nothing else: every row of such
    a read is fresh and written by such a store (`_Node.kept`). A store keeps its values if a
    read takes them so (`_Node.keeps`), and stores the bits too only if some other read takes
    its rows (a DMA store, a copy, a product's B, what the launch leaves in LX): `_Node.bits`."""
    keeps = np.zeros(max((n.order for n in nodes), default=-1) + 1, dtype=bool)
    for n in nodes:
        n.keeps = n.write is not None and n.ins.stores_values()
        keeps[n.order] = n.keeps
    as_bits = np.zeros(rows, dtype=bool)  # rows some read takes as bits
    as_bits[live_out] = True
    as_values = np.zeros(rows, dtype=bool)  # rows some read takes as kept values
    for n in nodes:
        decoding = n.ins.decoding_reads()
        n.kept = []
        for j, r in enumerate(n.reads):
            flat = r.reshape(-1)
            kept = bool(decoding[j]) and bool((flat >= touched).all()) and bool(keeps[producer[flat]].all())
            n.kept.append(kept)
            (as_values if kept else as_bits)[flat] = True
    for n in nodes:
        if n.keeps:
            w = _known(n.write).reshape(-1)
            n.keeps = bool(as_values[w].any())  # (no read takes them kept: bits alone)
            n.bits = not n.keeps or bool(as_bits[w].any())


def _fuse_chains(nodes: list[_Node], producer: np.ndarray, live_out: np.ndarray, rows: int) -> list[_Node]:
    """Join the k passes of each output tile into one node (a chain): a PT node that
    accumulates onto the sums of one PT node, on the same cores, that nothing else reads.
    The chain reads every link's A and B and writes the last link's sums; the sums between
    links are held by the step (`ChainStep`), never stored, and each link's products and the
    sum onto the sums before are those of the link alone. Returns the nodes, each chain in
    its last link's place (its order: the sums' producer)."""
    by_order = {n.order: n for n in nodes}
    sums = np.zeros(rows, dtype=bool)  # the rows an accumulating PT reads its sums from
    for n in nodes:
        if isinstance(n.ins, PtPlan) and n.ins.accumulate:
            sums[n.reads[2].reshape(-1)] = True
    count = np.zeros(rows, dtype=np.int64)  # how many reads take each of those rows
    for r in [r.reshape(-1) for n in nodes for r in n.reads] + [live_out]:
        hits = r[sums[r]]
        if hits.size:
            count += np.bincount(hits, minlength=rows)
    before: dict[int, _Node] = {}  # a link's order -> the link before it
    for x in nodes:
        if not isinstance(x.ins, PtPlan) or not x.ins.accumulate:
            continue
        old = x.reads[2]
        w = by_order.get(int(producer[old.reshape(-1)[0]]))
        if (
            w is None
            or not isinstance(w.ins, PtPlan)
            or w.write is None
            or w.write.shape != old.shape
            or (w.ins.m, w.ins.n) != (x.ins.m, x.ins.n)
            or not np.array_equal(w.write, old)
            or not np.array_equal(w.cores, x.cores)
            or (count[old.reshape(-1)] != 1).any()
        ):
            continue
        before[x.order] = w
    if not before:
        return nodes
    inner = {w.order for w in before.values()}
    out = []
    for x in nodes:
        if x.order in inner:  # (a link of a chain that goes on: in the chain's place)
            continue
        if x.order not in before:
            out.append(x)
            continue
        links = [x]
        while links[0].order in before:
            links.insert(0, before[links[0].order])
        chain = _Node(x.ins, x.cores, x.order, [], x.write)
        chain.links = links
        for i, link in enumerate(links):
            at: list[int | None] = []
            for j, r in enumerate(link.reads):
                if i and j == 2:  # the sums of the link before
                    at.append(None)
                    continue
                at.append(len(chain.reads))
                chain.reads.append(r)
                chain.kept.append(link.kept[j] if link.kept else False)
            chain.link_reads.append(at)
        out.append(chain)
    return out


def _ddr_order(nodes: list[_Node]) -> None:
    """Edges that keep DDR accesses of one stick in order: a load or store after a store, a
    store after a load (only when some stick is stored and also loaded, or stored twice)."""
    dma = [(n.order, n, n.ddr_keys) for n in nodes if n.ddr_keys is not None]
    stored = [keys.reshape(-1) for _, n, keys in dma if not n.loads]
    if not stored:
        return
    stored_all = np.concatenate(stored)
    loaded = [keys.reshape(-1) for _, n, keys in dma if n.loads]
    clash = np.unique(stored_all).size != stored_all.size or (
        loaded and np.intersect1d(stored_all, np.concatenate(loaded)).size > 0
    )
    if not clash:
        return
    last_store: dict[int, int] = {}
    readers: dict[int, list[int]] = defaultdict(list)
    for i, n, keys in dma:
        for k in np.unique(keys).tolist():
            if k in last_store:
                n.preds.add(last_store[k])
            if n.loads:
                readers[k].append(i)
            else:
                n.preds.update(readers.pop(k, ()))
                last_store[k] = i
        n.preds.discard(i)


def _signature(ins: Plan) -> tuple | None:
    """`Plan.signature`, but a PT's for shared operands too (the products here find what rows
    share; the waves keep a shared PT apart: merging it there cost a 12-layer first call
    ~0.06 s of concatenation for the same steps)."""
    return ins.product_signature() if isinstance(ins, PtPlan) else ins.signature()


def _node_signature(n: _Node) -> tuple | None:
    """Nodes with equal signatures can be one step: `_signature` (a chain's, of its links),
    and which reads take kept values, whether it keeps its values and stores its bits
    (`_keep_values`: a step does each for all its rows or for none)."""
    if n.links is None:
        sig = _signature(n.ins)
    else:
        sig = ("chain", tuple(_signature(link.ins) for link in n.links), tuple(r.shape[1:] for r in n.reads))
    return None if sig is None else (*sig, tuple(n.kept), n.keeps, n.bits)


def _schedule(nodes: list[_Node], producer: np.ndarray) -> list[list[_Node]]:
    """The nodes as groups that run as one step each, in an order that keeps every
    dependency (list scheduling, module docstring)."""

    if not nodes:  # all dead: a program whose writes nothing reads
        return []
    pos = np.zeros(max(n.order for n in nodes) + 1, dtype=np.int64)  # preds and producers name nodes by order
    pos[[n.order for n in nodes]] = np.arange(len(nodes))
    succs: list[list[int]] = [[] for _ in nodes]
    indeg = [0] * len(nodes)
    # the edges from producers: distinct (reader, writer) pairs, numbered reader * N + writer,
    # gathered in batches of ~1M read rows (runs of one pair collapsed before they are kept)
    n_nodes = len(nodes)
    keys: list[np.ndarray] = []
    batch: list[tuple[int, np.ndarray]] = []
    size = 0

    def flush() -> None:
        readers = np.repeat(np.asarray([i for i, _ in batch], dtype=np.int64), [r.size for _, r in batch])
        writers = producer[np.concatenate([r for _, r in batch])]
        found = writers >= 0
        k = readers[found] * n_nodes + pos[writers[found]]
        if k.size:
            keys.append(k[np.flatnonzero(np.diff(k, prepend=-1))])

    for i, n in enumerate(nodes):
        for r in n.reads:
            batch.append((i, r.reshape(-1)))
            size += r.size
            if size >= 1 << 20:
                flush()
                batch, size = [], 0
    if batch:
        flush()
    if keys:
        pairs = np.unique(np.concatenate(keys))
        for i, j in zip((pairs // n_nodes).tolist(), (pairs % n_nodes).tolist()):
            if i != j:
                succs[j].append(i)
                indeg[i] += 1
    sigs: list[Any] = []
    for i, n in enumerate(nodes):
        for p in n.preds:  # DDR order (`_ddr_order`)
            succs[pos[p]].append(i)
            indeg[i] += 1
        sig = _node_signature(n)
        sigs.append(sig if sig is not None else ("single", i))
    ready: dict[Any, list[int]] = defaultdict(list)
    for i in range(len(nodes)):
        if indeg[i] == 0:
            ready[sigs[i]].append(i)
    groups: list[list[_Node]] = []
    while ready:
        sig = min(ready, key=lambda s: min(ready[s]))
        members = sorted(ready.pop(sig))
        groups.append([nodes[i] for i in members])
        for i in members:
            for j in succs[i]:
                indeg[j] -= 1
                if indeg[j] == 0:
                    ready[sigs[j]].append(j)
    if sum(len(g) for g in groups) != len(nodes):  # a cycle: cannot happen for a sequential program
        raise AssertionError("regroup: dependency cycle")
    return groups


def _merge_all(group: list[_Node]) -> list[tuple[Step, np.ndarray]]:
    """The steps of a group of nodes of one signature: one, but for DMA loads of which only
    some are `for_products` one for those (a `_FrozenLoad`) and one for the rest."""
    if not group[0].loads:
        return [_merge(group)]
    frozen = [n for n in group if n.for_products]
    rest = [n for n in group if not n.for_products]
    out = [_merge(rest)] if rest else []
    if frozen:
        load, cores = _merge(frozen)
        assert isinstance(load, DmaPlan)
        out.append((_FrozenLoad(load), cores))
    return out


def _merge(group: list[_Node]) -> tuple[Step, np.ndarray]:
    """One step over the kept rows of a group of nodes of one signature."""
    first = group[0].ins
    cores = np.concatenate([n.cores for n in group])
    if group[0].links is not None:
        return ChainStep(group), cores
    if isinstance(first, PtPlan):
        return GemmStep(first, group), cores
    cat = np.concatenate
    reads = [cat([n.reads[j] for n in group]) for j in range(len(group[0].reads))]
    write = None if group[0].write is None else cat([_known(n.write) for n in group])
    ddr_pos = None if group[0].ddr_pos is None else cat([_known(n.ddr_pos) for n in group])
    step = first.with_rows(reads, write, ddr_pos)
    if any(group[0].kept):  # (one signature: every node's reads are kept alike)
        step.kept_reads = tuple(
            cat([_known(n.kept_rows[j]) for n in group]) if k else None for j, k in enumerate(group[0].kept)
        )
    if group[0].keeps:
        step.kept_write = cat([_known(n.kept_write) for n in group])
        step.writes_bits = group[0].bits
    return step, cores


def _ids(idx: np.ndarray) -> list[int]:
    """Per row of an index array, a number: equal for equal rows."""
    seen: dict[bytes, int] = {}
    return [seen.setdefault(row.tobytes(), len(seen)) for row in idx.reshape(len(idx), -1)]


class GemmStep:
    """PT rows of one shape as matrix products (module docstring): `blocks` of
    (A rows (rows, m, kt), B rows (tiles, k, nt)), each one product (rows * m, k) @ (k, tiles * n)
    whose result is (rows, m, tiles, n); `singles`, rows whose A and B no other row shares,
    one stacked product. `out` (and `old`, accumulating) are the C rows in the order the
    products give them."""

    def __init__(self, ins: PtPlan, group: list[_Node]):
        self.m, self.n, self.k, self.accumulate = ins.m, ins.n, ins.k, ins.accumulate
        self.a_kept = group[0].kept[0]
        """Whether A is read as the values kept decoded (`_keep_values`; one signature: every
        node's A alike): the blocks' A rows are then rows of `DeviceMemory.scratch_values`."""

        def cat(j: int) -> np.ndarray:
            return np.concatenate([n.reads[j] if j >= 0 else _known(n.write) for n in group])

        a, b, c = cat(0), cat(1), cat(-1)
        if self.a_kept:  # (its rows of the kept values: the bits may not be stored)
            a = np.concatenate([_known(n.kept_rows[0]) for n in group])
        b_origin = np.concatenate([_known(n.b_origin) for n in group])
        old = cat(2) if self.accumulate else None
        aid = _ids(a)
        by_b: dict[int, list[int]] = defaultdict(list)  # B -> the rows that read it
        for r, g in enumerate(_ids(b)):
            by_b[g].append(r)
        by_a: dict[tuple[int, ...], list[list[int]]] = defaultdict(list)  # A stack -> its B groups' rows
        for members in by_b.values():
            by_a[tuple(aid[r] for r in members)].append(members)
        self.blocks: list[tuple[np.ndarray, np.ndarray, BSource | None]] = []
        order: list[int] = []
        singles: list[int] = []
        for stack, groups in by_a.items():
            if len(stack) == 1 and len(groups) == 1:
                singles.append(groups[0][0])
                continue
            tiles = [g[0] for g in groups]
            self.blocks.append((a[groups[0]], b[tiles], _b_source(b_origin[tiles])))
            order.extend(r for g in groups for r in g)  # tile by tile, each in stack order
        self.singles = None if not singles else (a[singles], b[singles], _b_source(b_origin[singles]))
        order.extend(singles)
        self.out = c[order]
        self.old = None if old is None else old[order]
        self._views: dict[tuple[int, int, int | None], StridedTiles] = {}
        """Per source (by id) and decoded copy's shape, where its tiles lie in the copy: a
        later launch takes the view again without working it out."""

    def sources(self) -> list[BSource | None]:
        """Where each product's B rows come from: the blocks', then the singles'."""
        return [source for _, _, source in self.blocks] + ([self.singles[2]] if self.singles else [])

    def run(self, model: Machine, args: Sequence[DdrTensor], cores: np.ndarray, check: bool = False) -> None:
        prod = self.products(model, args)
        if self.accumulate:
            prod = self.onto_stored(model, prod)
        self.store(model, prod)

    def onto_stored(self, model: Machine, prod: np.ndarray) -> np.ndarray:
        """prod + the sums stored at `old` (fp32), as an accumulating PT adds them."""
        old = model.memory.lx_rows[_known(self.old)].view(np.float32).reshape(len(prod), self.m, -1)
        prod += old[:, :, : self.n] if old.shape[2] != self.n else old
        return prod

    def store(self, model: Machine, prod: np.ndarray) -> None:
        """The sums (rows, m, n) to the C rows `out`, fp32 sticks (lanes past n zero)."""
        m, n = self.m, self.n
        width = self.out.shape[2] * F32_LANES
        if width != n:
            full = np.zeros((len(prod), m, width), dtype=np.float32)
            full[:, :, :n] = prod
            prod = full
        model.memory.lx_rows[self.out] = prod.view(np.uint8).reshape(len(prod), m, -1, STICK_BYTES)

    def products(self, model: Machine, args: Sequence[DdrTensor]) -> np.ndarray:
        """The products (rows, m, n) in the order of `out`, tile by tile (`tile_products`)."""
        acc = model.config.accumulation
        m, n, k = self.m, self.n, self.k
        parts = []
        for a_rows, b_rows, source in self.blocks:  # every (tile, row) pair: A[row] @ B[tile]
            a = self._a_operand(model, a_rows, len(a_rows) * m).reshape(len(a_rows), m, k)
            b = self._b_operand(model, args, b_rows, source)
            grid = b.ndim - 2  # the tiles' axes
            parts.append(tile_products(a[(None,) * grid], b[..., None, :, :], acc).reshape(-1, m, n))
        if self.singles is not None:
            a_rows, b_rows, source = self.singles
            b = self._b_operand(model, args, b_rows, source)
            a = self._a_operand(model, a_rows, len(a_rows) * m).reshape(*b.shape[:-2], m, k)
            parts.append(tile_products(a, b, acc).reshape(-1, m, n))
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _a_operand(self, model: Machine, rows: np.ndarray, matrix_rows: int) -> np.ndarray:
        """A rows as a contiguous (matrix_rows, k) fp32 matrix: decoded from their LX bits, or
        taken from the values kept decoded (`a_kept`: `rows` are rows of `scratch_values`)."""
        if not self.a_kept:
            return operand_matrix(model.memory.numerics, model.memory.lx_rows[rows], matrix_rows, self.k)
        x = model.memory.scratch_values[rows].reshape(matrix_rows, -1)
        return x if x.shape[1] == self.k else np.ascontiguousarray(x[:, : self.k])

    def _b_operand(
        self, model: Machine, args: Sequence[DdrTensor], rows: np.ndarray, source: BSource | None
    ) -> np.ndarray:
        """B tiles (..., k, n) as fp32, (tiles, k, n) or the tiles on their grid (BView): the
        rows that hold sticks of a frozen argument as loaded from its decoded copy
        (`DeviceMemory.decoded`; a strided view of it where the tiles are one), the others
        decoded from their LX bits: the same values, as a frozen tensor's bytes do not change."""
        k, n, tiles = self.k, self.n, len(rows)
        lx, num = model.memory.lx_rows, model.memory.numerics
        if source is None:
            return operand_matrix(num, lx[rows], tiles * k, n).reshape(tiles, k, n)
        if source.views:
            arg = source.parts[0][0]
            copy = model.memory.decoded(args[arg], source.rows)
            if copy is not None:
                key = (id(source), copy.values.shape[0], copy.rows)
                strided = self._views.get(key)
                if strided is None:
                    view = source.views.get(copy.rows)
                    if view is not None and view.end <= copy.values.shape[0]:
                        strided = self._views[key] = view.strided(copy, k, n)
                if strided is not None:
                    return strided.of(copy.values)
        flat = rows.reshape(tiles * k, -1)
        pieces = []  # (rows of the tiles * k, their values)
        for arg, idx, pos in source.parts:
            copy = model.memory.decoded(args[arg])
            if copy is None:
                pieces.append((idx, operand_matrix(num, lx[flat[idx]], len(idx), n)))
            else:
                b = copy.values.take(copy.rows_of(pos.reshape(-1)), axis=0).reshape(len(idx), -1)
                pieces.append((idx, b if n == b.shape[1] else b[:, :n]))
        if source.computed is not None:
            pieces.append((source.computed, operand_matrix(num, lx[flat[source.computed]], len(source.computed), n)))
        if len(pieces) == 1:  # all rows from one source, in order: no assembly
            return pieces[0][1].reshape(tiles, k, n)
        out = np.empty((tiles * k, n), dtype=np.float32)
        for idx, values in pieces:
            out[idx] = values
        return out.reshape(tiles, k, n)


class ChainStep:
    """Chains of products (`_fuse_chains`) as one step: each link's products as its GemmStep
    computes them, each link's onto the sums before it as the accumulating PT adds them
    (fp32, in the links' order), and the last sums stored. The same bits as the links one
    after the other; the sums between links never reach LX."""

    def __init__(self, group: list[_Node]):
        chains = [c.links or [] for c in group]
        self.links: list[GemmStep] = []
        for i, node in enumerate(chains[0]):
            assert isinstance(node.ins, PtPlan)
            self.links.append(GemmStep(node.ins, [links[i] for links in chains]))
        self.into: list[np.ndarray] = []
        """Per link after the first: where each of its rows' sums before it is in the sums of
        the link before (its `old` rows among that link's `out` rows)."""
        for before, after in zip(self.links, self.links[1:]):
            have, want = before.out[:, 0, 0], _known(after.old)[:, 0, 0]
            order = np.argsort(have)
            at = order[np.searchsorted(have[order], want)]
            assert np.array_equal(have[at], want), "a chain's links hold the same sums"
            self.into.append(at)

    def sources(self) -> list[BSource | None]:
        return [source for link in self.links for source in link.sources()]

    def run(self, model: Machine, args: Sequence[DdrTensor], cores: np.ndarray, check: bool = False) -> None:
        first = self.links[0]
        sums = first.products(model, args)
        if first.accumulate:
            sums = first.onto_stored(model, sums)
        for link, at in zip(self.links[1:], self.into):
            prod = link.products(model, args)
            prod += sums[at]
            sums = prod
        self.links[-1].store(model, sums)


class BView(NamedTuple):
    """B tiles as sticks of a decoded copy arranged by `rows` (memory.DecodedCopy), in its
    coordinates (r, c): stick p is (p % rows, p // rows), or (0, p) in stick order, and lies at
    row r * C + c of the copy (C its columns). The tiles lie on a grid (`grid`: per axis,
    outermost first, (count, dr, dc)) from `base`; in a tile, row i and stick j of a B row add
    i * `row` + j * `stick`. `end`: the last stick + 1."""

    base: tuple[int, int]
    grid: tuple[tuple[int, int, int], ...]
    row: tuple[int, int]
    stick: tuple[int, int]
    end: int

    def strided(self, copy: DecodedCopy, k: int, n: int) -> StridedTiles:
        """Where the tiles (*grid counts, k, n) lie in `copy`: a strided view where a B row's
        sticks are side by side and rows at least a row apart (BLAS takes it as it is), else a
        strided view of whole sticks whose lanes past n are cut off (a copy at the product)."""
        columns = copy.values.shape[0] // copy.rows if copy.rows else 0

        def step(d: tuple[int, int]) -> int:
            return d[0] * columns + d[1]

        lane = STICK_BYTES * 2  # bytes of a stick's fp32 values
        at = step(self.base) * lane
        counts = tuple(g[0] for g in self.grid)
        outer = tuple(step(g[1:]) * lane for g in self.grid)
        sr, ss = step(self.row), step(self.stick)
        sticks = -(-n // F16_LANES)
        if sticks == 1 or (ss == 1 and sr * F16_LANES >= n):
            return StridedTiles((*counts, k, n), at, (*outer, sr * lane, 4), None)
        return StridedTiles((*counts, k, sticks, F16_LANES), at, (*outer, sr * lane, ss * lane, 4), n)


class StridedTiles(NamedTuple):
    """A strided view of a decoded copy's values (`BView.strided`): shape, byte offset and
    strides; `cut`, the lanes a row keeps when the view holds whole sticks (None: it is the
    tiles as they are)."""

    shape: tuple[int, ...]
    offset: int
    strides: tuple[int, ...]
    cut: int | None

    def of(self, values: np.ndarray) -> np.ndarray:
        # (np.ndarray on the copy's buffer: as_strided's cost, a tenth, and the bounds checked)
        b = np.ndarray(self.shape, np.float32, values, self.offset, self.strides)
        if self.cut is None:
            return b
        return b.reshape(*self.shape[:-2], -1)[..., : self.cut]


class BSource(NamedTuple):
    """Where a product's B rows (tiles, k, sticks of a row) hold sticks of DDR arguments as
    loaded (`_rename`'s origins): `parts`, per argument, (argument, rows of the tiles * k,
    their sticks); `computed`, the rows that hold values the launch computed (None: none);
    `views`, when all rows are sticks of one argument on an affine grid, its BView per
    arrangement of a decoded copy (`rows`, memory.DecodedCopy) that has one."""

    parts: list[tuple[int, np.ndarray, np.ndarray]]
    computed: np.ndarray | None
    views: dict[int | None, BView]

    @property
    def rows(self) -> int | None:
        """The arrangement to make the copy in when there is none: the one with a view where a
        B row's sticks are side by side (`_b_source` keeps no other arranged view)."""
        return next((r for r in self.views if r is not None), None)


def _grid(points: np.ndarray) -> list[tuple[int, np.ndarray]] | None:
    """`points` (n, d) as a row-major grid from points[0]: per axis, outermost first, (count,
    step); None when they are none."""
    axes: list[tuple[int, np.ndarray]] = []
    rest = points
    while len(rest) > 1:
        step = rest[1] - rest[0]
        runs = np.flatnonzero((np.diff(rest, axis=0) != step).any(axis=1))
        count = int(runs[0]) + 1 if runs.size else len(rest)
        if len(rest) % count:
            return None
        axes.append((count, step))
        rest = rest[::count]
    axes.reverse()
    if axes:
        index = np.indices([c for c, _ in axes]).reshape(len(axes), -1).T
        if not np.array_equal(points[0] + index @ np.array([s for _, s in axes]), points):
            return None
    return axes


def _b_view(pos: np.ndarray, rows: int | None) -> BView | None:
    """The BView of B sticks `pos` (tiles, k, sticks) in a copy arranged by `rows`, or None."""
    coords = np.stack([pos % rows, pos // rows] if rows else [np.zeros_like(pos), pos], axis=-1)
    tiles, k, sticks, _ = coords.shape
    first = coords[:, 0, 0]
    row = coords[0, 1, 0] - coords[0, 0, 0] if k > 1 else np.zeros(2, dtype=np.int64)
    stick = coords[0, 0, 1] - coords[0, 0, 0] if sticks > 1 else np.zeros(2, dtype=np.int64)
    inside = first[:, None, None] + np.arange(k)[:, None, None] * row + np.arange(sticks)[:, None] * stick
    grid = _grid(first)
    if grid is None or not np.array_equal(coords, inside):
        return None
    return BView(
        (int(first[0, 0]), int(first[0, 1])),
        tuple((c, int(s[0]), int(s[1])) for c, s in grid),
        (int(row[0]), int(row[1])),
        (int(stick[0]), int(stick[1])),
        int(pos.max()) + 1,
    )


def _b_source(origin: np.ndarray) -> BSource | None:
    """The BSource of B rows (tiles, k, sticks) from their origin keys, or None when no row
    holds a loaded stick."""
    tiles, k, sticks = origin.shape
    flat = origin.reshape(tiles * k, sticks)
    loaded = (flat >= 0).all(axis=1)
    if not loaded.any():
        return None
    arg = flat[:, 0] >> 40
    parts = []
    for a in np.unique(arg[loaded]).tolist():
        idx = np.flatnonzero(loaded & (arg == a))
        parts.append((int(a), idx, flat[idx] & ((1 << 40) - 1)))
    computed = None if loaded.all() else np.flatnonzero(~loaded)
    views: dict[int | None, BView] = {}
    if len(parts) == 1 and computed is None:
        pos = parts[0][2].reshape(tiles, k, sticks)
        in_order = _b_view(pos, None)
        if in_order is not None and min(in_order.row[1], in_order.stick[1]) >= 0:
            views[None] = in_order
            ss = in_order.stick[1]
            if sticks > 1 and ss > 1 and (by_rows := _b_view(pos, ss)) is not None and by_rows.stick == (0, 1):
                views[ss] = by_rows
    return BSource(parts, computed, views)


class _FrozenLoad:
    """A DMA load whose rows only products read, as B tiles from its argument
    (`GemmStep._b_operand`): skipped when the argument has a decoded copy, which the products
    read instead (`DeviceMemory.decoded`, made here in the arrangement `rows` the products
    take, if it is not yet: once it exists it stays while the argument lives, so the products
    take it too); run otherwise."""

    def __init__(self, load: DmaPlan):
        self.load = load
        self.rows: int | None = None

    def run(self, model: Machine, args: Sequence[DdrTensor], cores: np.ndarray, check: bool = False) -> None:
        if model.memory.decoded(args[self.load.arg], self.rows) is None:
            self.load.run(model, args, cores, check)
        else:
            self.load._check_ddr_bounds(args[self.load.arg], cores)


class _CopyBack:
    """LX rows a launch leaves for a later one, from the fresh rows that hold their values."""

    def __init__(self, dst: np.ndarray, src: np.ndarray):
        self.dst, self.src = dst, src

    def run(self, model: Machine, args: Sequence[DdrTensor], cores: np.ndarray, check: bool = False) -> None:
        lx = model.memory.lx_rows
        lx[self.dst] = lx[self.src]


def _arrange_frozen_loads(steps: list[tuple[Step, np.ndarray]]) -> None:
    """Give each _FrozenLoad the arrangement of its argument's decoded copy that the products
    reading the argument take (BSource.rows), so that the copy it makes is theirs."""
    rows: dict[int, int] = {}
    for step, _ in steps:
        if isinstance(step, (GemmStep, ChainStep)):
            for source in step.sources():
                if source is not None and source.rows is not None:
                    rows.setdefault(source.parts[0][0], source.rows)
    for step, _ in steps:
        if isinstance(step, _FrozenLoad):
            step.rows = rows.get(step.load.arg)


def regroup(
    steps: list[tuple[Plan, np.ndarray]], cores: int, lx_sticks: int, resident_out: tuple[int, int] | None
) -> tuple[list[tuple[Step, np.ndarray]], int, int]:
    """The steps rewritten (module docstring), how many scratch rows past the cores' LX they
    use, and how many rows of `DeviceMemory.scratch_values`."""
    nodes = [_node(ins, c, i) for i, (ins, c) in enumerate(steps)]
    if not nodes:
        return [], 0, 0
    touched = _compact(nodes, cores * lx_sticks)
    canon, producer, origin, rows = _rename(nodes, touched.size)
    # what the launch leaves in LX: the touched rows of resident_out
    out_rows = np.zeros(0, dtype=np.int64)
    if resident_out is not None:
        lo, hi = resident_out
        left = (np.arange(cores)[:, None] * lx_sticks + np.arange(lo, hi)[None]).reshape(-1)
        out_rows = np.flatnonzero(np.isin(touched, left))
    src = canon[out_rows]
    moved = src != out_rows
    nodes = _prune(nodes, src[moved], rows)
    _mark_product_loads(nodes, origin, src[moved], rows)
    _keep_values(nodes, producer, touched.size, src[moved], rows)
    nodes = _fuse_chains(nodes, producer, src[moved], rows)
    _ddr_order(nodes)
    groups = _schedule(nodes, producer)
    final, values, scratch, kept_rows = _allocate(groups, touched, rows, src[moved], cores * lx_sticks)
    for n in nodes:
        n.kept_rows = [values[r] if k else None for r, k in zip(n.reads, n.kept)]
        n.reads = [final[r] for r in n.reads]
        if n.write is not None:
            n.kept_write = values[n.write] if n.keeps else None
            n.write = final[n.write]
        if n.links is not None:  # the links read the chain's rows; the last writes its sums
            for link, at in zip(n.links, n.link_reads):
                link.reads = [link.reads[j] if i is None else n.reads[i] for j, i in enumerate(at)]
                link.kept_rows = [None if i is None else n.kept_rows[i] for i in at]
            n.links[-1].write = n.write
    out = [step for g in groups for step in _merge_all(g)]
    _arrange_frozen_loads(out)
    if moved.any():
        out.append((_CopyBack(final[out_rows[moved]], final[src[moved]]), np.zeros(0, dtype=np.int64)))
    return out, scratch, kept_rows


def _allocate(
    groups: list[list[_Node]], touched: np.ndarray, rows: int, kept: np.ndarray, lx_rows: int
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Compact rows to rows: touched LX rows to theirs; fresh rows to scratch rows past LX,
    reused once their value is dead (after the last step that reads it; a row nothing reads,
    after the step that writes it; `kept`, what is copied back, never):

        for each step g in order:
            its writes take freed scratch rows, then new ones
            free the rows whose last reader is g, and the rows g writes that nothing reads

    The values a step keeps decoded (`_Node.keeps`) take rows of `DeviceMemory.scratch_values`
    the same way, from a pool of their own; a write whose bits nothing reads (`_Node.bits`)
    takes no scratch row. A step reads all its rows before it writes, but a row freed at g is
    only taken by later steps. Returns (row of each compact row, -1 for none; values row of
    each, -1 for none; scratch rows used; values rows used)."""
    last = np.full(rows, -1, dtype=np.int64)  # the last step reading each row
    for g, group in enumerate(groups):
        for n in group:
            for r in n.reads:
                last[r.reshape(-1)] = g  # in step order: the last assignment stays
    last[kept] = len(groups)
    fresh = np.arange(touched.size, rows)
    read = fresh[last[fresh] >= 0]
    by_step = read[np.argsort(last[read], kind="stable")]
    ends = np.searchsorted(
        last[by_step], np.arange(len(groups)), side="right"
    )  # step g frees by_step[ends[g-1]:ends[g]]
    final = np.full(rows, -1, dtype=np.int64)
    final[: touched.size] = touched
    values = np.full(rows, -1, dtype=np.int64)
    pools = [np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)]  # free scratch rows, free values rows
    made = [0, 0]

    def take(kind: int, w: np.ndarray) -> np.ndarray:
        pool = pools[kind]
        n = min(pool.size, w.size)
        ids = np.concatenate([pool[pool.size - n :], np.arange(made[kind], made[kind] + w.size - n)])
        pools[kind] = pool[: pool.size - n]
        made[kind] += w.size - n
        return ids

    for g, group in enumerate(groups):
        bits = [_known(n.write).reshape(-1) for n in group if n.write is not None and n.bits]
        kept_values = [_known(n.write).reshape(-1) for n in group if n.write is not None and n.keeps]
        w = np.concatenate(bits) if bits else np.zeros(0, dtype=np.int64)
        final[w] = lx_rows + take(0, w)
        v = np.concatenate(kept_values) if kept_values else np.zeros(0, dtype=np.int64)
        values[v] = take(1, v)
        written = np.concatenate([w, v])
        done = np.concatenate([by_step[(ends[g - 1] if g else 0) : ends[g]], written[last[written] < 0]])
        done = np.unique(done)
        pools[0] = np.concatenate([pools[0], final[done[final[done] >= lx_rows]] - lx_rows])
        pools[1] = np.concatenate([pools[1], values[done[values[done] >= 0]]])
    return final, values, made[0], made[1]
