"""`convert-spyre-to-isa`: each planned `spyre.kernel` becomes a `spyre_isa.program`, and the
kernel op a `spyre_isa.launch` of it.

For every core, the kernel's chunks are walked in order and each chunk is spelled out as
instructions, all addresses fixed at compile time:

    matmul      per chunk: DMA A tile, DMA B tile (skipped when unchanged), PT into the fp32
                accumulator (accumulating over k chunks); after the last k chunk an SFP copy
                rounds the accumulator into the output tile and a DMA stores it; with an
                epilogue, its SFP steps read the accumulator instead (no copy: only the
                epilogue's result is rounded) and a DMA stores their result tile
    pointwise   per chunk: DMA each input tile (broadcast dims not loaded), one SFP
                instruction per body op (f32 temporaries), DMA the output tile out
    restickify  same elements per stick: DMA in through the source layout, DMA out through
                the result layout; stick moved to another dim: DMA 64 x 64 blocks in, SFP
                block transposes, DMA out

Then cores with the same instruction sequence (up to addresses) are folded into one SPMD
`spyre_isa.stream` whose per-core addresses are tables; a ragged last tile gives its core(s)
their own stream. Views between kernels stay on the host side (they move no data).

    instructions   per-core instruction records, their ops, the folding into streams
    plan           a kernel's frozen plan (form, boxes, chunks, LX, arguments, resident values,
                   multicast chains), read once and checked
    kernel         the lowerings by kernel form (`@lowers`) and the driver: each core's code
    matmul         matmuls: tiles, PT passes, epilogues, multicast chains, k parts
    pointwise      pointwise ops, reductions, row groups
    attention      attention in one kernel: the scores, the row group, the context
    movement       gathers, scatters, slices, concats, restickifies
    onchip         the on-chip relayout and the checks of its mark
    geometry       where an attention kernel stores its context's sticks
    convert        the pass: one program per distinct kernel, a launch per kernel op

Each family registers its lowering for the op classes (or kernel forms) it handles; the pass
module imports the families, and the driver looks their lowerings up by the plan's form.
"""

from spyre_mlir.lowering.convert_spyre_to_isa.convert import ConvertSpyreToIsaPass, kernel_key

__all__ = ["ConvertSpyreToIsaPass", "kernel_key"]
