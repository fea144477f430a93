"""The claims ledger: verdicts from probe rows, paired comparisons, per-run numbers, training
curves and benchmark columns; the claims file's schema; the project's claims file."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from softlookup.claims.checks import Evidence
from softlookup.claims.ledger import CHECK_COLUMNS, build_ledger, main
from softlookup.claims.spec import ClaimsFileError, load_claims
from softlookup.evaluate.compare import COLUMNS as COMPARISON_COLUMNS
from softlookup.probes import PROBES, worked_examples

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).parents[1]
CONTRACT_COLUMNS = [
    "id",
    "group",
    "short",
    "source",
    "expected",
    "measured",
    "ci_low",
    "ci_high",
    "verdict",
    "reason",
    "where",
    "rule",
    "outputs",
    "config_hash",
]  # fmt: skip  (CONTRACT.md item 6; the environment's columns follow)


def fixture_evidence(root: Path) -> Evidence:
    """Probe and bench CSVs written here; scores, comparisons and training from tests/data. A GPU
    bench file lies beside the declared CPU one but is not declared: it must never be read."""
    worked_examples.measure().write(root / "probes" / "worked_examples.csv")
    bench = pd.DataFrame(
        {
            "backend": ["reference", "triton"] * 3,
            "n": [1024, 1024, 2048, 2048, 4096, 4096],
            "ms": [4.0, 1.0, 16.0, 3.0, 64.0, 10.0],
            "peak_mem_bytes": [0, 1e6, 0, 2e6, 0, 4e6],
        }
    )
    (root / "bench").mkdir()
    bench.to_csv(root / "bench" / "attention_cpu.csv", index=False)
    bench.assign(ms=0.5, peak_mem_bytes=1.0).to_csv(root / "bench" / "attention_cuda.csv")
    return Evidence(
        probes=[root / "probes" / "worked_examples.csv"],
        scores=DATA / "claims_scores.csv",
        comparisons=DATA / "claims_comparisons.csv",
        bench=[root / "bench" / "attention_cpu.csv"],
        training=DATA / "claims_training.csv",
    )


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> tuple[pd.DataFrame, pd.DataFrame]:
    evidence = fixture_evidence(tmp_path_factory.mktemp("evidence"))
    claims, checks = build_ledger(DATA / "claims_fixture.yaml", evidence)
    return claims.set_index("id"), checks


@pytest.fixture(scope="module")
def ledger(tables) -> pd.DataFrame:
    return tables[0]


def test_a_right_figure_is_reproduced(ledger):
    assert ledger.loc["T1", "verdict"] == "reproduced"
    assert ledger.loc["T1", "measured"] == "weight[soft_lookup,q,1] = 0.422"


def test_a_wrong_expected_value_is_not_reproduced(ledger):
    assert ledger.loc["T2", "verdict"] == "not reproduced"
    assert "expected 0.5" in ledger.loc["T2", "reason"]


def test_a_probe_not_among_the_inputs_is_pending(ledger):
    assert ledger.loc["T3", "verdict"] == "pending"
    assert "no probe never_run.csv among the ledger's inputs" in ledger.loc["T3", "reason"]


def test_paired_intervals_in_the_claimed_direction_reproduce(ledger):
    row = ledger.loc["T4"]
    assert row.verdict == "reproduced", row.reason
    # share kept: additive 24/30 = 0.80, fixed 6/28 = 0.21 -> +0.59 (the headline)
    assert row.measured == "share kept, attention minus fixed = 0.59"
    assert "long_additive_vs_none bleu@test/>60" in row.measured_detail
    assert "delta +18.00 [+15.00, +21.00]" in row.measured_detail


def test_an_interval_including_zero_shows_no_difference(ledger):
    assert ledger.loc["T5", "verdict"] == "not reproduced"
    assert "no difference shown at 95%" in ledger.loc["T5", "reason"]


def test_a_comparison_the_config_does_not_define_is_pending(ledger):
    assert ledger.loc["T6", "verdict"] == "pending"
    assert "comparison absent_pair (bleu) absent" in ledger.loc["T6", "reason"]


def test_equivalence_needs_the_whole_interval_inside_the_margin(ledger, tables):
    checks = tables[1].set_index(["claim_id", "check"])
    assert checks.loc[("T7", 1), "status"] == "pass"  # [-0.5, 1.1] inside +-1.5
    assert checks.loc[("T7", 2), "status"] == "fail"  # 1.1 beyond 1.0
    assert checks.loc[("T7", 2), "allowed"] == "1"
    assert ledger.loc["T7", "verdict"] == "partly"


def test_gpu_only_claims_stay_pending_on_a_cpu_table(ledger):
    assert ledger.loc["T8", "verdict"] == "pending"
    assert "needs GPU runs" in ledger.loc["T8", "reason"]
    assert "transformer 5.1e+03 (2 runs)" in ledger.loc["T8", "measured_detail"]  # still shown


def test_bench_ratio_and_loglog_slope_read_only_the_declared_file(ledger):
    # reference / triton: 4, 5.33, 6.4 -> min 4 > 1; memory doubles with n -> slope 1; the
    # undeclared GPU file beside it (all times 0.5) is never read, so the GPU aside is pending
    assert ledger.loc["T9", "verdict"] == "reproduced"
    assert "= 4" in ledger.loc["T9", "measured_detail"]
    assert "no GPU benchmark attention_<device>.csv" in ledger.loc["T9", "measured_detail"]
    assert "attention_cuda" not in ledger.loc["T9", "outputs"]


def test_a_family_of_comparisons_against_d_k(ledger, tables):
    assert ledger.loc["T10", "verdict"] == "reproduced", ledger.loc["T10", "reason"]
    checks = tables[1].set_index(["claim_id", "check"])
    assert checks.loc[("T10", 1), "value"] == pytest.approx(
        0.97
    )  # deltas .1 .5 1.5 3 on log2 d_k 3..6
    assert checks.loc[("T10", 2), "ci_low"] == 2.1  # the largest d_k, 64
    assert checks.loc[("T10", 3), "status"] == "report"
    assert "the check needs 5" in checks.loc[("T10", 3), "measured"]


def test_time_to_a_common_validation_loss_and_a_per_run_metric(ledger, tables):
    # common loss = the highest best loss, 3.0; transformer: 20 s and 36 s; GRU 90 s and 84 s
    assert ledger.loc["T11", "verdict"] == "reproduced", ledger.loc["T11", "reason"]
    checks = tables[1].set_index(["claim_id", "check"])
    assert checks.loc[("T11", 1), "value"] == pytest.approx(28 / 87)
    assert "to validation loss 3.000" in checks.loc[("T11", 1), "measured"]
    assert checks.loc[("T11", 2), "value"] == pytest.approx(2.1 / 2.5)


def test_the_claims_table_has_the_contract_columns(tables):
    claims, checks = tables
    columns = ["id", *claims.columns]
    assert columns[: len(CONTRACT_COLUMNS)] == CONTRACT_COLUMNS
    assert {"python", "torch", "device", "commit", "dirty"} <= set(claims.columns)
    assert list(checks.columns) == CHECK_COLUMNS
    assert claims.loc["T4", "rule"] == "compare"
    assert claims.loc["T4", "where"] == "sec:test"
    assert claims.loc["T4", "group"] == "T"
    assert claims.loc["T4", "ci_low"] != claims.loc["T4", "ci_low"]  # share kept: no interval
    assert len(checks) == sum(len(c.checks) for c in load_claims(DATA / "claims_fixture.yaml")[0])


def test_cli_writes_claims_and_checks_csv(tmp_path):
    evidence = fixture_evidence(tmp_path)
    out = tmp_path / "claims"
    main(
        [
            "--claims", str(DATA / "claims_fixture.yaml"),
            "--probes", *map(str, evidence.probes.values()),
            "--scores", str(DATA / "claims_scores.csv"),
            "--comparisons", str(DATA / "claims_comparisons.csv"),
            "--training", str(DATA / "claims_training.csv"),
            "--bench", *map(str, evidence.bench),
            "--out", str(out / "claims.csv"), "--out-checks", str(out / "checks.csv"),
        ]
    )  # fmt: skip
    table = pd.read_csv(out / "claims.csv")
    assert list(table.id) == [f"T{i}" for i in range(1, 12)]
    assert set(table.verdict) <= {"reproduced", "partly", "not reproduced", "pending"}
    checks = pd.read_csv(out / "checks.csv", dtype={"value_text": str})
    assert checks.loc[checks.claim_id == "T1", "macro"].tolist() == ["TestWeight"]
    assert checks.loc[checks.claim_id == "T1", "value_text"].tolist() == ["0.422"]  # for macros
    assert not list(out.glob("*.tex"))  # the report renders LaTeX, not the ledger


# ---- the claims file's schema --------------------------------------------------------------------


def write_claims(tmp_path: Path, change) -> Path:
    document = yaml.safe_load((DATA / "claims_fixture.yaml").read_text())
    change(document)
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d["claims"][1]["checks"][0].pop("tolerance"),
         r"claim T2, check 1: .*'tolerance' is a required property"),
        (lambda d: d["claims"][6]["checks"][0].pop("margin"),
         r"claim T7, check 1: 'margin' is a required property"),
        (lambda d: d["claims"][0].pop("short"), r"claim T1: 'short' is a required property"),
        (lambda d: d["claims"][0].update(colour="red"),
         r"claim T1: Additional properties are not allowed \('colour'"),
        (lambda d: d["claims"][3]["checks"][0].update(op="roughly"),
         r"claim T4, check 1, key op: 'roughly' is not one of"),
        (lambda d: d["claims"][8]["checks"][1].update(aggregate="median"),
         r"claim T9, check 2, key aggregate: 'median' is not one of"),
        (lambda d: d["claims"][0]["checks"][0].update(macro="Test1"),
         r"claim T1, check 1, key macro: 'Test1' does not match"),
        (lambda d: d["producers"]["bench"].update(attention="bench attention"),
         r"top level|key producers"),
    ],
)  # fmt: skip
def test_schema_errors_name_the_claim_the_check_and_the_key(tmp_path, change, message):
    with pytest.raises(ClaimsFileError, match=message):
        load_claims(write_claims(tmp_path, change))


def test_grid_shape_mismatch_is_a_clear_error(tmp_path):
    def change(document):
        document["claims"][0]["checks"] = [
            {"probe": "p", "quantity": "q", "grid": {"col": ["1", "2"]}, "expected": [1.0],
             "tolerance": 0}
        ]  # fmt: skip

    with pytest.raises(ClaimsFileError, match=r"claim T1, check 1: 'expected' does not match"):
        load_claims(write_claims(tmp_path, change))


def test_a_producer_mapping_must_name_every_benchmark(tmp_path):
    def change(document):
        document["producers"]["bench"] = {"elsewhere": "bench_elsewhere"}

    with pytest.raises(ClaimsFileError, match=r"claim T9, check 1: producers.bench names no rule"):
        load_claims(write_claims(tmp_path, change))


def test_a_claim_with_report_checks_only_is_refused(tmp_path):
    def change(document):
        document["claims"][0]["checks"][0].update(op="report")

    with pytest.raises(ClaimsFileError, match="claim T1: every check is 'report'"):
        load_claims(write_claims(tmp_path, change))


# ---- the project's claims file -------------------------------------------------------------------


def workflow_rules() -> set[str]:
    text = "\n".join(path.read_text() for path in (REPO / "workflow" / "rules").glob("*.smk"))
    return set(re.findall(r"^\s*rule (\w+):", text, flags=re.MULTILINE))


def test_project_claims_file_covers_every_claim():
    claims, _ = load_claims(REPO / "config" / "claims.yaml")
    expected_ids = [f"A{i}" for i in range(1, 10)] + [f"B{i}" for i in range(1, 8)]
    expected_ids += [f"C{i}" for i in range(1, 4)] + [f"D{i}" for i in range(1, 9)]
    assert [claim.id for claim in claims] == expected_ids
    papers = {"Sutskever", "Bahdanau", "Luong", "Vaswani", "Dao", "Dong"}
    assert all(any(name in claim.paper for name in papers) for claim in claims)
    assert all(claim.section.startswith("sec:") for claim in claims)


def test_every_producer_is_a_rule_of_the_workflow():
    """The bug this replaces: the ledger named rules `probe_<name>` that do not exist."""
    _, producers = load_claims(REPO / "config" / "claims.yaml")
    named = {rule for value in producers.values()
             for rule in (value.values() if isinstance(value, dict) else [value])}  # fmt: skip
    assert {"probe", "compare", "collect_scores", "bench_attention"} <= named  # the file's own
    assert named <= workflow_rules(), named - workflow_rules()


def test_every_probe_the_claims_read_is_a_probe_the_workflow_runs():
    """probes.smk runs softlookup.probes.PROBES; every probe a claim reads is one of them."""
    claims, _ = load_claims(REPO / "config" / "claims.yaml")
    read = {check.name for claim in claims for check in claim.checks if check.kind == "probe"}
    assert "from softlookup.probes import PROBES" in (REPO / "workflow/rules/probes.smk").read_text()
    assert {"worked_examples", "spread", "saturation", "counting"} <= read
    assert read <= set(PROBES), read - set(PROBES)


def test_the_ledger_rule_declares_every_evidence_file():
    """The bug this replaces: the ledger globbed results/bench/<name>_*.csv. Its command now
    passes exactly its inputs, and every kind of evidence is one of them."""
    text = (REPO / "workflow" / "rules" / "claims.smk").read_text()
    for option, name in [("--probes", "probes"), ("--scores", "scores"),
                         ("--comparisons", "comparisons"), ("--training", "training"),
                         ("--bench", "bench")]:  # fmt: skip
        assert f"{option} {{input.{name}:q}}" in text
        assert f"        {name}=" in text
    assert "glob" not in text and "bench-dir" not in text and "probes-dir" not in text


# ---- the project's D claims on comparison tables shaped like evaluate.compare's ------------------


def comparison(name, delta, low, high, bucket="all", mean_a=20.0, a="a", b="b") -> dict:
    """A comparisons.csv row as compare writes it: delta = mean_b - mean_a (X_vs_Y: b = X)."""
    return {"comparison": name, "system_a": a, "system_b": b, "test_set": "test",
            "bucket": bucket, "metric": "bleu", "mean_a": mean_a, "mean_b": mean_a + delta,
            "delta": delta, "ci_low": low, "ci_high": high, "p_value": 0.01, "seeds": 2,
            "n_sentences": 100, "method": "paired bootstrap"}  # fmt: skip


def project_ledger(tmp_path: Path, ids: list[str], **evidence) -> pd.DataFrame:
    """The ledger rows (by id) of config/claims.yaml's claims `ids` on the given evidence."""
    document = yaml.safe_load((REPO / "config" / "claims.yaml").read_text())
    document["claims"] = [claim for claim in document["claims"] if claim["id"] in ids]
    claims = tmp_path / "claims.yaml"
    claims.write_text(yaml.safe_dump(document, sort_keys=False))
    for name in ("comparisons", "scores", "training"):
        if isinstance(evidence.get(name), pd.DataFrame):
            path = tmp_path / f"{name}.csv"
            evidence[name].to_csv(path, index=False)
            evidence[name] = path
    bench = evidence.pop("bench", {})
    (tmp_path / "bench").mkdir(exist_ok=True)
    for name, frame in bench.items():
        frame.to_csv(tmp_path / "bench" / f"{name}.csv", index=False)
    evidence["bench"] = [tmp_path / "bench" / f"{name}.csv" for name in bench]
    table, _ = build_ledger(claims, Evidence(**evidence))
    return table.set_index("id")


