"""Prefill/decode disaggregation on the spyre platform: vLLM's KV connector API (docs/vllm-scale.md,
"Disaggregated prefill").

Two `vllm serve` instances, each its own card: the prefill instance (`kv_role` kv_producer)
computes a prompt's KV cache and hands it over, the decode instance (kv_consumer) takes it
into its own cache and decodes from there. A router (disagg_proxy.py, or llm-d's) sends the
request to the prefill instance first with `max_tokens` 1 and `kv_transfer_params`
{"do_remote_decode": true}, then the whole request to the decode instance with the
`kv_transfer_params` the prefill instance's answer carries (vLLM's P/D protocol: the ones
`request_finished` returns here).

    --kv-transfer-config '{"kv_connector": "SpyreConnector", "kv_role": "kv_producer",
        "kv_connector_module_path": "spyre_mlir.vllm.connector",
        "kv_connector_extra_config": {"transfer_dir": "/shared/kv"}}'

What moves. On the spyre platform each layer's KV cache is a key and a value tensor of its
own on the host, `[1, slots, kv_heads * head_dim]` (attention.py `cache_shape`, a row per
slot, slot = block * block_size + offset), which the step's program keeps resident on the
card and writes in place; after the program's call the host tensor holds the new contents,
already rounded to the card's format (frontend/backend.py writes a mutated input back). A
transfer is the rows of a prompt's first n - 1 tokens, every layer's keys and values, in
token order (a card's block numbers mean nothing on the other card): the decode instance
computes the prompt's last token itself, as vLLM's scheduler requires of a request it
schedules (at least one token, for the logits of the first sampled one); its first step
for the request computes that one token, whatever part of a page the prompt ends in.

- Prefill side (`wait_for_save`, after the step's program): in the step where a request's
  prompt is complete, its rows are read off the host tensors, checked to be exact values of
  the card's format (DL16: else they are not the card's cache, and the save is refused) and
  written as their 16-bit patterns (`Numerics.encode`), one file per layer (safetensors,
  written under a temporary name then renamed: a reader sees a whole file or none), then a
  manifest (the prompt's digest, the row count, the layers), renamed into place last: a
  transfer without its manifest is incomplete.
- Decode side (`start_load_kv`, before the step's program): the rows are decoded and written
  into the host tensors at the request's slots, and into the card's resident copy of each
  (frontend/backend.py `refresh_resident`: the copy written in place in its layout, kept under
  the tensor's new key), so the step's program reads them from the card and nothing crosses
  the host link: the rows reach the card over the card link, charged below. Were the copy
  left under its old key, the program would find it stale and upload the whole cache; a
  write that left the tensor's version as it was is refused (the card's copy would not be
  known to be stale).
- The link: each transfer is charged to both cards' timelines as a `collective:send` (prefill)
  and a `collective:recv` (decode) record in the device model's profile, inside the engine
  step it happens in, at `collective_seconds("send", bytes, 2)` over the card link
  (distributed/link.py; `DeviceConfig.card_link_bytes_per_s`, `card_link_latency_s`): the
  step's `collectives_s` and `link_bytes` (clock.py) and `spyre:card_link_*` (metrics.py).
  Bytes: n - 1 tokens x kv_heads x head_dim x 2 (keys, values) x layers x 2 (DL16).
- Failure: a transfer that is missing, incomplete, of another prompt or malformed is a load
  error of the request's blocks (`get_block_ids_with_load_errors`), and vLLM's
  `kv_load_failure_policy` decides: "fail" (vLLM's default) ends the request with an error,
  "recompute" prefills the prompt on the decode instance. Either way the log names the
  transfer and why.

The transport is a directory both instances see (`transfer_dir`; a shared file system
between machines). The decode instance removes a transfer once its request has finished; a
transfer whose decode request never came (the router gone) stays until removed by hand.
Tensor and pipeline parallel instances are refused (one card's cache per instance).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import safetensors.numpy
import torch
from safetensors import SafetensorError
from vllm.distributed.kv_transfer.kv_connector.v1.base import (
    KVConnectorBase_V1,
    KVConnectorMetadata,
    KVConnectorRole,
)

from spyre_mlir.distributed.link import collective_record
from spyre_mlir.frontend.backend import get_device_model, refresh_resident
from spyre_mlir.sim.numerics import get_numerics
from spyre_mlir.sim.profile import record_launch
from spyre_mlir.vllm.clock import logger

NAME = "SpyreConnector"
"""`kv_connector` (the class's name in this module, `kv_connector_module_path`)."""
MODULE = "spyre_mlir.vllm.connector"

EXTRA_KEYS = ("transfer_dir",)
"""What `kv_connector_extra_config` takes: the directory both instances share."""
DEFAULT_DIR = Path(tempfile.gettempdir()) / "spyre-kv-transfer"
"""`transfer_dir` when none is given: two instances on one machine."""

FORMAT = 1
"""The manifest's format number (a reader refuses another)."""
MANIFEST = "manifest.json"
TRANSFER_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,199}")
"""A transfer's name: a directory name, never a path."""
PARAMS = ("spyre_transfer", "spyre_prompt_tokens", "spyre_digest")
"""The `kv_transfer_params` the prefill instance answers with, besides vLLM's `do_remote_*`."""


