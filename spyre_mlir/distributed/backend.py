"""`torch.distributed.init_process_group("spyre")`: collectives between simulated cards.

One process per card, as IBM's stack runs one per Spyre card. The bytes move through gloo
(PyTorch's CPU collectives, over TCP: one machine or several), and each collective on spyre
tensors is charged to the current stream at its simulated time over the card link
(link.py), as a `collective:<kind>` record in the profile. Spyre tensors go as their device
values (decoded to float32 for floating point); a reduction sums in float32 and the result is
stored back as DL16, once: the card's fp32 accumulation and DL16 store. CPU tensors pass to
gloo as they are, uncharged (a barrier's or a control message's), except inside
`card_values(profile)`: there CPU tensors are a compiled program's values between its kernels
(the host runs a program's collectives: vLLM's tensor-parallel steps), charged to that profile as
the 16-bit values the cards exchange.

Every collective of torch.distributed is here: all_reduce, all_gather (and into one tensor),
reduce_scatter (and from one tensor), broadcast, reduce, gather, scatter, all_to_all (and
single), send, recv, barrier; sync and async (`async_op=True`: the returned `Work` is complete
when returned, as the host runs a collective before returning; its simulated time is on the
stream). AVG, which gloo lacks, is a SUM divided by the group's size in float32; PREMUL_SUM is
refused. A failure in gloo (a rank gone, a timeout: `init_process_group(timeout=...)`) raises
`SpyreCollectiveError` naming the collective and the rank.
"""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
import torch.distributed as dist
from torch.futures import Future

from spyre_mlir.distributed.link import collective_record
from spyre_mlir.sim.profile import Profile, record_launch
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.torch_device import state, storage, streams

NAME = "spyre"

_C10D: Any = torch._C._distributed_c10d
"""(as Any: its stubs type each collective as overloads that no Python subclass can match,
and leave out `_create_work_from_future`)"""


_CARD_VALUES: list[tuple[Profile, DeviceConfig]] = []
"""The profiles `card_values` charges, innermost last."""


@contextlib.contextmanager
def card_values(profile: Profile, config: DeviceConfig) -> Iterator[None]:
    """Inside the block, the CPU tensors of a collective on a spyre process group are a card's
    values in transit (a compiled program's, between its kernels): the collective is charged
    to `profile` at its time over the card link, its floats as 16-bit device values."""
    _CARD_VALUES.append((profile, config))
    try:
        yield
    finally:
        _CARD_VALUES.pop()


class SpyreCollectiveError(RuntimeError):
    """A collective that could not complete (a rank gone, a timeout, an unsupported op)."""


def _spyre(t: torch.Tensor) -> bool:
    return t.device.type == "spyre"


def _hosts(ts: Any) -> Any:
    """What gloo moves for each tensor (lists nested as given): a spyre tensor's device values
    (float32 for floats), a CPU tensor itself."""
    if isinstance(ts, list):
        return [_hosts(t) for t in ts]
    return torch.from_numpy(storage.values(ts, state.numerics())) if _spyre(ts) else ts


def _hosts_like(ts: Any) -> Any:
    """Output buffers for gloo to fill in place of each tensor (a CPU tensor is its own)."""
    if isinstance(ts, list):
        return [_hosts_like(t) for t in ts]
    if not _spyre(ts):
        return ts
    return torch.empty(tuple(ts.shape), dtype=torch.float32 if ts.is_floating_point() else ts.dtype)


def _store(ts: Any, hs: Any, divide: int = 1) -> None:
    """gloo's results into the spyre tensors (rounded to the device format), each divided by
    `divide` first (an AVG's size; CPU tensors, gloo's own buffers, are divided in place)."""
    if isinstance(ts, list):
        for t, h in zip(ts, hs):
            _store(t, h, divide)
    elif _spyre(ts):
        storage.write(ts, (hs / divide if divide != 1 else hs).numpy(), state.numerics())
    elif divide != 1:
        ts.div_(divide)


def _flat(ts: Any) -> list[torch.Tensor]:
    return [u for t in ts for u in _flat(t)] if isinstance(ts, list) else [ts]


def _link_bytes(ts: Sequence[torch.Tensor]) -> int:
    return sum(t.numel() * storage.element_bytes(t.dtype) for t in ts)


def _done(result: Any) -> dist.Work:
    fut: Future = Future()
    fut.set_result(result)
    return _C10D._create_work_from_future(fut)