def study_comparisons(heads8=(0.8, 0.3, 1.3), gap_grows=True) -> pd.DataFrame:
    rows = [
        comparison("d1_additive_vs_none", 2.0, 1.0, 3.0, bucket="1-10", mean_a=28.0),
        comparison("d1_additive_vs_none", 17.0, 14.0, 20.0, bucket=">60", mean_a=5.0),
        comparison("d1_dot_vs_none", 1.0, 0.0, 2.0, bucket="1-10", mean_a=28.0),
        comparison("d1_dot_vs_none", 15.0, 12.0, 18.0, bucket=">60", mean_a=5.0),
        comparison("d2_dot_vs_additive", 0.2, -0.6, 0.9, a="gru_additive", b="gru_dot"),
        comparison("d2_dot_vs_general", 0.5, -0.2, 1.2),
        comparison("d4_causal_vs_nocausal", 15.0, 13.0, 17.0, a="unmasked", b="masked"),
        comparison("d5_heads8_vs_heads1", *heads8),
        comparison("d5_heads2_vs_heads1", 0.4, -0.1, 0.9),
        comparison("d5_heads16_vs_heads1", 0.5, 0.0, 1.0),
    ]
    deltas = [0.2, 0.6, 1.4, 2.5, 3.1] if gap_grows else [1.6, 1.4, 1.5, 1.2, 1.0]
    for d_k, delta in zip([8, 16, 32, 64, 128], deltas, strict=True):
        rows.append(comparison(f"d3_scaled_vs_unscaled_dk{d_k}", delta, delta - 0.5, delta + 0.5))
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


