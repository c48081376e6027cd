"""Length buckets: one program for every length of a dynamic dimension inside a bucket.

Dynamo hands the backend a graph with a symbolic size `s` once it has seen two lengths (a
prompt of 5 tokens, then one of 9). Programs are compiled for static shapes; instead of one
program per length, `plan_buckets` proves that the graph can run at a padded length `B >= n`
(the bucket of the real length `n`) and give the real rows' results, and rewrites it so that
this holds by construction:

- every `s`-sized dim is a padded dim; its rows at `n <= i < B` ("padded rows") hold any value;
- row-wise ops (pointwise, views that keep each padded dim whole, reductions and products over
  other dims, embedding lookups) give the real rows exactly their unpadded values;
- a reduction or a product over a padded dim first has the padded rows of its operand replaced
  by the reduction's identity (`where(row < n, x, identity)`: 0 for sums and products, -inf for
  softmax and max, False for any), so the padded rows contribute nothing, whatever they hold;
- `x[..., -1:, ...]` along a padded dim (the last token's hidden state) becomes the product with
  a one-hot row at `n - 1` (the other rows masked to 0 first: exact);
- a use of `s` as a value (a length counter `t + s`) becomes `t + n`;
- a row write into a fresh constant buffer (`index_put` of a static KV cache made inside the
  graph, at `offset + arange(s)`) writes the buffer's own fill value in the padded rows, at
  positions the real rows do not write: the buffer ends as the unpadded one. `B` stays within
  the buffer (`B <= length - offset`, checked at each call).

Anything else that touches a padded dim (a mean over it, a `cat` along it, a write into a graph
input, an op this module does not know) makes the graph not bucketable, with the reason: the
backend then compiles once per length, as before. The rewritten graph is still an ATen graph
with `s` symbolic and one more input, the real length `n` (a 0-d int64 tensor).

The rewrite's sums and softmaxes run over `B` instead of `n` entries, the extra ones exact
zeros: the real rows' results are the unpadded ones up to the order of float32 accumulation
(docs/numerics.md). Buckets are `BUCKETS` (docs/llm.md).
"""

from __future__ import annotations

import contextlib
import math
import operator
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy
import torch
import torch.fx as fx

aten = torch.ops.aten

BUCKETS = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
"""The padded lengths: a length n runs at the smallest bucket >= n that the graph allows (its
buffers' lengths and Dynamo's guards); a length above the last bucket, or one no bucket fits,
runs at its own length."""


class NotBucketable(Exception):
    """The graph cannot run padded; the message says which op and why."""


# reductions over a dim: (the dims argument's position, the identity the padded rows take;
# None: the result depends on the count of rows, so no identity exists)
_REDUCTIONS: dict[Any, tuple[int, float | bool | None]] = {
    aten.sum.dim_IntList: (1, 0.0),
    aten.mean.dim: (1, None),
    aten.amax.default: (1, -math.inf),
    aten.amin.default: (1, math.inf),
    aten.any.dim: (1, False),
    aten.any.dims: (1, False),
    aten.all.dim: (1, True),
    aten.prod.dim_int: (1, 1.0),
    aten._softmax.default: (1, -math.inf),
    aten._log_softmax.default: (1, -math.inf),
    aten.logsumexp.default: (1, -math.inf),
    aten.var_mean.correction: (1, None),
    aten.var.correction: (1, None),
    aten.argmax.default: (1, None),
    aten.argmin.default: (1, None),
    aten.cumsum.default: (1, None),
}