class SpyreProcessGroup(_C10D.ProcessGroup):
    """A process group of simulated cards, over an inner gloo group on the same store."""

    def __init__(self, store: dist.Store, rank: int, size: int, timeout: datetime.timedelta):
        super().__init__(rank, size)
        self._gloo: Any = dist.ProcessGroupGloo(dist.PrefixStore("spyre-gloo", store), rank, size, timeout)
        self._timeout = timeout

    def getBackendName(self) -> str:  # (PyTorch names it so)
        return NAME

    # A ProcessGroup keeps its name on its backends, and this one has none registered (it is
    # its own backend): the name is kept here, for `destroy_process_group(group)` to find
    _name = ""

    def _set_group_name(self, name: str) -> None:
        self._name = name

    @property
    def group_name(self) -> str:
        return self._name

    def name(self) -> str:
        return NAME

    # ------------------------------------------------------------------ the common path
    def _collective(
        self,
        kind: str,
        touched: Sequence[torch.Tensor],
        link_bytes: int,
        run: Callable[[], dist.Work],
        finish: Callable[[], None] = lambda: None,
    ) -> None:
        try:
            run().wait()
        except RuntimeError as e:
            raise SpyreCollectiveError(
                f"spyre: {kind} on rank {self.rank()} of {self.size()} failed: {str(e).splitlines()[0]} "
                f"(a rank has gone or timed out after {self._timeout}; every rank must run the same collectives)"
            ) from None
        finish()
        if any(_spyre(t) for t in touched):
            config = state.config()
            record = collective_record(kind, link_bytes, self.size(), config)
            streams.charge([record])
            record_launch(record)
        elif _CARD_VALUES and (touched or kind == "barrier"):
            profile, config = _CARD_VALUES[-1]
            record = collective_record(kind, link_bytes, self.size(), config)
            profile.add(record)
            record_launch(record)

    @staticmethod
    def _op(op: Any) -> tuple[Any, bool]:
        """The op gloo runs, and whether to divide by the group's size after (AVG)."""
        if op == dist.ReduceOp.AVG:
            return dist.ReduceOp.SUM, True
        if op == dist.ReduceOp.PREMUL_SUM:
            raise SpyreCollectiveError("spyre: PREMUL_SUM is not supported (gloo has no such reduction)")
        return op, False

    # ------------------------------------------------------------------ collectives
    def _reducing(self, opts: Any, make: Any) -> tuple[Any, int]:
        """gloo's options for a reduction (another `make()`, the op mapped) and the divisor."""
        red, average = self._op(opts.reduceOp)
        inner = make()
        inner.reduceOp = red
        return inner, self.size() if average else 1

    def allreduce(self, tensors: list[torch.Tensor], opts: Any = None) -> dist.Work:
        inner, divide = self._reducing(opts or dist.AllreduceOptions(), dist.AllreduceOptions)
        host = _hosts(tensors)
        run = lambda: self._gloo.allreduce(host, inner)  # noqa: E731
        self._collective("all_reduce", tensors, _link_bytes(tensors), run, lambda: _store(tensors, host, divide))
        return _done(tensors)

    def broadcast(self, tensors: list[torch.Tensor], opts: Any = None) -> dist.Work:
        host = _hosts(tensors)
        run = lambda: self._gloo.broadcast(host, opts or dist.BroadcastOptions())  # noqa: E731
        self._collective("broadcast", tensors, _link_bytes(tensors), run, lambda: _store(tensors, host))
        return _done(tensors)

    def reduce(self, tensors: list[torch.Tensor], opts: Any = None) -> dist.Work:
        opts = opts or dist.ReduceOptions()
        inner, divide = self._reducing(opts, dist.ReduceOptions)
        inner.rootRank, inner.rootTensor = opts.rootRank, opts.rootTensor
        host = _hosts(tensors)

        def finish() -> None:
            if self.rank() == opts.rootRank:
                _store(tensors, host, divide)

        self._collective("reduce", tensors, _link_bytes(tensors), lambda: self._gloo.reduce(host, inner), finish)
        return _done(tensors)

    def allgather(
        self, output_tensors: list[list[torch.Tensor]], input_tensors: list[torch.Tensor], opts: Any = None
    ) -> dist.Work:
        hin, hout = _hosts(input_tensors), _hosts_like(output_tensors)
        gathered = _flat(output_tensors)
        run = lambda: self._gloo.allgather(hout, hin, opts or _C10D.AllgatherOptions())  # noqa: E731
        self._collective("all_gather", gathered, _link_bytes(gathered), run, lambda: _store(output_tensors, hout))
        return _done(output_tensors)

    def all_gather_single(self, output: torch.Tensor, input: torch.Tensor, opts: Any = None) -> dist.Work:
        hin, hout = _hosts(input), _hosts_like(output)
        run = lambda: self._gloo._allgather_base(hout, hin, opts or _C10D.AllgatherOptions())  # noqa: E731
        self._collective("all_gather", [output], _link_bytes([output]), run, lambda: _store(output, hout))
        return _done([output])

    def reduce_scatter(
        self, output_tensors: list[torch.Tensor], input_tensors: list[list[torch.Tensor]], opts: Any = None
    ) -> dist.Work:
        inner, divide = self._reducing(opts or dist.ReduceScatterOptions(), dist.ReduceScatterOptions)
        hin, hout = _hosts(input_tensors), _hosts_like(output_tensors)
        scattered = _flat(input_tensors)
        run = lambda: self._gloo.reduce_scatter(hout, hin, inner)  # noqa: E731
        finish = lambda: _store(output_tensors, hout, divide)  # noqa: E731
        self._collective("reduce_scatter", scattered, _link_bytes(scattered), run, finish)
        return _done(output_tensors)

    def reduce_scatter_single(self, output: torch.Tensor, input: torch.Tensor, opts: Any = None) -> dist.Work:
        inner, divide = self._reducing(opts or dist.ReduceScatterOptions(), dist.ReduceScatterOptions)
        hin, hout = _hosts(input), _hosts_like(output)
        run = lambda: self._gloo._reduce_scatter_base(hout, hin, inner)  # noqa: E731
        self._collective("reduce_scatter", [input], _link_bytes([input]), run, lambda: _store(output, hout, divide))
        return _done([output])

    def all_to_all_single(
        self,
        output: torch.Tensor,
        input: torch.Tensor,
        output_split_sizes: list[int],
        input_split_sizes: list[int],
        opts: Any = None,
    ) -> dist.Work:
        hin, hout = _hosts(input), _hosts_like(output)
        opts = opts or dist.AllToAllOptions()
        run = lambda: self._gloo.alltoall_base(hout, hin, output_split_sizes, input_split_sizes, opts)  # noqa: E731
        self._collective("all_to_all", [input], _link_bytes([input]), run, lambda: _store(output, hout))
        return _done([output])

    def alltoall(
        self, output_tensors: list[torch.Tensor], input_tensors: list[torch.Tensor], opts: Any = None
    ) -> dist.Work:
        hin, hout = _hosts(input_tensors), _hosts_like(output_tensors)
        run = lambda: self._gloo.alltoall(hout, hin, opts or dist.AllToAllOptions())  # noqa: E731
        finish = lambda: _store(output_tensors, hout)  # noqa: E731
        self._collective("all_to_all", input_tensors, _link_bytes(input_tensors), run, finish)
        return _done(output_tensors)

    def gather(
        self, output_tensors: list[list[torch.Tensor]], input_tensors: list[torch.Tensor], opts: Any = None
    ) -> dist.Work:
        hin, hout = _hosts(input_tensors), _hosts_like(output_tensors)
        run = lambda: self._gloo.gather(hout, hin, opts or dist.GatherOptions())  # noqa: E731
        nbytes = _link_bytes(input_tensors) * self.size()
        self._collective("gather", input_tensors, nbytes, run, lambda: _store(output_tensors, hout))
        return _done(output_tensors)

    def scatter(
        self, output_tensors: list[torch.Tensor], input_tensors: list[list[torch.Tensor]], opts: Any = None
    ) -> dist.Work:
        hin, hout = _hosts(input_tensors), _hosts_like(output_tensors)
        run = lambda: self._gloo.scatter(hout, hin, opts or dist.ScatterOptions())  # noqa: E731
        nbytes = _link_bytes(output_tensors) * self.size()
        self._collective("scatter", output_tensors, nbytes, run, lambda: _store(output_tensors, hout))
        return _done(output_tensors)

    def send(self, tensors: list[torch.Tensor], dst: int, tag: int = 0) -> dist.Work:
        host = _hosts(tensors)
        self._collective("send", tensors, _link_bytes(tensors), lambda: self._gloo.send(host, dst, tag))
        return _done(tensors)

    def recv(self, tensors: list[torch.Tensor], src: int, tag: int = 0) -> dist.Work:
        host = _hosts_like(tensors)
        run = lambda: self._gloo.recv(host, src, tag)  # noqa: E731
        self._collective("recv", tensors, _link_bytes(tensors), run, lambda: _store(tensors, host))
        return _done(tensors)

    def barrier(self, opts: Any = None) -> dist.Work:
        self._collective("barrier", [], 0, lambda: self._gloo.barrier(opts or dist.BarrierOptions()))
        return _done([])


def _create(store: dist.Store, rank: int, size: int, timeout: datetime.timedelta) -> SpyreProcessGroup:
    return SpyreProcessGroup(store, rank, size, timeout)


def register() -> None:
    """Make "spyre" a torch.distributed backend (for spyre and CPU tensors): idempotent."""
    if NAME.upper() not in dist.Backend._plugins:
        dist.Backend.register_backend(NAME, _create, devices=["spyre", "cpu"])
