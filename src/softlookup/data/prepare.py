"""Raw parallel files -> normalised plain-text splits, long test sets, and a manifest."""

from __future__ import annotations

import argparse
import fnmatch
import gzip
import json
import re
import tarfile
import unicodedata
from pathlib import Path

import numpy as np

from .buckets import bucket_label
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
    pairs = [(s, t) for s, t in zip(src, tgt, strict=True) if s and t]
    return pairs, len(src) - len(pairs)


def concatenate_consecutive(pairs: list[tuple[str, str]], k: int) -> list[tuple[str, str]]:
    """Join every k consecutive pairs into one longer pair (the remainder is dropped)."""
    return [
        (" ".join(s for s, _ in pairs[i : i + k]), " ".join(t for _, t in pairs[i : i + k]))
        for i in range(0, len(pairs) - k + 1, k)
    ]


def group_sizes(n_pairs: int, ks: list[int], weights: list[float] | None, seed: int) -> list[int]:
    """Sizes of consecutive groups that cover `n_pairs` pairs exactly once.

    Each group's size k is drawn from `ks` with probability proportional to `weights`; the
    default weights 1/k give every k the same expected share of the pairs (and so of the tokens),
    because a group of size k holds k pairs. The last group is cut to what is left.
    """
    if not ks or min(ks) < 1:
        raise ValueError(f"join sizes must be positive integers, got {ks}")
    probs = np.array(weights if weights is not None else [1.0 / k for k in ks], dtype=float)
    if len(probs) != len(ks) or (probs < 0).any() or probs.sum() <= 0:
        raise ValueError(f"join weights {weights} do not fit sizes {ks}")
    rng = np.random.default_rng(seed)
    sizes, covered = [], 0
    while covered < n_pairs:
        k = int(rng.choice(ks, p=probs / probs.sum()))
        sizes.append(min(k, n_pairs - covered))
        covered += sizes[-1]
    return sizes


def join_groups(pairs: list[tuple[str, str]], sizes: list[int]) -> list[tuple[str, str]]:
    """Join consecutive pairs group by group: source with source, target with target."""
    joined, start = [], 0
    for k in sizes:
        group = pairs[start : start + k]
        joined.append((" ".join(s for s, _ in group), " ".join(t for _, t in group)))
        start += k
    return joined


def join_to_lengths(pairs: list[tuple[str, str]], edges: list[int]) -> list[tuple[str, str]]:
    """Join consecutive pairs into inputs aimed, round-robin, at every source-length bucket.

    The targets are the buckets of `edges` (low, high], plus the open bucket above the last edge.
    For each target, consecutive unused pairs are joined until the source has more than `low`
    words (at least one pair), so each round yields one input per bucket (some land one bucket
    higher). Every pair is used at most once, so the inputs of one test set share no sentence.
    """
    lows = list(edges)
    joined, start = [], 0
    while start < len(pairs):
        for low in lows:
            if start >= len(pairs):
                break
            end, words = start, 0
            while end < len(pairs) and (end == start or words <= low):
                words += len(pairs[end][0].split())
                end += 1
            if words <= low:  # the last pairs cannot reach this target: drop them
                start = end
                break
            joined.append(join_groups(pairs[start:end], [end - start])[0])
            start = end
    return joined


def bucket_counts(sentences: list[str], edges: list[int]) -> dict[str, int]:
    """Sentences per source-length bucket, labelled as the scores table labels them."""
    counts: dict[str, int] = {}
    for sentence in sentences:
        label = bucket_label(len(sentence.split()), edges)
        counts[label] = counts.get(label, 0) + 1
    order = [bucket_label(low + 1, edges) for low in edges]
    return {label: counts.get(label, 0) for label in order}


def length_stats(sentences: list[str]) -> dict[str, float]:
    words = np.array([len(s.split()) for s in sentences])
    return {
        "mean": round(float(words.mean()), 2),
        "p99": round(float(np.percentile(words, 99)), 2),
        "max": int(words.max()),
    }


