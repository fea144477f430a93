"""Compare a build with a reference build, claim by claim and number by number.

Rerun against the committed reference (exit status 1 when a claim's verdict changed):
    python -m softlookup.reference.compare --reference results/reference/config \
        --scores results/tables/scores.csv --comparisons results/tables/comparisons.csv \
        --claims results/claims/claims.csv --out results/compare/compare.csv \
        --report results/compare/compare.md
Two builds of different configs (which verdicts hold across scale; never fails):
    python -m softlookup.reference.compare --across results/claims/claims.csv \
        results/reference/paper/claims.csv --names config paper \
        --out results/compare/across_paper.csv --report results/compare/across_paper.md
Exit status of a comparison written earlier (what `make compare` ends with):
    python -m softlookup.reference.compare --check results/compare/compare.csv

Tolerances, fixed before any comparison is run:
- claims A-C (worked, statistical and counting probes): exact, to 4 significant digits;
- BLEU, chrF and paired deltas: "same" within half a printed digit (0.05), else "within
  tolerance" when the rerun's value lies inside the reference's seed-aware 95% interval (a rerun
  on another CPU kind moves a model the way a new seed does): for a paired delta, the
  reference's own interval (evaluate.compare: seed and sentence components, t on its df); for a
  run's score, the interval of one run of its variant, the run's value +- t(df_v) sqrt(n_v) se_v
  (the variant's seed-mean standard error se_v on df_v over n_v seeds, from the reference's
  comparisons.csv, scaled back to one run). A reference from before seed-aware intervals (no
  `df` columns) falls back to its ci columns, and the tolerance says so. A paired comparison
  whose interval changes side of zero has "moved" whatever its size; only a changed claim
  verdict fails the rerun;
- timings (claims D6-D8): speed-up ratios within a factor of TIMING_FACTOR, as machines of one
  kind differ in speed up to about 2x; log-log slopes of time against length within
  SLOPE_TOLERANCE (the slope tolerance of config/claims.yaml).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import pandas as pd

from .. import intervals
from ..rundir import variant_of
from ..tables import final_point

COLUMNS = ["section", "item", "reference", "current", "status", "tolerance"]
STATUSES = ("same", "within tolerance", "moved", "changed", "missing", "new")
EXACT_RTOL = 1e-4
PRINTED_HALF_DIGIT = 0.05
TIMING_FACTOR = 2.0
SLOPE_TOLERANCE = 0.25
TIMING_CLAIMS = {"D6", "D7", "D8"}
SCORE_METRICS = ("bleu", "chrf")


def number(value: object) -> float:
    """A float from a CSV cell, NaN for blanks and text."""
    try:
        result = float(value)
    except (TypeError, ValueError):
        return math.nan
    return result


def judge_number(ref: float, cur: float, low: float = math.nan, high: float = math.nan) -> str:
    """same / within tolerance / moved for a metric with an optional reference interval."""
    if math.isnan(ref) and math.isnan(cur):
        return "same"
    if math.isnan(cur):
        return "missing"
    if math.isnan(ref):
        return "new"
    if abs(cur - ref) < PRINTED_HALF_DIGIT:
        return "same"
    if not math.isnan(low) and low <= cur <= high:
        return "within tolerance"
    return "moved"


def judge_claim_value(
    claim_id: str, ref: float, cur: float, low: float, high: float
) -> tuple[str, str]:
    """(status, tolerance) of a claim's headline measurement."""
    if math.isnan(ref) or math.isnan(cur):
        return (
            "same"
            if math.isnan(ref) and math.isnan(cur)
            else "missing"
            if math.isnan(cur)
            else "new"
        ), "-"
    if claim_id[:1] in "ABC":
        same = math.isclose(ref, cur, rel_tol=EXACT_RTOL, abs_tol=1e-9)
        return ("same" if same else "moved"), "exact (4 significant digits)"
    if claim_id in TIMING_CLAIMS:
        tolerance = f"ratio within {TIMING_FACTOR:g}x or slope within {SLOPE_TOLERANCE:g}"
        if math.isclose(ref, cur, rel_tol=EXACT_RTOL):
            return "same", tolerance
        ratio = cur / ref if ref else math.inf
        inside = 1 / TIMING_FACTOR <= ratio <= TIMING_FACTOR or abs(cur - ref) <= SLOPE_TOLERANCE
        return ("within tolerance" if inside else "moved"), tolerance
    return judge_number(ref, cur, low, high), "reference 95% interval"


