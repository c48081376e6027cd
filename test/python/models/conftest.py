"""Shared set-up of the model tests: test/python (helpers.py, the pass criteria) on sys.path,
offline Hugging Face, and a fresh Dynamo per test."""

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

_TESTS = str(Path(__file__).resolve().parents[1])
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)


@pytest.fixture
def fresh_dynamo():
    """Forget every compiled graph before and after the test (no cache hits across tests)."""
    import torch

    torch._dynamo.reset()
    yield
    torch._dynamo.reset()
