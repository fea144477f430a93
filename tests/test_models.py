"""Translation models: shapes, config validation, masking, decoding, and that they can learn."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from softlookup.models import (
    BOS,
    EOS,
    PAD,
    MultiHeadAttention,
    build_model,
    count_parameters,
)
from softlookup.models.decoding import beam_search, greedy_search
from softlookup.models.gru import CrossAttention

VOCAB = 24
GRU_ATTENTION = ["none", "additive", "dot", "general", "scaled_dot"]


def gru_cfg(attention: str, **overrides) -> dict:
    cfg = {"arch": "gru", "emb_dim": 8, "hidden_dim": 12, "attention": attention, "dropout": 0.0}
    return {**cfg, **overrides}


def transformer_cfg(**overrides) -> dict:
    cfg = {
        "arch": "transformer",
        "d_model": 16,
        "heads": 2,
        "ffn_dim": 32,
        "enc_layers": 2,
        "dec_layers": 2,
        "dropout": 0.0,
        "max_len": 64,
    }
    return {**cfg, **overrides}


ALL_CFGS = [gru_cfg(a) for a in GRU_ATTENTION] + [
    transformer_cfg(pre_ln=True),
    transformer_cfg(pre_ln=False, d_k=5, tie_embeddings=False),
]
CFG_IDS = [f"gru-{a}" for a in GRU_ATTENTION] + ["transformer-preln", "transformer-postln-dk5"]


def tiny_model(cfg: dict, seed: int = 0):
    torch.manual_seed(seed)
    return build_model(cfg, VOCAB).eval()


def batch(seed: int = 1, lengths=(7, 4, 6), tgt_lengths=(6, 3, 5)):
    """Right-padded src (B,S) and tgt_in (B,T) starting with BOS, plus the lengths."""
    generator = torch.Generator().manual_seed(seed)
    src = torch.full((len(lengths), max(lengths)), PAD)
    tgt = torch.full((len(tgt_lengths), max(tgt_lengths)), PAD)
    for i, (n, m) in enumerate(zip(lengths, tgt_lengths, strict=True)):
        src[i, :n] = torch.randint(EOS + 1, VOCAB, (n,), generator=generator)
        tgt[i, :m] = torch.randint(EOS + 1, VOCAB, (m,), generator=generator)
        tgt[i, 0] = BOS
    return src, tgt, lengths, tgt_lengths


# ---- shapes and config -------------------------------------------------------------------------


@pytest.mark.parametrize("cfg", ALL_CFGS, ids=CFG_IDS)
def test_forward_shapes(cfg):
    model = tiny_model(cfg)
    src, tgt, _, _ = batch()
    logits = model(src, tgt)
    assert logits.shape == (3, tgt.shape[1], VOCAB)
    logits_asked, attn = model(src, tgt, return_attention=True)
    torch.testing.assert_close(logits_asked, logits, atol=1e-5, rtol=1e-5)
    if cfg["arch"] == "gru":
        expected = {} if cfg["attention"] == "none" else {"cross": (3, tgt.shape[1], src.shape[1])}
    else:
        S, T, H = src.shape[1], tgt.shape[1], cfg["heads"]
        expected = {f"enc.{i}.self": (3, H, S, S) for i in range(2)}
        expected |= {f"dec.{i}.self": (3, H, T, T) for i in range(2)}
        expected |= {f"dec.{i}.cross": (3, H, T, S) for i in range(2)}
    assert {name: tuple(w.shape) for name, w in attn.items()} == expected


@pytest.mark.parametrize("cfg", ALL_CFGS, ids=CFG_IDS)
def test_every_model_trains_under_bf16_autocast(cfg):
    """Training on a GPU runs under bf16 autocast; there a GRU's outputs stay fp32 (CPU) or become
    fp16 (cuDNN) beside a Linear's bf16 query, and attention must still take them."""
    model = tiny_model(cfg).train()
    src, tgt, _, _ = batch()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(src, tgt)
    assert logits.dtype == torch.bfloat16
    logits.float().sum().backward()
    assert all(p.grad is not None and p.grad.isfinite().all() for p in model.parameters())


