"""A joint sentencepiece BPE model over both sides of the training split."""

from __future__ import annotations

import argparse
from pathlib import Path

import sentencepiece as spm

from ..models.special_tokens import BOS, EOS, PAD, UNK


def train_bpe(inputs: list[Path], model_prefix: Path, vocab_size: int) -> Path:
    """Train BPE on the given text files; returns the .model path."""
    model_prefix.parent.mkdir(parents=True, exist_ok=True)
    spm.SentencePieceTrainer.train(
        input=[str(p) for p in inputs],
        model_prefix=str(model_prefix),
        model_type="bpe",
        vocab_size=vocab_size,
        character_coverage=1.0,
        pad_id=PAD,
        unk_id=UNK,
        bos_id=BOS,
        eos_id=EOS,
        num_threads=1,
        # a sample of at most 2M lines (Europarl has 1.4M per side): the same model for small
        # corpora, bounded time and memory for large ones
        input_sentence_size=2_000_000,
        shuffle_input_sentence=True,
        hard_vocab_limit=False,
        minloglevel=2,
    )
    return model_prefix.with_suffix(".model")


def load(model_path: Path) -> spm.SentencePieceProcessor:
    if not Path(model_path).is_file():
        raise FileNotFoundError(f"sentencepiece model not found: {model_path}")
    return spm.SentencePieceProcessor(model_file=str(model_path))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--inputs", nargs="+", required=True, type=Path)
    parser.add_argument("--model-prefix", required=True, type=Path)
    parser.add_argument("--vocab-size", required=True, type=int)
    args = parser.parse_args()
    print(train_bpe(args.inputs, args.model_prefix, args.vocab_size))


if __name__ == "__main__":
    main()
