"""Encoder-decoder Transformer (Vaswani 2017), one readable file.

Every attention (encoder self, decoder self, cross) goes through `softlookup.kernels.attention`
with the PAD positions as key_padding_mask (none at all with `padding_mask: false`, the
ablation). Config knobs the claims sweep: heads and the per-head
width d_k (may differ from d_model / heads), the 1/sqrt(d_k) scaling, the decoder's causal mask at
training time, pre- or post-LayerNorm.

Generation is always incremental and causal, whatever `causal_mask` was during training, so a model
trained without the mask is judged on what it can actually do. With `use_cache=True` each step
feeds one token and appends its keys/values to a per-layer cache (cross-attention keys/values are
computed once per sentence); with `use_cache=False` each step reruns the decoder over the whole
prefix. Both give the same tokens.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .config import TransformerConfig, head_width
from .decoding import search
from .layers import ScaledEmbedding, attend
from .special_tokens import PAD

KV = tuple[torch.Tensor, torch.Tensor]  # keys, values: each (B,heads,N,d_k)


class MultiHeadAttention(nn.Module):
    """heads x (scaled) dot-product attention; d_model -> heads*d_k for Q, K, V and back.

    With d_k = d_model / heads it holds 4 d_model^2 weights (+ 4 d_model biases), whatever `heads`
    is: the same count as torch.nn.MultiheadAttention(d_model, heads).
    """

    def __init__(
        self,
        d_model: int,
        heads: int,
        d_k: int | None = None,
        bias: bool = True,
        *,
        scale: bool = True,
        backend: str = "auto",
    ):
        super().__init__()
        self.heads = heads
        self.d_k = head_width(d_model, heads, d_k)
        self.scale = None if scale else 1.0  # None: the kernel's 1/sqrt(d_k)
        self.backend = backend
        inner = heads * self.d_k
        self.q_proj = nn.Linear(d_model, inner, bias=bias)
        self.k_proj = nn.Linear(d_model, inner, bias=bias)
        self.v_proj = nn.Linear(d_model, inner, bias=bias)
        self.out_proj = nn.Linear(inner, d_model, bias=bias)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        B, N, _ = x.shape
        return x.view(B, N, self.heads, self.d_k).transpose(1, 2)  # (B,heads,N,d_k)

    def keys_values(self, x: torch.Tensor) -> KV:
        """x (B,N,d_model) -> keys, values (B,heads,N,d_k): what a KV cache stores."""
        return self._split(self.k_proj(x)), self._split(self.v_proj(x))

    def attend(
        self,
        x: torch.Tensor,
        kv: KV,
        *,
        key_padding_mask: torch.Tensor | None = None,
        causal: bool = False,
        need_weights: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Queries from x (B,Nq,d_model) read kv -> (B,Nq,d_model), weights (B,heads,Nq,Nk)|None."""
        out, weights = attend(
            self._split(self.q_proj(x)),
            *kv,
            scale=self.scale,
            key_padding_mask=key_padding_mask,
            causal=causal,
            backend=self.backend,
            need_weights=need_weights,
        )  # (B,heads,Nq,d_k)
        B, _, Nq, _ = out.shape
        return self.out_proj(out.transpose(1, 2).reshape(B, Nq, -1)), weights

    def forward(self, x, context, *, key_padding_mask=None, causal=False, need_weights=False):
        """x (B,Nq,d_model) attends over context (B,Nk,d_model) (context = x for self-attention)."""
        return self.attend(
            x,
            self.keys_values(context),
            key_padding_mask=key_padding_mask,
            causal=causal,
            need_weights=need_weights,
        )


class FeedForward(nn.Module):
    """max(0, x W1 + b1) W2 + b2. No dropout inside: as in Vaswani 2017 (sec. 5.4), dropout acts
    on each sublayer's output (Sublayers.residual) and on the embedding sums only."""

    def __init__(self, d_model: int, ffn_dim: int):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(d_model, ffn_dim), nn.ReLU(), nn.Linear(ffn_dim, d_model)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def _attention_from(config: TransformerConfig) -> MultiHeadAttention:
    return MultiHeadAttention(
        config.d_model,
        config.heads,
        config.d_k,
        scale=config.scale,
        backend=config.attention_backend,
    )


