"""The claims ledger: verdicts from probe rows, interval comparisons and benchmark columns."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from softlookup.probes import worked_examples
from softlookup.claims.checks import Evidence
from softlookup.claims.spec import ClaimsFileError, load_claims
from softlookup.report.latex import escape, macro_name
from softlookup.claims.ledger import build_ledger, main

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).parents[1]


@pytest.fixture(scope="module")
def ledger(tmp_path_factory) -> pd.DataFrame:
    root = tmp_path_factory.mktemp("evidence")
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
    evidence = Evidence(root / "probes", DATA / "claims_scores.csv", root / "bench")
    table, _ = build_ledger(DATA / "claims_fixture.yaml", evidence)
    return table.set_index("id")


def test_a_right_figure_is_reproduced(ledger):
    assert ledger.loc["T1", "verdict"] == "reproduced"
    assert "0.422" in ledger.loc["T1", "measured"]


def test_a_wrong_expected_value_is_not_reproduced(ledger):
    assert ledger.loc["T2", "verdict"] == "not reproduced"
    assert "expected 0.5" in ledger.loc["T2", "reason"]


def test_a_probe_never_run_is_pending(ledger):
    assert ledger.loc["T3", "verdict"] == "pending"
    assert "never_run.csv was not produced" in ledger.loc["T3", "reason"]


def test_separate_intervals_in_the_claimed_direction_reproduce(ledger):
    # gru_none: 1-10 [28, 32] > >60 [4, 6]; additive >60 [23, 27] > none >60 [4, 6]
    assert ledger.loc["T4", "verdict"] == "reproduced"
    assert "gru_none bleu@test/1-10" in ledger.loc["T4", "measured_detail"]
    assert "gru_none bleu@test/>60" in ledger.loc["T4", "measured_detail"]


def test_overlapping_intervals_do_not_count_as_a_difference(ledger):
    # additive 21 [19, 23] vs none 20 [18, 22]: higher, but not shown
    assert ledger.loc["T5", "verdict"] == "not reproduced"
    assert "overlap" in ledger.loc["T5", "reason"]


def test_a_run_missing_from_the_config_is_pending(ledger):
    assert ledger.loc["T6", "verdict"] == "pending"
    assert "no gru_dot bleu" in ledger.loc["T6", "reason"]


def test_a_diverged_run_counts_as_the_worst_score(ledger):
    assert ledger.loc["T7", "verdict"] == "reproduced"
    assert "diverged" in ledger.loc["T7", "measured"]


def test_gpu_only_claims_stay_pending_on_a_cpu_table(ledger):
    assert ledger.loc["T8", "verdict"] == "pending"
    assert "needs GPU runs" in ledger.loc["T8", "reason"]
    assert "5000" in ledger.loc["T8", "measured"]  # the CPU measurement is still shown


def test_bench_ratio_and_loglog_slope(ledger):
    # reference / triton: 4, 5.33, 6.4 -> min 4 > 1; memory doubles with n -> slope 1;
    # the report check asks for a GPU file, which is absent, and does not affect the verdict
    assert ledger.loc["T9", "verdict"] == "reproduced"
    assert "= 4" in ledger.loc["T9", "measured"]
    assert "= 1" in ledger.loc["T9", "measured"]


def test_cli_writes_csv_table_and_macros(tmp_path):
    probes = tmp_path / "probes"
    worked_examples.measure().write(probes / "worked_examples.csv")
    claims = tmp_path / "claims.yaml"
    shutil.copy(DATA / "claims_fixture.yaml", claims)
    out = tmp_path / "claims"
    main(
        [
            "--claims", str(claims), "--probes-dir", str(probes),
            "--scores", str(tmp_path / "absent.csv"), "--bench-dir", str(tmp_path / "bench"),
            "--out", str(out / "claims.csv"), "--out-tex", str(out / "claims_table.tex"),
            "--out-macros", str(out / "claims_macros.tex"),
        ]
    )  # fmt: skip
    table = pd.read_csv(out / "claims.csv")
    assert list(table.id) == [f"T{i}" for i in range(1, 10)]
    assert set(table.verdict) <= {"reproduced", "partly", "not reproduced", "pending"}
    assert {"python", "torch", "device", "rule", "output"} <= set(table.columns)
    tex = (out / "claims_table.tex").read_text()
    assert r"\begin{longtable}" in tex and r"\toprule" in tex and tex.count("T4 &") == 1
    macros = (out / "claims_macros.tex").read_text()
    assert r"\newcommand{\TestWeight}{0.422}" in macros
    assert r"\newcommand{\ClaimVerdictTTwo}{not reproduced}" in macros


def test_project_claims_file_covers_every_claim():
    claims, producers = load_claims(REPO / "config" / "claims.yaml")
    expected_ids = [f"A{i}" for i in range(1, 9)] + [f"B{i}" for i in range(1, 6)]
    expected_ids += [f"C{i}" for i in range(1, 4)] + [f"D{i}" for i in range(1, 9)]
    assert [claim.id for claim in claims] == expected_ids
    assert producers["scores"] == "collect_scores"
    papers = {"Sutskever", "Bahdanau", "Luong", "Vaswani", "Dao"}
    assert all(any(name in claim.paper for name in papers) for claim in claims)


def test_grid_shape_mismatch_is_a_clear_error(tmp_path):
    bad = {
        "claims": [
            {
                "id": "X1", "claim": "c", "source": "E1", "paper": "p", "expected": "e",
                "checks": [{"probe": "p", "quantity": "q", "grid": {"col": ["1", "2"]},
                            "expected": [1.0], "tolerance": 0}],
            }
        ]
    }  # fmt: skip
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump(bad))
    with pytest.raises(ClaimsFileError, match=r"claim X1, check 1: 'expected' does not match"):
        load_claims(path)


def test_latex_escaping():
    assert escape("50% of a_b & {c}") == r"50\% of a\_b \& \{c\}"
    assert escape("error 1.5e-07") == r"error \ensuremath{1.5\times10^{-7}}"
    assert escape("2 -> 3 +- 1") == r"2 \ensuremath{\to} 3 \ensuremath{\pm} 1"
    assert escape("|x|") == r"\textbar{}x\textbar{}"
    assert macro_name("D8") == "DEight"


# ---- the project's D7 and D8 checks, on benchmark CSVs shaped like bench.py's and
# bench_generation.py's --------------------------------------------------------------------------

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


def generation_rows(speedups=(2.0, 2.5, 3.4, 4.4), identical=(True,) * 4) -> pd.DataFrame:
    tokens = pd.Series(NEW_TOKENS)
    return pd.DataFrame(
        {"new_tokens": tokens, "batch": 1, "speedup": list(speedups), "identical": list(identical),
         "max_abs_logprob_diff": 8e-6, "cache_bytes": 2 * 3 * 4 * 64 * 4 * tokens,
         "last_step_cache_s": 0.005, "last_step_recompute_s": 1e-4 * tokens}
    )  # fmt: skip


def project_ledger(
    tmp_path: Path, bench: dict[str, pd.DataFrame]
) -> tuple[pd.DataFrame, dict[str, str]]:
    """The ledger rows (by id) and macros of config/claims.yaml's D7 and D8 on these bench files."""
    document = yaml.safe_load((REPO / "config" / "claims.yaml").read_text())
    document["claims"] = [claim for claim in document["claims"] if claim["id"] in ("D7", "D8")]
    claims = tmp_path / "claims.yaml"
    claims.write_text(yaml.safe_dump(document))
    (tmp_path / "bench").mkdir()
    for name, frame in bench.items():
        frame.to_csv(tmp_path / "bench" / f"{name}.csv", index=False)
    evidence = Evidence(tmp_path / "probes", tmp_path / "scores.csv", tmp_path / "bench")
    table, numbers = build_ledger(claims, evidence)
    return table.set_index("id"), numbers