class TransferError(RuntimeError):
    """A transfer that cannot be written or read; the message names it and says why."""


def transfer_config(role: str, transfer_dir: str | Path, failure_policy: str = "fail") -> dict[str, Any]:
    """The `--kv-transfer-config` of an instance: `role` kv_producer (prefill), kv_consumer
    (decode) or kv_both."""
    return {
        "kv_connector": NAME,
        "kv_role": role,
        "kv_connector_module_path": MODULE,
        "kv_connector_extra_config": {"transfer_dir": str(transfer_dir)},
        "kv_load_failure_policy": failure_policy,
    }


def prompt_digest(token_ids: Any) -> str:
    """The digest of a prompt's token ids (a transfer is of one prompt, checked on both sides)."""
    return hashlib.sha256(np.asarray(list(token_ids), dtype=np.int64).tobytes()).hexdigest()


def _transfer_dir(config: Any) -> Path:
    extra = config.kv_connector_extra_config or {}
    if not isinstance(extra, dict) or set(extra) - set(EXTRA_KEYS):
        unknown = sorted(set(extra) - set(EXTRA_KEYS)) if isinstance(extra, dict) else extra
        raise ValueError(f"{NAME}: kv_connector_extra_config takes {list(EXTRA_KEYS)}, got {unknown!r}")
    where = extra.get("transfer_dir", str(DEFAULT_DIR))
    if not isinstance(where, str) or not where:
        raise ValueError(f"{NAME}: transfer_dir must be a directory's path, got {where!r}")
    return Path(where)


@dataclasses.dataclass
class _Save:
    """Write request `req_id`'s first `rows` token rows as transfer `transfer`."""

    req_id: str
    transfer: str
    digest: str
    prompt_tokens: int
    rows: int
    block_ids: list[int]


@dataclasses.dataclass
class _Load:
    """Read rows [start, stop) of transfer `transfer` into request `req_id`'s slots; a known
    `problem` (the request's parameters) fails the load as it is."""

    req_id: str
    transfer: str
    digest: str
    start: int
    stop: int
    block_ids: list[int]
    problem: str | None = None


@dataclasses.dataclass
class SpyreConnectorMetadata(KVConnectorMetadata):
    """One step's transfers, from the scheduler's connector to the worker's."""

    saves: list[_Save] = dataclasses.field(default_factory=list)
    loads: list[_Load] = dataclasses.field(default_factory=list)


