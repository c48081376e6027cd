"""The `spyre` dialect's attributes: the device layout, lists of integers, a kernel's split and
LX plan, the kernel marks, and what makes a builtin tensor a device tensor.

The marks are `spyre.kernel`'s optional properties beside split, chunks and lx: where a value
lives between launches and how cores share work. The passes that write them are named on
each; a mark's `verify()` checks what it says by itself, `spyre.KernelOp` checks it against
the kernel (its inputs, split, tensors and budget), and convert-spyre-to-isa checks what spans
kernels (a resident value's producer and reader) and the device (its cores and LX).

    spyre.kernel "k0"(%a, %b) split <n = 2, m = 2, k = 1> ... multicast <chain = 2>
        core_order [0, 2, 1, 3] resident_out <offset = 1630208> lx_budget <bytes = 1630208>

A device tensor is a builtin tensor of f16 whose encoding is a `#spyre.layout`
(`device_layout` gives its verified `spyre_mlir.layout.Layout`); a host tensor has no encoding.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    Float16Type,
    Float32Type,
    IntAttr,
    IntegerAttr,
    IntegerType,
    NoneAttr,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from spyre_mlir.layout import Layout, LayoutError
from spyre_mlir.target.constants import F16_LANES, STICK_BYTES, TRANSPOSE_BLOCK

T = TypeVar("T")

# region Attributes


def _parse_int_list(parser: AttrParser) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False))


@irdl_attr_definition
class IntListAttr(ParametrizedAttribute):
    """A list of integers printed as `[1, 0]` (permutations, loop sizes, strides)."""

    name = "spyre.ints"
    values: ArrayAttr[IntAttr]

    def __init__(self, values: Sequence[int]):
        super().__init__(ArrayAttr(IntAttr(v) for v in values))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        return (ArrayAttr(IntAttr(v) for v in _parse_int_list(parser)),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("[" + ", ".join(str(v.data) for v in self.values) + "]")

    def as_tuple(self) -> tuple[int, ...]:
        return tuple(v.data for v in self.values)

    def verify(self) -> None:
        for v in self.values:
            if not -(2**63) <= v.data < 2**63:
                raise VerifyException(f"#spyre.ints: {v.data} in {list(self.as_tuple())} does not fit in 64 bits")


@irdl_attr_definition
class LayoutAttr(ParametrizedAttribute):
    """`#spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>`.

    device_size: the row-major device array; the last dim is the 128-byte stick.
    stride_map:  host elements stepped per device dim (-1: padding/synthetic dim).
    Its meaning for a given logical shape is `spyre_mlir.layout.Layout`.
    """

    name = "spyre.layout"
    device_size: ArrayAttr[IntAttr]
    stride_map: ArrayAttr[IntAttr]

    def __init__(self, device_size: Sequence[int], stride_map: Sequence[int]):
        super().__init__(ArrayAttr(IntAttr(v) for v in device_size), ArrayAttr(IntAttr(v) for v in stride_map))

    @staticmethod
    def from_layout(layout: Layout) -> LayoutAttr:
        return LayoutAttr(layout.device_size, layout.stride_map)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            parser.parse_keyword("device_size")
            parser.parse_punctuation("=")
            size = _parse_int_list(parser)
            parser.parse_punctuation(",")
            parser.parse_keyword("stride_map")
            parser.parse_punctuation("=")
            strides = _parse_int_list(parser)
        return (ArrayAttr(IntAttr(v) for v in size), ArrayAttr(IntAttr(v) for v in strides))

    def print_parameters(self, printer: Printer) -> None:
        size = ", ".join(str(v.data) for v in self.device_size)
        strides = ", ".join(str(v.data) for v in self.stride_map)
        printer.print_string(f"<device_size = [{size}], stride_map = [{strides}]>")

    def verify(self) -> None:
        size = [v.data for v in self.device_size]
        strides = [v.data for v in self.stride_map]
        if len(size) != len(strides):
            raise VerifyException(f"#spyre.layout: device_size has {len(size)} dims but stride_map has {len(strides)}")
        if not size:
            raise VerifyException("#spyre.layout: needs at least the stick dim")
        if any(n < 1 for n in size):
            raise VerifyException(f"#spyre.layout: device_size {size} has a dim < 1")
        if any(s < -1 or s == 0 for s in strides[:-1]) or strides[-1] < -1:
            raise VerifyException(
                f"#spyre.layout: stride_map {strides} has a stride that is neither > 0 nor -1 (0 only on the lane dim: a splat)"
            )

    def layout_for(self, shape: Sequence[int], element_bytes: int) -> Layout:
        return Layout(
            tuple(shape),
            element_bytes,
            tuple(v.data for v in self.device_size),
            tuple(v.data for v in self.stride_map),
        )


@functools.lru_cache(maxsize=1 << 14)
def int_list(values: tuple[int, ...]) -> IntListAttr:
    """IntListAttr(values), built (and verified) once per distinct list: attributes are
    immutable values, and the ISA lowering spells the same sizes and strides many times."""
    return IntListAttr(values)


class _NamedIntsAttr(ParametrizedAttribute):
    """Base of `#spyre.split<m = 4, n = 8>`-style attributes: ordered name = int pairs."""

    names: ArrayAttr[StringAttr]
    values: ArrayAttr[IntAttr]

    def __init__(self, items: dict[str, int] | Sequence[tuple[str, int]]):
        pairs = list(items.items()) if isinstance(items, dict) else list(items)
        super().__init__(ArrayAttr(StringAttr(k) for k, _ in pairs), ArrayAttr(IntAttr(v) for _, v in pairs))

    def as_dict(self) -> dict[str, int]:
        return {k.data: v.data for k, v in zip(self.names, self.values)}

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        def item() -> tuple[str, int]:
            key = parser.parse_identifier()
            parser.parse_punctuation("=")
            return key, parser.parse_integer(allow_boolean=False)

        pairs = parser.parse_comma_separated_list(parser.Delimiter.ANGLE, item)
        return (ArrayAttr(StringAttr(k) for k, _ in pairs), ArrayAttr(IntAttr(v) for _, v in pairs))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<" + ", ".join(f"{k} = {v}" for k, v in self.as_dict().items()) + ">")

    def verify(self) -> None:
        if len(self.names) != len(self.values):
            raise VerifyException(f"#{self.name}: {len(self.names)} names but {len(self.values)} values")
        keys = [k.data for k in self.names]
        if len(set(keys)) != len(keys):
            raise VerifyException(f"#{self.name}: repeated name in {keys}")


@irdl_attr_definition
class SplitAttr(_NamedIntsAttr):
    """`#spyre.split<m = 4, n = 8>`: parts per iteration dim (divide-work: over cores;
    plan-scratchpad: sequential chunks per core). Every count is >= 1."""

    name = "spyre.split"

    def verify(self) -> None:
        super().verify()
        if any(v.data < 1 for v in self.values):
            raise VerifyException(f"#spyre.split: every count must be >= 1, got {self.as_dict()}")


@irdl_attr_definition
class LxPlanAttr(_NamedIntsAttr):
    """`#spyre.lx<in0 = 0, in1 = 12800, out0 = 25600>`: byte offset of each buffer in every
    core's LX scratchpad (128-byte aligned). Each buffer holds its own sticks for the kernel's
    whole run: the sizes follow from the kernel's split and chunks, so convert-spyre-to-isa,
    not this verifier, checks that buffers lie apart and inside LX."""

    name = "spyre.lx"

    def verify(self) -> None:
        super().verify()
        bad = {k: v for k, v in self.as_dict().items() if v < 0 or v % STICK_BYTES}
        if bad:
            raise VerifyException(f"#spyre.lx: offsets must be >= 0 and {STICK_BYTES}-byte aligned, got {bad}")


# endregion
# region Kernel marks


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
        return (ArrayAttr(IntAttr(v) for v in _parse_int_list(parser)),)

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
            rows = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: _parse_int_list(parser))
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
"""The mark attribute classes (registered in the `spyre` dialect)."""


# endregion
# region Device tensor types

DEVICE_ELEMENT_TYPES = (Float16Type,)
"""Element types a device tensor may hold today (16-bit floats: DL16 or IEEE fp16)."""

NUMERICS_ATTR = "spyre.numerics"
"""A module attribute (a string): the numerics mode ("dl16") the compiled module assumes, set
when a pass relied on it (transforms/spyre_fold_infinity_tests.py); without it the module's
results do not depend on the mode beyond its roundings, and any mode may run it."""

HOST_CONSTANT_ATTR = "spyre.host_constant"
"""A unit attribute of a torch op left on the host: it computes a constant from constants
built from shapes and numbers (set by convert-torch-to-spyre); the host runtime builds it at
the first call and keeps it, as it does the creation ops'."""