def compare_claims(ref: pd.DataFrame, cur: pd.DataFrame) -> list[dict]:
    rows = []
    ref, cur = ref.set_index("id"), cur.set_index("id")
    for claim_id in sorted(set(ref.index) | set(cur.index)):
        if claim_id not in cur.index or claim_id not in ref.index:
            status = "missing" if claim_id not in cur.index else "new"
            rows.append(
                {
                    "section": "verdict",
                    "item": claim_id,
                    "status": status,
                    "tolerance": "must match",
                    "reference": ref.verdict.get(claim_id, ""),
                    "current": cur.verdict.get(claim_id, ""),
                }
            )
            continue
        a, b = ref.loc[claim_id], cur.loc[claim_id]
        rows.append(
            {
                "section": "verdict",
                "item": claim_id,
                "reference": a.verdict,
                "current": b.verdict,
                "tolerance": "must match",
                "status": "same" if a.verdict == b.verdict else "changed",
            }
        )
        status, tolerance = judge_claim_value(
            claim_id,
            number(a.get("value")),
            number(b.get("value")),
            number(a.get("ci_low")),
            number(a.get("ci_high")),
        )
        rows.append(
            {
                "section": "claim measurement",
                "item": claim_id,
                "reference": a.measured,
                "current": b.measured,
                "status": status,
                "tolerance": tolerance,
            }
        )
    return rows


def matched(ref: pd.DataFrame, cur: pd.DataFrame, column: str):
    """Every key of either table (both indexed alike): the two rows (None where one lacks the
    key), the reference's and the current value of `column`, and the reference's interval."""
    for key in sorted(set(ref.index) | set(cur.index), key=str):
        a = ref.loc[key] if key in ref.index else None
        b = cur.loc[key] if key in cur.index else None
        values = [number(row[column]) if row is not None else math.nan for row in (a, b)]
        low, high = (number(a.ci_low), number(a.ci_high)) if a is not None else (math.nan,) * 2
        yield key, a, b, *values, low, high


SEED_AWARE = "reference seed-aware 95% interval"
OLD_INTERVAL = "reference 95% interval (reference predates seed-aware intervals: its ci columns)"


def run_half_widths(comparisons: pd.DataFrame | None) -> dict[tuple, float] | None:
    """(variant, test set, bucket, metric) -> half-width of one run's seed-aware interval,
    t(df_v) sqrt(n_v) se_v, from a reference's comparisons; None for a reference without them."""
    if comparisons is None or "df_a" not in comparisons.columns:
        return None
    widths = {}
    for row in comparisons.itertuples():
        seeds = str(row.seeds).split("/")
        for side, n in zip("ab", (seeds[0], seeds[-1]), strict=True):
            se, df = number(getattr(row, f"se_{side}")), number(getattr(row, f"df_{side}"))
            if math.isfinite(se) and df > 0:
                key = (getattr(row, f"system_{side}"), row.test_set, row.bucket, row.metric)
                widths[key] = intervals.critical(df) * math.sqrt(int(n)) * se
    return widths


