"""Numbers -> LaTeX: macros for every number the prose quotes, and the results table."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pandas as pd

DIGIT_WORDS = ["Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine"]


def macro_name(*parts: str) -> str:
    """'bleu', 'gru_additive' -> 'BleuGruAdditive' (LaTeX macro names take letters only)."""
    words = re.split(r"[^A-Za-z0-9]+", " ".join(parts))
    name = "".join(w[:1].upper() + w[1:] for w in words if w)
    return re.sub(r"\d", lambda m: DIGIT_WORDS[int(m.group())], name)


def escape(text: str) -> str:
    return re.sub(r"([_&%$#{}])", r"\\\1", str(text))


def macro(name: str, value) -> str:
    return f"\\newcommand{{\\{name}}}{{{value}}}\n"


def data_macros(manifest: dict, main_test_set: str) -> str:
    lines = [
        macro(macro_name("pairs", split), f"{info['pairs']:,}")
        for split, info in manifest["splits"].items()
    ]
    lines.append(macro("PairsMainTest", f"{manifest['splits'][main_test_set]['pairs']:,}"))
    train_words = manifest["splits"]["train"]["source_words"]
    lines.append(macro("TrainSourceWordsMean", f"{train_words['mean']:.1f}"))
    lines.append(macro("TrainSourceWordsMax", train_words["max"]))
    return "".join(lines)


def run_summary(scores: pd.DataFrame, test_set: str) -> pd.DataFrame:
    """One row per variant: BLEU (+95% CI) and chrF on `test_set`, training cost, status."""
    scores = scores.assign(variant=scores.run_id.str.replace(r"-s\d+$", "", regex=True))
    overall = scores[(scores.test_set == test_set) & (scores.bucket == "all")]
    training = scores[scores.test_set == "train"]
    wide = pd.concat(
        [
            overall.pivot_table(
                index="variant", columns="metric", values=["value", "ci_low", "ci_high"]
            ),
            training.pivot_table(index="variant", columns="metric", values="value").rename(
                columns=lambda c: ("value", c)
            ),
        ],
        axis=1,
    )
    wide.columns = [f"{metric}_{stat}".replace("_value", "") for stat, metric in wide.columns]
    status = scores.groupby("variant").status.agg(lambda s: ",".join(sorted(set(s))))
    seeds = scores.groupby("variant").seed.nunique().rename("seeds")
    return wide.join(status).join(seeds).reset_index()


def score_macros(summary: pd.DataFrame) -> str:
    lines = []
    for row in summary.itertuples():
        for stat, fmt in (
            ("bleu", "{:.1f}"),
            ("bleu_ci_low", "{:.1f}"),
            ("bleu_ci_high", "{:.1f}"),
            ("chrf", "{:.1f}"),
            ("train_wall_s", "{:.0f}"),
            ("train_tokens_per_s", "{:,.0f}"),
            ("parameters", "{:,.0f}"),
        ):
            value = getattr(row, stat, float("nan"))
            lines.append(
                macro(macro_name(stat, row.variant), "n/a" if pd.isna(value) else fmt.format(value))
            )
    return "".join(lines)


def results_table(summary: pd.DataFrame, test_set: str) -> str:
    body = []
    for row in summary.itertuples():
        if row.status != "ok":
            bleu = f"\\emph{{{escape(row.status)}}}"
            chrf = "--"
        else:
            bleu = f"{row.bleu:.1f} [{row.bleu_ci_low:.1f}, {row.bleu_ci_high:.1f}]"
            chrf = f"{row.chrf:.1f}"
        body.append(
            f"{escape(row.variant)} & {bleu} & {chrf} & {row.parameters:,.0f} & "
            f"{row.train_wall_s:.0f} & {row.train_tokens_per_s:,.0f} & {row.seeds} \\\\"
        )
    return "\n".join(
        [
            "\\begin{tabular}{lrrrrrr}",
            "\\toprule",
            "run & BLEU [95\\% CI] & chrF & parameters & train s & tokens/s & seeds \\\\",
            "\\midrule",
            *body,
            "\\bottomrule",
            "\\end{tabular}",
            f"% test set: {escape(test_set)}",
            "",
        ]
    )


def environment_macros(meta: dict) -> str:
    env = meta["environment"]
    return "".join(
        macro(macro_name("env", key), escape(env[key]))
        for key in ("python", "torch", "triton", "sacrebleu", "device")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scores", required=True, type=Path)
    parser.add_argument("--manifest", required=True, type=Path)
    parser.add_argument("--meta", required=True, type=Path, help="one run's meta.json")
    parser.add_argument("--test-set", required=True)
    parser.add_argument("--out-macros", required=True, type=Path)
    parser.add_argument("--out-table", required=True, type=Path)
    args = parser.parse_args()
    scores = pd.read_csv(args.scores)
    summary = run_summary(scores, args.test_set)
    bleu = scores[(scores.metric == "bleu") & scores.signature.notna()]
    args.out_macros.parent.mkdir(parents=True, exist_ok=True)
    args.out_macros.write_text(
        data_macros(json.loads(args.manifest.read_text()), args.test_set)
        + score_macros(summary)
        + environment_macros(json.loads(args.meta.read_text()))
        + macro("MainTestSet", escape(args.test_set))
        + macro("BleuSignature", f"\\path{{{bleu.signature.iloc[0]}}}" if len(bleu) else "n/a")
    )
    args.out_table.write_text(results_table(summary, args.test_set))


if __name__ == "__main__":
    main()
