"""Tensor parallelism over 2 and 4 simulated cards (one process each, on loopback): a tiny
Llama split by the Megatron plan (distributed/tensor_parallel.py), each rank's shard compiled
with the spyre backend, gives the greedy tokens and prompt logits of the unsplit model."""

import json

import pytest
import ranks
import torch
import torch.nn.functional as F

from spyre_mlir.testing.criteria import COSINE_MIN

pytestmark = pytest.mark.slow  # a model compiled in every rank's process


def run(world: int) -> dict:
    results = ranks.launch("tensor_parallel", world, 900, "2")
    for rank, (code, _, err) in enumerate(results):
        assert code == 0, f"rank {rank} of {world} failed:\n{err[-3000:]}"
    return json.loads(results[0][1].strip().splitlines()[-1])


@pytest.fixture(scope="module")
def single():
    return run(1)


@pytest.mark.parametrize("world", [2, pytest.param(4, marks=pytest.mark.full)])  # 4 ranks on 2 cores: make test-full
def test_a_split_model_gives_the_unsplit_models_tokens_and_logits(single, world):
    split = run(world)
    assert split["tokens"] == single["tokens"]
    a, b = torch.tensor(split["logits"]), torch.tensor(single["logits"])
    assert F.cosine_similarity(a, b, dim=0) >= COSINE_MIN
    # the sums of the row-parallel projections go in another order: not the same bits
    assert not torch.equal(a, b)


def test_a_model_that_does_not_split_evenly_is_refused():
    results = ranks.launch("uneven", 3, 120)
    for code, _, err in results:
        assert code != 0 and "splits attention heads, but 4 is not a multiple of 3" in err
