"""Facts of the cost of attention (D6, D7, D8): training-step time against sentence length,
generation with and without the KV cache, and the attention kernels' time, memory and error,
including GPU rows measured outside the build."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ...claims.checks import crossing
from ..labels import backend_label, device_label
from ..study import Study
from . import claims, quantities, tables


def loglog_slope(x, y) -> float:
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = (x > 0) & (y > 0)
    if keep.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(x[keep]), np.log(y[keep]), 1)[0])


def generation_data(study: Study) -> pd.DataFrame:
    """Long table: device, prefix (new tokens), mode (KV cache / recompute), seconds of the
    last step (the median over the settings timed)."""
    table = tables.bench(study, "generation")
    needed = {"new_tokens", "last_step_cache_s", "last_step_recompute_s"}
    if table.empty or not needed <= set(table):
        return pd.DataFrame()
    long = table.melt(
        id_vars=[c for c in ("device", "new_tokens") if c in table],
        value_vars=["last_step_cache_s", "last_step_recompute_s"],
        var_name="mode",
        value_name="seconds",
    )
    long["mode"] = long["mode"].map(
        {"last_step_cache_s": "KV cache", "last_step_recompute_s": "recompute"}
    )
    keys = [c for c in ("device", "new_tokens", "mode") if c in long]
    return long.groupby(keys, as_index=False)["seconds"].median()


def kernel_data(study: Study) -> pd.DataFrame:
    """Rows of the attention benchmark that ran (status ok), forward and backward where timed,
    with the backend's and the device's names as a reader reads them (series, device_label)."""
    table = tables.bench(study, "attention")
    if table.empty or not {"seq_len", "time_ms", "backend"} <= set(table):
        return pd.DataFrame()
    if "status" in table:
        table = table[table["status"].fillna("ok") == "ok"]
    if "pass" in table and (table["pass"] == "forward_backward").any():
        table = table[table["pass"] == "forward_backward"]
    device = table.get("device", pd.Series("cpu", index=table.index)).astype(str)
    names = table.get("device_name", pd.Series("", index=table.index)).fillna("").astype(str)
    return table.assign(
        series=table["backend"].astype(str).map(backend_label),
        device=device,
        device_label=[device_label(d, n) for d, n in zip(device, names, strict=True)],
    )


def generation_rows(study: Study) -> list[dict]:
    """The longest generation timed on each device: new tokens, speed-up, identical output."""
    table = tables.bench(study, "generation")
    if table.empty or "speedup" not in table:
        return []
    longest = table.sort_values("new_tokens").groupby("device").tail(1)
    return [
        {
            "device": row.get("device", "cpu"),
            "new_tokens": int(row["new_tokens"]),
            "speedup": row["speedup"],
            "identical": str(row.get("identical", "")).lower() == "true",
        }
        for _, row in longest.iterrows()
    ]


def measured_elsewhere(study: Study) -> dict | None:
    """The bench rows of bench.measured: their devices, where and with what they were measured
    (device name, torch, Triton, commit) and the folders they are read from."""
    config = study.config.get("bench", {})
    folders, produced = config.get("measured") or [], set(config.get("devices", []))
    rows = [
        table
        for name, table in study.bench.items()
        if name.rsplit("_", 1)[-1] not in produced and "commit" in table
    ]
    if not folders or not rows:
        return None
    rows = pd.concat(rows)
    sources = rows.drop_duplicates(["device_name", "commit", "torch", "triton"])
    return {
        "devices": sorted(set(rows["device"])),
        "sources": [
            {
                "device_name": r.device_name,
                "torch": r.torch,
                "triton": r.triton,
                "commit": str(r.commit)[:7],
            }
            for r in sources.itertuples()
        ],
        "folders": [f"{folder}/" for folder in folders],
    }


def train_step_ratios(study: Study) -> dict | None:
    """D6's rows as the ledger reads them: the train_step_lengths file of a GPU if there is one,
    else the CPU's; per sentence length, Transformer / GRU (additive) step time of the rows that
    ran; the ratio at the longest length and the crossing (None: not below 1 at the longest)."""
    files = {name: t for name, t in study.bench.items() if name.startswith("train_step_lengths_")}
    gpu = sorted(name for name in files if not name.endswith("_cpu"))
    if not files:
        return None
    table = files[(gpu or sorted(files))[0]]
    ok = table[table["status"] == "ok"]
    steps = ok.pivot_table(index="sentence_tokens", columns="variant", values="time_ms")
    ratios = (steps.get("transformer") / steps.get("gru_additive")).dropna().sort_index()
    if ratios.empty:
        return None
    where = crossing(ratios)
    return {
        "gpu": bool(gpu),
        "device_name": str(ok["device_name"].iloc[0]),
        "batch_tokens": int(ok["batch_tokens"].iloc[0]),
        "longest": int(ratios.index[-1]),
        "ratio": float(ratios.iloc[-1]),
        "crossing": None if np.isinf(where) else int(where),
        "lengths": [int(length) for length in ratios.index],
    }


# a skipped benchmark row's reason (bench/kernels.py) as a reader is told it: by its start
SKIP_REASONS = {
    "Triton runs on CPU only": "our Triton kernels on a CPU, where only a slow interpreter runs them",
    "materialised N x N table": "the materialised attention beyond the length its table may reach",
}


def reader_reason(reason: str) -> str:
    """Why a benchmark row did not run, in words (an unknown reason as it is)."""
    return next(
        (words for start, words in SKIP_REASONS.items() if reason.startswith(start)), reason
    )


def design_tokens(study: Study) -> int | None:
    """The new tokens at which the ledger judges the cache's speed-up (its check's label says
    'at 100 new tokens'); None without that check."""
    check = quantities.quantities(claims.claims(study))["cache_speedup"]
    found = re.search(r"at ([\d,]+) new tokens", check.label) if check else None
    return int(found[1].replace(",", "")) if found else None


def cost(study: Study) -> dict:
    steps = generation_data(study)
    kernels = tables.bench(study, "attention")
    status = kernels.get("status", pd.Series("ok", index=kernels.index)).fillna("ok")
    ok, pending = kernels[status == "ok"], kernels[status != "ok"]
    errors = (
        ok.groupby("backend")["max_abs_err"].max().dropna()
        if {"max_abs_err", "backend"} <= set(ok)
        else pd.Series(dtype=float)
    )
    config = study.config.get("bench", {})
    return {
        "train_steps": train_step_ratios(study),
        "design_tokens": design_tokens(study),
        "generation": generation_rows(study),
        "slopes": (
            {
                mode: loglog_slope(rows["new_tokens"], rows["seconds"])
                for mode, rows in steps.groupby("mode")
            }
            if len(steps) and steps["new_tokens"].nunique() >= 2
            else {}
        ),
        "prefixes": steps["new_tokens"].nunique() if len(steps) else 0,
        "kernels": len(kernels) > 0,
        "errors": errors.to_dict(),
        "seq_lens": (int(ok["seq_len"].min()), int(ok["seq_len"].max()))
        if "seq_len" in ok and len(ok)
        else None,
        "devices": sorted(set(ok["device"])) if "device" in ok else [],
        "pending": len(pending),
        "pending_reasons": "; ".join(
            sorted({reader_reason(str(r)) for r in pending.get("reason", ["unstated"])})
        )[:300],
        "elsewhere": measured_elsewhere(study),
        "gpu": "cuda" in config.get("devices", []) or bool(config.get("measured")),
    }
