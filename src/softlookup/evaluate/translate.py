"""Translate a prepared test set with a trained model (greedy or beam), in the original order.

Runs on the job's GPU when one is visible, else on the CPU. A run whose training diverged
translates nothing: every hypothesis is empty, and scored as such.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from ..data import bpe
from ..data.batching import encode, length_batches, pad
from ..models.checkpoint import load_model
from ..models.special_tokens import EOS
from ..rundir import run_status

__all__ = ["load_model", "translate"]


@torch.no_grad()
def translate(
    model: torch.nn.Module,
    sp,
    sources: list[str],
    *,
    beam_size: int,
    length_penalty: float,
    max_tokens: int,
    batch_tokens: int = 2000,
    max_len_ratio: float = 1.5,
    max_len_extra: int = 10,
) -> list[str]:
    """Detokenised translations of `sources`, decoded in length-sorted batches."""
    device = next(model.parameters()).device
    src_ids = encode(sp, sources, max_tokens)
    hypotheses: list[str] = [""] * len(sources)
    for rows in length_batches([len(ids) + 1 for ids in src_ids], batch_tokens, shuffle=False):
        src = pad([src_ids[i] + [EOS] for i in rows])  # (B, S)
        max_len = int(src.shape[1] * max_len_ratio) + max_len_extra
        ids = model.generate(
            src.to(device), max_len=max_len, beam_size=beam_size, length_penalty=length_penalty
        )
        for row, tokens in zip(rows, ids, strict=True):
            hypotheses[row] = sp.decode(tokens)
    return hypotheses


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", required=True, type=Path, help="holds model.pt, meta.json")
    parser.add_argument(
        "--weights",
        type=Path,
        help="the model file to translate with (default: <run-dir>/model.pt; a "
        "budget point: <run-dir>/ladder/e<k>.pt)",
    )
    parser.add_argument("--spm", required=True, type=Path)
    parser.add_argument("--input", required=True, type=Path, help="source sentences, one a line")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--beam-size", type=int, default=1)
    parser.add_argument("--length-penalty", type=float, default=1.0)
    parser.add_argument("--max-tokens", type=int, default=256, help="longer inputs are cut")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    sources = args.input.read_text(encoding="utf-8").splitlines()
    if run_status(args.run_dir) != "ok":
        hypotheses = [""] * len(sources)
        print(f"{args.run_dir}: training diverged; no translations")
    else:
        device = default_device()
        started = time.perf_counter()
        hypotheses = translate(
            load_model(args.weights or args.run_dir / "model.pt", device),
            bpe.load(args.spm),
            sources,
            beam_size=args.beam_size,
            length_penalty=args.length_penalty,
            max_tokens=args.max_tokens,
        )
        elapsed = time.perf_counter() - started
        print(f"translated {len(sources)} sentences on {device} in {elapsed:.1f}s")
    args.out.write_text("".join(h + "\n" for h in hypotheses), encoding="utf-8")


if __name__ == "__main__":
    main()
