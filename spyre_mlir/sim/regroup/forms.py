"""How the regrouped steps take and leave values: the phases that decide a node's form
(regroup's "kept" and "chains", and the B operands read from decoded copies), each returning
its own record keyed by the node, and the signature that says which nodes may be one step."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from spyre_mlir.sim.plans import Plan, PtPlan
from spyre_mlir.sim.regroup.dataflow import Node, known


class ProductLoads(NamedTuple):
    """What `product_loads` finds."""

    b_origin: dict[Node, np.ndarray]
    """Per PT node, its B rows' origins (`Renamed.origin`: the DDR stick each holds as loaded, else -1)."""
    frozen: set[Node]
    """The DMA loads whose rows hold DDR sticks as loaded and that nothing but PT nodes' B
    operands reads: a product can take those from the argument's decoded copy
    (`GemmStep._b_operand`), and the load is then not needed (`FrozenLoad`)."""


def product_loads(nodes: list[Node], origin: np.ndarray, live_out: np.ndarray, rows: int) -> ProductLoads:
    """The B origins of the PT nodes and the loads only products read (`ProductLoads`)."""
    other = np.zeros(rows, dtype=bool)  # rows read other than as a product's B
    other[live_out] = True
    b_origin: dict[Node, np.ndarray] = {}
    for n in nodes:
        pt = isinstance(n.ins, PtPlan)
        if pt:
            b_origin[n] = origin[n.reads[1]]
        for j, r in enumerate(n.reads):
            if not (pt and j == 1):
                other[r.reshape(-1)] = True
    frozen = set()
    for n in nodes:
        if n.loads and n.write is not None:
            w = n.write.reshape(-1)
            if not other[w].any() and bool((origin[w] >= 0).all()):
                frozen.add(n)
    return ProductLoads(b_origin, frozen)


class Form(NamedTuple):
    """How a node takes and leaves values (`keep_values`; a step does each for all its rows or
    for none)."""

    kept: tuple[bool, ...]
    """Per read: whether it takes its values as a node that keeps them stored them."""
    keeps: bool
    """A 16-bit store whose values are kept decoded beside its rows."""
    bits: bool
    """Whether its write's bits are stored (False: only its kept values are read)."""


def keep_values(
    nodes: list[Node], producer: np.ndarray, touched: int, live_out: np.ndarray, rows: int
) -> dict[Node, Form]:
    """Keep decoded what a 16-bit store of computed values writes (`Plan.stores_values`), for
    the reads that decode it (`Plan.decoding_reads`) and read nothing else: every row of such
    a read is fresh and written by such a store (`Form.kept`). A store keeps its values if a
    read takes them so (`Form.keeps`), and stores the bits too only if some other read takes
    its rows (a DMA store, a copy, a product's B, what the launch leaves in LX): `Form.bits`."""
    stores = np.zeros(max((n.order for n in nodes), default=-1) + 1, dtype=bool)
    for n in nodes:
        stores[n.order] = n.write is not None and n.ins.stores_values()
    as_bits = np.zeros(rows, dtype=bool)  # rows some read takes as bits
    as_bits[live_out] = True
    as_values = np.zeros(rows, dtype=bool)  # rows some read takes as kept values
    kept_reads: dict[Node, tuple[bool, ...]] = {}
    for n in nodes:
        decoding = n.ins.decoding_reads()
        kept = []
        for j, r in enumerate(n.reads):
            flat = r.reshape(-1)
            k = bool(decoding[j]) and bool((flat >= touched).all()) and bool(stores[producer[flat]].all())
            kept.append(k)
            (as_values if k else as_bits)[flat] = True
        kept_reads[n] = tuple(kept)
    forms = {}
    for n in nodes:
        keeps, bits = False, True
        if stores[n.order]:
            w = known(n.write).reshape(-1)
            keeps = bool(as_values[w].any())  # (no read takes them kept: bits alone)
            bits = not keeps or bool(as_bits[w].any())
        forms[n] = Form(kept_reads[n], keeps, bits)
    return forms