# ops that move or copy elements without mixing rows: the padded dims follow from the shapes
_LAYOUT = {
    aten.permute.default,
    aten.transpose.int,
    aten.t.default,
    aten.unsqueeze.default,
    aten.squeeze.dim,
    aten.squeeze.dims,
    aten.squeeze.default,
    aten.expand.default,
    aten.clone.default,
    aten._to_copy.default,
    aten.alias.default,
    aten.detach.default,
    aten.lift_fresh_copy.default,
}
_VIEWS = {aten.view.default, aten._unsafe_view.default, aten.reshape.default}
# ops whose symbolic size arguments are shapes (they take B when the graph is traced at B)
_SHAPED = {
    aten.full.default,
    aten.zeros.default,
    aten.ones.default,
    aten.empty.memory_format,
    aten.new_zeros.default,
    aten.new_full.default,
    aten.new_empty.default,
    aten.new_ones.default,
    aten.scalar_tensor.default,
    aten.full_like.default,
    aten.zeros_like.default,
    aten.ones_like.default,
    aten.empty_like.default,
}
_FILL_AT = {aten.full.default: 1, aten.new_full.default: 1, aten.full_like.default: 1, aten.scalar_tensor.default: 0}
"""Constant makers: the position of their fill value (a size anywhere else is a shape)."""
_PRODUCTS = {aten.mm.default: 0, aten.bmm.default: 0, aten.addmm.default: 1, aten.baddbmm.default: 1}
"""Matrix products: the position of their first matrix (the second follows it)."""
_SPLITS = {aten.split_with_sizes.default, aten.split.Tensor, aten.unbind.int}
"""Ops that cut a tensor into pieces along one dim (not a padded one)."""
_FOLLOWS = {aten.embedding.default, aten.index_select.default}
"""Ops whose output rows are the rows of their index operand (a table lookup)."""


def bucket_for(n: int, limit: int, allowed: Callable[[int], bool] = lambda b: True) -> int:
    """The bucket length for a real length n, at most `limit` and `allowed` (n itself when
    none fits)."""
    return next((b for b in BUCKETS if n <= b <= limit and allowed(b)), n)


@dataclass
class BucketPlan:
    """How to run a graph padded: `graph` is the rewritten graph (its last input the real
    length); `padded_inputs`/`padded_outputs` list each input's/output's padded dims."""

    graph: fx.GraphModule
    symbol: sympy.Symbol
    padded_inputs: dict[int, tuple[int, ...]]
    padded_outputs: list[tuple[int, ...]]
    size_inputs: list[int]
    """Inputs that are the symbolic size itself (ints at run time)."""
    limit: int = sys.maxsize
    """Static bound on B (the lengths of buffers sliced or written to the padded length)."""
    offsets: list[tuple[int, int]] = field(default_factory=list)
    """(input, length): a row write at input's value + row; B <= length - value at each call."""
    guards: list[sympy.Basic] = field(default_factory=list)

    def length(self, args: Sequence[Any]) -> int:
        """The real length of this call."""
        if self.size_inputs:
            return int(args[self.size_inputs[0]])
        i, dims = next(iter(self.padded_inputs.items()))
        return int(args[i].shape[dims[0]])

    def bucket(self, args: Sequence[Any], n: int) -> int:
        """The padded length of a call of real length n: within the buffers it writes (at this
        call's offsets) and Dynamo's guards."""
        limit = min([self.limit] + [length - int(args[i]) for i, length in self.offsets])
        return bucket_for(n, limit, lambda b: all(bool(g.xreplace({self.symbol: b})) for g in self.guards))

    def pad(self, args: Sequence[Any], n: int, b: int) -> list[Any]:
        """The call's arguments at length b: padded rows zero, the real length appended."""
        out = list(args)
        for i in self.size_inputs:
            out[i] = b
        for i, dims in self.padded_inputs.items():
            x = args[i]
            shape = [b if d in dims else s for d, s in enumerate(x.shape)]
            padded = x.new_zeros(shape)
            padded[tuple(slice(0, n) if d in dims else slice(None) for d in range(x.dim()))] = x
            out[i] = padded
        # the real length beside the other arguments (a spyre-resident call takes one device)
        device = next((a.device for a in args if isinstance(a, torch.Tensor)), None)
        out.append(torch.tensor(n, dtype=torch.int64, device=device))
        return out

    def unpad(self, outs: Sequence[Any], n: int) -> tuple[Any, ...]:
        """The outputs at the real length, each contiguous as the trace's outputs are: a view
        of a padded output would keep the bucket's strides, and aot_autograd rebuilds an
        output that aliases another tensor from the strides it is given."""
        res = []
        for o, dims in zip(outs, self.padded_outputs):
            for d in dims:
                o = o.narrow(d, 0, n)
            res.append(o.clone(memory_format=torch.contiguous_format) if dims else o)  # (size-1 dims' strides too)
        return tuple(res)


