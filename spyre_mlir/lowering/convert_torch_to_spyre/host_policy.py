"""The host policy: ops the host runs by design, host-built constants, index arithmetic
written in floats, and the ops left on the host after conversion."""

from __future__ import annotations

from xdsl.dialects.builtin import UnitAttr
from xdsl.ir import Block, Operation, SSAValue

from spyre_mlir.dialects import spyre
from spyre_mlir.dialects import torch as t
from spyre_mlir.lowering.convert_torch_to_spyre.utils import COMPLEX_REASON, is_complex, is_int, is_vtensor


def _is_tensor_list(v: SSAValue) -> bool:
    """A list of tensors (a split's pieces): data, not a host scalar."""
    return isinstance(v.type, t.ListType) and isinstance(v.type.element_type, t.ValueTensorType)


def host_by_design(op: Operation) -> tuple[bool, str]:
    """Ops the host runs by design, as the real stack does: index and mask arithmetic on
    integer/boolean tensors, comparisons producing masks, constant creation, and the float copy
    of an integer/boolean tensor (positions for rotary tables: integer data lives on the host,
    the copy is where it crosses to floats)."""
    if op.name in t.CREATION_OPS:
        return True, "a constant made from shapes and numbers (host-built)"
    if op.name in t.COLLECTIVES:
        return True, "a collective between cards (the host's process group, priced on the card link)"
    if HOST_CONSTANT in op.attributes:
        return True, "a constant computed from host-built ones (built once, on the host)"
    if INDEX_ARITHMETIC in op.attributes:
        return True, "float arithmetic on integer data whose result only integer ops read (index building, host)"
    if op.results and not any(is_vtensor(v) or _is_tensor_list(v) for v in op.results):
        return True, "computes a host scalar"
    if _results_empty(op):
        return True, "an empty result (no element to compute: the host makes its shape)"
    if op.name == "torch.aten.where.self" and all(v.type.get_shape() == () for v in op.operands[1:] if is_vtensor(v)):
        return True, "builds a mask from a boolean condition and two constants (host)"
    ins = [v for v in op.operands if is_vtensor(v)]
    outs = [v for v in op.results if is_vtensor(v)]
    if (ins or outs) and all(is_int(v) for v in (*ins, *outs)):
        return True, "integer/boolean tensors stay on the host"
    if outs and all(is_int(v) for v in outs):
        return True, "computes an integer/boolean mask (host)"
    if op.name in t.DTYPE_CONVERSIONS and ins and all(is_int(v) for v in ins):
        return True, "a float copy of an integer/boolean tensor (integer data lives on the host)"
    if op.name == "torch.aten.histc" and ins and all(_float_copy_of_int(v) for v in ins):
        return True, "counts integer values held as floats (a MoE's tokens per expert: integer data lives on the host)"
    return False, ""


def _results_empty(op: Operation) -> bool:
    """Every result of op is a tensor with no element (an expert no token chose, a slice of
    nothing): there is no work, on either side, only a shape."""
    outs = [v for v in op.results if is_vtensor(v)]
    return (
        bool(outs) and len(outs) == len(op.results) and all(v.type.has_sizes and 0 in v.type.get_shape() for v in outs)
    )


def _float_copy_of_int(v: SSAValue) -> bool:
    """v is the float copy of an integer/boolean tensor (its values are integers)."""
    owner = v.owner
    return (
        isinstance(owner, Operation)
        and owner.name in t.DTYPE_CONVERSIONS
        and bool(owner.operands)
        and is_vtensor(owner.operands[0])
        and is_int(owner.operands[0])
    )


HOST_CONSTANT = spyre.HOST_CONSTANT_ATTR


_RANDOM = ("rand", "normal", "bernoulli", "uniform", "dropout", "multinomial")
"""Name parts of ops whose result is not a function of their operands."""


