"""A program's batched steps as data flow over rows: the nodes, and the phases that renumber
their rows (compact, rename, prune) or order their DDR accesses.

A node (frozen) is one batched step as the rows it reads and writes. Each phase that renumbers
rows makes new nodes, and nothing else of a node changes but the cores `prune` drops:

    Node.of    LX rows: the step's own accesses (arrays with a row per core)
    compact    compact rows: the LX rows the program touches, numbered 0, 1, ...
    rename     value rows: every write to fresh rows, every read to the first row of its value
    place      final rows: LX rows and scratch rows (schedule.py, `allocate`; `steps.Placed`)

What the later phases find about a node is their own record, keyed by the node (forms.py).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from spyre_mlir.sim.plans import Plan


class Unbatchable(Exception):
    """The program keeps the cooperative execution (a gather, a deadlock, an instruction with no batched form)."""


class DdrSide(NamedTuple):
    """A DMA node's side in DDR: its sticks as keys (arg << 40 | stick, numbered over the
    program by `rename`), the sticks themselves, and whether it loads them (else stores)."""

    keys: np.ndarray
    pos: np.ndarray
    load: bool


@dataclass(frozen=True, eq=False)
class Node:
    """One batched step as the rows it reads and writes (arrays with a row per core of `cores`;
    no write for a DMA store, which writes DDR), in the numbering of the phase that made it
    (module docstring); `order`, its place in the program. Each phase that renumbers rows
    makes new nodes; a node is its own key (identity) in the later phases' records."""

    ins: Plan
    order: int
    cores: np.ndarray
    reads: tuple[np.ndarray, ...]
    write: np.ndarray | None
    ddr: DdrSide | None = None

    @staticmethod
    def of(ins: Plan, cores: np.ndarray, order: int) -> Node:
        """The rows a step reads and writes, with a DMA's DDR sticks: an instruction's
        accesses, as any merged step of them."""
        accesses = ins.accesses()
        if accesses is None:
            raise Unbatchable(f"no regrouped form of {ins.where}")
        reads, write = accesses
        ddr = ins.ddr_access()
        side = None if ddr is None else DdrSide(ddr.pos + (ddr.arg << 40), ddr.pos, ddr.load)
        return Node(ins, order, cores, tuple(reads), write, side)

    @property
    def loads(self) -> bool:
        """A DMA load."""
        return self.ddr is not None and self.ddr.load


def known(a: np.ndarray | None) -> np.ndarray:
    """An array a node of its kind has (the write of a node that writes LX)."""
    assert a is not None
    return a


class Renamed(NamedTuple):
    """What `rename` finds, in compact rows (the first `touched` rows are LX rows):"""

    canon: np.ndarray
    """Per touched LX row, the first row of the value it holds at the end."""
    producer: np.ndarray
    """Per row, the node (its `order`) that wrote it; -1 for an LX row as the launch found it."""
    origin: np.ndarray
    """Per row, the DDR stick (its key, arg << 40 | stick) whose bytes at the launch's start it
    holds; -1 for a value the launch computes or found in LX."""
    rows: int
    """The number of rows, touched and fresh."""


def compact(nodes: list[Node], lx_rows: int) -> tuple[list[Node], np.ndarray]:
    """Number the LX rows the nodes touch 0, 1, ...: the nodes in those numbers, and the
    touched rows, ascending (compact row i is LX row touched[i])."""
    mark = np.zeros(lx_rows, dtype=bool)
    for n in nodes:
        for r in n.reads:
            mark[r] = True
        if n.write is not None:
            mark[n.write] = True
    touched = np.flatnonzero(mark)
    number = np.empty(lx_rows, dtype=np.int64)
    number[touched] = np.arange(touched.size)
    # array by array: one concatenation of them all is slower (its size)
    out = [
        replace(n, reads=tuple(number[r] for r in n.reads), write=None if n.write is None else number[n.write])
        for n in nodes
    ]
    return out, touched


