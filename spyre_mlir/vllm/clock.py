"""Simulated device time per vLLM engine step and per request (docs/vllm.md, "Device time").

Log records go to vLLM's logger ("vllm.spyre"): a step at DEBUG (`spyre_step`: a `StepTime`),
a finished request at INFO (`spyre_request`: a `RequestTime`)."""

from __future__ import annotations

import collections
import dataclasses
import logging
from typing import Any

from spyre_mlir.frontend.backend import STATS
from spyre_mlir.sim.profile import Profile

logger = logging.getLogger("vllm.spyre")


@dataclasses.dataclass(frozen=True)
class StepTime:
    """One engine step on the device model (the `spyre_step` attribute of its log record)."""

    step: int
    requests: int
    """Requests scheduled in the step."""
    tokens: int
    """Tokens computed in the step (prompt chunks and one per decoding request)."""
    kernels_s: float
    """Simulated time of the step's kernels."""
    launches: int
    macs: int
    attention_s: float
    """The simulated time of the step's attention kernels (kernels.py), in `kernels_s`."""
    transfers_s: float
    """Host <-> card transfers at the host link's rate (the kernels' time does not include them)."""
    transfer_bytes: dict[str, int]
    """The step's bytes over the host link by kind (sim/profile.py `transfer_bytes_by_kind`):
    "index" the token ids, positions, slots, page ids and sampled rows; "argument" the
    visibility numbers (and anything else sent: the weights and the KV cache are not);
    "result" the sampled rows' logits."""
    collectives_s: float
    """The simulated time of the step's collectives between cards (tensor parallel's, and a
    disaggregated prefill's KV transfers, connector.py: `collective:` records over the card
    link), in `kernels_s`."""
    link_bytes: int
    """Bytes the step's collectives and KV transfers moved over the card link."""
    compiles: int
    """Graphs compiled in the step (`STATS.compiles`)."""
    cache_loads: int

    @property
    def device_s(self) -> float:
        return self.kernels_s + self.transfers_s


KEPT_STEPS = 4096
"""The steps a worker keeps for `take_steps` (the oldest dropped past it)."""

COLLECTIVE = "collective:"
"""The name prefix of a collective's record (spyre_mlir/distributed/backend.py)."""


@dataclasses.dataclass
class Totals:
    """A worker's steps summed: its card's figures over the engine's life."""

    steps: int = 0
    tokens: int = 0
    device_s: float = 0.0
    collectives_s: float = 0.0
    link_bytes: int = 0

    def add(self, step: StepTime) -> None:
        self.steps += 1
        self.tokens += step.tokens
        self.device_s += step.device_s
        self.collectives_s += step.collectives_s
        self.link_bytes += step.link_bytes


@dataclasses.dataclass
class RequestTime:
    """A request's simulated device time: the steps it was scheduled in, summed (a step's time
    counts whole for each of its requests: batched requests share the card's time). The
    `spyre_request` attribute of its log record."""

    request_id: str
    steps: int = 0
    tokens: int = 0
    kernels_s: float = 0.0
    transfers_s: float = 0.0

    @property
    def device_s(self) -> float:
        return self.kernels_s + self.transfers_s


class DeviceClock:
    """Times engine steps on the device model's profile. `begin` with vLLM's scheduler output
    (its `num_scheduled_tokens` per request and `finished_req_ids`), `end` when the step's tokens
    are sampled. The kernels of a step are taken off the profile at its end, once the log has
    their figures (the device's profile is bounded anyway: sim/profile.py `KernelLog`)."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.steps = 0
        self.requests: dict[str, RequestTime] = {}
        self._open: dict[str, int] | None = None
        self._start = (0, 0.0, 0, 0)
        self._bytes: dict[str, int] = {}
        self.totals = Totals()
        """The steps' figures summed over the worker's life (what `SpyreWorker.card_totals` reports)."""
        self.kept: collections.deque[StepTime] = collections.deque(maxlen=KEPT_STEPS)
        """The last steps, until `SpyreWorker.take_steps` takes them (a caller in another process
        than the worker's: tensor-parallel workers)."""

    def begin(self, scheduler_output: Any) -> None:
        for req_id in sorted(scheduler_output.finished_req_ids):
            done = self.requests.pop(req_id, None)
            if done is not None:
                logger.info(
                    "spyre request %s: %.3f ms simulated device time over %d steps, %d tokens (kernels %.3f ms, "
                    "host link %.3f ms)",
                    done.request_id,
                    done.device_s * 1e3,
                    done.steps,
                    done.tokens,
                    done.kernels_s * 1e3,
                    done.transfers_s * 1e3,
                    extra={"spyre_request": done},
                )
        tokens = dict(scheduler_output.num_scheduled_tokens)
        self._open = tokens if sum(tokens.values()) else None
        self._start = (len(self.profile.kernels), self.profile.transfers_s, STATS.compiles, STATS.cache_loads)
        self._bytes = dict(self.profile.transfer_bytes_by_kind)

    def end(self, attention: frozenset[str] = frozenset()) -> StepTime | None:
        """The step's figures (None: nothing was scheduled); `attention`: the names of the step's
        attention kernels."""
        if self._open is None:
            return None
        first, transfers_s, compiles, loads = self._start
        kernels = self.profile.kernels[first:]
        del self.profile.kernels[first:]
        collectives = [k for k in kernels if k.name.startswith(COLLECTIVE)]
        self.steps += 1
        step = StepTime(
            step=self.steps,
            requests=len(self._open),
            tokens=sum(self._open.values()),
            kernels_s=sum(k.time_s for k in kernels),
            launches=len(kernels),
            attention_s=sum(k.time_s for k in kernels if k.name in attention),
            macs=sum(k.macs for k in kernels),
            collectives_s=sum(k.time_s for k in collectives),
            link_bytes=sum(k.ddr_read_bytes for k in collectives),
            transfers_s=self.profile.transfers_s - transfers_s,
            transfer_bytes={
                k: n - self._bytes.get(k, 0)
                for k, n in self.profile.transfer_bytes_by_kind.items()
                if n != self._bytes.get(k, 0)
            },
            compiles=STATS.compiles - compiles,
            cache_loads=STATS.cache_loads - loads,
        )
        self.totals.add(step)
        self.kept.append(step)
        for req_id, n in self._open.items():
            r = self.requests.setdefault(req_id, RequestTime(req_id))
            r.steps += 1
            r.tokens += n
            r.kernels_s += step.kernels_s
            r.transfers_s += step.transfers_s
        self._open = None
        logger.debug(
            "spyre step %d: %d requests, %d tokens: %.3f ms simulated device time (kernels %.3f ms in %d launches, "
            "attention %.3f ms and collectives %.3f ms of them; host link %.3f ms)",
            step.step,
            step.requests,
            step.tokens,
            step.device_s * 1e3,
            step.kernels_s * 1e3,
            step.launches,
            step.attention_s * 1e3,
            step.collectives_s * 1e3,
            step.transfers_s * 1e3,
            extra={"spyre_step": step},
        )
        if step.compiles or step.cache_loads:
            logger.info(
                "spyre step %d compiled %d graphs and loaded %d from the compile cache (a length bucket not run at "
                "start-up); in all %d compiled, %d loaded",
                step.step,
                step.compiles,
                step.cache_loads,
                STATS.compiles,
                STATS.cache_loads,
            )
        return step