def mark_host_constants(block: Block) -> None:
    """Mark the torch ops whose tensor operands are all constants and at least one of them
    built from shapes and numbers (`t.CREATION_OPS`, or an op marked so): OPT's positions as the
    cumsum of a mask of ones, BLOOM's ALiBi slopes (powers of a constant base), a Llama-4-style
    attention scale from positions. They compute a constant, which the host builds at the first
    call and the device then holds, as it does the creation ops' (runtime/host.py folds every
    op made of constants); on the device they would run at every call, or go to the host and
    back. Literals alone (weights written into the IR) do not count: ops on them stay where
    their lowering puts them."""
    constant: set[SSAValue] = set()
    built: set[SSAValue] = set()
    """Constants made from shapes and numbers."""
    for op in block.ops:
        operands = [
            e for v in op.operands for e in (v.owner.operands if isinstance(v.owner, t.PrimListConstructOp) else [v])
        ]
        if isinstance(op, t.VALUE_OPS) and not isinstance(op, t.PrimListConstructOp):
            constant.update(op.results)
        elif isinstance(op, t.PrimListConstructOp):
            if all(v in constant for v in op.operands):
                constant.update(op.results)
        elif op.name.startswith("torch.") and operands and all(v in constant for v in operands):
            if any(part in op.name for part in _RANDOM):
                continue
            constant.update(op.results)
            if op.name in t.CREATION_OPS:
                built.update(op.results)
            elif any(v in built for v in operands if is_vtensor(v)):
                built.update(op.results)
                op.attributes[HOST_CONSTANT] = UnitAttr()


INDEX_ARITHMETIC = "spyre.index_arithmetic"
"""Marks a float op of index building (`mark_index_arithmetic`): on the host, by design."""


def mark_index_arithmetic(block: Block) -> None:
    """Mark the float ops that compute from integer data alone and whose results only integer
    ops read, through other such ops: index building written in floats, such as T5's and
    MPNet's relative position buckets (the log of a distance, truncated back to an integer).
    They stay on the host with the integer ops around them, as index and mask building does:
    on the device they would cost a round trip for what is integer data on both sides."""
    derived: set[SSAValue] = set()
    """Float values computed from integer data alone."""
    candidates: list[Operation] = []
    for op in block.ops:
        ins = [v for v in op.operands if is_vtensor(v)]
        outs = [v for v in op.results if is_vtensor(v) and not is_int(v)]
        if ins and outs and all(is_int(v) or v in derived for v in ins):
            derived.update(outs)
            if not host_by_design(op)[0]:
                candidates.append(op)
    marked: set[Operation] = set()
    for op in reversed(candidates):  # readers first: a chain is marked from its integer end
        readers = [u.operation for r in op.results for u in r.uses]
        if readers and all(
            r in marked or (host_by_design(r)[0] and all(is_int(v) for v in r.results if is_vtensor(v)))
            for r in readers
        ):
            marked.add(op)
            op.attributes[INDEX_ARITHMETIC] = UnitAttr()


_ORDER = ("sort", "argsort", "msort", "kthvalue", "median", "nanmedian", "mode", "searchsorted", "bucketize", "histc")
_ORDER_PREFIXES = ("unique", "_unique", "histogram", "_histogram")
_LINALG = ("cholesky", "cholesky_inverse", "_cholesky_solve_helper", "geqrf", "ormqr", "triangular_solve", "lu_unpack")
_LINALG_PREFIXES = ("linalg_", "_linalg_", "lu_", "_lu_")


def by_nature(op: Operation) -> str | None:
    """Why a float op without a lowering is the host's by its nature (sorting, a factorization
    of a matrix, a Fourier transform, complex numbers: work the device has no unit or format
    for), or None."""
    name = op.name.removeprefix("torch.aten.").split(".")[0]
    if any(is_vtensor(v) and is_complex(v) for v in (*op.operands, *op.results)):
        return COMPLEX_REASON
    if name in _ORDER or name.startswith(_ORDER_PREFIXES):
        return "an order of values (sorting, ranks, counts): the host's by nature"
    if name in _LINALG or name.startswith(_LINALG_PREFIXES):
        return "a matrix factorization or solve (LAPACK's): the host's by nature"
    if name.startswith("_fft_"):
        return "a Fourier transform: the host's by nature"
    return None


def host_ops(ops) -> list[tuple[Operation, str, bool]]:
    """Torch ops left on the host after conversion, as (op, reason, by_design)."""
    found = []
    for op in ops:
        if not op.name.startswith("torch.") or isinstance(op, t.VALUE_OPS) or op.name == "torch.prim.ListUnpack":
            continue
        by_design, why = host_by_design(op)
        reason = op.attributes.get("spyre.host")
        if reason is not None:
            text = reason.data
        else:
            text = why if by_design else by_nature(op) or "no device lowering yet"
        found.append((op, text, by_design))
    return found