def study_scores() -> pd.DataFrame:
    from softlookup.evaluate.score import COLUMNS

    rows = []
    for run, variant, tokens, loss in [("gru_dot-s1", "gru_dot", 1200, 3.0),
                                       ("gru_additive-s1", "gru_additive", 1000, 3.0),
                                       ("masked-s1", "masked", 900, 3.0),
                                       ("unmasked-s1", "unmasked", 900, 0.5)]:  # fmt: skip
        rows.append({**dict.fromkeys(COLUMNS, ""), "run": run, "variant": variant,
                     "tokens_per_s": tokens, "device": "cpu", "test_set": "train",
                     "bucket": "all", "metric": "final_train_loss", "value": loss})  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)


def test_d_claims_are_judged_on_the_paired_comparisons(tmp_path):
    ledger = project_ledger(tmp_path, ["D1", "D2", "D3", "D4", "D5"],
                            comparisons=study_comparisons(), scores=study_scores())  # fmt: skip
    for claim in ("D1", "D2", "D3", "D4", "D5"):
        assert ledger.loc[claim, "verdict"] == "reproduced", (claim, ledger.loc[claim, "reason"])
    assert ledger.loc["D1", "measured"].endswith("= 0.55")  # 22/30 - 5/28
    assert ledger.loc["D2", "measured"] == "dot vs additive (BLEU) = 0.20"
    assert (ledger.loc["D2", "ci_low"], ledger.loc["D2", "ci_high"]) == (-0.6, 0.9)
    assert ledger.loc["D5", "ci_low"] == 0.3
    assert ledger.loc["D5", "rule"] == "compare collect_scores"


