"""The shapes a served step runs at on the card: its buckets (docs/vllm.md, "Shapes").

A step's program is compiled for static shapes. Two kinds of step:

- A decode step, every token its own request's (a request's next token, or a prompt's last
  chunk of one token): R requests whose longest context holds p pages run padded to the
  smallest decode bucket (T, P) with T >= R and P >= p, attention per request (each token
  against its own request's P pages).
- Any other step, `n` tokens whose requests hold `p` pages in all: padded to the smallest
  bucket (T, P) with T >= n and P >= p, every token against every page of the step.

The padded tokens write into spare rows of the cache (attention.py) and see no key; the
padded pages are the null block and no token sees them. The buckets are bounded by the
scheduler's limits, so the worker compiles every one at start-up. No vLLM import: pure
arithmetic on the limits.
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple


def _powers(start: int, factor: int, last: int) -> list[int]:
    """start, start * factor, ... up to the first value >= last (that one capped at last)."""
    out = []
    b = start
    while b < last:
        out.append(b)
        b *= factor
    out.append(last)
    return out


COARSE_TOKENS = 16
"""Token buckets up to this many rows are powers of 4, above it powers of 2: a step of a few rows
takes the time of its weights' DDR reads, padded rows or not, while above it the rows' own
work (PT passes, activations, every token against every page in attention) grows with them."""


class Bucket(NamedTuple):
    """The shape of a step's program."""

    tokens: int
    pages: int
    """Decode: pages per request; otherwise, pages of the step in all."""
    decode: bool
    """Every token its own request's: attention per request (attention.py)."""


@dataclasses.dataclass(frozen=True)
class StepShapes:
    """The buckets of a served model (module docstring).

    Tokens: powers of 4 from 1 up to 16 (COARSE_TOKENS), then powers of 2, up to the most
    tokens a step can hold (`max_num_batched_tokens`, and no more than `max_num_seqs` requests
    of `max_model_len` tokens), that bound last; a decode step's up to the first that holds
    `max_num_seqs`. Pages: of a decode step, powers
    of 2 from 1 up to a request's most (`max_model_len` tokens); of another step of T tokens,
    powers of 2 from 1 up to the most pages it can read (min(T, max_num_seqs) requests of
    `max_model_len` tokens). Both no more than the cache holds. A decode step's attention
    reads the pages of its contexts, so the step's time grows with the context by page
    buckets."""

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
        coarse = _powers(1, 4, min(self.max_tokens, COARSE_TOKENS))
        return coarse + (_powers(COARSE_TOKENS, 2, self.max_tokens)[1:] if self.max_tokens > COARSE_TOKENS else [])

    def page_buckets(self, tokens: int) -> list[int]:
        return _powers(1, 2, self.max_pages(tokens))

    @property
    def max_decode_requests(self) -> int:
        """The most requests a decode step holds (one token each)."""
        return min(self.max_num_seqs, self.max_tokens)

    @property
    def decode_token_buckets(self) -> list[int]:
        """The token buckets a decode step can take: up to the first that holds its most."""
        most = self.max_decode_requests
        return [t for t in self.token_buckets if t < most] + [next(t for t in self.token_buckets if t >= most)]

    @property
    def decode_page_buckets(self) -> list[int]:
        """Pages per request of a decode step: powers of 2 up to a request's most."""
        return _powers(1, 2, max(1, min(self.pages_per_request, self.num_blocks - 1)))

    @property
    def buckets(self) -> list[Bucket]:
        """Every bucket a step may run at, smallest first: the decode ones, then the others
        (a step of one token is a decode step)."""
        decode = [Bucket(t, p, True) for t in self.decode_token_buckets for p in self.decode_page_buckets]
        return decode + [Bucket(t, p, False) for t in self.token_buckets if t > 1 for p in self.page_buckets(t)]

    def bucket(self, tokens: int, pages: int) -> Bucket:
        """The bucket of a step of `tokens` tokens, not all of different requests, reading
        `pages` pages in all."""
        if not 1 <= tokens <= self.max_tokens:
            raise ValueError(f"a step of {tokens} tokens: the buckets hold 1 to {self.max_tokens}")
        t = next(b for b in self.token_buckets if b >= tokens)
        if not 0 <= pages <= self.max_pages(t):
            raise ValueError(f"a step of {tokens} tokens reading {pages} KV-cache pages: at most {self.max_pages(t)}")
        return Bucket(t, next(b for b in self.page_buckets(t) if b >= pages), False)

    def decode_bucket(self, requests: int, pages: int) -> Bucket:
        """The bucket of a decode step of `requests` requests (one token each) whose longest
        context holds `pages` pages."""
        if not 1 <= requests <= self.max_decode_requests:
            raise ValueError(f"a decode step of {requests} requests: the buckets hold 1 to {self.max_decode_requests}")
        if not 0 <= pages <= self.decode_page_buckets[-1]:
            raise ValueError(
                f"a decode step whose request reads {pages} KV-cache pages: at most {self.decode_page_buckets[-1]}"
            )
        t = next(b for b in self.decode_token_buckets if b >= requests)
        return Bucket(t, next(b for b in self.decode_page_buckets if b >= pages), True)