def test_config_defaults_filled():
    model = build_model({"arch": "transformer"}, VOCAB)
    assert model.config.d_model == 256 and model.config.head_dim == 64
    assert build_model({"arch": "gru"}, VOCAB).config.attention == "additive"


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        ({"emb_dim": 8}, "'arch'"),
        ({"arch": "lstm"}, "'arch'"),
        ({"arch": "gru", "hiden_dim": 8}, "unknown key 'hiden_dim'"),
        ({"arch": "gru", "attention": "bahdanau"}, "'attention'"),
        ({"arch": "gru", "hidden_dim": 7}, "'hidden_dim'"),
        ({"arch": "gru", "emb_dim": True}, "'emb_dim' must be int"),
        ({"arch": "gru", "dropout": 1.5}, "'dropout'"),
        ({"arch": "transformer", "heads": 3}, "'heads'"),
        ({"arch": "transformer", "d_k": 0}, "'d_k'"),
        ({"arch": "transformer", "scale": "yes"}, "'scale' must be bool"),
        ({"arch": "transformer", "attention_backend": "cuda"}, "'attention_backend'"),
        ({"arch": "transformer", "attention": "dot"}, "unknown key 'attention'"),
    ],
)
def test_config_errors_name_the_key(cfg, message):
    with pytest.raises(ValueError, match=message):
        build_model(cfg, VOCAB)


def test_multi_head_attention_parameter_count_does_not_depend_on_heads():
    for heads in (1, 8, 16):
        mha = MultiHeadAttention(512, heads)
        assert count_parameters(mha) == 4 * 512**2 + 4 * 512
        assert count_parameters(mha) == count_parameters(torch.nn.MultiheadAttention(512, heads))
    assert count_parameters(MultiHeadAttention(1024, 8, bias=False)) == 4 * 1024**2