def test_d5_one_head_as_good_as_eight_is_not_reproduced(tmp_path):
    weak = study_comparisons(heads8=(0.2, -0.3, 0.7))
    ledger = project_ledger(tmp_path, ["D5"], comparisons=weak, scores=study_scores())
    assert ledger.loc["D5", "verdict"] == "not reproduced"
    assert "no difference shown at 95%" in ledger.loc["D5", "reason"]


def test_d3_a_gap_that_does_not_grow_is_partly(tmp_path):
    ledger = project_ledger(tmp_path, ["D3"], comparisons=study_comparisons(gap_grows=False))
    assert ledger.loc["D3", "verdict"] == "partly"
    assert "slope per doubling of d_k" in ledger.loc["D3", "reason"]


def test_d_claims_without_their_comparisons_are_pending_and_say_what_is_missing(tmp_path):
    few = study_comparisons()
    few = few[~few.comparison.str.startswith(("d5_heads8", "d3_scaled_vs_unscaled_dk128",
                                              "d3_scaled_vs_unscaled_dk64"))]  # fmt: skip
    ledger = project_ledger(tmp_path, ["D3", "D5", "D6"], comparisons=few, scores=study_scores())
    assert ledger.loc["D5", "verdict"] == "pending"
    assert "comparison d5_heads8_vs_heads1 (bleu) absent" in ledger.loc["D5", "reason"]
    assert ledger.loc["D3", "verdict"] == "pending"
    assert "3 values of x" in ledger.loc["D3", "reason"] and "needs 4" in ledger.loc["D3", "reason"]
    assert ledger.loc["D6", "verdict"] == "pending"
    assert "no training table among the ledger's inputs" in ledger.loc["D6", "reason"]


