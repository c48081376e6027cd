"""What each rank runs in the distributed tests (ranks.py launches one process per rank)."""

from __future__ import annotations

import datetime
import json
import os
import sys

import numpy as np
import torch
import torch.distributed as dist

from spyre_mlir.sim.numerics import DL16


def dl16(t: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(DL16.round(t.float().numpy()))


def emit(record: dict) -> None:
    """One JSON line in one write: ranks launched by torchrun share one stdout pipe, and a
    write below PIPE_BUF bytes is not interleaved with another process's."""
    os.write(1, (json.dumps(record) + "\n").encode())


def init() -> tuple[int, int]:
    dist.init_process_group("spyre", timeout=datetime.timedelta(seconds=20))
    return dist.get_rank(), dist.get_world_size()


def collectives(async_op: str) -> None:
    """Every collective on spyre tensors against gloo's on the same (DL16) values: the result
    is gloo's, rounded to DL16 once (exactly)."""
    rank, world = init()
    gloo = dist.new_group(backend="gloo")
    asy = async_op == "async"
    g = torch.Generator().manual_seed(100 + rank)
    x = dl16(torch.randn(6, 70, generator=g))  # what the card holds
    done = []

    def run(work):
        if asy:
            assert work is not None
            work.wait()
            assert work.is_completed()

    def same(a, b, what):
        assert torch.equal(a.cpu(), b), f"{what}: {(a.cpu() - b).abs().max()}"
        done.append(what)

    for op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX, dist.ReduceOp.MIN, dist.ReduceOp.PRODUCT):
        t, ref = x.to("spyre"), x.clone()
        run(dist.all_reduce(t, op=op, async_op=asy))
        dist.all_reduce(ref, op=op, group=gloo)
        same(t, dl16(ref), f"all_reduce {op}")
    t, ref = x.to("spyre"), x.clone()
    run(dist.all_reduce(t, op=dist.ReduceOp.AVG, async_op=asy))
    dist.all_reduce(ref, group=gloo)
    same(t, dl16(ref / world), "all_reduce avg")

    outs = [torch.empty(6, 70, device="spyre") for _ in range(world)]
    refs = [torch.empty(6, 70) for _ in range(world)]
    run(dist.all_gather(outs, x.to("spyre"), async_op=asy))
    dist.all_gather(refs, x, group=gloo)
    same(torch.stack([o.cpu() for o in outs]), torch.stack(refs), "all_gather")

    big = torch.empty(world * 6, 70, device="spyre")
    run(dist.all_gather_into_tensor(big, x.to("spyre"), async_op=asy))
    same(big, torch.cat(refs), "all_gather_into_tensor")

    chunks = [dl16(torch.randn(4, 64, generator=g)) for _ in range(world)]
    out, ref = torch.empty(4, 64, device="spyre"), torch.empty(4, 64)
    run(dist.reduce_scatter(out, [c.to("spyre") for c in chunks], async_op=asy))
    dist.reduce_scatter(ref, [c.clone() for c in chunks], group=gloo)
    same(out, dl16(ref), "reduce_scatter")

    whole = torch.cat(chunks)
    out = torch.empty(4, 64, device="spyre")
    run(dist.reduce_scatter_tensor(out, whole.to("spyre"), async_op=asy))
    same(out, dl16(ref), "reduce_scatter_tensor")

    t, ref = x.to("spyre"), x.clone()
    run(dist.broadcast(t, src=world - 1, async_op=asy))
    dist.broadcast(ref, src=world - 1, group=gloo)
    same(t, ref, "broadcast")

    t, ref = x.to("spyre"), x.clone()
    run(dist.reduce(t, dst=0, async_op=asy))
    dist.reduce(ref, dst=0, group=gloo)
    if rank == 0:
        same(t, dl16(ref), "reduce")

    inp = dl16(torch.randn(world * 3, 64, generator=g))
    out, ref = torch.empty(world * 3, 64, device="spyre"), torch.empty(world * 3, 64)
    run(dist.all_to_all_single(out, inp.to("spyre"), async_op=asy))
    dist.all_to_all_single(ref, inp.clone(), group=gloo)
    same(out, ref, "all_to_all_single")

    ins = [dl16(torch.randn(2, 64, generator=g)) for _ in range(world)]
    outs = [torch.empty(2, 64, device="spyre") for _ in range(world)]
    refs = [torch.empty(2, 64) for _ in range(world)]
    run(dist.all_to_all(outs, [i.to("spyre") for i in ins], async_op=asy))
    dist.all_to_all(refs, [i.clone() for i in ins], group=gloo)
    same(torch.stack([o.cpu() for o in outs]), torch.stack(refs), "all_to_all")

    gathered = [torch.empty(6, 70, device="spyre") for _ in range(world)] if rank == 0 else None
    run(dist.gather(x.to("spyre"), gathered, dst=0, async_op=asy))
    grefs = [torch.empty(6, 70) for _ in range(world)] if rank == 0 else None
    dist.gather(x.clone(), grefs, dst=0, group=gloo)
    if rank == 0:
        same(torch.stack([o.cpu() for o in gathered]), torch.stack(grefs), "gather")

    pieces = [dl16(torch.full((3, 64), float(i) + 0.5)) for i in range(world)]
    out = torch.empty(3, 64, device="spyre")
    run(dist.scatter(out, [p.to("spyre") for p in pieces] if rank == 0 else None, src=0, async_op=asy))
    same(out, pieces[rank], "scatter")

    if rank < 2:
        t = x.to("spyre")
        if rank == 0:
            w = dist.isend(t, dst=1) if asy else dist.send(t, dst=1)
        else:
            got = torch.empty(6, 70, device="spyre")
            w = dist.irecv(got, src=0) if asy else dist.recv(got, src=0)
            peer = dl16(torch.randn(6, 70, generator=torch.Generator().manual_seed(100)))
            same(got, peer, "send/recv")
        if asy:
            w.wait()
    run(dist.barrier(async_op=asy))
    emit({"rank": rank, "checked": done})
    dist.destroy_process_group()


