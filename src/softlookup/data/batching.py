"""Subword-encoded parallel text, grouped by length into batches of roughly equal token count."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import sentencepiece as spm
import torch

from ..models.special_tokens import BOS, EOS, PAD


@dataclass
class Batch:
    src: torch.Tensor  # (B, S) source ids + EOS, right-padded with PAD
    tgt_in: torch.Tensor  # (B, T) BOS + target ids, right-padded
    tgt_out: torch.Tensor  # (B, T) target ids + EOS, right-padded
    index: list[int]  # position of each row in the original file

    @property
    def target_tokens(self) -> int:
        return int((self.tgt_out != PAD).sum())


def read_split(data_dir: Path, split: str, src: str, tgt: str) -> tuple[list[str], list[str]]:
    """The plain-text sides of one prepared split."""
    sides = []
    for lang in (src, tgt):
        path = Path(data_dir) / f"{split}.{lang}"
        if not path.is_file():
            raise FileNotFoundError(f"prepared split not found: {path}")
        sides.append(path.read_text(encoding="utf-8").splitlines())
    return sides[0], sides[1]


def encode(sp: spm.SentencePieceProcessor, lines: list[str], max_tokens: int) -> list[list[int]]:
    """Subword ids per line, truncated to `max_tokens` (EOS/BOS not included)."""
    return [ids[:max_tokens] for ids in sp.encode(lines)]


def pad(rows: list[list[int]]) -> torch.Tensor:
    width = max(len(r) for r in rows)
    return torch.tensor([r + [PAD] * (width - len(r)) for r in rows], dtype=torch.long)


def length_batches(
    lengths: list[int], max_tokens: int, *, shuffle: bool, seed: int = 0
) -> list[list[int]]:
    """Indices grouped by length so that rows x longest row <= max_tokens per batch.

    Sorting by length keeps padding low; with `shuffle`, ties are broken at random and the
    batches come in a random order (seeded, so a rerun sees the same order).
    """
    rng = np.random.default_rng(seed)
    noise = rng.random(len(lengths)) if shuffle else np.zeros(len(lengths))
    order = np.lexsort((noise, np.asarray(lengths)))
    batches, current, longest = [], [], 0
    for i in order.tolist():
        longest_if_added = max(longest, lengths[i])
        if current and longest_if_added * (len(current) + 1) > max_tokens:
            batches.append(current)
            current, longest_if_added = [], lengths[i]
        current.append(i)
        longest = longest_if_added
    if current:
        batches.append(current)
    if shuffle:
        rng.shuffle(batches)
    return batches


def make_batches(
    src_ids: list[list[int]],
    tgt_ids: list[list[int]],
    max_tokens: int,
    *,
    shuffle: bool,
    seed: int = 0,
) -> list[Batch]:
    lengths = [max(len(s), len(t)) + 1 for s, t in zip(src_ids, tgt_ids, strict=True)]
    return [
        Batch(
            src=pad([src_ids[i] + [EOS] for i in rows]),
            tgt_in=pad([[BOS] + tgt_ids[i] for i in rows]),
            tgt_out=pad([tgt_ids[i] + [EOS] for i in rows]),
            index=rows,
        )
        for rows in length_batches(lengths, max_tokens, shuffle=shuffle, seed=seed)
    ]