def compare_scores(
    ref: pd.DataFrame, cur: pd.DataFrame, ref_comparisons: pd.DataFrame | None = None
) -> list[dict]:
    """BLEU and chrF per run, within the seed-aware interval of one run of its variant (module
    docstring); a reference without seed-aware intervals: within its own ci columns."""
    keys = ["run", "test_set", "bucket", "metric"]
    widths = run_half_widths(ref_comparisons)
    variants = dict(zip(ref.run, ref.variant, strict=True)) if "variant" in ref.columns else {}
    ref = ref[ref.metric.isin(SCORE_METRICS)].set_index(keys)
    cur = cur[cur.metric.isin(SCORE_METRICS)].set_index(keys)
    rows = []
    for key, _, _, ref_value, cur_value, low, high in matched(ref, cur, "value"):
        tolerance = OLD_INTERVAL
        if widths is not None:
            variant = variants.get(key[0], variant_of(key[0]))
            half = widths.get((variant, *key[1:]), math.nan)
            low, high, tolerance = ref_value - half, ref_value + half, SEED_AWARE
        rows.append(
            {
                "section": key[3],
                "item": "/".join(map(str, key[:3])),
                "reference": ref_value,
                "current": cur_value,
                "status": judge_number(ref_value, cur_value, low, high),
                "tolerance": tolerance,
            }
        )
    return rows


def compare_comparisons(ref: pd.DataFrame, cur: pd.DataFrame) -> list[dict]:
    keys = ["comparison", "test_set", "bucket", "metric"]
    interval = SEED_AWARE if "df" in ref.columns else OLD_INTERVAL
    rows = []
    for key, a, b, ref_delta, cur_delta, low, high in matched(
        ref.set_index(keys), cur.set_index(keys), "delta"
    ):
        status = judge_number(ref_delta, cur_delta, low, high)
        if a is not None and b is not None and excludes_zero(a) != excludes_zero(b):
            status = "moved"
        rows.append(
            {
                "section": "paired delta",
                "item": "/".join(map(str, key)),
                "reference": ref_delta,
                "current": cur_delta,
                "status": status,
                "tolerance": f"{interval}; same side of zero",
            }
        )
    return rows


def excludes_zero(row: pd.Series) -> bool:
    return number(row.ci_low) > 0 or number(row.ci_high) < 0


def read_csv(path: Path | None) -> pd.DataFrame | None:
    """A build's table (the final models' rows of scores and comparisons), None if absent."""
    if path is None or not Path(path).is_file():
        return None
    return final_point(pd.read_csv(path))


def compare_builds(ref: dict[str, Path | None], cur: dict[str, Path | None]) -> pd.DataFrame:
    """Every claim verdict, claim measurement, score and paired delta of two builds."""
    rows: list[dict] = []
    ref_comparisons = read_csv(ref.get("comparisons"))
    for kind, compare in (
        ("claims", compare_claims),
        ("scores", lambda a, b: compare_scores(a, b, ref_comparisons)),
        ("comparisons", compare_comparisons),
    ):
        a, b = read_csv(ref.get(kind)), read_csv(cur.get(kind))
        if a is None or b is None:
            missing = "reference" if a is None else "current build"
            rows.append(
                {
                    "section": kind,
                    "item": "(table)",
                    "reference": "",
                    "current": "",
                    "status": "missing",
                    "tolerance": f"{kind} absent from the {missing}",
                }
            )
            continue
        rows.extend(compare(a, b))
    return pd.DataFrame(rows, columns=COLUMNS)