def write_split(
    pairs: list[tuple[str, str]], prefix: Path, src: str, tgt: str, edges: list[int] | None
) -> dict:
    hashes = {}
    for side, lang in ((0, src), (1, tgt)):
        path = prefix.with_name(f"{prefix.name}.{lang}")
        path.write_text("".join(pair[side] + "\n" for pair in pairs), encoding="utf-8")
        hashes[path.name] = sha256_of(path)
    entry = {
        "pairs": len(pairs),  # sentence pairs held; a joined split overrides it (see prepare)
        "examples": len(pairs),  # lines of the files: inputs a model sees
        "source_words": length_stats([s for s, _ in pairs]),
        "sha256": hashes,
    }
    if edges:
        entry["buckets"] = bucket_counts([s for s, _ in pairs], edges)
    return entry


def prepare(
    raw_dir: Path,
    out_dir: Path,
    *,
    src: str,
    tgt: str,
    splits: dict[str, str],
    max_train_pairs: int | None = None,
    concat: list[int] = (),
    join: dict | None = None,
    joined_tests: dict[str, list[str]] | None = None,
    bucket_edges: list[int] | None = None,
) -> dict:
    """Write <out_dir>/<split>.<lang> for every split, the joined test sets, and manifest.json.

    `splits` maps our split name (train, valid, test_*) to the corpus file stem (train, val, ...).
    `join` = {"k": [1, ..., 6], "weights": None or [...], "seed": 0}: the train and valid examples
    join k consecutive pairs (see group_sizes); every pair is used once, so an epoch holds the same
    tokens as without joining. `joined_tests` = {name: [stem, ...]}: a test set made by
    join_to_lengths from the pairs of those corpus files, in order, aimed at `bucket_edges`.
    `concat` (older) adds '<test>.concat<k>' joining every k consecutive test pairs.
    The manifest records per split: `pairs` (sentence pairs it holds), `examples` (lines: joined
    inputs), source length statistics and, with `bucket_edges`, examples per source-length bucket
    (labelled as the scores table labels them), and the sha256 of every file.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    edges = list(bucket_edges) if bucket_edges else None
    manifest: dict = {"source": src, "target": tgt, "splits": {}, "inputs": {}}
    if edges:
        manifest["bucket_edges"] = edges
    if join:
        manifest["join"] = {
            "k": list(join["k"]),
            "weights": join.get("weights"),
            "seed": join.get("seed", 0),
        }

    def read(stem: str) -> tuple[list[tuple[str, str]], int]:
        src_path, tgt_path = raw_dir / f"{stem}.{src}.gz", raw_dir / f"{stem}.{tgt}.gz"
        manifest["inputs"].update({p.name: sha256_of(p) for p in (src_path, tgt_path)})
        return read_pairs(src_path, tgt_path)

    for split, stem in splits.items():
        pairs, dropped = read(stem)
        corpus_pairs = len(pairs)
        if split == "train" and max_train_pairs:
            pairs = pairs[:max_train_pairs]
        extra = {"corpus_pairs": corpus_pairs, "dropped_empty": dropped}
        if join and split in ("train", "valid"):
            sizes = group_sizes(
                len(pairs), list(join["k"]), join.get("weights"), join.get("seed", 0)
            )
            extra.update(
                pairs=len(pairs), groups={str(k): sizes.count(k) for k in sorted(set(sizes))}
            )
            pairs = join_groups(pairs, sizes)
        manifest["splits"][split] = write_split(pairs, out_dir / split, src, tgt, edges)
        manifest["splits"][split].update(extra)
        if split.startswith("test"):
            for k in concat:
                name = f"{split}.concat{k}"
                joined = concatenate_consecutive(pairs, k)
                manifest["splits"][name] = write_split(joined, out_dir / name, src, tgt, edges)
                manifest["splits"][name]["pairs"] = k * len(joined)
    for name, stems in (joined_tests or {}).items():
        if not edges:
            raise ValueError(f"joined test set {name!r} needs bucket_edges to aim at")
        pairs = [pair for stem in stems for pair in read(stem)[0]]
        manifest["splits"][name] = write_split(
            join_to_lengths(pairs, edges), out_dir / name, src, tgt, edges
        )
        manifest["splits"][name].update(pairs=len(pairs), joined_from=list(stems))
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def read_day_archive(archive: Path, src: str, tgt: str) -> dict[str, list[tuple[str, str]]]:
    """{day: aligned non-empty pairs} of a Europarl-style archive.

    The archive (tar, gzipped or not) holds <pair>/<lang>/ep-YY-MM-DD.al: one file per sitting
    day and language, line i of one language aligned with line i of the other. The text is
    ISO-8859-1 (Europarl's release encoding); lines are normalised like every other corpus.
    """
    texts: dict[tuple[str, str], list[str]] = {}
    try:
        with tarfile.open(archive) as tar:
            for member in tar:
                parts = Path(member.name).parts
                if not member.isfile() or len(parts) < 2 or not parts[-1].endswith(".al"):
                    continue
                lang, day = parts[-2], parts[-1][: -len(".al")]
                if lang in (src, tgt):
                    raw = tar.extractfile(member).read().decode("latin-1")
                    texts[(lang, day)] = [normalise(line) for line in raw.splitlines()]
    except (OSError, EOFError, tarfile.TarError) as error:
        raise ValueError(f"cannot read {archive}: {error}") from error
    days = sorted({day for _, day in texts}, key=day_order)
    pairs = {}
    for day in days:
        if (src, day) not in texts or (tgt, day) not in texts:
            raise ValueError(f"{archive}: day {day} lacks its {src} or {tgt} file")
        src_lines, tgt_lines = texts[(src, day)], texts[(tgt, day)]
        if len(src_lines) != len(tgt_lines):
            raise ValueError(
                f"{archive}: day {day} has {len(src_lines)} {src} lines but "
                f"{len(tgt_lines)} {tgt} lines"
            )
        pairs[day] = [(s, t) for s, t in zip(src_lines, tgt_lines, strict=True) if s and t]
    if not pairs:
        raise ValueError(f"{archive} holds no <{src}|{tgt}>/<day>.al files")
    return pairs


def day_order(day: str) -> str:
    """Chronological sort key of 'ep-YY-MM-DD' (1996-2011 Europarl): 'ep-99-..' < 'ep-00-..'."""
    parts = day.split("-")
    if len(parts) >= 2 and len(parts[1]) == 2 and parts[1].isdigit():
        century = "19" if parts[1] >= "50" else "20"
        return "-".join([parts[0], century + parts[1], *parts[2:]])
    return day


def assign_days(days: list[str], splits: dict[str, str]) -> dict[str, list[str]]:
    """Split name -> the whole days it holds.

    Each split's value is one or more glob patterns over day names joined by '+'
    ('ep-01-12-*+ep-01-11-2*'); the value `rest` takes every day no other split matched, so
    held-out days never leak into training. A day matched by two splits, or a split that
    matches no day, is an error.
    """
    chosen: dict[str, list[str]] = {}
    owner: dict[str, str] = {}
    for split, patterns in splits.items():
        if patterns == "rest":
            continue
        matched = [d for d in days if any(fnmatch.fnmatchcase(d, p) for p in patterns.split("+"))]
        if not matched:
            raise ValueError(f"split {split}: {patterns!r} matches no day of the archive")
        for day in matched:
            if day in owner:
                raise ValueError(f"day {day} is in both {owner[day]} and {split}")
            owner[day] = split
        chosen[split] = matched
    for split, patterns in splits.items():
        if patterns == "rest":
            chosen[split] = [d for d in days if d not in owner]
    return {split: chosen[split] for split in splits}


def prepare_days(
    archive: Path,
    out_dir: Path,
    *,
    src: str,
    tgt: str,
    splits: dict[str, str],
    max_train_pairs: int | None = None,
    bucket_edges: list[int] | None = None,
) -> dict:
    """Like `prepare`, for a corpus of sitting days (Europarl): whole days per split."""
    out_dir.mkdir(parents=True, exist_ok=True)
    edges = list(bucket_edges) if bucket_edges else None
    by_day = read_day_archive(archive, src, tgt)
    manifest: dict = {
        "source": src,
        "target": tgt,
        "splits": {},
        "inputs": {archive.name: sha256_of(archive)},
    }
    if edges:
        manifest["bucket_edges"] = edges
    for split, days in assign_days(list(by_day), splits).items():
        pairs = [pair for day in days for pair in by_day[day]]
        corpus_pairs = len(pairs)
        if split == "train" and max_train_pairs:
            pairs = pairs[:max_train_pairs]
        manifest["splits"][split] = write_split(pairs, out_dir / split, src, tgt, edges)
        manifest["splits"][split].update(
            corpus_pairs=corpus_pairs, days=len(days), first_day=days[0], last_day=days[-1]
        )
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def key_values(items: list[str]) -> dict[str, str]:
    """['train=train', 'valid=val'] -> {'train': 'train', 'valid': 'val'}."""
    mapping = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {item!r}")
        mapping[key] = value
    return mapping


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--raw-dir", type=Path, help="directory of <stem>.<lang>.gz files")
    source.add_argument(
        "--archive",
        type=Path,
        help="a tar of <pair>/<lang>/<day>.al files (Europarl); --splits then "
        "maps a split to day patterns joined by '+', or `rest`",
    )
    parser.add_argument("--out-dir", required=True, type=Path)
    parser.add_argument("--src", required=True)
    parser.add_argument("--tgt", required=True)
    parser.add_argument(
        "--splits",
        required=True,
        nargs="+",
        metavar="SPLIT=STEM",
        help="our split name = corpus file stem, e.g. train=train valid=val",
    )
    parser.add_argument("--max-train-pairs", type=int, default=None)
    parser.add_argument("--concat", type=int, nargs="*", default=[])
    parser.add_argument(
        "--join-k",
        type=int,
        nargs="*",
        default=[],
        help="train/valid examples join k consecutive pairs, k drawn from these",
    )
    parser.add_argument(
        "--join-weights",
        type=float,
        nargs="*",
        default=None,
        help="probabilities of --join-k (default 1/k: equal tokens per k)",
    )
    parser.add_argument("--join-seed", type=int, default=0)
    parser.add_argument(
        "--joined-test",
        nargs="*",
        default=[],
        metavar="NAME=STEM+STEM",
        help="a test set joining these corpus files' pairs up to every bucket",
    )
    parser.add_argument("--bucket-edges", type=int, nargs="*", default=None)
    args = parser.parse_args()
    join = (
        {"k": args.join_k, "weights": args.join_weights or None, "seed": args.join_seed}
        if args.join_k
        else None
    )
    common = {
        "src": args.src,
        "tgt": args.tgt,
        "splits": key_values(args.splits),
        "max_train_pairs": args.max_train_pairs,
        "bucket_edges": args.bucket_edges,
    }
    if args.archive:
        manifest = prepare_days(args.archive, args.out_dir, **common)
    else:
        joined_tests = {k: v.split("+") for k, v in key_values(args.joined_test).items()}
        manifest = prepare(
            args.raw_dir,
            args.out_dir,
            concat=args.concat,
            join=join,
            joined_tests=joined_tests,
            **common,
        )
    print(json.dumps({k: v["examples"] for k, v in manifest["splits"].items()}))


if __name__ == "__main__":
    main()
