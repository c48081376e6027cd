"""Generate docs/ops.md from the code: which torch ops run on the device and what they become
(`DEVICE_OPS` of convert-torch-to-spyre), the host policy, and where each op of the Hugging
Face op census that has no device lowering runs.

    python -m spyre_mlir.tools.gen_ops_doc > docs/ops.md

test/python/docs/test_ops_doc.py fails when docs/ops.md differs from this output, so the document
cannot go stale: after adding or changing a lowering, run the command above.
"""

from __future__ import annotations

import sys

from spyre_mlir.dialects import torch as torch_dialect
from spyre_mlir.lowering import convert_torch_to_spyre as lowering
from spyre_mlir.transforms import torch_adapt

COMMAND = "python -m spyre_mlir.tools.gen_ops_doc > docs/ops.md"

CENSUS: tuple[tuple[str, int, int], ...] = (
    ("aten.add.Tensor", 49, 785),
    ("aten.permute.default", 48, 1380),
    ("aten.view.default", 48, 2518),
    ("aten._softmax.default", 47, 108),
    ("aten.bmm.default", 47, 209),
    ("aten.clone.default", 47, 376),
    ("aten.expand.default", 47, 545),
    ("aten.where.self", 47, 189),
    ("aten.embedding.default", 44, 69),
    ("aten.full_like.default", 44, 98),
    ("aten.mul.Tensor", 44, 806),
    ("aten.any.dim", 43, 92),
    ("aten.arange.start_step", 43, 200),
    ("aten.eq.Scalar", 43, 92),
    ("aten.logical_not.default", 43, 184),
    ("aten.mul.Scalar", 43, 184),
    ("aten.unsqueeze.default", 43, 753),
    ("aten._to_copy.default", 42, 103),
    ("aten.scalar_tensor.default", 42, 166),
    ("aten.bitwise_and.Tensor", 41, 100),
    ("aten.full.default", 41, 64),
    ("aten.index.Tensor", 41, 73),
    ("_operator.getitem", 33, 224),
    ("aten.slice.Tensor", 33, 277),
    ("aten.cat.default", 31, 153),
    ("aten.neg.default", 30, 107),
    ("aten.le.Tensor", 28, 29),
    ("aten.mm.default", 27, 334),
    ("aten.cos.default", 26, 27),
    ("aten.sin.default", 26, 27),
    ("aten.native_layer_norm.default", 25, 131),
    ("aten.pow.Tensor_Scalar", 25, 156),
    ("aten.addmm.default", 24, 299),
    ("aten.mean.dim", 24, 155),
    ("aten.rsqrt.default", 22, 150),
    ("aten.gelu.default", 20, 47),
    ("aten.sigmoid.default", 20, 44),
    ("aten.sub.Tensor", 14, 25),
    ("aten.ge.Scalar", 13, 16),
    ("aten.select.int", 11, 16),
    ("aten.tanh.default", 11, 17),
    ("aten.split_with_sizes.default", 10, 23),
    ("aten.convolution.default", 9, 20),
    ("aten.cumsum.default", 9, 16),
    ("aten.div.Tensor", 7, 21),
    ("aten.gather.default", 6, 9),
    ("aten.relu.default", 5, 17),
    ("aten.abs.default", 4, 4),
    ("aten.alias.default", 4, 9),
    ("aten.div.Tensor_mode", 4, 8),
    ("aten.empty_permuted.default", 4, 8),
    ("aten.gt.Tensor", 4, 4),
    ("aten.histc.default", 4, 8),
    ("aten.index_put.default", 4, 8),
    ("aten.sort.default", 4, 8),
    ("aten.squeeze.dims", 4, 13),
    ("aten.sum.dim_IntList", 4, 10),
    ("aten.topk.default", 4, 8),
    ("transformers.grouped_mm_fallback.default", 4, 16),
    ("aten.gt.Scalar", 3, 3),
    ("aten.le.Scalar", 3, 7),
    ("aten.log.default", 3, 4),
    ("aten.lt.Scalar", 3, 5),
    ("aten.minimum.default", 3, 5),
    ("aten.ne.Scalar", 3, 3),
    ("aten.bitwise_not.default", 2, 6),
    ("aten.clamp.default", 2, 5),
    ("aten.constant_pad_nd.default", 2, 8),
    ("aten.lift_fresh_copy.default", 2, 10),
    ("aten.logical_and.default", 2, 6),
    ("aten._native_batch_norm_legit_no_training.default", 1, 6),
    ("aten.exp.default", 1, 6),
    ("aten.ge.Tensor", 1, 2),
    ("aten.linalg_vector_norm.default", 1, 1),
    ("aten.log1p.default", 1, 1),
    ("aten.max_pool2d_with_indices.default", 1, 1),
    ("aten.native_group_norm.default", 1, 1),
    ("aten.pow.Tensor_Tensor", 1, 1),
    ("aten.repeat.default", 1, 4),
    ("aten.sqrt.default", 1, 6),
)
"""The op census of 49 Hugging Face architectures (transformers 5.24 classes built from tiny
configs, one graph each, aot_autograd with the core-ATen decompositions, inference, torch
2.13): (ATen op, models needing it, graph nodes). Copied from the project's OP_CENSUS.md; these
are facts about the models, not about this compiler, so they change only with a new census."""

