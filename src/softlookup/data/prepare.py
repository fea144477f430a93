"""Raw parallel files -> normalised plain-text splits, long test sets, and a manifest."""

from __future__ import annotations

import argparse
import gzip
import json
import re
import unicodedata
from pathlib import Path

import numpy as np

from .sources import sha256_of

_SPACES = re.compile(r"\s+")


def normalise(line: str) -> str:
    """Unicode NFC, one space between words, no leading or trailing space."""
    return _SPACES.sub(" ", unicodedata.normalize("NFC", line)).strip()


def read_lines(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as stream:
            return [normalise(line) for line in stream]
    except (OSError, EOFError, UnicodeDecodeError) as error:
        raise ValueError(f"cannot read {path}: {error}") from error


def read_pairs(src_path: Path, tgt_path: Path) -> tuple[list[tuple[str, str]], int]:
    """Aligned non-empty (source, target) pairs, and how many pairs had an empty side."""
    src, tgt = read_lines(src_path), read_lines(tgt_path)
    if len(src) != len(tgt):
        raise ValueError(f"{src_path} has {len(src)} lines but {tgt_path} has {len(tgt)}")
    pairs = [(s, t) for s, t in zip(src, tgt) if s and t]
    return pairs, len(src) - len(pairs)


def concatenate_consecutive(pairs: list[tuple[str, str]], k: int) -> list[tuple[str, str]]:
    """Join every k consecutive pairs into one longer pair (the remainder is dropped)."""
    return [
        (" ".join(s for s, _ in pairs[i : i + k]), " ".join(t for _, t in pairs[i : i + k]))
        for i in range(0, len(pairs) - k + 1, k)
    ]


def length_stats(sentences: list[str]) -> dict[str, float]:
    words = np.array([len(s.split()) for s in sentences])
    return {
        "mean": round(float(words.mean()), 2),
        "p99": round(float(np.percentile(words, 99)), 2),
        "max": int(words.max()),
    }


def write_split(pairs: list[tuple[str, str]], prefix: Path, src: str, tgt: str) -> dict:
    hashes = {}
    for side, lang in ((0, src), (1, tgt)):
        path = prefix.with_name(f"{prefix.name}.{lang}")
        path.write_text("".join(pair[side] + "\n" for pair in pairs), encoding="utf-8")
        hashes[path.name] = sha256_of(path)
    return {
        "pairs": len(pairs),
        "source_words": length_stats([s for s, _ in pairs]),
        "sha256": hashes,
    }


def prepare(
    raw_dir: Path,
    out_dir: Path,
    *,
    src: str,
    tgt: str,
    splits: dict[str, str],
    max_train_pairs: int | None,
    concat: list[int],
) -> dict:
    """Write <out_dir>/<split>.<lang> for every split (+ '<test>.concat<k>') and manifest.json.

    `splits` maps our split name (train, valid, test_*) to the corpus file stem (train, val, ...).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest: dict = {"source": src, "target": tgt, "splits": {}, "inputs": {}}
    for split, stem in splits.items():
        src_path, tgt_path = raw_dir / f"{stem}.{src}.gz", raw_dir / f"{stem}.{tgt}.gz"
        pairs, dropped = read_pairs(src_path, tgt_path)
        corpus_pairs = len(pairs)
        if split == "train" and max_train_pairs:
            pairs = pairs[:max_train_pairs]
        manifest["inputs"].update({p.name: sha256_of(p) for p in (src_path, tgt_path)})
        manifest["splits"][split] = write_split(pairs, out_dir / split, src, tgt)
        manifest["splits"][split].update(corpus_pairs=corpus_pairs, dropped_empty=dropped)
        if split.startswith("test"):
            for k in concat:
                name = f"{split}.concat{k}"
                manifest["splits"][name] = write_split(
                    concatenate_consecutive(pairs, k), out_dir / name, src, tgt
                )
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--raw-dir", required=True, type=Path)
    parser.add_argument("--out-dir", required=True, type=Path)
    parser.add_argument("--src", required=True)
    parser.add_argument("--tgt", required=True)
    parser.add_argument("--splits", required=True, help='JSON: {"train": "train", ...}')
    parser.add_argument("--max-train-pairs", type=int, default=None)
    parser.add_argument("--concat", type=int, nargs="*", default=[])
    args = parser.parse_args()
    manifest = prepare(
        args.raw_dir,
        args.out_dir,
        src=args.src,
        tgt=args.tgt,
        splits=json.loads(args.splits),
        max_train_pairs=args.max_train_pairs,
        concat=args.concat,
    )
    print(json.dumps({k: v["pairs"] for k, v in manifest["splits"].items()}))


if __name__ == "__main__":
    main()