# ---- the project's D7 and D8 checks, on benchmark CSVs shaped like bench.kernels's and
# bench.generation's -------------------------------------------------------------------------------

SEQ_LENS = [1024, 2048, 4096]
NEW_TOKENS = [25, 50, 100, 200]


def attention_rows() -> pd.DataFrame:
    """GPU kernel rows: the batch shrinks as n grows (a constant number of tokens), so the peak
    memory of a fused kernel stays flat while its memory per sequence is linear in n."""
    rows = []
    for n, backend in itertools.product(SEQ_LENS, ["triton", "naive", "torch_sdpa"]):
        batch = 16384 // n
        per_seq = {"triton": 1e-3 * n, "naive": 1e-6 * n**2, "torch_sdpa": 1e-3 * n}[backend]
        time_ms = {"triton": 1.0, "naive": 3.0, "torch_sdpa": 1.1}[backend] * n / 1024
        rows.append({
            "backend": backend, "pass": "forward", "batch": batch, "heads": 32, "seq_len": n,
            "head_dim": 64, "dtype": "bfloat16", "causal": False, "time_ms": time_ms,
            "peak_mem_mib": per_seq * batch, "peak_mem_per_seq_mib": per_seq,
            "max_abs_err": 4e-3, "status": "ok",
        })  # fmt: skip
    return pd.DataFrame(rows)


