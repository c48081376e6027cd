"""Where a product's B tiles come from: sticks of a DDR argument as loaded, read from that
argument's decoded copy (memory.DeviceMemory.decoded) when it is frozen, as a strided view
where the tiles lie on a grid of it (`BView`), or else row by row."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from spyre_mlir.target.constants import F16_LANES, STICK_BYTES

if TYPE_CHECKING:
    from spyre_mlir.sim.memory import DecodedCopy


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
    loaded (`rename`'s origins): `parts`, per argument, (argument, rows of the tiles * k,
    their sticks); `computed`, the rows that hold values the launch computed (None: none);
    `views`, when all rows are sticks of one argument on an affine grid, its BView per
    arrangement of a decoded copy (`rows`, memory.DecodedCopy) that has one."""

    parts: list[tuple[int, np.ndarray, np.ndarray]]
    computed: np.ndarray | None
    views: dict[int | None, BView]

    @property
    def rows(self) -> int | None:
        """The arrangement to make the copy in when there is none: the one with a view where a
        B row's sticks are side by side (`b_source` keeps no other arranged view)."""
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


def b_source(origin: np.ndarray) -> BSource | None:
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
