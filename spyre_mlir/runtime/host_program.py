"""What the host executor knows of a compiled function before it runs it (`HostProgram`):
facts of its ops and values, worked out once when the function is loaded.

    in_place           the launches whose program writes into one of its inputs' buffer
    copy_first         those of them whose destination a later step still reads: they write a copy
    dead_after         per step, the values and the DDR buffers no later step reads
    folded             host ops that compute a constant from constants: run once
    gather_tables      transfers whose result only gathers read (`spyre.gather_table`: the
                       pass spyre-mark-gather-tables marks them): uploaded row by row
    written_in_place   a mutated argument's transfer whose copy the function writes in place
                       into the argument's new contents (a KV cache)
    adopted            a mutated argument's new contents computed in a buffer of their own, in
                       the layout of one of its transfers: that buffer becomes the transfer's copy
    consumes           launches in place whose buffer is a resident transfer's copy
    written_transfers  transfers whose copy some launch in place writes (the others' are frozen)
    transfers_of       the transfers of each argument

Most of them are about buffers as the executor holds them (which value's DDR tensor a launch
in place writes, when the executor frees what it allocated), and hold for the executor's
choices (`copy_first`); the one that says what a program reads, whatever runs it, is an
attribute of the IR (docs/architecture.md, "What the host executor reads from the IR").

The values are seen through views: a `spyre.permute`, `spyre.reshape` or cast of a value is
that value's buffer seen another way (`view_root`), and so is the output of a launch in place
(`HostProgram.buffer_root`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import UnrealizedConversionCastOp
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue

from spyre_mlir.dialects import spyre, spyre_isa
from spyre_mlir.dialects import torch as t

Lifetimes = tuple[tuple[list[SSAValue], list[SSAValue]], ...]
"""Per step: the values no later step reads, and the buffers (root values) no later step reads
through any view."""


@dataclass(frozen=True)
class HostProgram:
    """The facts of a function the executor reads as it runs it (module docstring)."""

    in_place: Mapping[Operation, int]
    """Launches whose program writes into the buffer of one of its inputs (the input's index)."""
    copy_first: frozenset[Operation]
    """The launches in place whose destination a later step still reads (cse made one value
    of equal ones, such as the zeros of two new caches): they write into a copy."""
    dead_after: Lifetimes
    """Per step (`lifetimes`): what the executor drops from its environment and frees after it."""
    folded: frozenset[Operation]
    """Host ops that build a constant from constants: run once, their results kept (the
    real stack constant-folds them at compile time); their uploads stay resident (`foldable`)."""
    gather_tables: frozenset[Operation]
    """The `spyre.to_device` ops marked `spyre.gather_table`: only gathers read their result,
    which is uploaded row by row as the gathers need them (memory.LazyRowsTensor)."""
    written_in_place: Mapping[int, spyre.ToDeviceOp]
    """The transfers of a mutated argument whose device copy this function writes in place
    into what it returns as the argument's new contents (a KV cache), by argument index:
    after the call that copy holds the new contents (`Executable.written_back`)."""
    adopted: Mapping[spyre.FromDeviceOp, tuple[int, spyre.ToDeviceOp, SSAValue]]
    """The mirrors of a mutated argument's new contents that this function computes in a
    buffer of its own, in the layout of one of the argument's transfers: by mirror, (the
    argument, that transfer, the buffer's value). The buffer outlives the call as that
    transfer's copy (`Executable.written_back`), so the next call sends nothing."""
    consumes: Mapping[Operation, spyre.ToDeviceOp]
    """The launches in place whose buffer is a transfer's copy that stops standing for its
    value when they write it (not a `written_in_place` one): taken out of the resident copies."""
    written_transfers: frozenset[Operation | Block]
    """The transfers whose copy some launch in place has for its destination (with the block
    of a destination that is an argument): the others' resident copies are frozen
    (`DdrTensor.freeze`: no launch writes them)."""
    transfers_of: Mapping[int, Sequence[spyre.ToDeviceOp]]
    """The transfers of each argument, by its index."""

    @staticmethod
    def of(fn: func.FuncOp, programs: Mapping[str, spyre_isa.ProgramOp]) -> HostProgram:
        """The facts of `fn` (one block), whose launches run `programs` by name."""
        ops = list(fn.body.block.ops)
        in_place: dict[Operation, int] = {}
        for op in ops:
            if isinstance(op, spyre_isa.LaunchOp):
                j = programs[op.program.root_reference.data].in_place
                if j is not None:
                    in_place[op] = j
        copy_first = frozenset(_shared_destinations(ops, in_place))
        roots = _Roots(in_place, copy_first)
        mirrors = _mirrors(fn, roots)
        written_in_place = _written_in_place(mirrors)
        transfers_of: dict[int, list[spyre.ToDeviceOp]] = {}
        for op in ops:
            if isinstance(op, spyre.ToDeviceOp) and (j := argument_of(op)) is not None:
                transfers_of.setdefault(j, []).append(op)
        return HostProgram(
            in_place=in_place,
            copy_first=copy_first,
            dead_after=_lifetimes(ops, roots),
            folded=frozenset(_foldable(ops)),
            gather_tables=frozenset(op for op in ops if isinstance(op, spyre.ToDeviceOp) and op.gather_table),
            written_in_place=written_in_place,
            adopted=_adopted(mirrors, written_in_place, transfers_of),
            consumes=_consumed_transfers(roots, written_in_place),
            written_transfers=frozenset(roots.buffer_root(op.operands[j]).owner for op, j in in_place.items()),
            transfers_of=transfers_of,
        )


class _Roots:
    """Which buffer a value is (`buffer_root`), given the launches in place."""

    def __init__(self, in_place: Mapping[Operation, int], copy_first: frozenset[Operation]):
        self.in_place, self.copy_first = in_place, copy_first

    def buffer_root(self, v: SSAValue) -> SSAValue:
        """The value whose DDR buffer `v` is: back through views and launches in place (each
        writes into its input's buffer, unless it writes into a copy: `copy_first`)."""
        while True:
            v = view_root(v)
            owner = v.owner
            if not (isinstance(owner, spyre_isa.LaunchOp) and owner in self.in_place and owner not in self.copy_first):
                return v
            v = owner.inputs[self.in_place[owner]]


def _foldable(ops: Sequence[Operation]) -> set[Operation]:
    """The host's torch ops whose operands are constants, torch value ops (lists of such) or
    folded ops, and whose results the function does not return (a caller may write
    into what it gets back): the CREATION_OPS, and what the conversion marked as computing
    a constant from them (`spyre.host_constant`):

        constant(op) = op is a literal, or a list of constants, or folded(op)
        folded(op)   = (op in t.CREATION_OPS or op is marked spyre.host_constant)
                       and all(constant(x.owner) for x in operands)
                       and no result reaches func.return"""
    constant: set[Operation] = set()
    folded: set[Operation] = set()
    for op in ops:
        made_of_constants = all(isinstance(v, OpResult) and v.owner in constant for v in op.operands)
        if isinstance(op, arith.ConstantOp | t.ValueTensorLiteralOp) or (
            isinstance(op, t.VALUE_OPS) and made_of_constants
        ):
            constant.add(op)
        elif (
            (op.name in t.CREATION_OPS or spyre.HOST_CONSTANT_ATTR in op.attributes)
            and made_of_constants
            and not any(returned(r) for r in op.results)
        ):
            constant.add(op)
            folded.add(op)
    return folded


def _shared_destinations(ops: Sequence[Operation], in_place: Mapping[Operation, int]) -> set[Operation]:
    """The launches in place whose destination, or a tensor it is a view of, or another
    view of that, a later step reads:

        views(r) = {r} + the views (permute, reshape, cast) of views(r), recursively
        shared(L) = a step after L reads views(root of L's destination)"""
    shared: set[Operation] = set()
    for i, op in enumerate(ops):
        if op not in in_place:
            continue
        root = view_root(op.operands[in_place[op]])
        views, todo = {root}, [root]
        while todo:
            for use in todo.pop().uses:
                if isinstance(use.operation, VIEWS):
                    new = [r for r in use.operation.results if r not in views]
                    views.update(new)
                    todo.extend(new)
        if any(v in views for later in ops[i + 1 :] for v in later.operands):
            shared.add(op)
    return shared


Mirrors = list[tuple[int, spyre.FromDeviceOp, SSAValue]]


def _mirrors(fn: func.FuncOp, roots: _Roots) -> Mirrors:
    """Per mutated argument j (its `spyre.aliasing_output` is result k) whose result k is a
    `spyre.from_device mirror`: (j, that mirror, the value whose buffer it reads)."""
    ret = fn.body.block.last_op
    if not isinstance(ret, func.ReturnOp):
        return []
    found = []
    for j, k in spyre.aliased_arguments(fn).items():
        back = view_root(ret.arguments[k]).owner if k < len(ret.arguments) else None
        if isinstance(back, spyre.FromDeviceOp) and back.mirror is not None:
            found.append((j, back, roots.buffer_root(back.input)))
    return found


def _written_in_place(mirrors: Mirrors) -> dict[int, spyre.ToDeviceOp]:
    """Per mutated argument j: the transfer of argument j, when its mirror reads that
    transfer's buffer (`_mirrors`)."""
    kept: dict[int, spyre.ToDeviceOp] = {}
    for j, _, root in mirrors:
        if isinstance(root.owner, spyre.ToDeviceOp) and argument_of(root.owner) == j:
            kept[j] = root.owner
    return kept


def _adopted(
    mirrors: Mirrors,
    written_in_place: Mapping[int, spyre.ToDeviceOp],
    transfers_of: Mapping[int, Sequence[spyre.ToDeviceOp]],
) -> dict[spyre.FromDeviceOp, tuple[int, spyre.ToDeviceOp, SSAValue]]:
    """Per mirror of a mutated argument j not written in place: (j, a transfer of j whose
    result has the type of the buffer the mirror reads, that buffer's value)."""
    found: dict[spyre.FromDeviceOp, tuple[int, spyre.ToDeviceOp, SSAValue]] = {}
    for j, back, root in mirrors:
        if j in written_in_place:
            continue
        for op in transfers_of.get(j, ()):
            if op.permutation is None and op.result.type == root.type:
                found[back] = (j, op, root)
                break
    return found


def _consumed_transfers(
    roots: _Roots, written_in_place: Mapping[int, spyre.ToDeviceOp]
) -> dict[Operation, spyre.ToDeviceOp]:
    """The launches in place (not into a copy) whose buffer is a transfer's, other than the
    `written_in_place` ones: a resident copy of it no longer holds its value once written."""
    kept = set(written_in_place.values())
    found: dict[Operation, spyre.ToDeviceOp] = {}
    for op, j in roots.in_place.items():
        if op in roots.copy_first:
            continue
        to_dev = roots.buffer_root(op.operands[j]).owner
        if isinstance(to_dev, spyre.ToDeviceOp) and to_dev not in kept:
            found[op] = to_dev
    return found


def _lifetimes(ops: Sequence[Operation], roots: _Roots) -> Lifetimes:
    """Per step: the values no later step reads (dropped from the environment), and the
    DDR tensors no later step reads through any view (freed, if this call allocated them):

        root(v) = root(x) if v is a view of x (spyre.permute/reshape, a cast) or the output
                  of a launch in place into x, else v
        a root dies after the last step that reads it or any of its views
        (one that goes into a list lives to the end: lists are not followed)"""
    v: SSAValue
    r: SSAValue
    root: dict[SSAValue, SSAValue] = {}
    last: dict[SSAValue, int] = {}
    forever = len(ops)
    for i, op in enumerate(ops):
        for v in op.results:
            last.setdefault(v, i)  # unread: dies where it is made
        for v in op.operands:
            last[v] = i
        if isinstance(op, spyre.PermuteOp | spyre.ReshapeOp | UnrealizedConversionCastOp):
            for r, v in zip(op.results, op.operands):
                root[r] = root.get(v, v)
        elif op in roots.in_place and op not in roots.copy_first:  # the output is the input's buffer
            v = op.operands[roots.in_place[op]]
            root[op.results[0]] = root.get(v, v)
    root_last: dict[SSAValue, int] = {}
    for v, i in last.items():
        r = root.get(v, v)
        root_last[r] = max(root_last.get(r, -1), i)
    for op in ops:
        if isinstance(op, t.PrimListConstructOp):
            for v in op.operands:
                root_last[root.get(v, v)] = forever
    dead: list[tuple[list[SSAValue], list[SSAValue]]] = [([], []) for _ in ops]
    for v, i in last.items():
        dead[i][0].append(v)
    for r, i in root_last.items():
        if i < forever:
            dead[i][1].append(r)
    return tuple(dead)


VIEWS = (spyre.PermuteOp, spyre.ReshapeOp, UnrealizedConversionCastOp)
"""Ops whose result is their operand seen another way (the same host array or DDR buffer)."""


def view_root(v: SSAValue) -> SSAValue:
    """The value `v` is a view of (back through permutes, reshapes and casts), or v."""
    while isinstance(v.owner, VIEWS):
        v = v.owner.operands[0]
    return v


def argument_of(op: spyre.ToDeviceOp) -> int | None:
    """The index of the function argument a transfer uploads (seen through casts), or None."""
    src = view_root(op.input)
    return src.index if isinstance(src, BlockArgument) else None


def returned(v: SSAValue) -> bool:
    """Whether v reaches the function's return (directly, through casts or in a list)."""
    for use in v.uses:
        o = use.operation
        if isinstance(o, func.ReturnOp):
            return True
        if isinstance(o, UnrealizedConversionCastOp | t.PrimListConstructOp) and any(returned(r) for r in o.results):
            return True
    return False
