"""A served step as one program on the card (docs/vllm.md, "The step").

`SpyreModelRunner` is vLLM's CPU model runner with the forward replaced: a step runs as one
compiled program per bucket (buckets.py), from the token ids to the logits of
the rows vLLM samples, with every layer's attention and KV-cache update inside (attention.py).
What crosses the host link per step is the token ids, positions, slots, page ids, the
visibility numbers and the sampled rows' logits; the weights and the KV cache stay on the card.

Each program is traced from vLLM's own model code (`make_fx` on fake tensors, at the bucket's
static shapes, the model's parameters and each layer's KV cache as inputs; the attention
metadata's tensors as inputs) and compiled by the spyre backend (frontend/backend.py
`compile_graph`). The model's Python does not run while serving.

vLLM computes the logits after the forward (`hidden_states[logits_indices]`, then the model's
`compute_logits`). The program computes them itself for the last token of every request (the
rows vLLM samples without speculative decoding); the forward hands vLLM a column of row
handles in place of the hidden states, and `compute_logits` looks the selected handles up in
the program's logits. A row the program did not compute (a prompt's logprobs) is refused.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any

import torch
from vllm.forward_context import set_forward_context
from vllm.model_executor.layers.attention import Attention
from vllm.v1.worker.cpu_model_runner import CPUModelRunner
from vllm.v1.worker.utils import bind_kv_cache

from spyre_mlir.frontend.backend import BackendOptions, compile_graph, get_device_model
from spyre_mlir.frontend.decompositions import decompositions
from spyre_mlir.vllm.attention import (
    SpyreAttentionMetadata,
    cache_shape,
    logits_rows_count,
    padding_slots,
    spare_blocks,
    step_shapes,
)
from spyre_mlir.vllm.buckets import Bucket, StepShapes
from spyre_mlir.vllm.kernels import attention_kernels
from spyre_mlir.vllm.layers import HFRotary
from spyre_mlir.vllm.memory import DL16_BYTES


class StepError(RuntimeError):
    """A step the card's programs cannot run; the message says why."""


class _Step(torch.nn.Module):
    """The traced step: the model's forward at the bucket's tokens, its hidden states at the
    sampled rows, and the logits of those rows."""

    def __init__(self, model: torch.nn.Module, compute_logits: Callable[[torch.Tensor], torch.Tensor]) -> None:
        super().__init__()
        self.model = model
        self._compute_logits = compute_logits

    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        hidden = self.model(input_ids=input_ids, positions=positions)
        return self._compute_logits(hidden[rows])


