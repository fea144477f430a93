"""The attention analysis of trained runs (results/analysis/attention_<run>.csv) for the paper.

Each run's CSV (run, map, quantity, value) holds per-map statistics: "cross" pools every cross
attention of the run (for a Transformer all decoder layers and heads), "dec.<i>.cross" and
"dec.<i>.self" one decoder layer, "dec.<i>.cross.h<j>" one head. `summary` picks the numbers the
paper quotes; report.sections words them.
"""

from __future__ import annotations

import re

import pandas as pd

CSV_COLUMNS = ["run", "map", "quantity", "value"]
QUANTITIES = [
    "entropy_mean",
    "entropy_q25",
    "entropy_q75",
    "max_weight_mean",
    "argmax_on_eos_share",
    "argmax_on_bos_share",
    "argmax_on_top_key_share",
    "chance_share",
]
DECODER_MAP = re.compile(r"dec\.(\d+)\.(cross|self)$")


def map_names(maps: list[str]) -> dict[str, str]:
    """CSV map -> role: "cross" -> Cross, the last decoder layer's -> LastCross / LastSelf."""
    names = {"Cross": "cross"} if "cross" in maps else {}
    layers = [int(m[1]) for m in map(DECODER_MAP.match, maps) if m]
    if layers:
        last = max(layers)
        names |= {f"Last{kind.title()}": f"dec.{last}.{kind}" for kind in ("cross", "self")}
    return {csv_map: name for name, csv_map in names.items() if csv_map in maps}


def summary(table: pd.DataFrame) -> dict[str, dict[str, float]]:
    """role -> {quantity: value} for one run, plus "LastCrossHeads": entropy of each last-layer
    head; {} for a run without attention maps or a table of another shape."""
    if table.empty or not set(CSV_COLUMNS) <= set(table):
        return {}
    values = table.set_index(["map", "quantity"])["value"]
    found: dict[str, dict[str, float]] = {}
    for csv_map, name in map_names(sorted(set(table["map"]))).items():
        found[name] = {
            q: float(values[csv_map, q]) for q in QUANTITIES if (csv_map, q) in values.index
        }
        if name == "LastCross":
            heads = table[
                table["map"].str.startswith(f"{csv_map}.h") & (table["quantity"] == "entropy_mean")
            ]["value"]
            if len(heads) > 1:
                found["LastCrossHeads"] = {"min": float(heads.min()), "max": float(heads.max())}
    return found
