"""The benchmark CLI end to end on CPU, tiny sizes: the CSVs it writes and what they say."""

from __future__ import annotations

import csv

import pytest

from softlookup.bench.kernels import ATTENTION_COLUMNS, DECODE_COLUMNS, main


def read_rows(path):
    with path.open() as f:
        reader = csv.DictReader(f)
        return reader.fieldnames, list(reader)


@pytest.fixture(scope="module")
def bench_csvs(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    main([
        "--device", "cpu", "--out", str(out / "attention.csv"),
        "--decode-out", str(out / "decode.csv"), "--seq-lens", "32", "48", "--head-dims", "16",
        "--tokens", "64", "--model-dim", "32", "--repeats", "1", "--naive-max-len", "32",
        "--decode-prompt-len", "24", "--decode-new-tokens", "5",
    ])  # fmt: skip
    return read_rows(out / "attention.csv"), read_rows(out / "decode.csv")


def test_attention_csv_covers_every_backend_pass_and_setting(bench_csvs):
    (columns, rows), _ = bench_csvs
    assert columns == ATTENTION_COLUMNS
    # 2 lengths x 2 causal values x 3 backends x 3 passes
    assert len(rows) == 36
    assert {(r["backend"], r["pass"]) for r in rows} == {
        (b, p)
        for b in ("naive", "torch_sdpa", "triton")
        for p in ("forward", "backward", "forward_backward")
    }
    for row in rows:
        assert row["device"] == "cpu" and row["torch"] and row["triton"] and row["commit"]
        assert row["batch"] == str(64 // int(row["seq_len"])) and row["heads"] == "2"


def test_cpu_triton_rows_are_skipped_with_a_reason(bench_csvs):
    (_, rows), _ = bench_csvs
    triton_rows = [r for r in rows if r["backend"] == "triton"]
    assert triton_rows and all(r["status"] == "skipped" for r in triton_rows)
    assert all("TRITON_INTERPRET" in r["reason"] and not r["time_ms"] for r in triton_rows)


def test_measured_rows_have_time_throughput_and_small_error(bench_csvs):
    (_, rows), _ = bench_csvs
    measured = [r for r in rows if r["status"] == "ok"]
    assert {r["backend"] for r in measured} == {"naive", "torch_sdpa"}
    for row in measured:
        assert float(row["time_ms"]) > 0 and float(row["tflops"]) > 0
        assert float(row["max_abs_err"]) <= 1e-5


def test_naive_beyond_its_limit_is_skipped(bench_csvs):
    (_, rows), _ = bench_csvs
    long_naive = [r for r in rows if r["backend"] == "naive" and r["seq_len"] == "48"]
    assert long_naive and all(r["status"] == "skipped" for r in long_naive)


def test_naive_saves_the_score_table_for_backward(bench_csvs):
    """The materialised version keeps (B,H,N,N) weights; torch's fused SDPA keeps O(N)."""
    (_, rows), _ = bench_csvs
    saved = {
        r["backend"]: float(r["saved_for_backward_mib"])
        for r in rows
        if r["pass"] == "forward_backward" and r["status"] == "ok" and r["causal"] == "False"
        and r["seq_len"] == "32"
    }  # fmt: skip
    table_mib = 2 * 2 * 32 * 32 * 4 / 2**20  # B=2, H=2, N=32, fp32
    assert saved["naive"] >= table_mib > 0
    assert saved["naive"] > saved["torch_sdpa"]


def test_decode_csv_cache_matches_recompute(bench_csvs):
    _, (columns, rows) = bench_csvs
    assert columns == DECODE_COLUMNS
    measured = [r for r in rows if r["status"] == "ok"]
    assert {(r["backend"], r["mode"]) for r in measured} == {
        (b, m) for b in ("naive", "torch_sdpa") for m in ("kv_cache", "recompute")
    }
    for row in measured:
        assert float(row["max_abs_diff_vs_recompute"]) <= 1e-5
        assert float(row["total_ms"]) > 0
    assert all(r["status"] == "skipped" for r in rows if r["backend"] == "triton")


def test_a_failing_backend_costs_only_its_own_rows(tmp_path, monkeypatch):
    """One-shot GPU runs: an exception in one backend is a row with status "error", not a crash."""
    from softlookup.bench import kernels

    real = kernels.backend_context

    def broken(backend, *args):
        if backend == "torch_sdpa":
            raise ValueError("refused\nsecond line")
        return real(backend, *args)

    monkeypatch.setattr(kernels, "backend_context", broken)
    out = tmp_path / "attention.csv"
    main(["--device", "cpu", "--out", str(out), "--seq-lens", "16", "--head-dims", "8",
          "--tokens", "16", "--model-dim", "8", "--repeats", "1", "--causal", "true",
          "--backends", "torch_sdpa", "naive"])  # fmt: skip
    _, rows = read_rows(out)
    assert (rows[0]["backend"], rows[0]["status"]) == ("torch_sdpa", "error")
    assert rows[0]["reason"] == "ValueError: refused"
    assert {r["status"] for r in rows if r["backend"] == "naive"} == {"ok"}
