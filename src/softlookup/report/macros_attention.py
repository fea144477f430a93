"""LaTeX macros for the paper's attention section, from every run's attention CSV.

For each run with attention maps, the pooled cross attention ("Cross"; for the Transformer all its
decoder layers and heads), the last decoder layer's cross attention ("LastCross") and
self-attention ("LastSelf") give one macro per quantity, named Attn<Map><Quantity><Run> with the
run id in letters: \\AttnCrossEntropyMeanGruAdditiveSOne. The spread of the last cross layer's
heads gives \\AttnLastCrossHeadEntropyMin<Run> and ...Max<Run>. Shared by all runs:
\\AttnSentences, \\AttnTestSet.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pandas as pd

from ..analysis.attention_maps import CSV_COLUMNS
from .latex import escape, macro_name

QUANTITY_NAMES = {
    "entropy_mean": "EntropyMean",
    "entropy_median": "EntropyMedian",
    "entropy_q25": "EntropyLowerQuartile",
    "entropy_q75": "EntropyUpperQuartile",
    "max_weight_mean": "MaxWeight",
    "argmax_on_eos_share": "EosShare",
    "argmax_on_bos_share": "BosShare",
    "argmax_on_top_key_share": "TopKeyShare",
    "chance_share": "ChanceShare",
}
DECODER_MAP = re.compile(r"dec\.(\d+)\.(cross|self)$")


def run_letters(run: str) -> str:
    """'gru_additive-s1' -> 'GruAdditiveSOne': each part capitalised, digits spelled out."""
    return macro_name("".join(part[:1].upper() + part[1:] for part in re.split(r"[^\w]|_", run)))


def map_names(maps: list[str]) -> dict[str, str]:
    """CSV map -> macro map name: "cross" -> Cross, the last decoder layer's -> LastCross/LastSelf."""
    names = {"Cross": "cross"} if "cross" in maps else {}
    layers = [int(m[1]) for m in map(DECODER_MAP.match, maps) if m]
    if layers:
        last = max(layers)
        names |= {f"Last{kind.title()}": f"dec.{last}.{kind}" for kind in ("cross", "self")}
    return {csv_map: name for name, csv_map in names.items() if csv_map in maps}


def run_macros(table: pd.DataFrame) -> dict[str, str]:
    """One run's CSV -> macro name: text (empty for a run without attention maps)."""
    run = run_letters(table.run.iloc[0])
    values = table.set_index(["map", "quantity"]).value
    names = map_names(sorted(set(table["map"])))
    macros = {}
    for csv_map, name in names.items():
        for quantity, stem in QUANTITY_NAMES.items():
            if (csv_map, quantity) in values.index:
                macros[f"Attn{name}{stem}{run}"] = f"{values[csv_map, quantity]:.3f}"
    last_cross = next((csv_map for csv_map, name in names.items() if name == "LastCross"), None)
    if last_cross is not None:
        is_head = table["map"].str.startswith(f"{last_cross}.h")
        heads = table[is_head & (table.quantity == "entropy_mean")].value
        if len(heads) > 1:
            macros[f"AttnLastCrossHeadEntropyMin{run}"] = f"{heads.min():.3f}"
            macros[f"AttnLastCrossHeadEntropyMax{run}"] = f"{heads.max():.3f}"
    return macros


def attention_macros(tables: list[pd.DataFrame], test_set: str) -> str:
    """Every run's macros, plus the sentence count (the same for every analysed run) and test set."""
    macros = {"AttnTestSet": escape(test_set)}
    counts = set()
    for table in tables:
        macros.update(run_macros(table))
        counts.update(table[table.quantity == "sentences"].value.astype(int))
    if len(counts) > 1:
        raise ValueError(f"attention CSVs disagree on the number of sentences: {sorted(counts)}")
    if counts:
        macros["AttnSentences"] = str(counts.pop())
    body = [rf"\newcommand{{\{name}}}{{{text}}}" for name, text in macros.items()]
    return "% Written by softlookup.report.attention_macros; do not edit.\n" + "\n".join(body) + "\n"


def read_table(path: Path) -> pd.DataFrame:
    table = pd.read_csv(path)
    if list(table.columns) != CSV_COLUMNS or table.empty:
        raise ValueError(f"{path}: expected an attention CSV with columns {CSV_COLUMNS}")
    return table


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csvs", nargs="+", required=True, type=Path)
    parser.add_argument("--test-set", required=True, help="the test set the CSVs were measured on")
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args(argv)
    text = attention_macros([read_table(path) for path in args.csvs], args.test_set)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"{text.count(chr(10)) - 1} macros -> {args.out}")


if __name__ == "__main__":
    main()
