"""The on-chip relayout (spyre-onchip-relayout's `onchip` mark): each core's part of a transpose
done in LX and over the ring, and the checks of the mark against the kernels around it and
the device.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Operation
from xdsl.utils.exceptions import PassFailedException

from spyre_mlir.dialects import spyre
from spyre_mlir.dialects.spyre import kernel_core_boxes, kernel_iteration_dims, single_pointwise
from spyre_mlir.dialects.spyre.iteration import Box
from spyre_mlir.lowering.convert_spyre_to_isa.instructions import Ins, barrier, ring_send, sfp, transpose
from spyre_mlir.lowering.convert_spyre_to_isa.kernel import CoreCode, lowers
from spyre_mlir.lowering.convert_spyre_to_isa.plan import KernelPlan
from spyre_mlir.target.constants import STICK_BYTES, TRANSPOSE_BLOCK


@lowers(spyre.OnchipAttr, every_core=True)
def lower_onchip_transpose(plan: KernelPlan, core: int, box: Box | None) -> CoreCode:
    """This core's part of an in-LX transpose (spyre-onchip-relayout): its band of the
    source, rows [r0, r1) x all columns, sits at `src` as [column stick][row]; core j's box
    of the result, sticks [s0, s1) x rows [c0, c1), lands at `dst` as [stick][row].

        for each 64-row block b of the band:
            if this core's box holds all of b's result:  sfp_transpose b into it
            else:                                        sfp_transpose b into staging[b]
        for shift in 1 .. cores - 1 (j = core + shift):  ring_send the staged part j holds
        for this core's own part (if staged):            sfp copy
        barrier (when anything crossed the ring)

    The mark is `onchip_plan`'s (checked against the tensors, the producer and the consumer).
    Every core takes part, its box (unused) None or not: the mark's bands and boxes decide
    the work.
    """
    mark, k, n = plan.onchip, core, plan.cores
    assert isinstance(plan.compute, spyre.RestickifyOp) and mark is not None
    cols, cs, boxes = mark.cols, mark.col_sticks, mark.boxes
    S, D, G = (at.data // STICK_BYTES for at in (mark.src, mark.dst, mark.staging))
    r0, r1 = mark.bands[k]
    width = r1 - r0  # stick stride between the band's column sticks
    resident = {"spyre.resident_in": (S, S + mark.band_sticks), "spyre.resident_out": (D, D + mark.box_sticks)}
    out: list[Ins] = []
    staged: list[int] = []  # blocks (index in the band) that went to staging
    for b in range((r1 - r0) // TRANSPOSE_BLOCK):
        rb = r0 // TRANSPOSE_BLOCK + b
        if mark.direct(k, rb):
            base, full, part = D + (rb - boxes[k][0]) * cols, cols // TRANSPOSE_BLOCK, cols % TRANSPOSE_BLOCK
            if full:
                out.append(
                    transpose(
                        (S + b * TRANSPOSE_BLOCK, [width, 1]),
                        (base, [TRANSPOSE_BLOCK, 1]),
                        full,
                        TRANSPOSE_BLOCK,
                        TRANSPOSE_BLOCK,
                    )
                )
            if part:
                out.append(
                    transpose(
                        (S + full * width + b * TRANSPOSE_BLOCK, [width, 1]),
                        (base + full * TRANSPOSE_BLOCK, [TRANSPOSE_BLOCK, 1]),
                        1,
                        TRANSPOSE_BLOCK,
                        part,
                    )
                )
        else:
            out.append(
                transpose(
                    (S + b * TRANSPOSE_BLOCK, [width, 1]),
                    (G + b * cs * TRANSPOSE_BLOCK, [TRANSPOSE_BLOCK, 1]),
                    cs,
                    TRANSPOSE_BLOCK,
                    TRANSPOSE_BLOCK,
                )
            )
            staged.append(b)
    for shift in range(n):
        j = (k + shift) % n
        s0, s1, c0, c1 = boxes[j]
        blocks = [b for b in staged if s0 <= r0 // TRANSPOSE_BLOCK + b < s1]
        if not blocks or c1 <= c0:
            continue
        ba, nb = blocks[0], len(blocks)
        src = (G + ba * cs * TRANSPOSE_BLOCK + c0, [cs * TRANSPOSE_BLOCK, 1])
        dst_acc = (D + (r0 // TRANSPOSE_BLOCK + ba - s0) * (c1 - c0), [c1 - c0, 1])
        if shift == 0:
            out.append(sfp("copy", [(src[0], src[1], False)], (dst_acc[0], dst_acc[1], False), [nb, c1 - c0]))
        else:
            out.append(ring_send(src, dst_acc, shift if shift <= n // 2 else shift - n, [nb, c1 - c0], None))
    if mark.staged:
        out.append(barrier())  # every core, senders and receivers: all sends have landed
    return CoreCode(out, resident)


def onchip_plan(kernel: spyre.KernelOp, cores: int, lx_bytes: int) -> spyre.OnchipAttr:
    """A restickify kernel's `onchip` mark (spyre-onchip-relayout), checked where it meets the
    device and the kernels around it; PassFailedException naming the kernel and the reason
    otherwise. The mark and its kernel verify the rest (spyre.OnchipAttr: disjoint
    areas, whole 64-row bands; spyre.KernelOp: the transpose, bands and boxes that hold the
    tensors once).

        the device     a band and a box per core (`cores`), the areas inside LX (`lx_bytes`
                       per core, the device's)
        the producer   a pointwise kernel whose result, and its views, only this reads; it
                       leaves its result at `src` (resident_out), its boxes the bands (all
                       column sticks)
        the consumer   the result's only reader, a pointwise kernel that reads it at `dst`
                       (resident_in), its boxes the mark's boxes
        the span       the kernels from the producer to the consumer, in one block, each with
                       an lx_budget at or below the areas, which are live while they run"""
    name = kernel.sym_name.data

    def refuse(why: str) -> PassFailedException:
        return PassFailedException(f"kernel {name}: 'spyre.restickify' onchip: {why}")

    mark = kernel.onchip
    assert mark is not None
    if len(mark.bands) != cores:
        raise refuse(f"src_rows and dst_boxes are for {len(mark.bands)} cores, the device has {cores}")
    areas = mark.areas()
    for key, lo, hi in areas:
        if hi > lx_bytes:
            raise refuse(f"{key} = {lo}: its {(hi - lo) // STICK_BYTES} sticks run past the {lx_bytes} bytes of LX")
    bottom = min(lo for _, lo, _ in areas)
    bands = [list(b) for b in mark.bands]
    boxes = [list(b) for b in mark.boxes]
    # the producer: a pointwise kernel whose boxes are the bands, left in LX at src; it stores
    # nothing to DDR, so its result and the views of it have no other reader
    v = kernel.inputs[0]
    while True:
        if len(list(v.uses)) != 1:
            raise refuse(
                "its source, or a view of it, has another reader, which would read DDR that nothing wrote (the producer leaves its result in LX only)"
            )
        if not isinstance(v.owner, spyre.PermuteOp):
            break
        v = v.owner.input
    producer = v.owner if isinstance(v.owner, Operation) else None
    if single_pointwise(producer) is None:
        raise refuse("its source is not a pointwise kernel's result left in LX (resident_out)")
    assert isinstance(producer, spyre.KernelOp)
    if producer.resident_out is None:
        raise refuse("its source is not a pointwise kernel's result left in LX (resident_out)")
    if producer.resident_out.offset.data != mark.src.data:
        raise refuse(
            f"src = {mark.src.data}, but the producer {producer.sym_name.data} leaves its result at {producer.resident_out.offset.data}"
        )
    p_boxes = _boxes_of(producer, cores, refuse)
    want = [None if b == (0, 0) else {"d0": (0, mark.col_sticks), "d1": b} for b in mark.bands]
    if [d.name for d in kernel_iteration_dims(producer)] != ["d0", "d1"] or p_boxes != want:
        raise refuse(
            f"src_rows {bands} are not the boxes of the producer {producer.sym_name.data} (all column sticks, its rows)"
        )
    # the consumer: the result's only reader, whose boxes are dst_boxes, reading them at dst
    users = [u.operation for u in kernel.outputs[0].uses]
    consumer = users[0] if len(users) == 1 else None
    if single_pointwise(consumer) is None or not isinstance(consumer, spyre.KernelOp) or consumer.resident_in is None:
        raise refuse(
            "its result (kept in LX only) is not read by exactly one pointwise kernel that takes it from LX (resident_in)"
        )
    index, at = consumer.resident_in.input.data, consumer.resident_in.offset.data
    if consumer.inputs[index] is not kernel.outputs[0] or at != mark.dst.data:
        raise refuse(f"dst = {mark.dst.data}, but the consumer {consumer.sym_name.data} reads input {index} at {at}")
    c_boxes = _boxes_of(consumer, cores, refuse)
    want = [None if b == (0, 0, 0, 0) else {"d0": (b[0], b[1]), "d1": (b[2], b[3])} for b in mark.boxes]
    if [d.name for d in kernel_iteration_dims(consumer)] != ["d0", "d1"] or c_boxes != want:
        raise refuse(f"dst_boxes {boxes} are not the boxes of the consumer {consumer.sym_name.data}")
    # no kernel from the producer to the consumer plans a buffer into the areas
    block = kernel.parent_block()
    if block is None or producer.parent_block() is not block or consumer.parent_block() is not block:
        raise refuse("its producer and consumer are not in its block")
    span = list(block.ops)
    span = span[span.index(producer) : span.index(consumer) + 1]
    for k in span:
        if isinstance(k, spyre.KernelOp) and not (k.lx_budget is not None and k.lx_budget.bytes.data <= bottom):
            raise refuse(
                f"kernel {k.sym_name.data} runs while the areas (from LX byte {bottom}) are live, and its lx_budget does not keep its buffers below them"
            )
    return mark


def _boxes_of(kernel: spyre.KernelOp, cores: int, refuse: Callable[[str], PassFailedException]) -> list:
    """Each core's box of another kernel (None: idle), or the refusal if it has no valid split."""
    if kernel.split is None:
        raise refuse(f"kernel {kernel.sym_name.data} has no split (run spyre-divide-work first)")
    try:
        return [None if b is None else dict(b) for b in kernel_core_boxes(kernel, cores)]
    except ValueError as e:
        raise refuse(f"kernel {kernel.sym_name.data}: {e}") from None
