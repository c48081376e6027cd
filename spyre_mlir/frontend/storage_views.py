"""`as_strided` in an aot_autograd graph, made a value: a gather of its storage owner's elements.

`aten.as_strided(x, size, stride, offset)` reads the *storage* under `x`, not `x`'s elements:
its strides and offset count storage positions, whatever view `x` is of it. An inference
graph from aot_autograd keeps that meaning (Longformer and LED chunk their queries and keys
with `as_strided` over a transposed `view` of a projection's output). The torch dialect has
value semantics, like torch-mlir's: a value has no storage, and the host executor runs a CPU
op on a contiguous copy of its operands, so an `as_strided` of a view with other strides would
read the wrong elements.

`rebase_as_strided(gm)` rewrites each `as_strided` before import, from the graph's fake tensors
(`node.meta["val"]`, whose views share their base's storage):

    base    = the node owning x's storage (up x's inputs, while they share it)
    where   = the storage position of each element of base (its strides and offset)
    idx[i]  = the element of base at storage position offset + sum(i_k * stride_k)
    as_strided(x, size, stride, offset)
        ->  view(index_select(view(base', [n / r, r]), 0, rows), size)

`base'` is `base`, made contiguous first where it is not; `r` the longest run of consecutive
elements that every innermost row of idx is (a divisor of size[-1]), so the gather moves rows
of r elements (`rows` = idx[..., 0] / r, a constant). A position no element of `base` holds (a
graph input that is a view of a larger buffer) cannot be expressed by value: the graph is
refused (`UnsupportedGraphError`), and runs on the CPU as a whole, right.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.fx
from torch._subclasses.fake_tensor import unset_fake_temporarily
from torch.multiprocessing.reductions import StorageWeakRef

from spyre_mlir.frontend.fx_importer import UnsupportedGraphError

aten = torch.ops.aten


def _storage(node: torch.fx.Node) -> StorageWeakRef | None:
    val = node.meta.get("val")
    if not isinstance(val, torch.Tensor) or val.layout != torch.strided:
        return None
    return StorageWeakRef(val.untyped_storage())


def storage_owner(node: torch.fx.Node) -> torch.fx.Node:
    """The node whose tensor owns `node`'s storage: up the inputs while one shares it."""
    ref = _storage(node)
    while True:
        up = [a for a in node.all_input_nodes if ref is not None and _storage(a) == ref]
        if not up:
            return node
        node = up[0]


def _positions(val: torch.Tensor, offset: int | None = None) -> torch.Tensor:
    """The storage position of each element of `val` (its shape), from its strides and its
    storage offset (or `offset`)."""
    idx = torch.full(val.shape, int(val.storage_offset()) if offset is None else offset, dtype=torch.int64)
    for d, (n, s) in enumerate(zip(val.shape, val.stride())):
        shape = [1] * val.dim()
        shape[d] = n
        idx = idx + (torch.arange(n, dtype=torch.int64) * s).view(shape)
    return idx


def _run(idx: torch.Tensor, numel: int) -> int:
    """The longest r dividing the last extent and `numel` (the elements idx indexes) such that
    every innermost row of idx is runs of r consecutive elements, each starting at a multiple
    of r."""
    if idx.dim() == 0 or idx.numel() == 0:
        return 1
    last = idx.shape[-1]
    for r in sorted((r for r in range(1, last + 1) if last % r == 0 and numel % r == 0), reverse=True):
        runs = idx.reshape(-1, r)
        if bool((runs[:, 0] % r == 0).all()) and bool((runs == runs[:, :1] + torch.arange(r)).all()):
            return r
    return 1


def rebase_as_strided(gm: torch.fx.GraphModule) -> bool:
    """Rewrite every `as_strided` of `gm` as a gather of its storage owner (in place; the module
    docstring). True if anything changed."""
    nodes = [n for n in gm.graph.nodes if n.op == "call_function" and n.target is aten.as_strided.default]
    with unset_fake_temporarily():  # (aot_autograd calls the compiler under its fake mode)
        for k, node in enumerate(nodes):
            _rebase(gm, node, k)
    if nodes:
        gm.graph.lint()
        gm.recompile()
    return bool(nodes)


def _rebase(gm: torch.fx.GraphModule, node: torch.fx.Node, k: int) -> None:
    """Rewrite one `as_strided` node (`rebase_as_strided`); k numbers its constant."""
    args: tuple[Any, ...] = tuple(node.args)
    x, size, stride = args[0], [int(n) for n in args[1]], [int(s) for s in args[2]]
    offset: Any = args[3] if len(args) > 3 else node.kwargs.get("storage_offset")
    assert isinstance(x, torch.fx.Node), node.format_node()
    base = storage_owner(x)
    xval, bval = x.meta["val"], base.meta["val"]
    if offset is None:
        offset = xval.storage_offset()
    wanted = _positions(torch.empty_strided(size, stride, device="meta"), int(offset))
    held = _positions(bval).reshape(-1)
    order = torch.full((int(held.max()) + 1 if held.numel() else 0,), -1, dtype=torch.int64)
    order[held] = torch.arange(held.numel(), dtype=torch.int64)
    beyond = (wanted < 0) | (wanted >= order.numel())
    if bool(beyond.any()) or bool((order[wanted.clamp(0, max(order.numel() - 1, 0))] < 0).any()):
        raise UnsupportedGraphError(
            f"node '{node.name}' ({node.format_node()}): as_strided reads storage positions no element of "
            f"'{base.name}' holds (its storage is a larger buffer's)"
        )
    idx = order[wanted]
    r = _run(idx, bval.numel())
    rows = (idx.reshape(-1, r)[:, 0] // r).contiguous()
    name = f"_spyre_as_strided_rows_{k}"
    gm.register_buffer(name, rows)
    mode = getattr(bval, "fake_mode", None)
    with gm.graph.inserting_before(node):
        src = base
        if not bval.is_contiguous() or bval.storage_offset() != 0:
            src = fake_call(gm, aten.clone.default, (base,), {"memory_format": torch.contiguous_format}, mode)
        table = fake_call(gm, aten.view.default, (src, [bval.numel() // r, r]), {}, mode)
        index = gm.graph.get_attr(name)
        index.meta["val"] = mode.from_tensor(rows, static_shapes=True) if mode is not None else rows
        picked = fake_call(gm, aten.index_select.default, (table, 0, index), {}, mode)
        out = fake_call(gm, aten.view.default, (picked, size), {}, mode)
    node.replace_all_uses_with(out)
    gm.graph.erase_node(node)


def fake_call(
    gm: torch.fx.GraphModule, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any], mode: Any
) -> torch.fx.Node:
    """A call_function node with its fake value (`meta["val"]`) computed from its inputs'."""
    node = gm.graph.call_function(target, args, kwargs)

    def val(a: Any) -> Any:
        return a.meta["val"] if isinstance(a, torch.fx.Node) else a

    vargs = tuple(val(a) for a in args)
    if mode is not None:
        with mode:
            node.meta["val"] = target(*vargs, **kwargs)
    else:
        node.meta["val"] = target(*vargs, **kwargs)
    return node
