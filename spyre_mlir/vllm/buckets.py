"""The shapes a served step runs at on the card: (tokens, pages) buckets (docs/vllm.md, "Shapes").

A step's program is compiled for static shapes. A step of `n` tokens whose sequences hold `p`
KV-cache pages in all runs padded to the smallest bucket (T, P) with T >= n and P >= p: the
padded tokens write into vLLM's null block and see no key, the padded pages are the null block
and no token sees them. The buckets are bounded by the scheduler's limits, so the worker
compiles every one at start-up. No vLLM import: pure arithmetic on the limits.
"""

from __future__ import annotations

import dataclasses
import math


def _powers(start: int, factor: int, last: int) -> list[int]:
    """start, start * factor, ... up to the first value >= last (that one capped at last)."""
    out = []
    b = start
    while b < last:
        out.append(b)
        b *= factor
    out.append(last)
    return out


@dataclasses.dataclass(frozen=True)
class StepShapes:
    """The (tokens, pages) buckets of a served model.

    Tokens: powers of 4 from 1 up to the most tokens a step can hold (`max_num_batched_tokens`,
    and no more than `max_num_seqs` requests of `max_model_len` tokens), that bound last; a
    decode step of n requests is n tokens. Pages: powers of 2 from 1 up to the most pages a
    step of T tokens can read (min(T, max_num_seqs) requests of `max_model_len` tokens, and no
    more than the cache holds): a decode step's attention reads the pages of its context, so
    the step's time grows with the context by page buckets."""

    max_num_batched_tokens: int
    max_num_seqs: int
    max_model_len: int
    block_size: int
    num_blocks: int
    """Blocks of the KV cache (vLLM's, the null block among them)."""

    def __post_init__(self) -> None:
        for name in ("max_num_batched_tokens", "max_num_seqs", "max_model_len", "block_size", "num_blocks"):
            if getattr(self, name) < 1:
                raise ValueError(f"StepShapes.{name} must be at least 1, got {getattr(self, name)}")

    @property
    def max_tokens(self) -> int:
        return min(self.max_num_batched_tokens, self.max_num_seqs * self.max_model_len)

    @property
    def pages_per_request(self) -> int:
        return math.ceil(self.max_model_len / self.block_size)

    def max_pages(self, tokens: int) -> int:
        """The most pages a step of `tokens` tokens (padded or not) can read."""
        requests = min(tokens, self.max_num_seqs)
        return max(1, min(requests * self.pages_per_request, self.num_blocks - 1))

    @property
    def token_buckets(self) -> list[int]:
        return _powers(1, 4, self.max_tokens)

    def page_buckets(self, tokens: int) -> list[int]:
        return _powers(1, 2, self.max_pages(tokens))

    @property
    def buckets(self) -> list[tuple[int, int]]:
        """Every (tokens, pages) a step may run at, smallest first."""
        return [(t, p) for t in self.token_buckets for p in self.page_buckets(t)]

    def bucket(self, tokens: int, pages: int) -> tuple[int, int]:
        """The bucket a step of `tokens` tokens reading `pages` pages runs at."""
        if not 1 <= tokens <= self.max_tokens:
            raise ValueError(f"a step of {tokens} tokens: the buckets hold 1 to {self.max_tokens}")
        t = next(b for b in self.token_buckets if b >= tokens)
        if not 0 <= pages <= self.max_pages(t):
            raise ValueError(f"a step of {tokens} tokens reading {pages} KV-cache pages: at most {self.max_pages(t)}")
        return t, next(b for b in self.page_buckets(t) if b >= pages)