def element_bytes(t: Attribute) -> int:
    if isinstance(t, Float16Type):
        return 2
    if isinstance(t, Float32Type):
        return 4
    raise VerifyException(f"no device element size for {t}")


def is_device_tensor(t: Attribute) -> bool:
    return isinstance(t, TensorType) and isinstance(t.encoding, LayoutAttr)


def device_layout(t: Attribute, where: str | None = None) -> Layout:
    """The verified Layout of a device tensor type (raises VerifyException).

    Verifiers pass `where`, the op and value (`'spyre.matmul': lhs`), to prefix the message."""
    layout = _layout_by_id(t)
    if isinstance(layout, str):
        raise VerifyException(f"{where}: {layout}" if where else layout)
    return layout


def by_identity(fn: Callable[..., T], maxsize: int) -> Callable[..., T]:
    """`fn` (a pure function of attributes, itself cached by value) looked up first by its
    arguments' identities: hashing an attribute hashes its parameters recursively (~10 us), and
    analyses ask about the same few thousand values' types hundreds of thousands of times.
    An entry holds its arguments, so no id is reused while it lives; the table is emptied when
    it reaches `maxsize`.

        key = ids of args
        if table[key] holds these very objects: return its result
        table[key] = (args, fn(*args)); return fn(*args)"""
    table: dict[tuple[int, ...], tuple[tuple, T]] = {}

    def lookup(*args: Any) -> T:
        key = tuple(map(id, args))
        hit = table.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], args)):
            return hit[1]
        got = fn(*args)
        if len(table) >= maxsize:
            table.clear()
        table[key] = (args, got)
        return got

    return lookup