class Chain(NamedTuple):
    """A chain of products (`fuse_chains`): the k passes of an output tile as one node."""

    links: list[Node]
    """Its PT nodes, in order."""
    link_reads: list[list[int | None]]
    """Per link, per read of the link, its index in the chain node's reads (None: the sums of
    the link before, which the chain holds)."""
    form: Form
    """The chain node's form: its reads' (the links'), no kept values, its bits stored."""


def fuse_chains(
    nodes: list[Node], producer: np.ndarray, live_out: np.ndarray, rows: int, forms: dict[Node, Form]
) -> tuple[list[Node], dict[Node, Chain]]:
    """Join the k passes of each output tile into one node (a chain): a PT node that
    accumulates onto the sums of one PT node, on the same cores, that nothing else reads.
    The chain reads every link's A and B and writes the last link's sums; the sums between
    links are held by the step (`ChainStep`), never stored, and each link's products and the
    sum onto the sums before are those of the link alone. Returns the nodes, each chain in
    its last link's place (its order: the sums' producer), and the chains by their node."""
    by_order = {n.order: n for n in nodes}
    sums = np.zeros(rows, dtype=bool)  # the rows an accumulating PT reads its sums from
    for n in nodes:
        if isinstance(n.ins, PtPlan) and n.ins.accumulate:
            sums[n.reads[2].reshape(-1)] = True
    count = np.zeros(rows, dtype=np.int64)  # how many reads take each of those rows
    for r in [r.reshape(-1) for n in nodes for r in n.reads] + [live_out]:
        hits = r[sums[r]]
        if hits.size:
            count += np.bincount(hits, minlength=rows)
    before: dict[int, Node] = {}  # a link's order -> the link before it
    for x in nodes:
        if not isinstance(x.ins, PtPlan) or not x.ins.accumulate:
            continue
        old = x.reads[2]
        w = by_order.get(int(producer[old.reshape(-1)[0]]))
        if (
            w is None
            or not isinstance(w.ins, PtPlan)
            or w.write is None
            or w.write.shape != old.shape
            or (w.ins.m, w.ins.n) != (x.ins.m, x.ins.n)
            or not np.array_equal(w.write, old)
            or not np.array_equal(w.cores, x.cores)
            or (count[old.reshape(-1)] != 1).any()
        ):
            continue
        before[x.order] = w
    chains: dict[Node, Chain] = {}
    if not before:
        return nodes, chains
    inner = {w.order for w in before.values()}
    out = []
    for x in nodes:
        if x.order in inner:  # (a link of a chain that goes on: in the chain's place)
            continue
        if x.order not in before:
            out.append(x)
            continue
        links = [x]
        while links[0].order in before:
            links.insert(0, before[links[0].order])
        reads: list[np.ndarray] = []
        link_reads: list[list[int | None]] = []
        kept: list[bool] = []
        for i, link in enumerate(links):
            at: list[int | None] = []
            for j, r in enumerate(link.reads):
                if i and j == 2:  # the sums of the link before
                    at.append(None)
                    continue
                at.append(len(reads))
                reads.append(r)
                kept.append(forms[link].kept[j])
            link_reads.append(at)
        node = Node(x.ins, x.order, x.cores, tuple(reads), x.write)
        chains[node] = Chain(links, link_reads, Form(tuple(kept), False, True))
        out.append(node)
    return out, chains


def _signature(ins: Plan) -> tuple | None:
    """`Plan.signature`, but a PT's for shared operands too (the products here find what rows
    share; the waves keep a shared PT apart: merging it there cost a 12-layer first call
    ~0.06 s of concatenation for the same steps)."""
    return ins.product_signature() if isinstance(ins, PtPlan) else ins.signature()


def signature(n: Node, form: Form, chain: Chain | None) -> tuple | None:
    """Nodes with equal signatures can be one step: `_signature` (a chain's, of its links),
    and which reads take kept values, whether it keeps its values and stores its bits."""
    if chain is None:
        sig = _signature(n.ins)
    else:
        sig = ("chain", tuple(_signature(link.ins) for link in chain.links), tuple(r.shape[1:] for r in n.reads))
    return None if sig is None else (*sig, form.kept, form.keeps, form.bits)