def symbolic_sizes(gm: fx.GraphModule) -> set[sympy.Symbol]:
    """The symbols of the graph's symbolic inputs: its tensors' sizes and the integers its ops
    read (an integer input no op reads is none of them)."""
    syms: set[sympy.Symbol] = set()
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            v = n.meta.get("val")
            if isinstance(v, torch.SymInt) and n.users:
                syms |= v.node.expr.free_symbols
            elif isinstance(v, torch.Tensor):
                for d in v.shape:
                    if isinstance(d, torch.SymInt):
                        syms |= d.node.expr.free_symbols
    return syms


def host_int_outputs(gm: fx.GraphModule) -> tuple[fx.GraphModule, Callable[..., dict[int, Any]] | None]:
    """The graph without the outputs that are constants or integer arithmetic of its integer
    inputs and input sizes only (a Python int a module attribute keeps, such as HF's
    sliding-window cache length, which Dynamo passes in and returns updated, or a constant once
    a trace made it concrete), and a function of the call's arguments giving those outputs by
    position (None: there are none). No tensor op reads them, so they need no program: the
    host computes them, and the integers only they read make no new program."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    out = next(n for n in gm.graph.nodes if n.op == "output")
    values = list(out.args[0]) if isinstance(out.args[0], tuple | list) else [out.args[0]]

    def is_int(n: Any) -> bool:
        v = n.meta.get("val") if isinstance(n, fx.Node) else n
        return isinstance(v, int | torch.SymInt) and not isinstance(v, bool)

    host: set[fx.Node] = set()  # integers computed from integer inputs, input sizes and constants
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            if is_int(n):
                host.add(n)
        elif n.op == "call_function" and is_int(n) and not n.kwargs:
            if n.target is torch.ops.aten.sym_size.int and n.args[0].op == "placeholder":
                host.add(n)  # an input's size, as the call's argument has it
            elif all(a in host if isinstance(a, fx.Node) else isinstance(a, int) for a in n.args):
                host.add(n)
    picked = {i: v for i, v in enumerate(values) if not isinstance(v, fx.Node) or v in host}
    if not picked:
        return gm, None
    order = [n for n in gm.graph.nodes if n in host]
    arg_of = {n: placeholders.index(n) for n in order if n.op == "placeholder"}
    size_of = {
        n: (placeholders.index(n.args[0]), n.args[1])
        for n in order
        if n.op == "call_function" and n.target is torch.ops.aten.sym_size.int
    }

    def compute(*args: Any) -> dict[int, Any]:
        env: dict[fx.Node, Any] = {}
        for n in order:
            if n in arg_of:
                env[n] = args[arg_of[n]]
            elif n in size_of:
                i, d = size_of[n]
                env[n] = args[i].shape[d]
            else:
                env[n] = n.target(*(env[a] if isinstance(a, fx.Node) else a for a in n.args))
        return {i: env[v] if isinstance(v, fx.Node) else v for i, v in picked.items()}

    return without_outputs(gm, set(picked)), compute


def without_outputs(gm: fx.GraphModule, drop: set[int]) -> fx.GraphModule:
    """A copy of the graph whose output tuple leaves out the positions `drop` (and the ops only
    they read). The graph is copied, not deep-copied: under a fake mode its constants cannot be."""
    graph = fx.Graph()
    env: dict[fx.Node, fx.Node] = {}
    values = graph.graph_copy(gm.graph, env)
    values = list(values) if isinstance(values, tuple | list) else [values]
    graph.output(tuple(v for i, v in enumerate(values) if i not in drop))
    graph.eliminate_dead_code()
    return fx.GraphModule(gm, graph)


SCALAR_OPERAND = (aten.add.Tensor, aten.sub.Tensor, aten.mul.Tensor)
"""Tensor ops whose integer operand may as well be a 0-d integer tensor: the same result."""


def ints_as_tensors(gm: fx.GraphModule, fake_inputs: Sequence[Any]) -> tuple[fx.GraphModule, set[int]]:
    """The graph with each integer input that only tensor arithmetic reads (HF's
    sliding-window cache length, added to positions) taken as a 0-d int64 tensor instead, and
    their positions among the inputs (the caller passes `torch.tensor(value)` there). A program
    then computes with the value it is given, on the host as positions are built, where an
    integer input would have been traced into it as a constant: one program for every value."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    picked = {
        i
        for i, n in enumerate(placeholders)
        if isinstance(n.meta.get("val"), torch.SymInt)
        and n.users
        and all(
            u.target in SCALAR_OPERAND and not u.kwargs and isinstance(u.args[0], fx.Node) and u.args[1] is n
            for u in n.users
        )
    }
    if not picked:
        return gm, set()
    mode = torch._guards.detect_fake_mode(fake_inputs)
    gm = without_outputs(gm, set())  # a copy: the caller's graph keeps its integer inputs
    new = [n for n in gm.graph.nodes if n.op == "placeholder"]
    with mode if mode is not None else contextlib.nullcontext():
        for i in picked:
            new[i].meta["val"] = torch.empty((), dtype=torch.int64)
    return gm, picked