def decode_rows(dtype: str, difference: float) -> pd.DataFrame:
    return pd.DataFrame(
        {"mode": ["kv_cache", "recompute"], "dtype": dtype, "status": "ok",
         "speedup_vs_recompute": [2.0, 1.0], "max_abs_diff_vs_recompute": difference}
    )  # fmt: skip


def generation_rows(speedups=(2.0, 2.5, 3.4, 4.4), identical=(True,) * 4,
                    tokens=NEW_TOKENS) -> pd.DataFrame:  # fmt: skip
    tokens = pd.Series(tokens)
    return pd.DataFrame(
        {"new_tokens": tokens, "batch": 1, "speedup": list(speedups)[: len(tokens)],
         "identical": list(identical)[: len(tokens)], "max_abs_logprob_diff": 8e-6,
         "cache_bytes": 2 * 3 * 4 * 64 * 4 * tokens,
         "last_step_cache_s": 0.005 * tokens**0.2, "last_step_recompute_s": 1e-4 * tokens**1.3}
    )  # fmt: skip


def test_d7_is_decided_by_step_times_over_four_prefix_lengths(tmp_path):
    ledger = project_ledger(
        tmp_path, ["D7"],
        bench={"generation_cpu": generation_rows(), "decode_cpu": decode_rows("float32", 4e-7),
               "decode_cuda": decode_rows("bfloat16", 4e-3)},  # bf16 rounding on a GPU
    )  # fmt: skip
    assert ledger.loc["D7", "verdict"] == "reproduced", ledger.loc["D7", "reason"]
    assert ledger.loc["D7", "measured"] == (
        "last step's time against the prefix (log-log), cache = 0.20"
    )
    detail = ledger.loc["D7", "measured_detail"]
    assert "recompute / cache step time against the prefix (log-log) = 1.10" in detail
    assert "design target, ours" in detail
    assert "largest difference = 4.0e-03" in detail
    assert ledger.loc["D7", "rule"] == "bench_generation bench_attention"


