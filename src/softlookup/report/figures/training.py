"""Training curves: training and validation loss per epoch of every run (from its log.csv).

python -m softlookup.report.figures.training --results results --out results/figures/training.pdf
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from .. import study as load_study
from ..study import Study
from . import style


def curves(study: Study) -> pd.DataFrame:
    """Long table: run, variant, epoch, split (train/valid), loss; runs without a log are left
    out."""
    rows = []
    for name, run in study.runs.items():
        log = run.log
        if log.empty or "epoch" not in log:
            continue
        for column, split in (("train_loss", "train"), ("val_loss", "valid")):
            if column in log:
                rows.append(
                    pd.DataFrame(
                        {
                            "run": name,
                            "variant": run.variant,
                            "epoch": log["epoch"],
                            "split": split,
                            "loss": pd.to_numeric(log[column], errors="coerce"),
                        }
                    )
                )
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def training_figure(study: Study):
    table = curves(study)
    fig, axes = style.subplots(2, height=2.8, sharey=True)
    if table.empty:
        style.note(axes[0], "no run wrote a training log")
        style.note(axes[1], "")
        return fig
    # one line per variant, the mean over its seeds (seeds differ by far less than variants)
    mean = table.groupby(["variant", "split", "epoch"], as_index=False)["loss"].mean()
    styles = style.series_styles(mean["variant"])
    for ax, split in zip(axes, ("train", "valid")):
        for variant, rows in mean[mean["split"] == split].groupby("variant"):
            ax.plot(rows["epoch"], rows["loss"], markersize=3, label=variant, **styles[variant])
        ax.set_title(f"{split} loss")
        ax.set_xlabel("epoch")
        ax.set_xticks(sorted(table["epoch"].unique()))
    axes[0].set_ylabel("cross-entropy (nats per token)")
    if len(styles) <= 8:
        axes[1].legend(fontsize=5, loc="upper right")
    else:  # many variants: one legend below both panels
        style.legend_below(fig, axes[1], ncol=3, fontsize=5)
    return fig


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--runs", nargs="*", help="the config's runs (default: all on disk)")
    args = parser.parse_args(argv)
    style.setup()
    print(style.save(training_figure(load_study.load(args.results, runs=args.runs)), args.out))


if __name__ == "__main__":
    main()
