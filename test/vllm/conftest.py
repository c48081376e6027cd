"""The vLLM tests run in the vLLM environment (`make vllm-test`: .venv-vllm, its own pins)."""