CENSUS_MODELS = 49

IMPORTED_AS = {
    "aten.lift_fresh_copy.default": "torch.aten.clone",
}
"""Census ops the FX importer spells as another torch op (frontend/fx_importer.py)."""

NOT_AN_OP = {
    "_operator.getitem": "no op: the importer selects the result of a multi-result op (or reads a list through torch.prim.ListUnpack)",
}

BOOLEAN_RESULT = frozenset(
    {
        *(f"aten.{cmp}.{kind}" for cmp in ("eq", "ne", "lt", "le", "gt", "ge") for kind in ("Scalar", "Tensor")),
        "aten.logical_not.default",
        "aten.logical_and.default",
        "aten.logical_or.default",
        "aten.any.dim",
        "aten.bitwise_and.Tensor",
        "aten.bitwise_not.default",
        "aten.bitwise_or.Tensor",
    }
)
"""ATen ops whose result is boolean (comparisons, logical ops, any) or that PyTorch defines on
integer/boolean tensors only (bitwise ops): they compute masks, whatever their inputs."""


def torch_dialect_name(aten: str) -> str:
    """`aten.add.Tensor` -> `torch.aten.add.Tensor`; the `default` overload is dropped, as the
    FX importer (and torch-mlir) spell it."""
    if aten in IMPORTED_AS:
        return IMPORTED_AS[aten]
    if aten in NOT_AN_OP:
        return ""
    namespace, name, overload = aten.split(".")
    return f"torch.{namespace}.{name}" + ("" if overload == "default" else f".{overload}")


DECOMPOSED = {
    "aten.topk.default": "decomposed (frontend/decompositions.py) along a dim of at most 256: ranks and "
    "indices from comparisons on the host, by design; the values a where on them, summed, on the device. "
    "Along a longer dim: CPU fallback",
    "transformers.grouped_mm_fallback.default": "decomposed: every row through every expert (a device "
    "batched matmul), each row's expert picked by a host mask (a device where); with more than 8 experts: "
    "CPU fallback",
    "aten.histc.default": "host, by design, on the float copy of an integer tensor (a MoE's tokens per "
    "expert); CPU fallback on other float tensors",
}
"""Census ops the backend's decomposition table (or the host policy) places apart from the rule."""