class Sublayers(nn.Module):
    """Residual wiring shared by encoder and decoder layers: pre-LN x + f(LN(x)) or post-LN
    LN(x + f(x)), with dropout on f's output."""

    def __init__(self, config: TransformerConfig, count: int):
        super().__init__()
        self.pre_ln = config.pre_ln
        self.norms = nn.ModuleList(nn.LayerNorm(config.d_model) for _ in range(count))
        self.drop = nn.Dropout(config.dropout)

    def normed_input(self, x: torch.Tensor, i: int) -> torch.Tensor:
        return self.norms[i](x) if self.pre_ln else x

    def residual(self, x: torch.Tensor, update: torch.Tensor, i: int) -> torch.Tensor:
        x = x + self.drop(update)
        return x if self.pre_ln else self.norms[i](x)


class EncoderLayer(Sublayers):
    def __init__(self, config: TransformerConfig):
        super().__init__(config, count=2)
        self.self_attn = _attention_from(config)
        self.ffn = FeedForward(config.d_model, config.ffn_dim)

    def forward(self, x, src_pad, need_weights=False):
        """x (B,S,d) -> (B,S,d), self-attention weights (B,heads,S,S)|None."""
        h = self.normed_input(x, 0)
        update, weights = self.self_attn(h, h, key_padding_mask=src_pad, need_weights=need_weights)
        x = self.residual(x, update, 0)
        return self.residual(x, self.ffn(self.normed_input(x, 1)), 1), weights


class DecoderLayer(Sublayers):
    def __init__(self, config: TransformerConfig):
        super().__init__(config, count=3)
        self.self_attn = _attention_from(config)
        self.cross_attn = _attention_from(config)
        self.ffn = FeedForward(config.d_model, config.ffn_dim)

    def forward(
        self,
        x: torch.Tensor,
        cross_kv: KV,
        src_pad: torch.Tensor,
        *,
        causal: bool,
        tgt_pad: torch.Tensor | None = None,
        past: KV | None = None,
        need_weights: bool = False,
    ):
        """x (B,T,d): the new positions (T = 1 per cached step) -> (B,T,d), self keys/values of
        every position so far (the grown cache), weights {"self", "cross"}."""
        h = self.normed_input(x, 0)
        keys, values = self.self_attn.keys_values(h)  # (B,heads,T,d_k)
        if past is not None:
            keys, values = torch.cat([past[0], keys], 2), torch.cat([past[1], values], 2)
        update, self_weights = self.self_attn.attend(
            h, (keys, values), key_padding_mask=tgt_pad, causal=causal, need_weights=need_weights
        )
        x = self.residual(x, update, 0)
        update, cross_weights = self.cross_attn.attend(
            self.normed_input(x, 1), cross_kv, key_padding_mask=src_pad, need_weights=need_weights
        )
        x = self.residual(x, update, 1)
        x = self.residual(x, self.ffn(self.normed_input(x, 2)), 2)
        return x, (keys, values), {"self": self_weights, "cross": cross_weights}