def plan_buckets(gm: fx.GraphModule, fake_inputs: Sequence[Any]) -> BucketPlan:
    """The bucket plan of an aot_autograd inference graph with one symbolic size, or
    NotBucketable naming the op that mixes padded rows into real ones."""
    return _Rewriter(gm, fake_inputs).run()


def _args(n: fx.Node) -> Any:
    """A node's positional arguments, as Any (fx types each as any argument at all)."""
    return n.args


def _same(a: Any, b: Any) -> bool:
    """One value, as a reduction's identity: -inf is -inf and 0 is 0.0, but False is not 0."""
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def _expr(x: Any) -> sympy.Basic | None:
    if isinstance(x, torch.SymInt):
        return x.node.expr
    if isinstance(x, int):
        return sympy.Integer(x)
    return None


class _Rewriter:
    def __init__(self, gm: fx.GraphModule, fake_inputs: Sequence[Any]):
        self.gm = gm
        self.fake_inputs = fake_inputs
        syms = symbolic_sizes(gm)
        if len(syms) != 1:
            raise NotBucketable(f"{len(syms)} symbolic sizes ({sorted(map(str, syms))}); buckets take one")
        (self.s,) = syms
        self.limit = sys.maxsize
        self.offsets: list[tuple[int, int]] = []

    # region shapes
    def sdims(self, x: Any) -> tuple[int, ...]:
        """The padded dims of a node's value (every dim of size s); NotBucketable for a dim
        whose size is another expression of s."""
        v = x.meta.get("val") if isinstance(x, fx.Node) else None
        if not isinstance(v, torch.Tensor):
            return ()
        dims = []
        for d, size in enumerate(v.shape):
            e = _expr(size)
            if e is not None and self.s in e.free_symbols:
                if e != self.s:
                    raise NotBucketable(f"{x.name}: dim {d} has size {e}, not the padded length {self.s}")
                dims.append(d)
        return tuple(dims)

    def is_size(self, x: Any) -> bool:
        return isinstance(x, fx.Node) and _expr(x.meta.get("val")) == self.s

    def check_view(self, n: fx.Node) -> None:
        src, dst = _args(n)[0].meta["val"].shape, n.meta["val"].shape
        ins, outs = self.sdims(_args(n)[0]), self.sdims(n)
        pre_out = {sympy.simplify(sympy.Mul(*[_expr(s) for s in dst[:e]])) for e in outs}
        for d in ins:
            if sympy.simplify(sympy.Mul(*[_expr(s) for s in src[:d]])) not in pre_out:
                raise NotBucketable(f"{n.name}: the view {tuple(src)} -> {tuple(dst)} mixes the rows of dim {d}")
        if len(ins) != len(outs):
            raise NotBucketable(f"{n.name}: the view {tuple(src)} -> {tuple(dst)} merges or splits a padded dim")

    # endregion

    def run(self) -> BucketPlan:
        gm = self.gm
        g = fx.Graph()
        env: dict[fx.Node, Any] = {}
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        padded_inputs: dict[int, tuple[int, ...]] = {}
        size_inputs = []
        for i, p in enumerate(placeholders):
            env[p] = g.placeholder(p.name)
            env[p].meta = dict(p.meta)
            if self.is_size(p):
                size_inputs.append(i)
            elif isinstance(p.meta.get("val"), torch.SymInt) and p.users:  # (one no op reads passes as it is)
                raise NotBucketable(f"input {p.name} is the size {p.meta['val']}, not the padded length")
            elif dims := self.sdims(p):
                if any(u.target is aten.copy_.default and u.args[0] is p for u in p.users):
                    raise NotBucketable(f"input {p.name} is written by the graph and has padded rows")
                padded_inputs[i] = dims
        self.real = g.placeholder("real_length")
        self.g = g
        self._rows: fx.Node | None = None
        self._last: fx.Node | None = None
        self.pads: dict[fx.Node, dict[int, Any]] = {}
        """For a node of the source graph: the one value its padded rows hold, by dim (as the
        rewritten graph computes it)."""
        self.consts: dict[fx.Node, Any] = {}
        """Constant tensors of the source graph (full, scalar_tensor ...): their one value."""
        size_node = env[placeholders[size_inputs[0]]] if size_inputs else None
        self.size_node = size_node
        for n in gm.graph.nodes:
            if n.op == "placeholder":
                continue
            if n.op == "output":
                outs = _args(n)[0]
                padded_outputs = [self.sdims(o) if isinstance(o, fx.Node) else () for o in outs]
                g.output(fx.map_arg(outs, lambda a: env[a]))
                break
            if n.op != "call_function":
                raise NotBucketable(f"{n.name}: a {n.op} node")
            env[n] = self.rewrite(n, env)
        new = fx.GraphModule(gm, g)
        guards = self._guards()
        return BucketPlan(new, self.s, padded_inputs, padded_outputs, size_inputs, self.limit, self.offsets, guards)

    def _guards(self) -> list[sympy.Basic]:
        fake_mode = torch._guards.detect_fake_mode(self.fake_inputs)
        env = fake_mode.shape_env if fake_mode is not None else None
        if env is None:
            return []
        out = [gd.expr for gd in env.guards if gd.expr.free_symbols == {self.s}]
        vr = env.var_to_range.get(self.s)
        if vr is not None:
            lo, hi = vr.lower, vr.upper
            if lo.is_finite:
                out.append(sympy.Ge(self.s, lo))
            if hi.is_finite:
                out.append(sympy.Le(self.s, hi))
        return out

    # region rewriting
    def call(self, target: Any, *args: Any, **kwargs: Any) -> fx.Node:
        return self.g.call_function(target, args, kwargs)

    def rows(self) -> fx.Node:
        """arange(s): the row numbers of a padded dim."""
        if self._rows is None:
            if self.size_node is None:
                raise NotBucketable("no input carries the padded length")
            self._rows = self.call(aten.arange.start_step, 0, self.size_node, dtype=torch.int64)
        return self._rows

    def last_row(self) -> fx.Node:
        """row == n - 1: the last real row of a padded dim."""
        if self._last is None:
            self._last = self.call(aten.eq.Tensor, self.rows(), self.call(aten.sub.Tensor, self.real, 1))
        return self._last

    def masked(self, x: fx.Node, like: fx.Node, dims: Sequence[int], identity: Any, last: bool = False) -> fx.Node:
        """x with the rows of `dims` at or past the real length (all but the last real row,
        `last`) replaced by identity."""
        ndim = like.meta["val"].dim()
        keep = self.last_row() if last else self.call(aten.lt.Tensor, self.rows(), self.real)
        for d in dims:
            shape = [1] * ndim
            shape[d] = -1
            m = self.call(aten.view.default, keep, shape)
            dtype = like.meta["val"].dtype
            fill = self.call(aten.scalar_tensor.default, identity, dtype=dtype)
            x = self.call(aten.where.self, m, x, fill)
        return x

    def padded_as(self, x: fx.Node, dims: Sequence[int], identity: Any, env: dict[fx.Node, Any]) -> None:
        """Make the padded rows of x along dims hold identity, for x's later users (their real
        rows are unchanged, so every user sees x as before): a mask where they do not already."""
        pads = self.pads.setdefault(x, {})
        need = [d for d in dims if d not in pads or not _same(pads[d], identity)]
        if need:
            env[x] = self.masked(env[x], x, need, identity)
            pads.update(dict.fromkeys(need, identity))

    def track(self, n: fx.Node) -> None:
        """What the padded rows of n hold, where that is one known value (pads[n][dim])."""
        op = n.target
        val = n.meta.get("val")
        if op in _SHAPED and op is not aten.empty.memory_format and op is not aten.empty_like.default:
            fill = _args(n)[_FILL_AT[op]] if op in _FILL_AT else None
            fill = {aten.zeros.default: 0, aten.zeros_like.default: 0, aten.new_zeros.default: 0}.get(op, fill)
            fill = {aten.ones.default: 1, aten.ones_like.default: 1, aten.new_ones.default: 1}.get(op, fill)
            if isinstance(fill, int | float | bool):
                self.consts[n] = fill
                self.pads[n] = dict.fromkeys(self.sdims(n), fill)
            return
        if not isinstance(val, torch.Tensor) or not self.sdims(n):
            return
        if isinstance(op, torch._ops.OpOverload) and torch.Tag.pointwise in op.tags:
            pads = {}
            for d in self.sdims(n):
                v = self.pointwise_pad(n, d)
                if v is not None:
                    pads[d] = v
            self.pads[n] = pads
        elif op in _LAYOUT or op in _VIEWS:
            src = _args(n)[0]
            dims = dict(zip(self.sdims(src), self.sdims(n)))
            if op in (aten.permute.default, aten.transpose.int, aten.t.default):
                order = self.dim_order(n)
                dims = {order[e]: e for e in self.sdims(n)}
            self.pads[n] = {dims[d]: v for d, v in self.pads.get(src, {}).items() if d in dims}

    def dim_order(self, n: fx.Node) -> list[int]:
        """For a permute/transpose: the source dim of each result dim."""
        nd = n.meta["val"].dim()
        if n.target is aten.permute.default:
            return [d % nd for d in _args(n)[1]]
        order = list(range(nd))
        a, b = (0, 1) if n.target is aten.t.default else (_args(n)[1] % nd, _args(n)[2] % nd)
        order[a], order[b] = order[b], order[a]
        return order

    def pointwise_pad(self, n: fx.Node, d: int) -> Any:
        """The value a pointwise op gives in the padded rows of its dim d, where every operand
        has one known value there (None where not)."""
        nd = n.meta["val"].dim()
        values: dict[fx.Node, Any] = {}
        for a in n.all_input_nodes:
            av = a.meta.get("val")
            if not isinstance(av, torch.Tensor):
                return None
            if a in self.consts:
                values[a] = self.consts[a]
                continue
            ad = d - (nd - av.dim())
            if ad < 0 or ad not in self.sdims(a) or ad not in self.pads.get(a, {}):
                return None
            values[a] = self.pads[a][ad]
        try:
            args = fx.map_arg(_args(n), lambda a: torch.tensor(values[a], dtype=a.meta["val"].dtype))
            kwargs = fx.map_arg(n.kwargs, lambda a: torch.tensor(values[a], dtype=a.meta["val"].dtype))
            target: Any = n.target
            return target(*args, **kwargs).item()
        except (RuntimeError, TypeError, ValueError):
            return None

    def rewrite(self, n: fx.Node, env: dict[fx.Node, Any]) -> Any:
        new = self.rewrite_op(n, env)
        self.track(n)
        return new

    def rewrite_op(self, n: fx.Node, env: dict[fx.Node, Any]) -> Any:
        op: Any = n.target
        ins = [a for a in n.all_input_nodes if isinstance(a.meta.get("val"), torch.Tensor)]
        touched = any(self.sdims(a) for a in ins) or bool(self.sdims(n))
        size_args = [a for a in n.all_input_nodes if self.is_size(a)]
        name = getattr(op, "__name__", str(op))
        if op in _REDUCTIONS and touched:
            pos, identity = _REDUCTIONS[op]
            x = _args(n)[0]
            ndim = x.meta["val"].dim()
            dims: Any = _args(n)[pos] if len(_args(n)) > pos else n.kwargs.get("dim")
            dims = list(range(ndim)) if dims is None else [dims] if isinstance(dims, int) else list(dims)
            over = [d % ndim for d in dims if d % ndim in self.sdims(x)]
            if over:
                if identity is None:
                    raise NotBucketable(f"{n.name}: {name} over the padded dim {over[0]} depends on the row count")
                self.padded_as(x, over, identity, env)
        elif op in _PRODUCTS and touched:
            a, b = _args(n)[_PRODUCTS[op] : _PRODUCTS[op] + 2]
            k = a.meta["val"].dim() - 1
            if k in self.sdims(a):
                self.padded_as(a, [k], 0.0, env)
                self.padded_as(b, [b.meta["val"].dim() - 2], 0.0, env)
        elif op in _SPLITS and touched:
            nd = _args(n)[0].meta["val"].dim()
            dim = (
                (_args(n)[2] if len(_args(n)) > 2 else n.kwargs.get("dim", 0))
                if op is not aten.unbind.int
                else (_args(n)[1] if len(_args(n)) > 1 else 0)
            )
            if dim % nd in self.sdims(_args(n)[0]):
                raise NotBucketable(f"{n.name}: {name} along the padded dim")
        elif op is aten.native_layer_norm.default and touched:
            x = _args(n)[0]
            nd = x.meta["val"].dim()
            if set(range(nd - len(_args(n)[1]), nd)) & set(self.sdims(x)):
                raise NotBucketable(f"{n.name}: a layer norm over the padded dim")
        args = fx.map_arg(_args(n), lambda a: env[a])
        kwargs = fx.map_arg(n.kwargs, lambda a: env[a])
        if op is operator.getitem or (not touched and not size_args) or op in _REDUCTIONS:
            return self.g.call_function(op, args, kwargs)
        if op in _PRODUCTS or op in _SPLITS or op is aten.native_layer_norm.default:
            return self.g.call_function(op, args, kwargs)
        if isinstance(op, torch._ops.OpOverload) and torch.Tag.pointwise in op.tags:
            # a size used as a value (t + s): the real length
            sizes = [env[a] for a in size_args]
            args = tuple(self.real if isinstance(a, fx.Node) and a in sizes else a for a in args)
            return self.g.call_function(op, args, kwargs)
        if op in _VIEWS:
            self.check_view(n)
            return self.g.call_function(op, args, kwargs)
        if op in _FILL_AT and self.is_size(_args(n)[_FILL_AT[op]]):
            raise NotBucketable(f"{n.name}: {name} filled with the padded length")
        if op in _LAYOUT or op in _SHAPED or op in _FOLLOWS:
            if op in _FOLLOWS and self.sdims(_args(n)[0]):
                raise NotBucketable(f"{n.name}: {name} of a table with padded rows")
            return self.g.call_function(op, args, kwargs)
        if op is aten.arange.start_step or op is aten.arange.default:
            start, end = (0, _args(n)[0]) if op is aten.arange.default else _args(n)[:2]
            step = _args(n)[2] if len(_args(n)) > 2 else 1
            if start != 0 or step != 1 or not self.is_size(end):
                raise NotBucketable(f"{n.name}: arange({start}, {end}, {step}) over the padded length")
            return self.g.call_function(op, args, kwargs)
        if op is aten.slice.Tensor:
            return self.slice(n, args, kwargs)
        if op is aten.cat.default:
            dim = _args(n)[1] if len(_args(n)) > 1 else 0
            if dim % n.meta["val"].dim() in self.sdims(n):
                raise NotBucketable(f"{n.name}: cat along the padded dim")
            return self.g.call_function(op, args, kwargs)
        if op is aten.index_put.default:
            return self.index_put(n, args, kwargs)
        if op is aten.copy_.default:
            if self.sdims(_args(n)[1]):
                raise NotBucketable(f"{n.name}: a graph input written with padded rows")
            return self.g.call_function(op, args, kwargs)
        raise NotBucketable(f"{n.name}: {name} is not known to keep padded rows apart")

    def slice(self, n: fx.Node, args: Any, kwargs: Any) -> fx.Node:
        x = _args(n)[0]
        dim, start, end, step = (list(_args(n)[1:]) + [0, None, None, 1][len(_args(n)) - 1 :])[:4]
        dim %= x.meta["val"].dim()
        big = end is None or (isinstance(end, int) and end >= sys.maxsize // 2)
        if dim not in self.sdims(x):
            if dim in self.sdims(n):  # a buffer's first s rows: B must fit in the buffer
                length = x.meta["val"].shape[dim]
                if not isinstance(length, int) or start not in (0, None) or step != 1 or not self.is_size(end):
                    raise NotBucketable(f"{n.name}: a slice {start}:{end}:{step} to the padded length")
                self.limit = min(self.limit, length)
            return self.g.call_function(aten.slice.Tensor, args, kwargs)
        if step == 1 and start in (0, None) and (big or self.is_size(end)):
            return self.g.call_function(aten.slice.Tensor, args, kwargs)
        if step == 1 and start == -1 and big:
            # the last real row: the product with a one-hot row (the other rows zeroed first)
            v = x.meta["val"]
            hot = self.masked(args[0], x, [dim], 0.0, last=True)
            one = self.call(aten._to_copy.default, self.last_row(), dtype=v.dtype)
            moved = self.call(aten.movedim.int, hot, dim, -1)
            picked = self.call(aten.matmul.default, moved, self.call(aten.unsqueeze.default, one, -1))
            return self.call(aten.movedim.int, picked, -1, dim)
        raise NotBucketable(f"{n.name}: a slice {start}:{end}:{step} of the padded dim {dim}")

    def index_put(self, n: fx.Node, args: Any, kwargs: Any) -> fx.Node:
        dst, indices, vals = _args(n)[:3]
        accumulate = _args(n)[3] if len(_args(n)) > 3 else n.kwargs.get("accumulate", False)
        if self.sdims(dst):
            raise NotBucketable(f"{n.name}: index_put into a tensor with padded rows")
        given = [(d, i) for d, i in enumerate(indices) if i is not None]
        if accumulate or len(given) != 1 or self.sdims(given[0][1]) != (0,):
            raise NotBucketable(f"{n.name}: index_put other than rows at one padded index (no accumulate)")
        d, idx = given[0]
        if dst.target is not aten.full.default:
            raise NotBucketable(f"{n.name}: index_put into {dst.name}, not a fresh constant buffer")
        length = dst.meta["val"].shape[d]
        row_dim = d - (dst.meta["val"].dim() - vals.meta["val"].dim())
        if self.sdims(vals) != (row_dim,):
            raise NotBucketable(f"{n.name}: index_put values whose padded dim is not the indexed one")
        kind, offset = self.row_offset(idx)
        if kind == "constant":
            self.limit = min(self.limit, length - offset)
        else:
            self.offsets.append((offset, length))
        fill = _args(dst)[1]
        new_vals = self.masked(args[2], vals, [row_dim], fill)
        return self.g.call_function(aten.index_put.default, (args[0], args[1], new_vals, *args[3:]), kwargs)

    def row_offset(self, idx: fx.Node) -> tuple[str, int]:
        """The offset t of an index arange(s) + t: ("constant", t), or ("input", the number of
        the 0-d input that holds t)."""
        if idx.target in (aten.arange.start_step, aten.arange.default):
            return "constant", 0
        if idx.target is aten.add.Tensor:
            a, b = _args(idx)[:2]
            if isinstance(a, fx.Node) and a.target in (aten.arange.start_step, aten.arange.default):
                if isinstance(b, int):
                    return "constant", b
                if isinstance(b, fx.Node) and b.op == "placeholder" and b.meta["val"].dim() == 0:
                    return "input", [p for p in self.gm.graph.nodes if p.op == "placeholder"].index(b)
        raise NotBucketable(f"{idx.name}: a row index other than arange(s) + offset")

    # endregion