@pytest.mark.parametrize("scale", [True, False])
def test_multi_head_attention_matches_its_formula(scale):
    torch.manual_seed(0)
    mha = MultiHeadAttention(12, heads=3, d_k=5, scale=scale)  # d_k != d_model / heads
    x, context = torch.randn(2, 4, 12), torch.randn(2, 6, 12)
    pad = torch.tensor([[False] * 6, [False] * 4 + [True] * 2])
    out, _ = mha(x, context, key_padding_mask=pad)

    def heads(t):  # (B,N,15) -> (B,3,N,5)
        return t.view(*t.shape[:2], 3, 5).transpose(1, 2)

    q, k, v = heads(mha.q_proj(x)), heads(mha.k_proj(context)), heads(mha.v_proj(context))
    scores = q @ k.transpose(-1, -2) * (5**-0.5 if scale else 1.0)  # (B,3,4,6)
    weights = scores.masked_fill(pad[:, None, None], float("-inf")).softmax(-1)
    expected = mha.out_proj((weights @ v).transpose(1, 2).reshape(2, 4, 15))
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("score", GRU_ATTENTION[1:])
def test_gru_scores_match_their_formulas(score):
    torch.manual_seed(0)
    attention = CrossAttention(score, dim=6, backend="torch")
    values, query = torch.randn(2, 5, 6), torch.randn(2, 6)  # h (B,S,D), s (B,D)
    pad = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
    memory = {"values": values, "keys": attention.keys(values), "src_pad": pad}
    context, weights = attention(query, memory, need_weights=True)
    if score == "additive":  # v^T tanh(W s + U h)
        hidden = torch.tanh(attention.query_proj(query)[:, None] + attention.key_proj(values))
        scores = attention.energy(hidden)[..., 0]
    elif score == "general":  # s^T W h
        scores = (attention.key_proj(values) @ query[..., None])[..., 0]
    else:  # s^T h, divided by sqrt(d) when scaled
        scores = (values @ query[..., None])[..., 0] / (6**0.5 if score == "scaled_dot" else 1.0)
    expected = scores.masked_fill(pad, float("-inf")).softmax(-1)  # (B,S)
    torch.testing.assert_close(weights, expected, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(context, (expected[:, None] @ values)[:, 0], atol=1e-6, rtol=1e-5)
    fast_context, _ = attention(query, memory)  # the torch backend, without weights
    torch.testing.assert_close(fast_context, context, atol=1e-6, rtol=1e-5)


# ---- masking -----------------------------------------------------------------------------------


@pytest.mark.parametrize("cfg", ALL_CFGS, ids=CFG_IDS)
def test_padding_does_not_change_logits(cfg):
    model = tiny_model(cfg)
    src, tgt, lengths, tgt_lengths = batch()
    batched = model(src, tgt)
    for i, (n, m) in enumerate(zip(lengths, tgt_lengths, strict=True)):
        alone = model(src[i : i + 1, :n], tgt[i : i + 1, :m])
        torch.testing.assert_close(batched[i : i + 1, :m], alone, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize(
    "cfg",
    [gru_cfg(a, padding_mask=False) for a in GRU_ATTENTION[1:]]
    + [transformer_cfg(padding_mask=False)],
    ids=[f"gru-{a}" for a in GRU_ATTENTION[1:]] + ["transformer"],
)
def test_without_the_padding_mask_padding_reaches_the_output(cfg):
    """padding_mask: false (the ablation): the padded positions get attention weight, so a
    sentence scores differently alone and padded in a batch; the weights still sum to 1."""
    model = tiny_model(cfg)
    masked = tiny_model({**cfg, "padding_mask": True})
    masked.load_state_dict(model.state_dict())  # same weights, only the mask differs
    src, tgt, lengths, tgt_lengths = batch()
    n, m = lengths[1], tgt_lengths[1]  # the shortest source: most padding
    alone = model(src[1:2, :n], tgt[1:2, :m])
    torch.testing.assert_close(alone, masked(src[1:2, :n], tgt[1:2, :m]))  # no padding: equal
    assert (model(src, tgt)[1:2, :m] - alone).abs().max() > 1e-4
    _, weights = model(src, tgt, return_attention=True)
    cross = weights["cross"] if "cross" in weights else weights["dec.0.cross"]
    assert cross[1, ..., n:].sum() > 0  # mass on padded source positions
    torch.testing.assert_close(cross.sum(-1), torch.ones_like(cross.sum(-1)))


@pytest.mark.parametrize("causal_mask", [True, False])
def test_causal_mask_hides_future_target_tokens(causal_mask):
    model = tiny_model(transformer_cfg(causal_mask=causal_mask))
    src, tgt, _, _ = batch(tgt_lengths=(6, 6, 6))
    changed = tgt.clone()
    changed[:, 3:] = (tgt[:, 3:] - EOS) % (VOCAB - EOS - 1) + EOS + 1  # other non-special tokens
    before, after = model(src, tgt)[:, :3], model(src, changed)[:, :3]
    if causal_mask:
        torch.testing.assert_close(before, after)
    else:
        assert (before - after).abs().max() > 1e-3


# ---- GRU attention -----------------------------------------------------------------------------


@pytest.mark.parametrize("attention", GRU_ATTENTION[1:])
def test_gru_attention_trains_and_weights_are_distributions(attention):
    model = tiny_model(gru_cfg(attention)).train()
    src, tgt, lengths, _ = batch()
    logits, attn = model(src, tgt, return_attention=True)
    logits.sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters())
    weights = attn["cross"]  # (B,T,S)
    for i, n in enumerate(lengths):
        torch.testing.assert_close(weights[i, :, :n].sum(-1), torch.ones(weights.shape[1]))
        assert (weights[i, :, n:] == 0).all()


def test_input_feeding_decoder_follows_its_equations():
    """s_t = GRUCell([y_{t-1}; o_{t-1}], s_{t-1}), o_t = tanh(W_o [s_t; c_t]), two steps."""
    model = tiny_model(gru_cfg("dot"))
    decoder = model.decoder
    cell = torch.nn.GRUCell(8 + 8, 12)
    with torch.no_grad():
        cell.weight_ih.copy_(
            torch.cat([decoder.token_to_gates.weight, decoder.feed_to_gates.weight], 1)
        )
        cell.bias_ih.copy_(decoder.token_to_gates.bias)
        cell.weight_hh.copy_(decoder.hidden_to_gates.weight)
        cell.bias_hh.copy_(decoder.hidden_to_gates.bias)
    src, tgt, _, _ = batch()
    state = model.start_decoding(src)
    hidden, feed = state["hidden"], torch.zeros(3, 8)
    for t in range(2):
        emb = model.tgt_embed(tgt[:, t])  # (B,E)
        readout, state = decoder.step(emb, state)
        hidden = cell(torch.cat([emb, feed], -1), hidden)
        scores = (state["values"] @ hidden[..., None])[..., 0].masked_fill(state["src_pad"], -1e9)
        context = (scores.softmax(-1)[:, None] @ state["values"])[:, 0]  # (B,H)
        feed = torch.tanh(decoder.readout(torch.cat([hidden, context], -1)))
        torch.testing.assert_close(readout, feed, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("attention", GRU_ATTENTION)
def test_fixed_vector_decoder_sees_only_the_final_state(attention):
    model = tiny_model(gru_cfg(attention))
    src, tgt, _, _ = batch()
    encoded = model.encode(src)
    perturbed = {**encoded, "outputs": encoded["outputs"].clone()}
    perturbed["outputs"][:, 2] += 1.0  # a middle position (lengths are 7, 4, 6)
    difference = (model.decode(encoded, tgt)[0] - model.decode(perturbed, tgt)[0]).abs().max()
    if attention == "none":
        assert difference == 0
        assert model(src, tgt, return_attention=True)[1] == {}
    else:
        assert difference > 1e-4


# ---- decoding ----------------------------------------------------------------------------------


def sequence_log_prob(model, src: torch.Tensor, hypothesis: list[int], max_len: int) -> float:
    """Teacher-forced log p(hypothesis [+ EOS if it ended before max_len] | src)."""
    targets = hypothesis + [EOS] if len(hypothesis) < max_len else hypothesis
    tgt_in = torch.tensor([[BOS] + targets[:-1]])
    log_probs = F.log_softmax(model(src, tgt_in), dim=-1)[0]  # (T,V)
    return log_probs[torch.arange(len(targets)), torch.tensor(targets)].sum().item()


DECODING_CFGS = [gru_cfg("additive"), gru_cfg("none"), transformer_cfg(tie_embeddings=False)]
DECODING_IDS = ["gru-additive", "gru-none", "transformer"]


@pytest.mark.parametrize("cfg", DECODING_CFGS, ids=DECODING_IDS)
def test_beam_of_one_is_greedy_and_scores_match_teacher_forcing(cfg):
    model = tiny_model(cfg, seed=3)
    src, _, _, _ = batch(seed=4)
    max_len = 10
    with torch.no_grad():
        greedy, greedy_scores = greedy_search(
            model.decode_step, model.start_decoding(src), 3, src.device, max_len
        )
        beam, _ = beam_search(
            model.decode_step, model.start_decoding(src), 3, src.device, max_len, 1, 1.0
        )
        assert beam == greedy == model.generate(src, max_len=max_len)
        for i, hypothesis in enumerate(greedy):
            expected = sequence_log_prob(model, src[i : i + 1], hypothesis, max_len)
            assert greedy_scores[i].item() == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize("cfg", DECODING_CFGS, ids=DECODING_IDS)
def test_beam_search_scores_at_least_greedy(cfg):
    model = tiny_model(cfg, seed=5)
    src, _, _, _ = batch(seed=6)
    max_len = 8
    with torch.no_grad():
        greedy = model.generate(src, max_len=max_len)
        beam, beam_scores = beam_search(
            model.decode_step, model.start_decoding(src), 3, src.device, max_len, 4, 0.0
        )
        for i in range(3):
            beam_logp = sequence_log_prob(model, src[i : i + 1], beam[i], max_len)
            assert beam_scores[i].item() == pytest.approx(beam_logp, abs=1e-4)
            assert beam_logp >= sequence_log_prob(model, src[i : i + 1], greedy[i], max_len) - 1e-5


def test_beam_search_finds_what_greedy_misses():
    """Toy distribution: 'A' is the likelier first token, but 'B EOS' is the likelier sentence."""
    A, B, C = 4, 5, 6
    table = torch.full((8, 8), 1e-3)
    table[BOS, A], table[BOS, B] = 0.5, 0.4  # greedy takes A ...
    table[A, C:] = 0.3  # ... after which nothing is likely (p(A C EOS) ~ 0.5*0.5*0.9)
    table[A, C] = 0.31  # no ties for greedy
    table[B, EOS] = 0.99  # while p(B EOS) = 0.4*0.99
    table[C:, EOS] = 0.9
    log_table = (table / table.sum(-1, keepdim=True)).log()

    def step(tokens, state):
        return log_table[tokens], state

    greedy, _ = greedy_search(step, None, 1, torch.device("cpu"), 5)
    beam, _ = beam_search(step, None, 1, torch.device("cpu"), 5, 2, 0.0)
    assert greedy[0][0] == A and beam == [[B]]


@pytest.mark.parametrize("pre_ln", [True, False])
@pytest.mark.parametrize("beam_size", [1, 3])
def test_kv_cache_generation_equals_recomputation(pre_ln, beam_size):
    model = tiny_model(transformer_cfg(pre_ln=pre_ln, tie_embeddings=False), seed=7)
    src, _, _, _ = batch(seed=8)
    cached = model.generate(src, max_len=12, beam_size=beam_size, use_cache=True)
    recomputed = model.generate(src, max_len=12, beam_size=beam_size, use_cache=False)
    assert cached == recomputed
    assert any(len(hypothesis) > 3 for hypothesis in cached)  # long enough to use the cache


def test_generation_beyond_positions_is_an_error():
    model = tiny_model(transformer_cfg(max_len=8))
    src, _, _, _ = batch()
    with pytest.raises(ValueError, match="max_len=8"):
        model.generate(src, max_len=20)


# ---- learning ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cfg",
    [gru_cfg("additive", emb_dim=16, hidden_dim=32), transformer_cfg(d_model=32, ffn_dim=64)],
    ids=["gru", "transformer"],
)
def test_tiny_model_overfits_a_handful_of_pairs(cfg):
    model = tiny_model(cfg).train()
    src, tgt, _, _ = batch(seed=9, lengths=(5, 6, 4, 6), tgt_lengths=(6, 5, 6, 4))
    tgt_out = torch.cat([tgt[:, 1:], torch.full((4, 1), PAD)], dim=1)
    tgt_out[torch.arange(4), torch.tensor([6, 5, 6, 4]) - 1] = EOS  # shifted target ends in EOS
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(100):
        loss = F.cross_entropy(model(src, tgt).transpose(1, 2), tgt_out, ignore_index=PAD)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.1 * losses[0]