class DeviceForward:
    """The programs of a served model, one per step bucket, and their calls."""

    def __init__(self, runner: SpyreModelRunner) -> None:
        self.runner = runner
        self.model = runner.model
        self.vllm_config = runner.vllm_config
        self.compute_logits = self.model.compute_logits
        self.step = _Step(self.model, self.compute_logits)
        # our rotary embeddings' tables (layers.py), inputs as the weights are: one per module
        # (vLLM shares a rotary embedding between layers, and between models)
        rotary = {id(m): m for m in self.model.modules() if isinstance(m, HFRotary)}
        self.rotary = list(rotary.values())
        self.tables = [torch.nn.Parameter(t, requires_grad=False) for m in self.rotary for t in m.hf_inputs()]
        # the program's inputs: the parameters and the buffers (transformers' rotary frequencies
        # on the hardware-agnostic path), which the backend keeps on the card between calls; a
        # buffer as a parameter of its own copy (a graph's inputs must not alias one another);
        # our rotary embeddings read their table instead of their buffers
        replaced = {
            id(b)
            for m in self.rotary
            for b in (m.cos_sin_cache, getattr(m, "cos_sin_cache_bf16", None))
            if b is not None
        }
        self.state = {
            **{f"model.{k}": v for k, v in self.model.named_parameters()},
            **{
                f"model.{k}": torch.nn.Parameter(v.clone(), requires_grad=False)
                for k, v in self.model.named_buffers()
                if id(v) not in replaced
            },
        }
        self.ids_dtype = _dtype(runner.input_ids)
        self.positions_dtype = _dtype(runner.positions)
        self.programs: dict[Bucket, Callable[..., Any]] = {}
        self.attention: dict[Bucket, frozenset[str]] = {}
        """Per program, the names of its attention kernels (kernels.py)."""
        self.last_attention: frozenset[str] = frozenset()
        """The attention kernels of the last step's program."""
        self.compile_s = 0.0
        self.device = get_device_model()

    # the attention layers and their caches, in the order of the program's inputs
    def layers(self) -> list[tuple[str, Attention]]:
        ctx = self.vllm_config.compilation_config.static_forward_context
        return [(name, layer) for name, layer in ctx.items() if isinstance(layer, Attention)]

    @property
    def shapes(self) -> StepShapes:
        return self.runner.step_shapes

    def template(self, bucket: Bucket) -> SpyreAttentionMetadata:
        """Metadata of a step at the bucket that touches no request's data: every token
        padding, every page the null block, no key visible."""
        shapes = self.shapes
        tokens, pages, decode = bucket
        rows = logits_rows_count(tokens, shapes.max_num_seqs)
        return SpyreAttentionMetadata(
            num_actual_tokens=tokens,
            num_reqs=rows,
            tokens=tokens,
            pages=pages,
            decode=decode,
            block_size=shapes.block_size,
            slots=padding_slots(shapes, tokens),
            page_ids=torch.zeros(tokens * pages if decode else pages, dtype=torch.int64),
            visible_to=torch.full((tokens, pages), -1.0),
            visible_from={w: torch.full((tokens, pages), -1.0) for w in self.runner.windows},
            logits_rows=torch.zeros(rows, dtype=torch.int64),
        )

    def inputs(self, input_ids: torch.Tensor, positions: torch.Tensor, md: SpyreAttentionMetadata) -> list[Any]:
        """The program's arguments: the weights, the caches, then the step's inputs."""
        caches = [cache for _, layer in self.layers() for cache in layer.kv_cache]
        return [*self.state.values(), *self.tables, *caches, input_ids, positions, *md.tensors()]

    @contextlib.contextmanager
    def _traced_inputs(self, tables: list[torch.Tensor], caches: list[torch.Tensor]) -> Iterator[None]:
        """The layers read the traced rotary tables and KV caches (the program's inputs)."""
        layers = [layer for _, layer in self.layers()]
        kept = [layer.kv_cache for layer in layers]
        try:
            for i, m in enumerate(self.rotary):
                m.spyre_inputs = (tables[2 * i], tables[2 * i + 1])
            for i, layer in enumerate(layers):
                layer.kv_cache = (caches[2 * i], caches[2 * i + 1])
            yield
        finally:
            for m in self.rotary:
                m.spyre_inputs = None
            for layer, cache in zip(layers, kept):
                layer.kv_cache = cache

    def trace(self, md: SpyreAttentionMetadata) -> torch.fx.GraphModule:
        """The step at md's bucket as an ATen graph (functional: the caches' updates are copies
        into the cache inputs at its end)."""
        from torch.fx.experimental.proxy_tensor import make_fx

        names = list(self.state)
        n_state, n_tables, n_caches = len(names), len(self.tables), 2 * len(self.layers())
        layer_names = [name for name, _ in self.layers()]

        def step(*args: torch.Tensor) -> tuple[torch.Tensor]:
            state = dict(zip(names, args[:n_state]))
            tables = list(args[n_state : n_state + n_tables])
            caches = list(args[n_state + n_tables : n_state + n_tables + n_caches])
            ids, pos, *meta = args[n_state + n_tables + n_caches :]
            traced = md.with_tensors(meta)
            with (
                self._traced_inputs(tables, caches),
                set_forward_context({name: traced for name in layer_names}, self.vllm_config),
            ):
                return (torch.func.functional_call(self.step, state, (ids, pos, traced.logits_rows)),)

        ids = torch.zeros(md.tokens, dtype=self.ids_dtype)
        pos = torch.zeros(md.tokens, dtype=self.positions_dtype)
        example = self.inputs(ids, pos, md)
        with torch.inference_mode(False), torch.no_grad(), _uncompiled_helpers():
            return make_fx(
                torch.func.functionalize(step, remove="mutations"),
                decomposition_table=decompositions(),
                tracing_mode="fake",
            )(*example)

    def program(self, key: Bucket) -> Callable[..., Any]:
        tokens, pages, _ = key
        if key not in self.programs:
            start = time.perf_counter()
            md = self.template(key)
            gm = self.trace(md)
            ids = torch.zeros(tokens, dtype=self.ids_dtype)
            pos = torch.zeros(tokens, dtype=self.positions_dtype)
            # strict: a step whose program would leave a float op on the CPU is refused, naming it;
            # the caches' updates are the graph's only input mutations (no aot_autograd version bumps)
            self.programs[key] = compile_graph(
                gm, self.inputs(ids, pos, md), self.device.config, BackendOptions(strict=True), set()
            )
            self.attention[key] = attention_kernels(self.programs[key].module, (tokens, pages))  # type: ignore[attr-defined]
            self.compile_s += time.perf_counter() - start
        return self.programs[key]

    def run(self, input_ids: torch.Tensor, positions: torch.Tensor, md: SpyreAttentionMetadata) -> torch.Tensor:
        """One step: the logits of md's sampled rows (min(tokens, max_num_seqs) rows)."""
        n = md.num_actual_tokens
        if input_ids.shape[0] != n or positions.shape[0] != n:
            raise StepError(
                f"{input_ids.shape[0]} token ids and {positions.shape[0]} positions for a step of {n} tokens"
            )
        ids = input_ids.new_zeros(md.tokens)
        ids[:n] = input_ids
        pos = positions.new_zeros(md.tokens)
        pos[:n] = positions
        program = self.program(md.bucket)
        # the step's integer inputs, which the host hands the card once per step (its programs
        # read them as gather and scatter indices)
        index = [ids, pos, *(t for t in md.tensors() if not t.is_floating_point())]
        self.device.profile.add_transfer(sum(t.numel() * t.element_size() for t in index), self.device.config, "index")
        outs = program(*self.inputs(ids, pos, md))
        self.last_attention = self.attention[md.bucket]
        return outs[0]

    def warm_up(self) -> list[Bucket]:
        """Every bucket compiled and run once (on the null block: no request's data)."""
        buckets = self.shapes.buckets
        for bucket in buckets:
            md = self.template(bucket)
            ids = torch.zeros(bucket.tokens, dtype=self.ids_dtype)
            pos = torch.zeros(bucket.tokens, dtype=self.positions_dtype)
            with torch.inference_mode():
                self.program(bucket)(*self.inputs(ids, pos, md))
        return buckets


