"""Translation models built from a config dict: `build_model(cfg, vocab_size)`.

model = build_model({"arch": "gru", "attention": "dot"}, vocab_size)
logits = model(src, tgt_in)                          # (B,S), (B,T) -> (B,T,V)
logits, attn = model(src, tgt_in, return_attention=True)
hyps = model.generate(src, max_len=100, beam_size=4, length_penalty=0.6)
"""

from __future__ import annotations

from torch import nn

from .config import GRUConfig, TransformerConfig, parse_model_config
from .gru import GRUSeq2Seq
from .special_tokens import BOS, EOS, PAD, UNK
from .transformer import MultiHeadAttention, Transformer


def build_model(
    cfg: dict | GRUConfig | TransformerConfig,
    vocab_size: int,
) -> GRUSeq2Seq | Transformer:
    """Build the model of a parsed config, or of a flat model dict, which is validated first
    (ValueError on unknown keys or bad values)."""
    if not isinstance(vocab_size, int) or vocab_size <= EOS + 1:
        raise ValueError(
            f"vocab_size must be an int above {EOS + 1} (the specials), got {vocab_size!r}"
        )
    config = cfg if isinstance(cfg, GRUConfig | TransformerConfig) else parse_model_config(cfg)
    model_class = GRUSeq2Seq if isinstance(config, GRUConfig) else Transformer
    return model_class(config, vocab_size)


def count_parameters(model: nn.Module) -> int:
    """Trainable parameters, a tied embedding counted once."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


__all__ = [
    "BOS",
    "EOS",
    "PAD",
    "UNK",
    "GRUConfig",
    "GRUSeq2Seq",
    "MultiHeadAttention",
    "Transformer",
    "TransformerConfig",
    "build_model",
    "count_parameters",
]
