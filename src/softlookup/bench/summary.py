"""The kernel benchmark at a glance: TFLOP/s per row and the ratios to the library kernels.

    python -m softlookup.bench.summary attention_cuda.csv --out summary.csv

One row per measured (head_dim, causal, seq_len, pass, backend) of an attention CSV written by
`softlookup.bench.kernels`: time (median, p20, p80 and the sample count where the CSV has them),
our kernels' tiles, TFLOP/s, the TFLOP/s of torch's flash SDPA (FlashAttention-2, `sdpa_tflops`)
and of torch's cuDNN attention (`cudnn_tflops`) on the same setting, `ratio_to_sdpa` and `ratio_to_best_library`
(TFLOP/s over the faster of the two library kernels, `fastest_library`; > 1: faster than both),
the forward and gradient errors. `ratio_to_best_library` is, per row, what the claims ledger
averages as "fastest library kernel / our kernel time" (D8). The paper's kernel section reads this
file (benchmarks/gpu/<device>/summary.csv) when it is present. Also prints the table.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

KEYS = ["head_dim", "causal", "seq_len", "pass"]
LIBRARY_BACKENDS = {"torch_sdpa": "sdpa_tflops", "torch_cudnn": "cudnn_tflops"}
COLUMNS = [
    "device_name",
    "dtype",
    *KEYS,
    "backend",
    "kernel",
    "time_ms",
    "time_p20_ms",
    "time_p80_ms",
    "samples",
    "tiles",
    "tflops",
    "sdpa_tflops",
    "cudnn_tflops",
    "fastest_library",
    "ratio_to_sdpa",
    "ratio_to_best_library",
    "max_abs_err",
    "max_abs_grad_err",
]


def library_throughput(ok: pd.DataFrame) -> pd.DataFrame:
    """Per setting (KEYS): each library kernel's TFLOP/s (NaN where it has no row) and the
    faster one's backend in `fastest_library` (NaN where neither has one)."""
    wide = (
        ok[ok.backend.isin(list(LIBRARY_BACKENDS))]
        .pivot_table(index=KEYS, columns="backend", values="tflops", aggfunc="first")
        .reindex(columns=list(LIBRARY_BACKENDS))
    )
    fastest = wide.dropna(how="all").idxmax(axis=1).reindex(wide.index)
    table = wide.rename(columns=LIBRARY_BACKENDS).assign(fastest_library=fastest)
    return table.rename_axis(columns=None).reset_index()


def summarize(rows: pd.DataFrame) -> pd.DataFrame:
    ok = rows[rows.status == "ok"]
    table = ok.merge(library_throughput(ok), on=KEYS, how="left")
    table["ratio_to_sdpa"] = table.tflops / table.sdpa_tflops
    best = table[list(LIBRARY_BACKENDS.values())].max(axis=1)  # NaN only where neither ran
    table["ratio_to_best_library"] = table.tflops / best
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
        shown = [
            "head_dim",
            "causal",
            "seq_len",
            "pass",
            "backend",
            "tflops",
            "ratio_to_sdpa",
            "ratio_to_best_library",
        ]
        print(table[shown].round(3).to_string(index=False))
        print("max abs error vs fp32 (forward, gradients) by backend:")
        print(table.groupby("backend")[["max_abs_err", "max_abs_grad_err"]].max().to_string())


if __name__ == "__main__":
    main()
