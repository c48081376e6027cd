"""Between cores: `ring_send` (LX to another core's LX over the ring, in pieces) and the
tokens and barriers that order the cores (`signal`, `wait`, `barrier`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, opt_prop_def, prop_def
from xdsl.utils.exceptions import VerifyException

from spyre_mlir.dialects.spyre.attrs import IntListAttr, int_list
from spyre_mlir.dialects.spyre_isa.attrs import AccessAttr, PerCoreAttr, as_per_core, i64_attr
from spyre_mlir.dialects.spyre_isa.program import IsaInstruction

# region Ring


@irdl_op_definition
class RingSendOp(IsaInstruction):
    """Copy sticks from this core's LX into another core's LX over the data ring, in pieces.

        P = piece if present else sizes[-1]                 # steps of the last dim per piece
        for r0 in range(0, sizes[-1], P):                   # one piece after the other
            if after is present: wait(after[core], count=1) # block until tokens[after[core]] >= 1; -= 1
            for i in ndindex(sizes[:-1] + [min(P, sizes[-1] - r0)]):
                i[-1] += r0
                lx[(core + shift[core]) % cores][dst(i)] = lx[core][src(i)]
            if notify is present: tokens[notify[core]] += 1 once the piece has landed
    Costs one ring hop per step of min(|shift|, cores - |shift|) (the ring is bidirectional);
    the receiving core must not read the data before a sync tells it the copy is done: the
    `notify` token (a write with completion notice), or a signal after the send (which also
    waits for everything else the sender issued before).

    `piece` and `after` make one instruction of a multicast chain's forwarding (a descriptor
    with a semaphore condition): a core passes each piece of a tile on to its successor as
    soon as the piece has landed (its predecessor's send notifies `after`), so a tile fills
    the chain one piece per hop, not one tile per hop. Without them it is one piece, sent at
    once.
    """

    name = "spyre_isa.ring_send"
    ENGINE: ClassVar[str] = "ring"
    src = prop_def(AccessAttr)
    dst = prop_def(AccessAttr)
    shift = prop_def(PerCoreAttr)
    sizes = prop_def(IntListAttr)
    piece = opt_prop_def(IntegerAttr[I64])
    after = opt_prop_def(PerCoreAttr)
    notify = opt_prop_def(PerCoreAttr)
    assembly_format = (
        "`lx` $src `->` `core` `+` $shift `lx` $dst `sizes` $sizes (`piece` $piece^)? (`after` $after^)? "
        "(`notify` $notify^)? attr-dict"
    )

    def __init__(
        self,
        src: AccessAttr,
        dst: AccessAttr,
        shift: PerCoreAttr | Sequence[int] | int,
        sizes: Sequence[int],
        notify: PerCoreAttr | Sequence[int] | int | None = None,
        piece: int | None = None,
        after: PerCoreAttr | Sequence[int] | int | None = None,
    ):
        props: dict[str, Attribute] = {
            "src": src,
            "dst": dst,
            "shift": as_per_core(shift),
            "sizes": int_list(tuple(sizes)),
        }
        if piece is not None:
            props["piece"] = i64_attr(piece)
        for key, value in (("after", after), ("notify", notify)):
            if value is not None:
                props[key] = as_per_core(value)
        self._build(properties=props)

    def pieces(self) -> list[tuple[int, int]]:
        """[r0, r1) of the last loop dim, piece by piece."""
        last = self.sizes.as_tuple()[-1]
        step = last if self.piece is None else self.piece.value.data
        return [(r0, min(r0 + step, last)) for r0 in range(0, last, step)]

    def verify_(self) -> None:
        sizes = self.sizes.as_tuple()
        self._check_sizes(self, sizes)
        self._check_access("src", self.src, sizes)
        self._check_access("dst", self.dst, sizes)
        self._check_table("shift", self.shift)
        if self.src.is_f32 != self.dst.is_f32:
            raise VerifyException(f"'{self.name}': src and dst must have the same element type (the ring moves bytes)")
        for what, attr in (("notify", self.notify), ("after", self.after)):
            if attr is not None:
                self._check_tokens(what, attr)
        if self.piece is not None and not 1 <= self.piece.value.data <= sizes[-1]:
            raise VerifyException(
                f"'{self.name}': piece must be between 1 and the last loop size {sizes[-1]} (steps per piece), "
                f"got {self.piece.value.data}"
            )


# endregion
# region Sync


@irdl_op_definition
class BarrierOp(IsaInstruction):
    """Wait until every core of the program has reached this barrier (as many times)."""

    name = "spyre_isa.barrier"
    ENGINE: ClassVar[str] = "sync"
    assembly_format = "attr-dict"


@irdl_op_definition
class SignalOp(IsaInstruction):
    """tokens[token[core]] += 1   (program-wide counters; releases a matching wait)."""

    name = "spyre_isa.signal"
    ENGINE: ClassVar[str] = "sync"
    token = prop_def(PerCoreAttr)
    assembly_format = "$token attr-dict"

    def __init__(self, token: PerCoreAttr | Sequence[int] | int):
        self._build(properties={"token": as_per_core(token)})

    def verify_(self) -> None:
        self._check_tokens("token", self.token)


@irdl_op_definition
class WaitOp(IsaInstruction):
    """Block until tokens[token[core]] >= count, then tokens[token[core]] -= count."""

    name = "spyre_isa.wait"
    ENGINE: ClassVar[str] = "sync"
    token = prop_def(PerCoreAttr)
    count = prop_def(IntegerAttr[I64])
    assembly_format = "$token `count` $count attr-dict"

    def __init__(self, token: PerCoreAttr | Sequence[int] | int, count: int = 1):
        self._build(properties={"token": as_per_core(token), "count": i64_attr(count)})

    def verify_(self) -> None:
        self._check_tokens("token", self.token)
        if self.count.value.data < 1:
            raise VerifyException(f"'{self.name}': count must be >= 1, got {self.count.value.data}")


# endregion
