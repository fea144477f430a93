"""Model configs: one dataclass per architecture, built from the flat `model:` dict of a YAML config.

`parse_model_config(cfg)` fills defaults and raises a `ValueError` naming the key and the value for
anything unknown, mistyped or out of range, so a typo in a config fails before any training starts.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass

from softlookup.kernels import BACKENDS

GRU_ATTENTION = ("none", "additive", "dot", "general", "scaled_dot")


def head_width(d_model: int, heads: int, d_k: int | None) -> int:
    """The width of one attention head: d_k, or d_model // heads when d_k is None."""
    return d_model // heads if d_k is None else d_k


@dataclass(frozen=True)
class GRUConfig:
    """Bidirectional GRU encoder, GRU decoder; `attention` picks the score (or none at all)."""

    arch: str = "gru"
    emb_dim: int = 256
    # width of the encoder outputs (two directions of hidden_dim // 2) and of the decoder state
    hidden_dim: int = 512
    attention: str = "additive"
    dropout: float = 0.1
    tie_embeddings: bool = True  # decoder input embedding = output projection
    attention_backend: str = "auto"
    padding_mask: bool = True  # False: attention also weighs the padded source positions

    def check(self) -> None:
        _require(self.emb_dim > 0, "emb_dim", self.emb_dim, "a positive integer")
        _require(
            self.hidden_dim > 0 and self.hidden_dim % 2 == 0,
            "hidden_dim",
            self.hidden_dim,
            "a positive even integer (each encoder direction gets half)",
        )
        _require(
            self.attention in GRU_ATTENTION, "attention", self.attention, f"one of {GRU_ATTENTION}"
        )


@dataclass(frozen=True)
class TransformerConfig:
    """Encoder-decoder Transformer (Vaswani 2017) with the knobs the claims sweep."""

    arch: str = "transformer"
    d_model: int = 256
    heads: int = 4
    d_k: int | None = None  # per-head width; None -> d_model // heads
    ffn_dim: int = 1024
    enc_layers: int = 3
    dec_layers: int = 3
    dropout: float = 0.1
    tie_embeddings: bool = True
    scale: bool = True  # True: scores * 1/sqrt(d_k); False: unscaled
    causal_mask: bool = True  # decoder self-attention mask at training time
    padding_mask: bool = True  # False: no key padding mask in any attention (the ablation)
    pre_ln: bool = True
    attention_backend: str = "auto"
    max_len: int = 512  # longest sequence the sinusoidal positions cover

    @property
    def head_dim(self) -> int:
        return head_width(self.d_model, self.heads, self.d_k)

    def check(self) -> None:
        for key in ("d_model", "heads", "ffn_dim", "enc_layers", "dec_layers", "max_len"):
            _require(getattr(self, key) > 0, key, getattr(self, key), "a positive integer")
        if self.d_k is None:
            _require(
                self.d_model % self.heads == 0,
                "heads",
                self.heads,
                f"a divisor of d_model={self.d_model} when d_k is null",
            )
        else:
            _require(self.d_k > 0, "d_k", self.d_k, "a positive integer or null")


CONFIGS = {"gru": GRUConfig, "transformer": TransformerConfig}
ModelConfig = GRUConfig | TransformerConfig


def parse_model_config(cfg: dict) -> ModelConfig:
    """Validate a flat model dict and return the architecture's config with defaults filled."""
    if not isinstance(cfg, dict):
        raise TypeError(f"model config must be a mapping, got {type(cfg).__name__}")
    arch = cfg.get("arch")
    if arch not in CONFIGS:
        raise ValueError(f"model config: 'arch' must be one of {tuple(CONFIGS)}, got {arch!r}")
    config_class = CONFIGS[arch]
    hints = typing.get_type_hints(config_class)
    allowed = [field.name for field in dataclasses.fields(config_class)]
    for key, value in cfg.items():
        if key not in hints:
            raise ValueError(
                f"model config: unknown key {key!r} for arch {arch!r}; allowed keys: {allowed}"
            )
        _check_type(key, value, hints[key])
    config = config_class(**cfg)
    _require(0.0 <= config.dropout < 1.0, "dropout", config.dropout, "in [0, 1)")
    _require(
        config.attention_backend in BACKENDS,
        "attention_backend",
        config.attention_backend,
        f"one of {BACKENDS}",
    )
    config.check()
    return config


def _check_type(key: str, value: object, hint: object) -> None:
    accepted = typing.get_args(hint) or (hint,)
    for kind in accepted:
        if kind is type(None) and value is None:
            return
        if kind is float and isinstance(value, (int, float)) and not isinstance(value, bool):
            return
        if kind is int and isinstance(value, int) and not isinstance(value, bool):
            return
        if kind in (bool, str) and isinstance(value, kind):
            return
    names = " or ".join("null" if kind is type(None) else kind.__name__ for kind in accepted)
    raise ValueError(f"model config: {key!r} must be {names}, got {value!r}")


def _require(ok: bool, key: str, value: object, expected: str) -> None:
    if not ok:
        raise ValueError(f"model config: {key!r} must be {expected}, got {value!r}")