def timed() -> None:
    """The profile's collective records: the link model's time, on the current stream."""
    import spyre_mlir
    from spyre_mlir.distributed.link import collective_seconds
    from spyre_mlir.torch_device import state

    rank, world = init()
    t = torch.ones(128, 1024).to("spyre")
    s = torch.spyre.Stream()
    with torch.spyre.stream(s), spyre_mlir.profile() as prof:
        start = torch.spyre.Event(enable_timing=True)
        end = torch.spyre.Event(enable_timing=True)
        start.record()
        dist.all_reduce(t)
        end.record()
    want = collective_seconds("all_reduce", 128 * 1024 * 2, world, state.config())
    rec = [k for k in prof.kernels if k.name == "collective:all_reduce"]
    assert len(rec) == 1 and rec[0].stream == s.stream_id, rec
    assert abs(rec[0].time_s - want) < 1e-15 and abs(start.elapsed_time(end) - want * 1e3) < 1e-9
    assert torch.equal(t.cpu(), torch.full((128, 1024), float(world)))
    emit({"rank": rank, "seconds": want})
    dist.destroy_process_group()


def card_values() -> None:
    """Inside `card_values(profile)`, a collective on CPU tensors (a program's values between its
    kernels) is charged to that profile as the cards' 16-bit values; outside it, to nothing."""
    from spyre_mlir.distributed.backend import card_values
    from spyre_mlir.distributed.link import collective_seconds
    from spyre_mlir.sim.profile import Profile
    from spyre_mlir.target.config import DeviceConfig

    rank, world = init()
    config, prof = DeviceConfig(), Profile()
    t = torch.full((4, 256), float(rank + 1))
    dist.all_reduce(t)  # a control message's: uncharged
    with card_values(prof, config):
        dist.all_reduce(t)
        gathered = torch.empty(world * 4, 256)
        dist.all_gather_into_tensor(gathered, t)
    names = [k.name for k in prof.kernels]
    assert names == ["collective:all_reduce", "collective:all_gather"], names
    assert prof.kernels[0].time_s == collective_seconds("all_reduce", 4 * 256 * 2, world, config)
    assert prof.kernels[1].ddr_read_bytes == world * 4 * 256 * 2
    total = sum(range(1, world + 1))
    assert torch.equal(t, torch.full((4, 256), float(world * total)))
    # a group of its own, destroyed by itself (as vLLM's workers destroy their groups)
    group = dist.new_group(list(range(world)), backend="spyre")
    dist.all_reduce(t, group=group)
    dist.destroy_process_group(group)
    emit({"rank": rank, "seconds": prof.kernels[0].time_s})
    dist.destroy_process_group()


def dies() -> None:
    """Rank 1 leaves without a word; the others' next collective fails within the timeout."""
    rank, world = init()
    dist.barrier()
    if rank == 1:
        os._exit(3)
    t = torch.ones(64).to("spyre")
    dist.all_reduce(t)  # raises SpyreCollectiveError
    print("unreachable")


def tiny_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    from spyre_mlir.testing.weights import randomize_weights

    cfg = LlamaConfig(
        vocab_size=128,
        hidden_size=256,
        intermediate_size=512,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        head_dim=64,
        max_position_embeddings=64,
        tie_word_embeddings=False,
    )
    torch.manual_seed(0)
    return randomize_weights(LlamaForCausalLM(cfg).eval(), seed=0)


def tensor_parallel(new_tokens: str) -> None:
    """A tiny Llama split over the ranks, each shard compiled; greedy tokens and the prompt's
    logits (rank 0 prints them)."""
    import warnings

    from spyre_mlir.distributed.tensor_parallel import parallelize

    warnings.filterwarnings("ignore")
    rank, world = init()
    model = parallelize(tiny_llama(), None).to("spyre")
    compiled = torch.compile(model, backend="spyre")
    ids = torch.tensor([[5, 17, 99, 3, 64, 1, 42, 7]]).to("spyre")
    with torch.no_grad():
        logits = compiled(ids, use_cache=False).logits
        first = logits.cpu()
        for _ in range(int(new_tokens)):
            nxt = logits[:, -1].cpu().argmax(-1, keepdim=True)
            ids = torch.cat([ids.cpu(), nxt], 1).to("spyre")
            logits = compiled(ids, use_cache=False).logits
    if rank == 0:
        emit({"tokens": ids.cpu()[0, 8:].tolist(), "logits": first[0].flatten().tolist()})
    else:
        emit({})
    dist.destroy_process_group()


def uneven() -> None:
    from spyre_mlir.distributed.tensor_parallel import parallelize

    init()
    parallelize(tiny_llama(), None)


if __name__ == "__main__":
    scenario, *args = sys.argv[1:]
    np.seterr(all="ignore")
    {
        "collectives": collectives,
        "timed": timed,
        "card_values": card_values,
        "dies": dies,
        "tensor_parallel": tensor_parallel,
        "uneven": uneven,
    }[scenario](*args)