def rename(nodes: list[Node], touched: int) -> tuple[list[Node], Renamed]:
    """Rename every write to fresh rows and every read to the first row of its value
    (regroup's "rename" and "values"), in compact rows (`compact`: the first `touched` rows
    are LX rows): the nodes in value rows, and what the renaming found."""
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
    dma = [n for n in nodes if n.ddr is not None]
    ddr_val = np.zeros(0, dtype=np.int64)  # DDR stick (numbered) -> its value's number, -1 before any
    keys = np.zeros(0, dtype=np.int64)
    sides: dict[Node, DdrSide] = {}  # the DMA nodes' sides, their sticks numbered
    if dma:  # DDR sticks numbered too: what value each holds, once loaded or stored
        old = [known_ddr(n) for n in dma]
        keys, inv = np.unique(np.concatenate([d.keys.reshape(-1) for d in old]), return_inverse=True)
        ddr_val = np.full(keys.size, -1, dtype=np.int64)
        at = 0
        for n, d in zip(dma, old):
            sides[n], at = d._replace(keys=inv[at : at + d.keys.size].reshape(d.keys.shape)), at + d.keys.size
    nxt, nv = touched, touched
    out = []
    for node in nodes:
        reads = tuple(canon[r] for r in node.reads)
        side = sides.get(node)
        if node.write is None:  # a DMA store: its sticks take the stored rows' values (the last repeat wins)
            assert side is not None
            ddr_val[side.keys.reshape(-1)] = val[reads[0].reshape(-1)]
            out.append(replace(node, reads=reads, ddr=side))
            continue
        w = node.write.reshape(-1)
        fresh = np.arange(nxt, nxt + w.size, dtype=np.int64)
        nxt += w.size
        if node.ins.COPIES:  # copies: values that have rows leading them
            v = val[reads[0].reshape(-1)]
        elif side is not None:  # a DMA load
            k = side.keys.reshape(-1)
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
        out.append(replace(node, reads=reads, write=fresh.reshape(node.write.shape), ddr=side))
    return out, Renamed(canon, producer, origin, nxt)


def known_ddr(node: Node) -> DdrSide:
    """The DDR side of a node that has one (a DMA)."""
    assert node.ddr is not None
    return node.ddr


def prune(nodes: list[Node], live_out: np.ndarray, rows: int) -> list[Node]:
    """Keep the rows (cores) of each node whose writes something later reads (backwards): the
    nodes left, each with its arrays' kept rows only (a new node where some rows go)."""
    live = np.zeros(rows, dtype=bool)
    live[live_out] = True
    kept = []
    for node in reversed(nodes):
        if node.write is not None:
            keep = live[node.write.reshape(len(node.cores), -1)].any(axis=1)
            if not keep.all():
                if not keep.any():
                    continue
                ddr = None if node.ddr is None else node.ddr._replace(keys=node.ddr.keys[keep], pos=node.ddr.pos[keep])
                node = Node(
                    node.ins, node.order, node.cores[keep], tuple(r[keep] for r in node.reads), node.write[keep], ddr
                )
        for r in node.reads:
            live[r.reshape(-1)] = True
        kept.append(node)
    kept.reverse()
    return kept


def ddr_order(nodes: list[Node]) -> dict[int, set[int]]:
    """Per node (by order), the nodes it must follow to keep DDR accesses of one stick in
    order: a load or store after a store, a store after a load (only when some stick is
    stored and also loaded, or stored twice)."""
    preds: dict[int, set[int]] = defaultdict(set)
    dma = [(n.order, n, known_ddr(n).keys) for n in nodes if n.ddr is not None]
    stored = [keys.reshape(-1) for _, n, keys in dma if not n.loads]
    if not stored:
        return preds
    stored_all = np.concatenate(stored)
    loaded = [keys.reshape(-1) for _, n, keys in dma if n.loads]
    clash = np.unique(stored_all).size != stored_all.size or (
        loaded and np.intersect1d(stored_all, np.concatenate(loaded)).size > 0
    )
    if not clash:
        return preds
    last_store: dict[int, int] = {}
    readers: dict[int, list[int]] = defaultdict(list)
    for i, n, keys in dma:
        mine = preds[i]
        for k in np.unique(keys).tolist():
            if k in last_store:
                mine.add(last_store[k])
            if n.loads:
                readers[k].append(i)
            else:
                mine.update(readers.pop(k, ()))
                last_store[k] = i
        mine.discard(i)
    return preds