def test_d7_with_two_prefix_lengths_is_pending(tmp_path):
    ledger = project_ledger(
        tmp_path, ["D7"],
        bench={"generation_cpu": generation_rows(speedups=(2.0, 3.4), tokens=[25, 100]),
               "decode_cpu": decode_rows("float32", 4e-7)},
    )  # fmt: skip
    assert ledger.loc["D7", "verdict"] == "pending"
    assert "the check needs 4" in ledger.loc["D7", "reason"]


@pytest.mark.parametrize(
    "generation, failing",
    [
        (generation_rows(identical=(True, True, False, True)), "identical tokens"),
        (generation_rows(speedups=(1.5, 2.0, 2.5, 3.5)), "at 100 new tokens"),
    ],
)
def test_d7_fails_on_different_tokens_or_a_small_speedup(tmp_path, generation, failing):
    ledger = project_ledger(
        tmp_path, ["D7"],
        bench={"generation_cpu": generation, "decode_cpu": decode_rows("float32", 4e-7)},
    )  # fmt: skip
    assert ledger.loc["D7", "verdict"] == "partly"
    assert failing in ledger.loc["D7", "reason"]


def test_d8_memory_slopes_read_the_memory_per_sequence(tmp_path):
    ledger = project_ledger(tmp_path, ["D8"], bench={"attention_cuda": attention_rows()})
    detail = ledger.loc["D8", "measured_detail"]
    assert "memory per sequence, slope against n (log-log) = 1.00" in detail  # peak_mem: 0
    assert (
        "materialised attention's memory per sequence, slope against n (log-log) = 2.00" in detail
    )
    assert ledger.loc["D8", "verdict"] == "reproduced", ledger.loc["D8", "reason"]


def test_the_project_ledger_on_the_probes_reproduces_the_exact_claims(tmp_path):
    """A-C claims on freshly measured probes (the small ones), as the workflow runs them."""
    from softlookup.probes import averaging, gradients, order, saturation

    probes = tmp_path / "probes"
    worked_examples.measure().write(probes / "worked_examples.csv")
    order.measure_order(16, 32, 10, 0).write(probes / "order.csv")
    gradients.measure_gradients(1000, 16, 32, 1e-4, 0).write(probes / "gradients.csv")
    averaging.measure_averaging(32, 64, 12, 0).write(probes / "averaging.csv")
    saturation.measure_saturation([4, 16, 64, 256, 1024], 2000, 3, 0.95, 0).write(
        probes / "saturation.csv")  # fmt: skip
    ledger = project_ledger(tmp_path, ["A1", "A3", "A9", "B2", "B4", "B6", "B7"],
                            probes=sorted(probes.glob("*.csv")))  # fmt: skip
    verdicts = ledger.verdict.to_dict()
    assert verdicts == {"A1": "reproduced", "A3": "reproduced", "A9": "reproduced",
                        "B2": "reproduced", "B4": "partly", "B6": "reproduced",
                        "B7": "reproduced"}, ledger.reason.to_dict()  # fmt: skip
    # B4: only "one attention layer is linear" fails; the linear stack composes into one map
    assert "superposition error of one attention layer" in ledger.loc["B4", "reason"]
    assert ledger.loc["B4", "checks_passed"] == ledger.loc["B4", "checks_decisive"] - 1


def test_d8_on_the_committed_h200_benchmark(tmp_path):
    """D8 as the default build judges it, from benchmarks/gpu/NVIDIA_H200 (bench.measured)."""
    measured = REPO / "benchmarks" / "gpu" / "NVIDIA_H200"
    bench = {name: pd.read_csv(measured / f"{name}.csv") for name in ("attention_cuda",)}
    ledger = project_ledger(tmp_path, ["D8"], bench=bench)
    assert ledger.loc["D8", "verdict"] == "reproduced", ledger.loc["D8", "reason"]
    rows = bench["attention_cuda"]
    naive = rows[(rows.backend == "naive") & (rows.status == "ok")]
    assert sorted(naive.seq_len.unique()) == [1024, 2048, 4096]  # enough for its memory slope
