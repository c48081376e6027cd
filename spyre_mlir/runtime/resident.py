"""The device copies a host executor keeps between calls (runtime/host.py, `resident`).

A copy is kept per `spyre.to_device` under a residency key: the caller's key of an argument,
"constant" for a constant's. An executable's own copies are kept by transfer (`Resident.own`);
the copy of a host tensor whose key names it (`SharedKey`) is the device model's
(`ResidentArguments`): every executable on that model that wants that tensor in that layout
uses the one copy, as the card holds a model's weights and KV cache once for all its programs.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from xdsl.ir import Operation

from spyre_mlir.sim.interpreter import DeviceModel
from spyre_mlir.sim.memory import DdrTensor


class SharedKey:
    """A residency key that names a host tensor (frontend/backend.py `ParamKey`): the same
    `identity` for every key of one tensor while it lives (not for another tensor), and the
    tensor itself (`owner`) while it lives. Its copies are the device model's
    (`ResidentArguments`)."""

    identity: Any
    """Hashable; equal for the keys of one live tensor."""

    def owner(self) -> Any:
        """The tensor, or None once it is gone."""
        raise NotImplementedError


class ResidentArguments:
    """The device copies of host tensors that every executable on one device model shares, by
    (the tensor's identity, the copy's layout, permutation and row-by-row upload): a tensor
    the card holds once for all its programs. An entry goes when a call finds it stale (its
    key differs: the tensor changed) or the tensor is gone."""

    def __init__(self, model: DeviceModel) -> None:
        self.memory = model.memory
        self.held: dict[tuple[Any, ...], tuple[Any, DdrTensor]] = {}
        self._watched: set[Any] = set()

    @staticmethod
    def of(model: DeviceModel) -> ResidentArguments:
        table = _RESIDENT_ARGUMENTS.get(model)
        if table is None:
            table = _RESIDENT_ARGUMENTS[model] = ResidentArguments(model)
        return table

    def put(self, slot: tuple[Any, ...], key: SharedKey, dev: DdrTensor) -> None:
        self.held[slot] = (key, dev)
        owner = key.owner()
        if key.identity not in self._watched and owner is not None:
            self._watched.add(key.identity)
            weakref.finalize(owner, self._gone, weakref.ref(self), key.identity)

    @staticmethod
    def _gone(table_ref: weakref.ref[ResidentArguments], identity: Any) -> None:
        table = table_ref()
        if table is None:
            return
        table._watched.discard(identity)
        for slot in [s for s in table.held if s[0] == identity]:
            table.memory.free(table.held.pop(slot)[1])

    @property
    def nbytes(self) -> int:
        return sum(dev.nbytes for _, dev in self.held.values())


_RESIDENT_ARGUMENTS: weakref.WeakKeyDictionary[DeviceModel, ResidentArguments] = weakref.WeakKeyDictionary()


class Resident:
    """An executable's device copies kept between calls, by transfer (`spyre.to_device`):
    (residency key, copy). A constant's (and an argument's whose key names no tensor) are the
    executable's own; an argument's whose key is a `SharedKey` is the device model's
    (`ResidentArguments`), found by the tensor the call's key names (`bind`) and the
    transfer's placement."""

    def __init__(self, model: DeviceModel, placement: Callable[[Operation], tuple[Any, ...]]) -> None:
        self.own: dict[Operation, tuple[Any, DdrTensor]] = {}
        self.shared = ResidentArguments.of(model)
        self.placement = placement
        self.identity: dict[Operation, Any] = {}

    def bind(self, op: Operation, key: Any) -> None:
        """The tensor the transfer uploads in this call, as its key names it."""
        if isinstance(key, SharedKey):
            self.identity[op] = key.identity
        else:
            self.identity.pop(op, None)

    def _slot(self, op: Operation) -> tuple[Any, ...] | None:
        identity = self.identity.get(op)
        return None if identity is None else (identity, *self.placement(op))

    def get(self, op: Operation) -> tuple[Any, DdrTensor] | None:
        slot = self._slot(op)
        return self.own.get(op) if slot is None else self.shared.held.get(slot)

    def __setitem__(self, op: Operation, value: tuple[Any, DdrTensor]) -> None:
        slot = self._slot(op)
        if slot is None:
            self.own[op] = value
        else:
            self.shared.put(slot, value[0], value[1])

    def __delitem__(self, op: Operation) -> None:
        slot = self._slot(op)
        if slot is None:
            del self.own[op]
        else:
            del self.shared.held[slot]

    def pop(self, op: Operation, default: Any = None) -> tuple[Any, DdrTensor] | None:
        slot = self._slot(op)
        return self.own.pop(op, default) if slot is None else self.shared.held.pop(slot, default)