def placement(aten: str) -> str:
    """Where a census op without a device lowering runs, under the host policy of
    convert-torch-to-spyre."""
    if aten in NOT_AN_OP:
        return NOT_AN_OP[aten]
    if aten in DECOMPOSED:
        return DECOMPOSED[aten]
    name = torch_dialect_name(aten)
    if name in torch_dialect.CREATION_OPS:
        return "host, by design: a constant made from shapes and numbers"
    if aten in BOOLEAN_RESULT:
        return "host, by design: an integer/boolean (mask) result"
    return "CPU fallback (warning) on float tensors; host by design on integer/boolean tensors"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render() -> str:
    device = lowering.DEVICE_OPS
    creation = sorted(torch_dialect.CREATION_OPS)
    out = [
        "# Torch ops: on the device or on the host",
        "",
        f"<!-- Generated by `{COMMAND}`",
        "from the lowerings in spyre_mlir/lowering/convert_torch_to_spyre/ (DEVICE_OPS), spyre_mlir/dialects/torch/names.py",
        "(CREATION_OPS) and the op census in spyre_mlir/tools/gen_ops_doc.py. Do not edit by hand:",
        "test/python/docs/test_ops_doc.py checks",
        "that this file equals the generator's output. -->",
        "",
        "## Placement policy",
        "",
        "`convert-torch-to-spyre` decides, op by op, where each torch op of a compiled graph runs:",
        "",
        "- **device**: the ops in the table below, on float tensors (f32, f16 and bf16 become DL16) of",
        "  static, non-empty shape. A lowering may still refuse one instance (a layout it cannot take);",
        "  that op then stays on the host with the reason in its `spyre.host` attribute.",
        "- **host, by design** (silent, as on the real stack): ops on integer/boolean tensors (indices,",
        "  positions, masks), ops computing an integer/boolean mask from float tensors, the float copy",
        "  of an integer/boolean tensor (where it crosses to floats), and constant creation from shapes",
        "  and numbers:",
        *(f"  `{n}`," for n in creation[:-1]),
        *(f"  `{creation[-1]}`." for _ in creation[-1:]),
        "  Two more kinds, found by walking the graph (convert_torch_to_spyre/host_policy.py): an op whose operands",
        "  are all constants, one of them built from shapes and numbers (`mark_host_constants`: OPT's",
        "  positions as the cumsum of a mask of ones, BLOOM's ALiBi slopes), computes a constant, which",
        "  the host builds at the first call and the device then holds; and float arithmetic on integer",
        "  data whose results only integer ops read (`mark_index_arithmetic`: T5's and MPNet's relative",
        "  position buckets, the log of a distance truncated back to an integer) is index building.",
        "  Either on the device would cost a host round trip at every call, or work at every call for",
        "  a value that never changes.",
        "  An op whose results hold no element (an expert no token chose) has no work on either side:",
        "  the host makes its shape.",
        "- **host, by nature** (a CPU fallback, warned and counted): sorting and ranks, matrix",
        "  factorizations and solves, Fourier transforms, and every op on a complex tensor (the card",
        "  has no complex format; the float ops around it stay on the device). The real or imaginary",
        "  part of a Fourier transform of real data (FNet's `fftn(x).real`) is not one of them: before",
        "  import it becomes products with the transform's cosine and sine tables, matmuls on the device",
        "  (frontend/fourier.py).",
        "- **a mixture-of-experts layer** (transformers' grouped_mm experts): the float work runs on the",
        "  device (the router's matmul and softmax, the top-k values, every expert's matmuls, the",
        "  weighting and the sum over each token's k experts); the dispatch stays on the host because it",
        "  is integer work, which the device does not hold: the ranks and indices of the top k",
        "  (comparisons), the sort of the expert ids, the tokens per expert (`histc` of their float copy)",
        "  and offsets, and the masks and gather indices made from them. The expert matmuls are dense",
        "  (every routed row through every expert, the row's expert picked by a host mask): exact, at E",
        "  times the grouped form's MACs for E experts (frontend/decompositions.py). With more than 8",
        "  experts (`DENSE_EXPERTS_MAX`; Qwen3-MoE-30B has 128) that costs more than it saves, and the",
        "  grouped matmul stays on the CPU, warned: a device grouped matmul, its row ranges handed over",
        "  at launch as gather indices are, would run it at the grouped form's cost.",
        "- **CPU fallback**: float ops without a device lowering run on the CPU (PyTorch eager) inside the",
        "  compiled graph, with one warning per graph naming them and their counts. Some are the host's by",
        "  their nature, and their reason says so (`host_policy.by_nature`): orders of values (sort,",
        "  median, unique, histograms), matrix factorizations and solves (LAPACK's), Fourier transforms.",
        '  `torch.compile(..., options={"strict": True})` raises instead, naming the op.',
        "",
        "Every compiled graph's placement is recorded in `spyre_mlir.frontend.backend.STATS.graphs`",
        "(`GraphReport`: `torch_ops`, `host_by_design`, `cpu_fallback`, `device_fraction`).",
        "A float op on the host between device kernels costs a host round trip at every call: its",
        "operands down, the op, its result up, and a new launch sequence (docs/hardware.md). Where the",
        "lowering could take an op either way (a reshape that needs a relayout), it prices both",
        "(analysis/cost.py). `python bench/coverage.py` lists, per corpus model, the share of float",
        "ops on the device and the round trips of one call with their priced time.",
        "",
        f"## Ops with a device lowering ({len(device)})",
        "",
        "| torch op | on the device |",
        "|---|---|",
    ]
    out += [f"| `{name}` | {_cell(doc)} |" for name, doc in device.items()]
    out += [
        "",
        f"## torch-adapt rewrites ({len(torch_adapt.ADAPTATIONS)})",
        "",
        "Before the lowering, `torch-adapt` (spyre_mlir/transforms/torch_adapt/) rewrites ops into",
        "equivalent forms the table above takes; the package docstring states the exactness of each.",
        "",
        "| rewrite | what it does |",
        "|---|---|",
    ]
    out += [f"| `{cls.__name__}` | {_cell(' '.join((cls.__doc__ or '').split()))} |" for cls in torch_adapt.ADAPTATIONS]

    census = [(aten, torch_dialect_name(aten), models, nodes) for aten, models, nodes in CENSUS]
    lowered = [row for row in census if row[1] in device]
    rest = [row for row in census if row[1] not in device]
    total_nodes = sum(nodes for *_, nodes in census)
    lowered_nodes = sum(nodes for *_, nodes in lowered)
    out += [
        "",
        "## Ops of the Hugging Face op census without a device lowering",
        "",
        f"The census counts the ATen ops of {CENSUS_MODELS} `transformers` architectures (tiny configs, one",
        "graph each, core-ATen decompositions, inference).",
        f"Of its {len(census)} ops, {len(lowered)} have a device lowering ({lowered_nodes} of its {total_nodes} graph nodes).",
        "The others run as follows (an op's placement is decided per instance, by the dtypes of its",
        "tensors):",
        "",
        f"| census op | torch dialect op | models (of {CENSUS_MODELS}) | nodes | placement |",
        "|---|---|---|---|---|",
    ]
    for aten, name, models, nodes in rest:
        shown = "-" if aten in NOT_AN_OP else f"`{name}`"
        out.append(f"| `{aten}` | {shown} | {models} | {nodes} | {_cell(placement(aten))} |")
    out += [
        "",
        "Census ops with a device lowering: " + ", ".join(f"`{aten}`" for aten, *_ in lowered) + ".",
        "",
    ]
    return "\n".join(out)


def main() -> int:
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
