"""bench/llm.py's roofline arithmetic: the bytes a decode step must move."""

from transformers import LlamaConfig, LlamaForCausalLM

from spyre_mlir.report.sweep import load_bench


def _llama(tied: bool) -> LlamaForCausalLM:
    cfg = LlamaConfig(
        vocab_size=300,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        tie_word_embeddings=tied,
    )
    return LlamaForCausalLM(cfg)


def test_a_decode_step_reads_each_weight_once_and_one_embedding_row():
    bench = load_bench("llm")
    layers = 2 * (2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 128 + 2 * 64)  # q, o; k, v (2 of 4 heads); mlp; norms
    head, table = 300 * 64, 300 * 64
    tied, untied = _llama(True), _llama(False)
    assert tied.lm_head.weight is tied.model.embed_tokens.weight
    # tied: the head reads the table whole; untied: the head whole, the table one row
    assert bench.weight_bytes(tied) == 2 * (layers + table + 64)
    assert bench.weight_bytes(untied) == 2 * (layers + head + 64 + 64)
    # K and V of 2 heads x 16 dims, rows 0..position read and one written, in each of 2 layers
    assert bench.kv_bytes(tied.config, position=9) == 2 * (2 * 2 * 16 * 2) * 11