def compare_across(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Claims of two builds of different configs: does each verdict hold, flip, or stay pending."""
    a, b = a.set_index("id"), b.set_index("id")
    rows = []
    for claim_id in sorted(set(a.index) | set(b.index)):
        va, vb = a.verdict.get(claim_id, "absent"), b.verdict.get(claim_id, "absent")
        if va == vb:
            status = "holds"
        elif "pending" in (va, vb) or "absent" in (va, vb):
            status = "decided in one build only"
        else:
            status = "flips"
        rows.append(
            {
                "claim": claim_id,
                "verdict_a": va,
                "verdict_b": vb,
                "status": status,
                "measured_a": a.measured.get(claim_id, ""),
                "measured_b": b.measured.get(claim_id, ""),
            }
        )
    return pd.DataFrame(
        rows, columns=["claim", "verdict_a", "verdict_b", "status", "measured_a", "measured_b"]
    )


def failed(table: pd.DataFrame) -> bool:
    """A reviewer's rerun fails when any claim's verdict changed or went missing."""
    verdicts = table[table.section == "verdict"]
    return bool(verdicts.status.isin(["changed", "missing"]).any())


def summary(table: pd.DataFrame) -> str:
    """One screen of Markdown: the outcome, counts per section, then every item not "same"."""
    outcome = "NO: a claim verdict changed" if failed(table) else "yes: every claim verdict held"
    lines = [
        f"# Rerun vs reference\n\nReproduced the reference's verdicts: **{outcome}**.\n",
        "| section | " + " | ".join(STATUSES) + " |",
        "|---" * (len(STATUSES) + 1) + "|",
    ]
    for section, group in table.groupby("section", sort=False):
        counts = group.status.value_counts()
        lines.append(f"| {section} | " + " | ".join(str(counts.get(s, 0)) for s in STATUSES) + " |")
    differing = table[table.status != "same"]
    if len(differing):
        lines += [
            "",
            "Items that are not the same:",
            "",
            "| section | item | reference | current | status | tolerance |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {r.section} | {r.item} | {cell(r.reference)} | {cell(r.current)} |"
            f" {r.status} | {r.tolerance} |"
            for r in differing.itertuples()
        ]
    return "\n".join(lines) + "\n"


def across_summary(table: pd.DataFrame, names: tuple[str, str]) -> str:
    counts = table.status.value_counts()
    lines = [
        f"# Claims across builds: {names[0]} vs {names[1]}\n",
        ", ".join(
            f"{counts.get(s, 0)} {s}" for s in ("holds", "flips", "decided in one build only")
        )
        + "\n",
        f"| claim | {names[0]} | {names[1]} | status |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {r.claim} | {r.verdict_a} | {r.verdict_b} | {r.status} |" for r in table.itertuples()
    ]
    return "\n".join(lines) + "\n"


def cell(value: object) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def reference_files(directory: Path) -> dict[str, Path]:
    return {kind: directory / f"{kind}.csv" for kind in ("scores", "comparisons", "claims")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", type=Path, help="a reference build directory")
    parser.add_argument("--scores", type=Path)
    parser.add_argument("--comparisons", type=Path)
    parser.add_argument("--claims", type=Path)
    parser.add_argument(
        "--across",
        type=Path,
        nargs=2,
        metavar="CLAIMS_CSV",
        help="the claims.csv of two builds of different configs",
    )
    parser.add_argument("--names", nargs=2, default=("a", "b"), help="the two builds' names")
    parser.add_argument(
        "--check",
        type=Path,
        metavar="COMPARE_CSV",
        help="only report whether a comparison written earlier failed",
    )
    parser.add_argument("--out", type=Path)
    parser.add_argument("--report", type=Path)
    parser.add_argument("--no-fail", action="store_true", help="exit 0 even if a verdict changed")
    args = parser.parse_args(argv)
    if args.check:
        table = pd.read_csv(args.check)
        changed = table[(table.section == "verdict") & table.status.isin(["changed", "missing"])]
        for row in changed.itertuples():
            print(f"claim {row.item}: verdict {row.reference} -> {row.current} ({row.status})")
        return 1 if failed(table) else 0
    if args.out is None or args.report is None:
        parser.error("--out and --report are required unless --check is given")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.report.parent.mkdir(parents=True, exist_ok=True)
    if args.across:
        a, b = (pd.read_csv(claims) for claims in args.across)
        table = compare_across(a, b)
        table.to_csv(args.out, index=False)
        args.report.write_text(across_summary(table, tuple(args.names)))
        print(args.report.read_text())
        return 0
    if args.reference is None or not (args.reference / "claims.csv").is_file():
        parser.error(
            f"no reference build at {args.reference} (expected claims.csv there):"
            " make one with `make reference`"
        )
    current = {"scores": args.scores, "comparisons": args.comparisons, "claims": args.claims}
    table = compare_builds(reference_files(args.reference), current)
    table.to_csv(args.out, index=False)
    args.report.write_text(summary(table))
    print(args.report.read_text())
    return 0 if args.no_fail or not failed(table) else 1


if __name__ == "__main__":
    sys.exit(main())
