"""Sweep families as facts: the variants that change one group of settings of a base model
(report.families), with the base model itself, and the paired comparisons among them.

A family's table has one row per variant; its contrasts are the configured paired comparisons
between two of its variants, described by what differs ("scaled $-$ unscaled at $d_k = 16$").
"""

from __future__ import annotations

import pandas as pd

from ..families import family_keys
from ..labels import axis_label, setting_label, value_text
from ..latex import Tex
from ..study import Study
from . import tables

DEFAULT = "default"  # a setting the run does not record (its model's default)


def setting(row, key: str) -> str:
    """A variant's value of `key`: its sweep's, else the value it ran with, else 'default'."""
    if key in row["sweep"]:
        return value_text(row["sweep"][key])
    if key in row and not pd.isna(row[key]):
        return value_text(row[key])
    return DEFAULT


def members(study: Study, keys: list[str]) -> pd.DataFrame:
    """The variants whose sweep changes only `keys` (at least one), and their base models: one
    row per variant (tables.variants' columns) plus is_base, x (the first key's value), series
    (the others', and the base model where several share the family) and max_weight (the
    trained-model saturation, seeds pooled; NaN when not analysed)."""
    variants = tables.variants(study)
    if variants.empty or not keys:
        return pd.DataFrame()
    swept = variants[[bool(s) and set(s) <= set(keys) for s in variants["sweep"]]]
    if swept.empty:
        return pd.DataFrame()
    bases = variants[(variants["sweep_key"] == "") & variants["variant"].isin(swept["base_model"])]
    rows = pd.concat([bases, swept]).copy()
    several = rows["base_model"].nunique() > 1
    runs = tables.runs(study)
    rows["is_base"] = rows["sweep_key"] == ""
    rows["x"] = [setting(row, keys[0]) for _, row in rows.iterrows()]
    rows["series"] = [series(row, keys, several) for _, row in rows.iterrows()]
    rows["max_weight"] = [
        tables.seed_mean(study, runs.loc[runs["variant"] == v, "run"], "max_weight_mean")
        for v in rows["variant"]
    ]
    rows["setting"] = [
        Tex("base model") if b else s
        for b, s in zip(rows["is_base"], rows["sweep_label"], strict=True)
    ]
    return rows.sort_values(
        ["base_model", "is_base", "x"], ascending=[True, False, True], key=x_order
    ).reset_index(drop=True)


def series(row, keys: list[str], several: bool) -> Tex:
    """A member's line in the family's figure: the settings of the other keys it was trained
    with, led by its base model where several share the family."""
    parts = [row["base_label"]] * several + [
        setting_label(k, setting(row, k)) for k in keys[1:] if setting(row, k) != DEFAULT
    ]
    return Tex(", ".join(parts) or row["base_label"])


def x_order(column: pd.Series) -> pd.Series:
    """Sort key: numbers by value, then words (a column of another kind sorts as it is)."""
    if column.name != "x":
        return column
    return column.map(lambda v: (0, float(v), "") if is_number(v) else (1, 0.0, v))


def is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def describe(a: pd.Series, b: pd.Series, keys: list[str], grid: bool, several: bool) -> dict:
    """What a paired comparison of two members changes: each side (`a`, `b`: '1 head', or a
    base model's label where the two differ in it), the `change` from a to b ('scaled $-$
    unscaled', '8 heads $-$ 1 head', 'base model $-$ trained on $\\leq 20$ words'), where a grid
    holds the rest equal (`at`: '$d_k = 16$', or ''), and all of it in one phrase (`what`), led
    by the base model where the family has several."""
    differ = [k for k in keys if setting(a, k) != setting(b, k)]
    same = [k for k in keys if k not in differ and setting(a, k) != DEFAULT] if grid else []
    across = a["base_model"] != b["base_model"]

    def side(row) -> str:
        changed = [
            setting_label(k, setting(row, k))
            for k in differ
            if setting(row, k) != DEFAULT and (not across or k in row["sweep"])
        ]
        if across:
            return ", ".join([row["base_label"], *changed])
        return ", ".join(changed) or "base model"

    change = f"{side(b)} $-$ {side(a)}"
    at = ", ".join(setting_label(k, setting(a, k)) for k in same)
    what = f"{a['base_label']}: " * (several and not across) + change + (f" at {at}" if at else "")
    return {
        "a": Tex(side(a)),
        "b": Tex(side(b)),
        "change": Tex(change),
        "at": Tex(at),
        "what": Tex(what),
    }


def contrasts(study: Study, rows: pd.DataFrame, keys: list[str]) -> list[dict]:
    """The configured paired comparisons (whole test set, BLEU) between two members of a
    family, in the order of the first key: what they change, delta = b - a, interval, p."""
    table = tables.comparisons(study)
    if rows.empty or table.empty:
        return []
    by_variant, several = rows.set_index("variant"), rows["base_model"].nunique() > 1
    grid = any(len(sweep) > 1 for sweep in rows["sweep"])
    found = []
    for _, comparison in table.iterrows():
        a, b = comparison["system_a"], comparison["system_b"]
        if a in by_variant.index and b in by_variant.index:
            found.append(
                {
                    "comparison": comparison["comparison"],
                    **describe(by_variant.loc[a], by_variant.loc[b], keys, grid, several),
                    "x": by_variant.loc[b, "x"],
                    "test_set": comparison.get("test_set", ""),
                    "delta": comparison["delta"],
                    "ci_low": comparison["ci_low"],
                    "ci_high": comparison["ci_high"],
                    "p_value": comparison.get("p_value", float("nan")),
                    "seeds": comparison.get("seeds", float("nan")),
                }
            )
    return sorted(found, key=lambda c: x_order(pd.Series([c["x"]], name="x")).iloc[0])


def family(study: Study, name: str) -> dict:
    """Everything a section says about one family: its keys, base models, rows, contrasts, and
    whether the rows carry a trained-model saturation (max_weight)."""
    keys = family_keys(name, {k for s in tables.runs(study).get("sweep", []) for k in s})
    rows = members(study, keys)
    return {
        "name": name,
        "swept": keys,
        "axes": [Tex(axis_label(key)) for key in keys],
        "rows": rows.to_dict("records"),
        "bases": list(dict.fromkeys(rows["base_label"])) if len(rows) else [],
        "contrasts": contrasts(study, rows, keys),
        "saturation": bool(len(rows) and rows["max_weight"].notna().any()),
        "figure": f"sweep_{name}",
    }