@contextlib.contextmanager
def _uncompiled_helpers() -> Iterator[None]:
    """vLLM's helpers that it wraps in `torch.compile` (make_fx cannot trace a compiled function)
    as their plain Python while a step is traced: the vocabulary-parallel embedding's mask of the
    rows a rank holds (tensor parallel)."""
    from unittest import mock

    from vllm.model_executor.layers import vocab_parallel_embedding as vpe

    masked = vpe.get_masked_input_and_mask
    with mock.patch.object(vpe, "get_masked_input_and_mask", getattr(masked, "_torchdynamo_orig_callable", masked)):
        yield


def _dtype(buffer: Any) -> torch.dtype:
    """The dtype of one of the runner's input buffers (a tensor, or vLLM's CpuGpuBuffer)."""
    return buffer.dtype if isinstance(buffer, torch.Tensor) else buffer.cpu.dtype


class SpyreModelRunner(CPUModelRunner):
    """vLLM's CPU model runner with each step one program on the card (module docstring)."""

    device_forward: DeviceForward
    step_shapes: StepShapes
    windows: list[int]

    def load_model(self, *args: Any, **kwargs: Any) -> None:
        super().load_model(*args, **kwargs)
        self.device_forward = DeviceForward(self)
        self._logits: torch.Tensor | None = None
        self._pages = 0
        self.model.compute_logits = self._logits_of  # vLLM's call after the forward: the program's logits

    def initialize_kv_cache_tensors(
        self, kv_cache_config: Any, kernel_block_sizes: list[int], kv_cache_allocation_context: Any = None
    ) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
        """A key and a value tensor of its own per layer (attention.cache_shape), not views of one
        buffer: each is an input the step's program writes in place and keeps on the card."""
        from vllm.v1.kv_cache_interface import AttentionSpec

        groups = kv_cache_config.kv_cache_groups
        if len(groups) != 1:
            raise StepError(
                f"{len(groups)} KV-cache groups: the spyre platform runs one (vLLM's hybrid KV-cache manager off)"
            )
        spec = groups[0].kv_cache_spec
        if not isinstance(spec, AttentionSpec):
            raise StepError(f"a KV cache of {type(spec).__name__}: the spyre platform serves attention layers only")
        self.step_shapes = step_shapes(self.vllm_config, spec.block_size)
        shape = cache_shape(self.step_shapes, spec.num_kv_heads, spec.head_size)
        with torch.inference_mode(False):  # (an inference tensor cannot be kept on the card between calls)
            caches = {
                name: (torch.zeros(shape, dtype=spec.dtype), torch.zeros(shape, dtype=spec.dtype))
                for name in groups[0].layer_names
            }
        bind_kv_cache(caches, self.compilation_config.static_forward_context, self.kv_caches)
        layers = self.device_forward.layers()
        self.windows = sorted({w for _, layer in layers if (w := layer.impl.sliding_window) is not None})
        return caches

    def _model_forward(
        self,
        input_ids: torch.Tensor | None = None,
        positions: torch.Tensor | None = None,
        intermediate_tensors: Any = None,
        inputs_embeds: torch.Tensor | None = None,
        **model_kwargs: Any,
    ) -> torch.Tensor:
        from vllm.forward_context import get_forward_context

        if input_ids is None or positions is None or inputs_embeds is not None or intermediate_tensors is not None:
            raise StepError("the spyre platform runs steps of token ids (no input embeddings, no pipeline stages)")
        found = get_forward_context().attn_metadata
        mds = list(found.values()) if isinstance(found, dict) else []
        md = mds[0] if mds else None
        if not isinstance(md, SpyreAttentionMetadata):
            raise StepError(f"a step without the spyre attention metadata ({type(md).__name__}): nothing to run")
        self._logits = self.device_forward.run(input_ids, positions, md)
        self._pages = md.page_ids[md.page_ids > 0].unique().numel()
        handles = torch.full((input_ids.shape[0], 1), -1, dtype=torch.int64)
        handles[md.logits_rows[: md.num_reqs], 0] = torch.arange(md.num_reqs)
        return handles

    def kv_cache_bytes(self) -> int:
        """The KV caches' bytes on the card: every layer's key and value tensors, in DL16."""
        return sum(c.numel() * DL16_BYTES for c in self.kv_caches_flat())

    def kv_cache_bytes_in_use(self) -> int:
        """The bytes of the blocks the last step's requests hold (every layer's keys and values)."""
        shapes = self.step_shapes
        rows = (shapes.num_blocks + spare_blocks(shapes)) * shapes.block_size
        return self._pages * shapes.block_size * self.kv_cache_bytes() // rows

    def kv_caches_flat(self) -> list[torch.Tensor]:
        return [c for pair in self.kv_caches for c in pair]

    def _logits_of(self, handles: torch.Tensor) -> torch.Tensor:
        """The logits of the rows vLLM picked from the forward's row handles."""
        if self._logits is None or handles.dtype != torch.int64 or handles.dim() != 2 or handles.shape[1] != 1:
            raise StepError(
                "compute_logits of hidden states the step's program did not give: on the spyre platform the logits "
                "come with the step (prompt logprobs, speculative decoding and pooling are not served)"
            )
        rows = handles[:, 0]
        if bool((rows < 0).any()):
            raise StepError(
                "logits of a token that is not the last of its request: the step's program computes those rows only "
                "(prompt logprobs are not served on the spyre platform)"
            )
        return self._logits[rows]
