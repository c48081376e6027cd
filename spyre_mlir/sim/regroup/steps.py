"""The regrouped steps: what a group of nodes of one signature runs as (`merge`), from the
nodes in their rows (`Placed`). A PT group becomes matrix products (`GemmStep`), a group of
chains one step of chained products (`ChainStep`), any other group its instruction over all
the group's rows (`Plan.with_rows`); a load only products read is skipped where they read the
argument's decoded copy (`FrozenLoad`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from spyre_mlir.sim.machine import Machine
from spyre_mlir.sim.plans import DmaPlan, Plan, PtPlan, Step, operand_matrix, tile_products
from spyre_mlir.sim.regroup.b_source import BSource, StridedTiles, b_source
from spyre_mlir.sim.regroup.dataflow import known
from spyre_mlir.target.constants import F32_LANES, STICK_BYTES

if TYPE_CHECKING:
    from spyre_mlir.sim.memory import DdrTensor


class Placed(NamedTuple):
    """A node as its step is built: its rows final (LX rows and scratch rows past them), and
    how it takes and leaves values (regroup/forms.py)."""

    ins: Plan
    cores: np.ndarray
    reads: list[np.ndarray]
    write: np.ndarray | None
    ddr_pos: np.ndarray | None
    """A DMA's DDR sticks."""
    kept_reads: tuple[np.ndarray | None, ...]
    """Per read: the rows of `DeviceMemory.scratch_values` that hold its values decoded, or
    None (it decodes its rows' bits)."""
    kept_write: np.ndarray | None
    """A keeping write's rows of `DeviceMemory.scratch_values`."""
    bits: bool
    """Whether its write's bits are stored."""
    b_origin: np.ndarray | None
    """A PT's B rows' origins (`ProductLoads.b_origin`)."""
    frozen: bool
    """A DMA load only products read, from the argument (`ProductLoads.frozen`)."""
    links: list[Placed] | None
    """A chain's links, each reading the chain's rows (the last writes its sums)."""


def merge(group: list[Placed]) -> list[tuple[Step, np.ndarray]]:
    """The steps of a group of nodes of one signature: one, but for DMA loads of which only
    some are `frozen` one for those (a `FrozenLoad`) and one for the rest."""
    frozen = [n for n in group if n.frozen]
    if not frozen:
        return [_merge(group)]
    rest = [n for n in group if not n.frozen]
    out = [_merge(rest)] if rest else []
    load, cores = _merge(frozen)
    assert isinstance(load, DmaPlan)
    out.append((FrozenLoad(load), cores))
    return out


def _merge(group: list[Placed]) -> tuple[Step, np.ndarray]:
    """One step over the rows of a group of nodes of one signature."""
    first = group[0].ins
    cores = np.concatenate([n.cores for n in group])
    if group[0].links is not None:
        return ChainStep(group), cores
    if isinstance(first, PtPlan):
        return GemmStep(first, group), cores
    cat = np.concatenate
    reads = [cat([n.reads[j] for n in group]) for j in range(len(group[0].reads))]
    write = None if group[0].write is None else cat([known(n.write) for n in group])
    ddr_pos = None if group[0].ddr_pos is None else cat([known(n.ddr_pos) for n in group])
    step = first.with_rows(reads, write, ddr_pos)
    kept = [k is not None for k in group[0].kept_reads]
    if any(kept):  # (one signature: every node's reads are kept alike)
        step.kept_reads = tuple(cat([known(n.kept_reads[j]) for n in group]) if k else None for j, k in enumerate(kept))
    if group[0].kept_write is not None:
        step.kept_write = cat([known(n.kept_write) for n in group])
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

    def __init__(self, ins: PtPlan, group: list[Placed]):
        self.m, self.n, self.k, self.accumulate = ins.m, ins.n, ins.k, ins.accumulate
        self.a_kept = group[0].kept_reads[0] is not None
        """Whether A is read as the values kept decoded (`keep_values`; one signature: every
        node's A alike): the blocks' A rows are then rows of `DeviceMemory.scratch_values`."""

        def cat(j: int) -> np.ndarray:
            return np.concatenate([n.reads[j] if j >= 0 else known(n.write) for n in group])

        a, b, c = cat(0), cat(1), cat(-1)
        if self.a_kept:  # (its rows of the kept values: the bits may not be stored)
            a = np.concatenate([known(n.kept_reads[0]) for n in group])
        b_origin = np.concatenate([known(n.b_origin) for n in group])
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
            self.blocks.append((a[groups[0]], b[tiles], b_source(b_origin[tiles])))
            order.extend(r for g in groups for r in g)  # tile by tile, each in stack order
        self.singles = None if not singles else (a[singles], b[singles], b_source(b_origin[singles]))
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
        old = model.memory.lx_rows[known(self.old)].view(np.float32).reshape(len(prod), self.m, -1)
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
    """Chains of products (`fuse_chains`) as one step: each link's products as its GemmStep
    computes them, each link's onto the sums before it as the accumulating PT adds them
    (fp32, in the links' order), and the last sums stored. The same bits as the links one
    after the other; the sums between links never reach LX."""

    def __init__(self, group: list[Placed]):
        chains = [c.links or [] for c in group]
        self.links: list[GemmStep] = []
        for i, node in enumerate(chains[0]):
            assert isinstance(node.ins, PtPlan)
            self.links.append(GemmStep(node.ins, [links[i] for links in chains]))
        self.into: list[np.ndarray] = []
        """Per link after the first: where each of its rows' sums before it is in the sums of
        the link before (its `old` rows among that link's `out` rows)."""
        for before, after in zip(self.links, self.links[1:]):
            have, want = before.out[:, 0, 0], known(after.old)[:, 0, 0]
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


class FrozenLoad:
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
            self.load.check_ddr_bounds(args[self.load.arg], cores)


class CopyBack:
    """LX rows a launch leaves for a later one, from the fresh rows that hold their values."""

    def __init__(self, dst: np.ndarray, src: np.ndarray):
        self.dst, self.src = dst, src

    def run(self, model: Machine, args: Sequence[DdrTensor], cores: np.ndarray, check: bool = False) -> None:
        lx = model.memory.lx_rows
        lx[self.dst] = lx[self.src]


def arrange_frozen_loads(steps: list[tuple[Step, np.ndarray]]) -> None:
    """Give each FrozenLoad the arrangement of its argument's decoded copy that the products
    reading the argument take (BSource.rows), so that the copy it makes is theirs."""
    rows: dict[int, int] = {}
    for step, _ in steps:
        if isinstance(step, (GemmStep, ChainStep)):
            for source in step.sources():
                if source is not None and source.rows is not None:
                    rows.setdefault(source.parts[0][0], source.rows)
    for step, _ in steps:
        if isinstance(step, FrozenLoad):
            step.rows = rows.get(step.load.arg)
