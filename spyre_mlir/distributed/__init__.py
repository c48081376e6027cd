"""Several simulated cards: the "spyre" backend of torch.distributed (backend.py), its link
model (link.py) and tensor parallelism for decoder LLMs (tensor_parallel.py). docs/distributed.md."""