def test_d7_is_decided_by_generation_and_bf16_rounding_does_not_fail_it(tmp_path):
    ledger, numbers = project_ledger(
        tmp_path,
        {
            "generation_cpu": generation_rows(),
            "decode_cpu": decode_rows("float32", 4e-7),
            "decode_cuda": decode_rows("bfloat16", 4e-3),  # rounding alone, on a GPU
        },
    )
    assert ledger.loc["D7", "verdict"] == "reproduced", ledger.loc["D7", "reason"]
    assert numbers["GenerationSpeedupHundred"] == "3.40"
    assert numbers["KvCacheMemorySlope"] == "1.000"
    assert numbers["KvCacheMaxDifference"] == "4.0e-07"
    assert "largest difference = 4.0e-03" in ledger.loc["D7", "measured_detail"]
    assert ledger.loc["D7", "rule"] == "bench_generation bench_attention"


@pytest.mark.parametrize(
    "generation, failing",
    [
        (generation_rows(identical=(True, True, False, True)), "identical tokens"),
        (generation_rows(speedups=(1.5, 2.0, 2.5, 3.5)), "at 100 new tokens"),
    ],
)
def test_d7_fails_on_different_tokens_or_a_small_speedup(tmp_path, generation, failing):
    ledger, _ = project_ledger(
        tmp_path, {"generation_cpu": generation, "decode_cpu": decode_rows("float32", 4e-7)}
    )
    assert ledger.loc["D7", "verdict"] == "partly"
    assert failing in ledger.loc["D7", "reason"]


def test_d8_memory_slopes_read_the_memory_per_sequence(tmp_path):
    ledger, numbers = project_ledger(tmp_path, {"attention_cuda": attention_rows()})
    assert numbers["FlashMemorySlope"] == "1.00"  # peak_mem_mib would give 0: flat
    assert numbers["NaiveMemorySlope"] == "2.00"  # and 1 for the materialised table
    assert ledger.loc["D8", "verdict"] == "reproduced", ledger.loc["D8", "reason"]


def test_a_producer_mapping_must_name_every_benchmark(tmp_path):
    document = yaml.safe_load((DATA / "claims_fixture.yaml").read_text())
    document["producers"]["bench"] = {"elsewhere": "bench_elsewhere"}
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump(document))
    with pytest.raises(ClaimsFileError, match=r"claim T9: producers.bench names no rule for"):
        load_claims(path)