def sinusoidal_positions(max_len: int, d_model: int) -> torch.Tensor:
    """(max_len, d_model): sin on even, cos on odd dimensions, wavelengths 2pi .. 10000*2pi."""
    position = torch.arange(max_len, dtype=torch.float32)[:, None]
    frequency = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
    table = torch.zeros(max_len, d_model)
    table[:, 0::2] = torch.sin(position * frequency)
    table[:, 1::2] = torch.cos(position * frequency[: d_model // 2])
    return table


class Transformer(nn.Module):
    def __init__(self, config: TransformerConfig, vocab_size: int):
        super().__init__()
        self.config = config
        d = config.d_model
        self.src_embed = ScaledEmbedding(vocab_size, d)
        self.tgt_embed = ScaledEmbedding(vocab_size, d)
        self.register_buffer("positions", sinusoidal_positions(config.max_len, d), persistent=False)
        self.drop = nn.Dropout(config.dropout)
        self.encoder = nn.ModuleList(EncoderLayer(config) for _ in range(config.enc_layers))
        self.decoder = nn.ModuleList(DecoderLayer(config) for _ in range(config.dec_layers))
        self.enc_norm = nn.LayerNorm(d) if config.pre_ln else nn.Identity()
        self.dec_norm = nn.LayerNorm(d) if config.pre_ln else nn.Identity()
        self.output = nn.Linear(d, vocab_size, bias=False)
        if config.tie_embeddings:
            self.output.weight = self.tgt_embed.weight

    def _embed(self, embedding: nn.Module, tokens: torch.Tensor, start: int = 0) -> torch.Tensor:
        """tokens (B,N) at positions start.. -> (B,N,d)."""
        end = start + tokens.shape[1]
        if end > self.config.max_len:
            raise ValueError(
                f"sequence of {end} positions exceeds the model's max_len={self.config.max_len}"
            )
        return self.drop(embedding(tokens) + self.positions[start:end])

    def encode(self, src: torch.Tensor, need_weights: bool = False):
        """src (B,S) -> memory (B,S,d), src_pad (B,S), weights {"enc.i.self": (B,heads,S,S)}."""
        src_pad = src == PAD
        x = self._embed(self.src_embed, src)
        weights = {}
        for i, layer in enumerate(self.encoder):
            x, weights[f"enc.{i}.self"] = layer(x, self._key_mask(src_pad), need_weights)
        return self.enc_norm(x), src_pad, weights

    def _key_mask(self, pad: torch.Tensor) -> torch.Tensor | None:
        """The key padding mask the attentions apply: `pad`, or None when padding_mask is off."""
        return pad if self.config.padding_mask else None

    def cross_keys_values(self, memory: torch.Tensor) -> list[KV]:
        """Per decoder layer, the cross-attention keys/values of the memory (computed once)."""
        return [layer.cross_attn.keys_values(memory) for layer in self.decoder]

    def decode(self, tgt_in, memory, src_pad, *, causal, need_weights=False):
        """Teacher-forced: tgt_in (B,T) -> logits (B,T,V), weights {"dec.i.self"/"dec.i.cross"}."""
        tgt_pad, src_pad = self._key_mask(tgt_in == PAD), self._key_mask(src_pad)
        x = self._embed(self.tgt_embed, tgt_in)
        weights = {}
        layers = zip(self.decoder, self.cross_keys_values(memory), strict=True)
        for i, (layer, cross_kv) in enumerate(layers):
            x, _, layer_weights = layer(
                x, cross_kv, src_pad, causal=causal, tgt_pad=tgt_pad, need_weights=need_weights
            )
            weights.update({f"dec.{i}.{name}": w for name, w in layer_weights.items()})
        return self.output(self.dec_norm(x)), weights

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor, return_attention: bool = False):
        """src (B,S), tgt_in (B,T) -> logits (B,T,V) [, weights by name, each (B,heads,Nq,Nk)]."""
        memory, src_pad, enc_weights = self.encode(src, need_weights=return_attention)
        logits, dec_weights = self.decode(
            tgt_in, memory, src_pad, causal=self.config.causal_mask, need_weights=return_attention
        )
        return (logits, {**enc_weights, **dec_weights}) if return_attention else logits

    def start_decoding(self, src: torch.Tensor, use_cache: bool = True) -> dict:
        memory, src_pad, _ = self.encode(src)
        state = {"src_pad": src_pad, "length": 0}
        if use_cache:
            state["cross_kv"] = self.cross_keys_values(memory)
            state["self_kv"] = [None] * len(self.decoder)
        else:
            state["memory"] = memory
            state["prefix"] = src.new_zeros(src.shape[0], 0)  # (N,0) tokens fed so far
        return state

    def decode_step(self, tokens: torch.Tensor, state: dict) -> tuple[torch.Tensor, dict]:
        """tokens (N,) at position state["length"] -> log-probabilities (N,V), next state."""
        if "prefix" in state:  # no cache: rerun the decoder over the whole prefix, causally
            prefix = torch.cat([state["prefix"], tokens[:, None]], dim=1)  # (N,t+1)
            logits, _ = self.decode(prefix, state["memory"], state["src_pad"], causal=True)
            next_state = {**state, "prefix": prefix, "length": state["length"] + 1}
            return F.log_softmax(logits[:, -1], dim=-1), next_state
        x = self._embed(self.tgt_embed, tokens[:, None], start=state["length"])  # (N,1,d)
        self_kv = []
        layers = zip(self.decoder, state["cross_kv"], state["self_kv"], strict=True)
        for layer, cross_kv, past in layers:
            x, kv, _ = layer(x, cross_kv, self._key_mask(state["src_pad"]), causal=True, past=past)
            self_kv.append(kv)
        logits = self.output(self.dec_norm(x[:, 0]))  # (N,V)
        next_state = {**state, "self_kv": self_kv, "length": state["length"] + 1}
        return F.log_softmax(logits, dim=-1), next_state

    @torch.no_grad()
    def generate(
        self,
        src: torch.Tensor,
        max_len: int,
        beam_size: int = 1,
        length_penalty: float = 1.0,
        use_cache: bool = True,
    ) -> list[list[int]]:
        """Translate src (B,S): token ids per sentence, without BOS/EOS (see decoding.search)."""
        return search(
            self.decode_step,
            self.start_decoding(src, use_cache=use_cache),
            src.shape[0],
            src.device,
            max_len=max_len,
            beam_size=beam_size,
            length_penalty=length_penalty,
        )
