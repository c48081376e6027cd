"""Shared set-up of the model tests: offline Hugging Face, and a fresh Dynamo per test."""

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def fresh_dynamo():
    """Forget every compiled graph before and after the test (no cache hits across tests)."""
    import torch

    torch._dynamo.reset()
    yield
    torch._dynamo.reset()
