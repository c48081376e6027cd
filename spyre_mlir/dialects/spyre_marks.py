"""The marks of `spyre.kernel` (its optional properties beside split, chunks and lx): where a
value lives between launches and how cores share work. The passes that write them are named
on each; a mark's `verify()` checks what it says by itself, `spyre.KernelOp` checks it against
the kernel (its inputs, split, tensors and budget), and convert-spyre-to-isa checks what spans
kernels (a resident value's producer and reader) and the device (its cores and LX).

    spyre.kernel "k0"(%a, %b) split <n = 2, m = 2, k = 1> ... multicast <chain = 2>
        core_order [0, 2, 1, 3] resident_out <offset = 1630208> lx_budget <bytes = 1630208>

This file defines; the kernel's verifier is in `spyre_mlir.dialects.spyre`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, IntAttr
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from spyre_mlir.target.constants import F16_LANES, STICK_BYTES, TRANSPOSE_BLOCK


def _parse_ints(parser: AttrParser) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False))


def _check_lx_offset(where: str, what: str, offset: int) -> None:
    if offset < 0 or offset % STICK_BYTES:
        raise VerifyException(f"{where}: {what} = {offset} is not an LX byte offset >= 0, a multiple of {STICK_BYTES}")


class _IntFieldsAttr(ParametrizedAttribute):
    """Base of the marks whose parameters are named integers (IntAttr), printed
    `<name0 = v0, name1 = v1>` in their declaration order: `resident_in <input = 0, offset = 4096>`."""

    @classmethod
    def field_names(cls) -> list[str]:
        return [key for key, _ in cls.get_irdl_definition().parameters]

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        values: list[Attribute] = []
        with parser.in_angle_brackets():
            for i, key in enumerate(cls.field_names()):
                if i:
                    parser.parse_punctuation(",")
                parser.parse_keyword(key)
                parser.parse_punctuation("=")
                values.append(IntAttr(parser.parse_integer(allow_boolean=False)))
        return values

    def print_parameters(self, printer: Printer) -> None:
        fields = ", ".join(f"{key} = {getattr(self, key).data}" for key in self.field_names())
        printer.print_string(f"<{fields}>")


@irdl_attr_definition
class MulticastAttr(_IntFieldsAttr):
    """`multicast <chain = 8>` on a matmul kernel (spyre-divide-work, spyre-resident-chains):
    the cores that read the same B tiles (same b, n and k ranges) form chains of `chain`
    cores in ring order; the first loads each tile from DDR and the tile passes down the chain
    over the ring. `chain` >= 2. On an attention kernel (spyre.Attention), the cores that take
    the same matrix do so with its K^T and V."""

    name = "spyre.multicast"
    chain: IntAttr

    def __init__(self, chain: int):
        super().__init__(IntAttr(chain))

    def verify(self) -> None:
        if self.chain.data < 2:
            raise VerifyException(f"#spyre.multicast: a chain has >= 2 cores, got {self.chain.data}")


@irdl_attr_definition
class ResidentInAttr(_IntFieldsAttr):
    """`resident_in <input = 0, offset = 4096>`: the kernel's input `input` is read from every
    core's LX from byte `offset` (its box, dense), where an earlier launch left it
    (`resident_out`, or a relayout's `onchip` result); it is not loaded from DDR."""

    name = "spyre.resident_in"
    input: IntAttr
    offset: IntAttr

    def __init__(self, input: int, offset: int):
        super().__init__(IntAttr(input), IntAttr(offset))

    def verify(self) -> None:
        if self.input.data < 0:
            raise VerifyException(f"#spyre.resident_in: input = {self.input.data} is not an input index")
        _check_lx_offset("#spyre.resident_in", "offset", self.offset.data)


@irdl_attr_definition
class ResidentOutAttr(_IntFieldsAttr):
    """`resident_out <offset = 4096>`: the kernel's result stays in every core's LX from byte
    `offset` (its box, dense) for a later launch; it is not stored to DDR."""

    name = "spyre.resident_out"
    offset: IntAttr

    def __init__(self, offset: int):
        super().__init__(IntAttr(offset))

    def verify(self) -> None:
        _check_lx_offset("#spyre.resident_out", "offset", self.offset.data)


@irdl_attr_definition
class LxBudgetAttr(_IntFieldsAttr):
    """`lx_budget <bytes = 1638400>`: LX bytes per core the planner may use for the kernel's
    buffers; values kept resident while it runs lie above (spyre-resident-chains,
    spyre-onchip-relayout)."""

    name = "spyre.lx_budget"
    bytes: IntAttr

    def __init__(self, bytes: int):
        super().__init__(IntAttr(bytes))

    def verify(self) -> None:
        _check_lx_offset("#spyre.lx_budget", "bytes", self.bytes.data)


@irdl_attr_definition
class CoreOrderAttr(ParametrizedAttribute):
    """`core_order [0, 2, 1, 3]`: box j of the kernel's split (in `core_boxes` order) runs on
    core `cores[j]` (spyre-resident-chains: a producer's boxes on the cores of the consumer's
    matching boxes). A permutation of 0 .. n - 1, n the split's boxes."""

    name = "spyre.core_order"
    cores: ArrayAttr[IntAttr]

    def __init__(self, cores: Sequence[int]):
        super().__init__(ArrayAttr(IntAttr(c) for c in cores))

    def as_tuple(self) -> tuple[int, ...]:
        return tuple(c.data for c in self.cores)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        return (ArrayAttr(IntAttr(v) for v in _parse_ints(parser)),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("[" + ", ".join(str(c) for c in self.as_tuple()) + "]")

    def verify(self) -> None:
        order = self.as_tuple()
        if sorted(order) != list(range(len(order))) or not order:
            raise VerifyException(
                f"#spyre.core_order: {list(order)} is not a permutation of 0 .. n - 1 (n >= 1, the split's boxes)"
            )


@irdl_attr_definition
class OnchipAttr(ParametrizedAttribute):
    """`onchip <src = 1648512, dst = 1664896, staging = 1677696, src_rows = [[0, 64], ...],
    dst_boxes = [[0, 1, 0, 100], ...]>` on a kernel of one transposing restickify
    (spyre-onchip-relayout): the relayout is done in LX and over the ring, not through DDR.

        src, dst, staging   LX byte offsets of every core's source band, result box and
                            staging area
        src_rows            per core [r0, r1): the source rows its band holds, whole
                            64-row blocks ([0, 0]: none), all column sticks, as
                            [column stick][row] at `src` (the producer's `resident_out`)
        dst_boxes           per core [s0, s1, c0, c1]: result sticks x result rows of its box
                            ([0, 0, 0, 0]: none), as [stick][row] at `dst` (the consumer's
                            `resident_in`)

    A core's block whose whole result lies in its own box is transposed there (`direct`); any
    other goes to staging and over the ring (`staged`: then the staging area is used). The
    areas in use are disjoint. The kernel checks the bands and boxes against its tensors; the
    lowering checks the producer's and consumer's marks and the device's cores and LX."""

    name = "spyre.onchip"
    src: IntAttr
    dst: IntAttr
    staging: IntAttr
    src_rows: ArrayAttr[ArrayAttr[IntAttr]]
    dst_boxes: ArrayAttr[ArrayAttr[IntAttr]]

    def __init__(
        self,
        src: int,
        dst: int,
        staging: int,
        src_rows: Sequence[Sequence[int]],
        dst_boxes: Sequence[Sequence[int]],
    ):
        super().__init__(
            IntAttr(src),
            IntAttr(dst),
            IntAttr(staging),
            ArrayAttr(ArrayAttr(IntAttr(v) for v in band) for band in src_rows),
            ArrayAttr(ArrayAttr(IntAttr(v) for v in box) for box in dst_boxes),
        )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        def field(key: str) -> None:
            parser.parse_keyword(key)
            parser.parse_punctuation("=")

        def nested() -> ArrayAttr[ArrayAttr[IntAttr]]:
            rows = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: _parse_ints(parser))
            return ArrayAttr(ArrayAttr(IntAttr(v) for v in row) for row in rows)

        with parser.in_angle_brackets():
            offsets: list[Attribute] = []
            for key in ("src", "dst", "staging"):
                field(key)
                offsets.append(IntAttr(parser.parse_integer(allow_boolean=False)))
                parser.parse_punctuation(",")
            field("src_rows")
            src_rows = nested()
            parser.parse_punctuation(",")
            field("dst_boxes")
            dst_boxes = nested()
        return (*offsets, src_rows, dst_boxes)

    def print_parameters(self, printer: Printer) -> None:
        def nested(rows: Sequence[tuple[int, ...]]) -> str:
            return "[" + ", ".join("[" + ", ".join(map(str, row)) + "]" for row in rows) + "]"

        printer.print_string(
            f"<src = {self.src.data}, dst = {self.dst.data}, staging = {self.staging.data}, "
            f"src_rows = {nested(self.bands)}, dst_boxes = {nested(self.boxes)}>"
        )

    @property
    def bands(self) -> tuple[tuple[int, ...], ...]:
        """Per core its source rows (r0, r1); (0, 0) for none."""
        return tuple(tuple(v.data for v in band) for band in self.src_rows)

    @property
    def boxes(self) -> tuple[tuple[int, ...], ...]:
        """Per core its result box (s0, s1, c0, c1): result sticks x result rows; zeros for none."""
        return tuple(tuple(v.data for v in box) for box in self.dst_boxes)

    @property
    def cols(self) -> int:
        """The result's rows (the source's columns): the end of the boxes' row ranges."""
        return max((box[3] for box in self.boxes), default=0)

    @property
    def col_sticks(self) -> int:
        """Sticks of a source row (the result's rows, F16_LANES a stick)."""
        return math.ceil(self.cols / F16_LANES)

    @property
    def band_sticks(self) -> int:
        """LX sticks of the largest band (a core's source area, and its staging area)."""
        return max((r1 - r0 for r0, r1 in self.bands), default=0) * self.col_sticks

    @property
    def box_sticks(self) -> int:
        """LX sticks of the largest box (a core's result area)."""
        return max(((s1 - s0) * (c1 - c0) for s0, s1, c0, c1 in self.boxes), default=0)

    def direct(self, core: int, block: int) -> bool:
        """Core `core`'s box holds the whole result of source row block `block`."""
        return _holds(self.boxes[core], block, self.cols)

    @property
    def staged(self) -> bool:
        """Some block's result goes to another core's box (through staging and the ring)."""
        boxes, cols = self.boxes, self.cols
        return any(
            not _holds(boxes[core], block, cols)
            for core, (r0, r1) in enumerate(self.bands)
            for block in range(r0 // TRANSPOSE_BLOCK, r1 // TRANSPOSE_BLOCK)
        )

    def areas(self) -> list[tuple[str, int, int]]:
        """The LX areas in use, (name, first byte, end byte): src and dst, and staging when
        `staged`."""
        sizes = [("src", self.band_sticks), ("dst", self.box_sticks)]
        if self.staged:
            sizes.append(("staging", self.band_sticks))
        return [(key, getattr(self, key).data, getattr(self, key).data + n * STICK_BYTES) for key, n in sizes]

    def verify(self) -> None:
        where = "#spyre.onchip"
        for key in ("src", "dst", "staging"):
            _check_lx_offset(where, key, getattr(self, key).data)
        bands, boxes = self.bands, self.boxes
        if not bands or len(bands) != len(boxes):
            raise VerifyException(
                f"{where}: src_rows and dst_boxes have one entry per core, got {len(bands)} and {len(boxes)}"
            )
        for core, band in enumerate(bands):
            if (
                len(band) != 2
                or band != (0, 0)
                and not (0 <= band[0] < band[1] and band[0] % TRANSPOSE_BLOCK == 0 and band[1] % TRANSPOSE_BLOCK == 0)
            ):
                raise VerifyException(
                    f"{where}: src_rows of core {core}, {list(band)}, is not [r0, r1) of whole "
                    f"{TRANSPOSE_BLOCK}-row blocks, or [0, 0]"
                )
        for core, box in enumerate(boxes):
            if len(box) != 4 or box != (0, 0, 0, 0) and not (0 <= box[0] < box[1] and 0 <= box[2] < box[3]):
                raise VerifyException(
                    f"{where}: dst_boxes of core {core}, {list(box)}, is not [s0, s1, c0, c1] "
                    f"(sticks [s0, s1) x rows [c0, c1)), or zeros"
                )
        spans = sorted((lo, hi, key) for key, lo, hi in self.areas())
        for (a0, a1, k0), (b0, b1, k1) in zip(spans, spans[1:]):
            if b0 < a1:
                raise VerifyException(f"{where}: {k0} (LX bytes [{a0}, {a1})) and {k1} (LX bytes [{b0}, {b1})) overlap")


def _holds(box: tuple[int, ...], block: int, cols: int) -> bool:
    """A box (s0, s1, c0, c1) holds the whole result (all `cols` rows) of source row block `block`."""
    s0, s1, c0, c1 = box
    return s0 <= block < s1 and (c0, c1) == (0, cols)


MARKS = (MulticastAttr, CoreOrderAttr, ResidentInAttr, ResidentOutAttr, OnchipAttr, LxBudgetAttr)
"""The mark attribute classes (registered in the Spyre dialect)."""
