"""The regrouped nodes in order and in rows: list scheduling into steps (regroup's
"regroup"), and the scratch rows and kept-values rows they take (regroup's "allocate")."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from spyre_mlir.sim.regroup.dataflow import Node, known
from spyre_mlir.sim.regroup.forms import Chain, Form, ProductLoads
from spyre_mlir.sim.regroup.steps import Placed


def schedule(
    nodes: list[Node], producer: np.ndarray, preds: dict[int, set[int]], sigs: Sequence[tuple | None]
) -> list[list[Node]]:
    """The nodes as groups that run as one step each, in an order that keeps every
    dependency (list scheduling: of the nodes whose inputs are written, all of the signature
    `sigs` gives, per node, that came first in the original order become one step; then the
    next). The dependencies: a read's producer (`Renamed.producer`) and the DDR order `preds`."""

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
    keyed: list[Any] = []
    for i, n in enumerate(nodes):
        for p in preds.get(n.order, ()):  # DDR order (`ddr_order`)
            succs[pos[p]].append(i)
            indeg[i] += 1
        sig = sigs[i]
        keyed.append(sig if sig is not None else ("single", i))
    ready: dict[Any, list[int]] = defaultdict(list)
    for i in range(len(nodes)):
        if indeg[i] == 0:
            ready[keyed[i]].append(i)
    groups: list[list[Node]] = []
    while ready:
        sig = min(ready, key=lambda s: min(ready[s]))
        members = sorted(ready.pop(sig))
        groups.append([nodes[i] for i in members])
        for i in members:
            for j in succs[i]:
                indeg[j] -= 1
                if indeg[j] == 0:
                    ready[keyed[j]].append(j)
    if sum(len(g) for g in groups) != len(nodes):  # a cycle: cannot happen for a sequential program
        raise AssertionError("regroup: dependency cycle")
    return groups


class Allocation(NamedTuple):
    """What `allocate` gives each value row (`rename`'s rows)."""

    final: np.ndarray
    """Its row: its LX row (a touched row), a scratch row past the cores' LX, or -1 for none."""
    values: np.ndarray
    """Its row of `DeviceMemory.scratch_values` (values kept decoded), or -1 for none."""
    scratch_rows: int
    """Scratch rows used."""
    values_rows: int
    """Rows of `DeviceMemory.scratch_values` used."""


def allocate(
    groups: list[list[Node]],
    touched: np.ndarray,
    rows: int,
    kept: np.ndarray,
    lx_rows: int,
    forms: dict[Node, Form],
) -> Allocation:
    """Value rows to rows: touched LX rows to theirs; fresh rows to scratch rows past LX,
    reused once their value is dead (after the last step that reads it; a row nothing reads,
    after the step that writes it; `kept`, what is copied back, never):

        for each step g in order:
            its writes take freed scratch rows, then new ones
            free the rows whose last reader is g, and the rows g writes that nothing reads

    The values a step keeps decoded (`Form.keeps`) take rows of `DeviceMemory.scratch_values`
    the same way, from a pool of their own; a write whose bits nothing reads (`Form.bits`)
    takes no scratch row. A step reads all its rows before it writes, but a row freed at g is
    only taken by later steps."""
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
        bits = [known(n.write).reshape(-1) for n in group if n.write is not None and forms[n].bits]
        kept_values = [known(n.write).reshape(-1) for n in group if n.write is not None and forms[n].keeps]
        w = np.concatenate(bits) if bits else np.zeros(0, dtype=np.int64)
        final[w] = lx_rows + take(0, w)
        v = np.concatenate(kept_values) if kept_values else np.zeros(0, dtype=np.int64)
        values[v] = take(1, v)
        written = np.concatenate([w, v])
        done = np.concatenate([by_step[(ends[g - 1] if g else 0) : ends[g]], written[last[written] < 0]])
        done = np.unique(done)
        pools[0] = np.concatenate([pools[0], final[done[final[done] >= lx_rows]] - lx_rows])
        pools[1] = np.concatenate([pools[1], values[done[values[done] >= 0]]])
    return Allocation(final, values, made[0], made[1])


def place(
    group: list[Node],
    alloc: Allocation,
    forms: dict[Node, Form],
    chains: dict[Node, Chain],
    loads: ProductLoads,
) -> list[Placed]:
    """The nodes of a group in their rows (`Placed`): their reads and write in final rows, the
    rows of the values they take or keep decoded; a chain's links read the chain's rows, and
    its last link writes its sums."""
    return [_placed(n, alloc, forms[n], chains.get(n), loads) for n in group]


def _placed(n: Node, alloc: Allocation, form: Form, chain: Chain | None, loads: ProductLoads) -> Placed:
    final, values = alloc.final, alloc.values
    kept_reads = tuple(values[r] if k else None for r, k in zip(n.reads, form.kept))
    reads = [final[r] for r in n.reads]
    kept_write = None
    write = None
    if n.write is not None:
        kept_write = values[n.write] if form.keeps else None
        write = final[n.write]
    links = None
    if chain is not None:  # the links read the chain's rows; the last writes its sums
        links = []
        for i, (link, at) in enumerate(zip(chain.links, chain.link_reads)):
            links.append(
                Placed(
                    link.ins,
                    link.cores,
                    [link.reads[j] if k is None else reads[k] for j, k in enumerate(at)],
                    write if i == len(chain.links) - 1 else link.write,
                    None,
                    tuple(None if k is None else kept_reads[k] for k in at),
                    None,
                    True,
                    loads.b_origin.get(link),
                    False,
                    None,
                )
            )
    return Placed(
        n.ins,
        n.cores,
        reads,
        write,
        None if n.ddr is None else n.ddr.pos,
        kept_reads,
        kept_write,
        form.bits,
        loads.b_origin.get(n),
        n in loads.frozen,
        links,
    )