@functools.lru_cache(maxsize=1 << 14)
def _layout_of(t: Attribute) -> Layout | str:
    """device_layout without the prefix: the Layout, or why there is none (types are immutable
    values, and the analyses ask for the same few layouts millions of times)."""
    if not is_device_tensor(t):
        return f"expected a device tensor with a #spyre.layout encoding, got {t}"
    assert isinstance(t, TensorType) and isinstance(t.encoding, LayoutAttr)
    if not isinstance(t.element_type, DEVICE_ELEMENT_TYPES):
        return f"device tensors hold f16 (DL16) elements, got {t.element_type} in {t}"
    if not t.has_static_shape():
        return f"device tensors have a static shape, got {t}"
    layout = t.encoding.layout_for(t.get_shape(), element_bytes(t.element_type))
    try:
        layout.verify()
    except LayoutError as e:
        return f"layout of {t} is invalid: {e}"
    return layout


_layout_by_id = by_identity(_layout_of, 1 << 16)


def is_index_tensor(t: Attribute) -> bool:
    """A host tensor of integers (indices the runtime hands to a program at launch)."""
    return isinstance(t, TensorType) and t.encoding == NoneAttr() and isinstance(t.element_type, IntegerType)


def check_kernel_operand(t: Attribute, where: str) -> None:
    """Kernel and program operands: device tensors, or host index tensors."""
    if not is_index_tensor(t):
        device_layout(t, where)


ALIASING_OUTPUT = "spyre.aliasing_output"
"""A function argument's attribute, an i64 k: result k is the argument's new contents (the
graph wrote the argument in place, as `copy_` into a graph input): the caller writes result k
back into the argument, and the device may keep the argument's copy, updated, between calls.
(As MLIR's `tf.aliasing_output`, where the argument's buffer may hold result k.)"""


REFUSED = "spyre.refused"
"""A torch op's attribute, a string: the op stays on the host for this reason (a later pass
refused the device ops it became; `spyre_mlir.pipeline.KernelRefused`): convert-torch-to-spyre
lowers it no further."""


def aliased_arguments(fn: Operation) -> dict[int, int]:
    """A `func.func`'s mutated arguments: {argument index: result index} (ALIASING_OUTPUT)."""
    arg_attrs = getattr(fn, "arg_attrs", None)
    if arg_attrs is None:
        return {}
    found = {}
    for j, attrs in enumerate(arg_attrs.data):
        k = attrs.data.get(ALIASING_OUTPUT)
        if isinstance(k, IntegerAttr):
            found[j] = k.value.data
    return found


def device_tensor_type(shape: Sequence[int], layout: Layout | None = None) -> TensorType:
    """tensor<shape x f16, #spyre.layout<...>> (generic stick layout unless given)."""
    layout = layout or Layout.generic(tuple(shape), 2)
    return TensorType(Float16Type(), shape, LayoutAttr.from_layout(layout))


# endregion