class SpyreConnector(KVConnectorBase_V1):
    """The KV connector of prefill/decode disaggregation on the spyre platform (module docstring)."""

    def __init__(self, vllm_config: Any, role: KVConnectorRole, kv_cache_config: Any) -> None:
        super().__init__(vllm_config=vllm_config, role=role, kv_cache_config=kv_cache_config)
        config = self._kv_transfer_config
        if config.kv_role not in ("kv_producer", "kv_consumer", "kv_both"):
            raise ValueError(f"{NAME}: kv_role must be kv_producer, kv_consumer or kv_both, got {config.kv_role!r}")
        parallel = vllm_config.parallel_config
        if parallel.tensor_parallel_size != 1 or parallel.pipeline_parallel_size != 1:
            raise ValueError(
                f"{NAME} moves one card's KV cache: tensor and pipeline parallel size 1, got "
                f"{parallel.tensor_parallel_size} and {parallel.pipeline_parallel_size}"
            )
        groups = kv_cache_config.kv_cache_groups
        if len(groups) != 1:
            raise ValueError(f"{NAME}: one KV-cache group (the spyre platform's), got {len(groups)}")
        self.block_size: int = groups[0].kv_cache_spec.block_size
        self.directory = _transfer_dir(config)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.producer = config.is_kv_producer
        self.consumer = config.is_kv_consumer
        # scheduler side
        self._producing: dict[str, Any] = {}
        """Requests to hand over (do_remote_decode), by id: until their prompt's step."""
        self._saved: dict[str, _Save] = {}
        """Requests whose transfer a step's plan writes, until they finish (`request_finished`
        answers with its parameters)."""
        self._loads: dict[str, _Load] = {}
        """Loads planned for the next step."""
        # worker side
        self._caches: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
        self._failed_blocks: set[int] = set()

    # ------------------------------------------------------------------ scheduler side
    def _remote_prefill(self, request: Any) -> dict[str, Any] | None:
        params = request.kv_transfer_params
        return params if isinstance(params, dict) and params.get("do_remote_prefill") else None

    def get_num_new_matched_tokens(self, request: Any, num_computed_tokens: int) -> tuple[int, bool]:
        """A request with `do_remote_prefill` loads its prompt's tokens but the last, beyond
        those the decode instance holds already (its prefix cache), in the step that computes
        the last one (a synchronous load). A request whose parameters are wrong claims them
        too: its load then fails, and vLLM's failure policy decides."""
        if self._remote_prefill(request) is None:
            return 0, False
        return max(len(request.prompt_token_ids or ()) - 1 - num_computed_tokens, 0), False

    def update_state_after_alloc(self, request: Any, blocks: Any, num_external_tokens: int) -> None:
        params = request.kv_transfer_params if isinstance(request.kv_transfer_params, dict) else {}
        if params.get("do_remote_decode") and self.producer and request.request_id not in self._saved:
            self._producing[request.request_id] = request
        if num_external_tokens <= 0:
            return
        prompt = list(request.prompt_token_ids or ())
        stop = len(prompt) - 1
        digest = prompt_digest(prompt)
        transfer, problem = params.get("spyre_transfer"), None
        if not self.consumer:
            problem = f"a request with do_remote_prefill on an instance of kv_role {self._kv_transfer_config.kv_role}"
        elif not isinstance(transfer, str) or TRANSFER_ID.fullmatch(transfer) is None:
            problem = f"kv_transfer_params without a transfer name (spyre_transfer: {transfer!r}; it takes {PARAMS})"
        elif params.get("spyre_prompt_tokens") != len(prompt) or params.get("spyre_digest") != digest:
            problem = (
                f"the transfer is of another prompt ({params.get('spyre_prompt_tokens')!r} tokens, digest "
                f"{str(params.get('spyre_digest'))[:12]}; this request's: {len(prompt)} tokens, {digest[:12]})"
            )
        self._loads[request.request_id] = _Load(
            req_id=request.request_id,
            transfer=transfer if isinstance(transfer, str) else "",
            digest=digest,
            start=stop - num_external_tokens,
            stop=stop,
            block_ids=[],
            problem=problem,
        )

    def build_connector_meta(self, scheduler_output: Any) -> KVConnectorMetadata:
        meta = SpyreConnectorMetadata()
        manager = self._kv_cache_manager
        assert manager is not None, "the scheduler binds its KV-cache manager to the connector"
        for req_id, load in self._loads.items():
            (load.block_ids,) = manager.get_block_ids(req_id)
            meta.loads.append(load)
        self._loads = {}
        scheduled = scheduler_output.num_scheduled_tokens
        for req_id, request in list(self._producing.items()):
            n = scheduled.get(req_id, 0)
            if not n or request.num_computed_tokens + n < request.num_prompt_tokens:
                continue  # its prompt is not complete after this step
            prompt = list(request.prompt_token_ids or ())
            (block_ids,) = manager.get_block_ids(req_id)
            save = _Save(
                req_id=req_id,
                transfer=_transfer_name(req_id, prompt),
                digest=prompt_digest(prompt),
                prompt_tokens=len(prompt),
                rows=len(prompt) - 1,
                block_ids=list(block_ids),
            )
            meta.saves.append(save)
            self._saved[req_id] = save
            del self._producing[req_id]
        return meta

    def request_finished(self, request: Any, block_ids: list[int]) -> tuple[bool, dict[str, Any] | None]:
        """The prefill instance answers with the transfer's parameters (its blocks are free
        at once: the transfer was written in the prompt's step); the decode instance removes
        the transfer it read."""
        req_id = request.request_id
        self._producing.pop(req_id, None)
        self._loads.pop(req_id, None)
        save = self._saved.pop(req_id, None)
        remote = self._remote_prefill(request)
        if remote is not None and self.consumer:
            transfer = remote.get("spyre_transfer")
            if isinstance(transfer, str) and TRANSFER_ID.fullmatch(transfer):
                shutil.rmtree(self.directory / transfer, ignore_errors=True)
        if save is None:
            return False, None
        return False, {
            "do_remote_prefill": True,
            "do_remote_decode": False,
            "spyre_transfer": save.transfer,
            "spyre_prompt_tokens": save.prompt_tokens,
            "spyre_digest": save.digest,
        }

    # ------------------------------------------------------------------ worker side
    def register_kv_caches(self, kv_caches: dict[str, Any]) -> None:
        """The layers' caches as the spyre runner makes them (runner.py
        `initialize_kv_cache_tensors`): a (keys, values) pair of [1, slots, width] tensors."""
        for name, cache in kv_caches.items():
            shapes = [tuple(c.shape) for c in cache] if isinstance(cache, (tuple, list)) else None
            if shapes is None or len(shapes) != 2 or any(len(s) != 3 or s[0] != 1 for s in shapes):
                raise TransferError(
                    f"{NAME}: layer {name}'s KV cache is not the spyre platform's (a key and a value tensor of "
                    f"[1, slots, kv_heads * head_dim]): {shapes or type(cache).__name__} (enforce_eager or LoRA run "
                    "vLLM's CPU path, which this connector does not serve)"
                )
            self._caches[name] = (cache[0], cache[1])

    def _slots(self, block_ids: list[int], start: int, stop: int) -> torch.Tensor:
        pos = torch.arange(start, stop, dtype=torch.int64)
        blocks = torch.tensor(block_ids, dtype=torch.int64)
        return blocks[pos // self.block_size] * self.block_size + pos % self.block_size

    def _charge(self, kind: str, nbytes: int) -> float:
        """A `collective:<kind>` record of the transfer's bytes over the card link, on this
        card's profile (the engine step it is in takes it: clock.py)."""
        device = get_device_model()
        record = collective_record(kind, nbytes, 2, device.config)
        device.profile.add(record)
        record_launch(record)
        return record.time_s

    def wait_for_save(self) -> None:
        """The transfers of the requests whose prompt this step completed (the program has
        run: the host tensors hold the step's cache)."""
        meta = self._connector_metadata
        if not isinstance(meta, SpyreConnectorMetadata):
            return
        for save in meta.saves:
            try:
                nbytes = self._save(save)
            except OSError as e:  # the decode instance then finds no manifest: a load error there
                logger.error("spyre KV transfer %s of request %s not written: %s", save.transfer, save.req_id, e)
                continue
            seconds = self._charge("send", nbytes)
            logger.info(
                "spyre KV transfer %s: sent %d tokens of request %s, %d bytes, %.3f us over the card link",
                save.transfer,
                save.rows,
                save.req_id,
                nbytes,
                seconds * 1e6,
            )

    def _save(self, save: _Save) -> int:
        numerics = get_numerics(get_device_model().config.numerics)
        where = self.directory / save.transfer
        where.mkdir(parents=True, exist_ok=True)
        slots = self._slots(save.block_ids, 0, save.rows)
        nbytes, width = 0, None
        for name, (keys, values) in self._caches.items():
            tensors = {}
            for kind, cache in (("key", keys), ("value", values)):
                rows = cache[0, slots].to(torch.float32).numpy()
                bits = numerics.encode(rows)
                if not np.array_equal(numerics.decode(bits).view(np.uint32), rows.view(np.uint32)):
                    bad = int(np.count_nonzero(numerics.decode(bits).view(np.uint32) != rows.view(np.uint32)))
                    raise TransferError(
                        f"{NAME}: layer {name}'s {kind}s of request {save.req_id} hold {bad} values that are not "
                        f"{numerics.name} values: the host tensor is not the card's cache (its program writes it back)"
                    )
                tensors[kind] = bits
                nbytes += bits.nbytes
            width = int(keys.shape[-1])
            _atomic(where / f"{name}.safetensors", lambda p, t=tensors: safetensors.numpy.save_file(t, str(p)))
        manifest = {
            "format": FORMAT,
            "digest": save.digest,
            "prompt_tokens": save.prompt_tokens,
            "rows": save.rows,
            "width": width,
            "numerics": numerics.name,
            "layers": sorted(self._caches),
            "bytes": nbytes,
        }
        _atomic(where / MANIFEST, lambda p: p.write_text(json.dumps(manifest)))
        return nbytes

    def start_load_kv(self, forward_context: Any, **kwargs: Any) -> None:
        """This step's loads into the host tensors and the card's copies of them, before the
        step's program (module docstring); a load that fails marks its blocks."""
        meta = self._connector_metadata
        if not isinstance(meta, SpyreConnectorMetadata):
            return
        for load in meta.loads:
            try:
                nbytes = self._load(load)
            except (TransferError, OSError, ValueError, KeyError, SafetensorError) as e:
                first, last = load.start // self.block_size, -(-load.stop // self.block_size)
                self._failed_blocks.update(load.block_ids[first:last])
                logger.error(
                    "spyre KV transfer %s for request %s not loaded (%d tokens): %s",
                    load.transfer or "(none)",
                    load.req_id,
                    load.stop - load.start,
                    e,
                )
                continue
            seconds = self._charge("recv", nbytes)
            logger.info(
                "spyre KV transfer %s: received %d tokens of request %s, %d bytes, %.3f us over the card link",
                load.transfer,
                load.stop - load.start,
                load.req_id,
                nbytes,
                seconds * 1e6,
            )

    def _load(self, load: _Load) -> int:
        if load.problem is not None:
            raise TransferError(load.problem)
        where = self.directory / load.transfer
        try:
            manifest = json.loads((where / MANIFEST).read_text())
        except FileNotFoundError:
            raise TransferError(
                f"no transfer {load.transfer} in {self.directory} (the prefill instance did not finish writing it: "
                "it failed or was stopped, or the two instances do not share transfer_dir)"
            ) from None
        numerics = get_numerics(get_device_model().config.numerics)
        expected = {
            "format": FORMAT,
            "digest": load.digest,
            "numerics": numerics.name,
            "layers": sorted(self._caches),
        }
        for key, want in expected.items():
            if manifest.get(key) != want:
                raise TransferError(f"its manifest's {key} is {manifest.get(key)!r}, this instance's {want!r}")
        if not isinstance(manifest.get("rows"), int) or manifest["rows"] < load.stop:
            raise TransferError(f"it holds {manifest.get('rows')!r} token rows, the request needs {load.stop}")
        slots = self._slots(load.block_ids, load.start, load.stop)
        staged = []
        for name, (keys, values) in self._caches.items():
            tensors = safetensors.numpy.load_file(str(where / f"{name}.safetensors"))
            for kind, cache in (("key", keys), ("value", values)):
                bits = tensors[kind]
                if bits.dtype != np.uint16 or bits.shape != (manifest["rows"], cache.shape[-1]):
                    raise TransferError(
                        f"layer {name}'s {kind}s are {bits.dtype} {bits.shape}, not uint16 "
                        f"({manifest['rows']}, {cache.shape[-1]})"
                    )
                staged.append((name, kind, cache, torch.from_numpy(numerics.decode(bits[load.start : load.stop]))))
        # every file read and checked before the first write: a failed load leaves the cache as it was
        nbytes = 0
        for name, kind, cache, rows in staged:
            version = cache._version
            cache[0, slots] = rows.to(cache.dtype)
            if cache._version == version:
                raise TransferError(
                    f"the write of layer {name}'s {kind}s left the tensor's version as it was: the card would keep "
                    "its stale copy"
                )
            nbytes += rows.numel() * 2  # the card's 16-bit values
        for _, _, cache, _ in staged:
            refresh_resident(cache)
        return nbytes

    def wait_for_layer_load(self, layer_name: str) -> None:
        """Nothing to wait for: the layers run inside the step's program, after `start_load_kv`
        wrote every layer (vLLM calls this from its attention layer's Python, which does not
        run while serving on the spyre platform)."""

    def save_kv_layer(self, layer_name: str, kv_layer: torch.Tensor, attn_metadata: Any, **kwargs: Any) -> None:
        """Nothing per layer: the step's program writes every layer, and `wait_for_save` reads
        the rows after it (vLLM calls this from its attention layer's Python, which does not
        run while serving on the spyre platform)."""

    def get_block_ids_with_load_errors(self) -> set[int]:
        failed, self._failed_blocks = self._failed_blocks, set()
        return failed


def _transfer_name(req_id: str, prompt: list[int]) -> str:
    """A directory name for a request's transfer: the prompt's digest, then the request's id
    (vLLM's, unique per instance) as far as it is a safe name."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", req_id)[:120]
    return f"{prompt_digest(prompt)[:16]}-{safe}"


def _atomic(path: Path, write: Any) -> None:
    """`write(tmp)` then a rename to `path`: a reader sees the whole file or none."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
