"""The kernel benchmark at a glance: TFLOP/s per row and the ratio to torch's flash SDPA.

    python -m softlookup.bench.summary attention_cuda.csv --out summary.csv

One row per measured (head_dim, causal, seq_len, pass, backend) of an attention CSV written by
`softlookup.bench.kernels`: time, TFLOP/s, the SDPA row's TFLOP/s and `ratio_to_sdpa` (> 1: faster
than torch's SDPA), the forward and gradient errors. The paper's kernel section reads this file
(benchmarks/gpu/<device>/summary.csv) when it is present. Also prints the table.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

KEYS = ["head_dim", "causal", "seq_len", "pass"]
COLUMNS = [
    "device_name", "dtype", *KEYS, "backend", "kernel", "time_ms", "tflops", "sdpa_tflops",
    "ratio_to_sdpa", "max_abs_err", "max_abs_grad_err",
]  # fmt: skip


def summarize(rows: pd.DataFrame) -> pd.DataFrame:
    ok = rows[rows.status == "ok"]
    sdpa = ok[ok.backend == "torch_sdpa"][[*KEYS, "tflops"]].rename(
        columns={"tflops": "sdpa_tflops"}
    )
    table = ok.merge(sdpa, on=KEYS, how="left")
    table["ratio_to_sdpa"] = table.tflops / table.sdpa_tflops
    order = {"forward_backward": 0, "forward": 1, "backward": 2}
    table = table.assign(_pass=table["pass"].map(order)).sort_values(
        ["head_dim", "causal", "seq_len", "_pass", "backend"],
        ascending=[False, True, False, True, True],
    )
    return table.reindex(columns=COLUMNS)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m softlookup.bench.summary", description=__doc__)
    p.add_argument("attention_csv", type=Path)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    table = summarize(pd.read_csv(args.attention_csv))
    table.to_csv(args.out, index=False)
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        shown = ["head_dim", "causal", "seq_len", "pass", "backend", "tflops", "ratio_to_sdpa"]
        print(table[shown].round(3).to_string(index=False))
        print("max abs error vs fp32 (forward, gradients) by backend:")
        print(table.groupby("backend")[["max_abs_err", "max_abs_grad_err"]].max().to_string())


if __name__ == "__main__":
    main()
