"""The benchmark CLI end to end on CPU, tiny sizes: the CSVs it writes and what they say."""

from __future__ import annotations

import csv

import pytest
import torch

from softlookup.bench.kernels import ATTENTION_COLUMNS, DECODE_COLUMNS, main


def read_rows(path):
    with path.open() as f:
        reader = csv.DictReader(f)
        return reader.fieldnames, list(reader)


@pytest.fixture(scope="module")
def bench_csvs(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    main(
        [
            "--device",
            "cpu",
            "--out",
            str(out / "attention.csv"),
            "--decode-out",
            str(out / "decode.csv"),
            "--seq-lens",
            "32",
            "48",
            "--head-dims",
            "16",
            "--tokens",
            "64",
            "--model-dim",
            "32",
            "--repeats",
            "3",
            "--naive-max-len",
            "32",
            "--decode-prompt-len",
            "24",
            "--decode-new-tokens",
            "5",
            "--grad-check",
            "--cuda-graphs",
        ]
    )
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
        assert float(row["max_abs_err"]) <= 1e-5 and float(row["max_abs_grad_err"]) <= 1e-5


def test_every_row_is_a_count_of_samples_with_its_spread(bench_csvs):
    """--repeats 3: three timed samples per row, whatever the row costs; median within p20-p80."""
    (_, rows), (_, decode) = bench_csvs
    measured = [r for r in rows if r["status"] == "ok"]
    assert measured and {r["samples"] for r in measured} == {"3"}
    for row in measured:
        assert float(row["time_p20_ms"]) <= float(row["time_ms"]) <= float(row["time_p80_ms"])
    cached = [r for r in decode if r["status"] == "ok"]
    assert cached and {r["samples"] for r in cached} == {"3"}
    assert all(
        float(r["total_p20_ms"]) <= float(r["total_ms"]) <= float(r["total_p80_ms"]) for r in cached
    )


def test_checks_come_after_the_timing_at_the_timed_shape(monkeypatch):
    """The benchmarked backend runs only at the timed shape (autotuning has no other grid to pick
    tiles on), and the fp32 reference, i.e. the checks, only once every pass is timed."""
    from softlookup.bench import kernels

    calls = []
    real_attention, real_time = kernels.attention, kernels.time_samples

    def recording_attention(q, *args, backend, **kwargs):
        calls.append((backend, tuple(q.shape)))
        return real_attention(q, *args, backend=backend, **kwargs)

    def recording_time(*args):
        calls.append(("timed", None))
        return real_time(*args)

    monkeypatch.setattr(kernels, "attention", recording_attention)
    monkeypatch.setattr(kernels, "time_samples", recording_time)
    setting = kernels.Setting(2, 3, 20, 8, "float32", causal=True)
    rows = list(
        kernels.measure_attention(
            setting, "torch_sdpa", torch.device("cpu"), 2, 64, grad_check=True
        )
    )
    assert [r["status"] for r in rows] == ["ok"] * 3
    assert all(r["max_abs_grad_err"] <= 1e-5 for r in rows)
    order = [backend for backend, _ in calls]
    assert order.count("timed") == 3 and "reference" in order
    assert max(i for i, b in enumerate(order) if b == "timed") < order.index("reference")
    assert {shape for backend, shape in calls if backend == "torch"} == {(2, 3, 20, 8)}
    # the checks read the first and the last (batch, head), one at a time
    assert {shape for backend, shape in calls if backend == "reference"} >= {(1, 1, 20, 8)}


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
        if r["pass"] == "forward_backward"
        and r["status"] == "ok"
        and r["causal"] == "False"
        and r["seq_len"] == "32"
    }
    table_mib = 2 * 2 * 32 * 32 * 4 / 2**20  # B=2, H=2, N=32, fp32
    assert saved["naive"] >= table_mib > 0
    assert saved["naive"] > saved["torch_sdpa"]


def test_decode_csv_cache_matches_recompute(bench_csvs):
    _, (columns, rows) = bench_csvs
    assert columns == DECODE_COLUMNS
    measured = [r for r in rows if r["status"] == "ok"]
    assert {(r["backend"], r["mode"]) for r in measured} == {
        (b, m)
        for b in ("naive", "torch_sdpa", "torch_sdpa_unmasked")
        for m in ("kv_cache", "recompute")
    }
    for row in measured:
        assert float(row["max_abs_diff_vs_recompute"]) <= 1e-5
        assert float(row["total_ms"]) > 0
    assert all(r["status"] == "skipped" for r in rows if r["backend"] == "triton")
    assert {r["cuda_graph"] for r in rows} == {"False"}  # --cuda-graphs: nothing to graph on CPU


@pytest.mark.parametrize(
    ("backend", "masked"), [("torch_sdpa", True), ("torch_sdpa_unmasked", False)]
)
def test_unmasked_decode_gives_torch_one_query_without_a_mask(monkeypatch, backend, masked):
    """torch's best one-query path: SDPA without an explicit mask (so its flash kernel may run);
    same outputs as recomputing the causal attention."""
    from softlookup.bench import kernels
    from softlookup.kernels import torch_sdpa

    masks = []
    real = torch_sdpa.F.scaled_dot_product_attention

    def recording(q, k, v, attn_mask=None, **kwargs):
        masks.append(attn_mask)
        return real(q, k, v, attn_mask=attn_mask, **kwargs)

    monkeypatch.setattr(torch_sdpa.F, "scaled_dot_product_attention", recording)
    q, k, v = (
        torch.randn(1, 2, 12, 16, generator=torch.Generator().manual_seed(s)) for s in range(3)
    )
    with_cache, recompute = kernels.decode_step_functions(backend, q, k, v)
    for t in range(6, 12):
        torch.testing.assert_close(with_cache(t), recompute(t), atol=1e-6, rtol=1e-5)
    cache_masks = masks[::2]  # with_cache, recompute, with_cache, ...
    assert all((mask is not None) == masked for mask in cache_masks)


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
    main(
        [
            "--device",
            "cpu",
            "--out",
            str(out),
            "--seq-lens",
            "16",
            "--head-dims",
            "8",
            "--tokens",
            "16",
            "--model-dim",
            "8",
            "--repeats",
            "1",
            "--causal",
            "true",
            "--backends",
            "torch_sdpa",
            "naive",
        ]
    )
    _, rows = read_rows(out)
    assert (rows[0]["backend"], rows[0]["status"]) == ("torch_sdpa", "error")
    assert rows[0]["reason"] == "ValueError: refused"
    assert {r["status"] for r in rows if r["backend"] == "naive"} == {"ok"}


def test_summary_compares_with_the_faster_library_kernel_of_each_setting():
    """cuDNN and flash SDPA side by side; the ratio is to whichever is faster in that setting, and
    to SDPA alone where cuDNN has no row (refused, or a CPU run)."""
    import pandas as pd

    from softlookup.bench.summary import summarize

    tflops = {
        (1024, "torch_sdpa"): 300.0,
        (1024, "torch_cudnn"): 500.0,
        (1024, "triton"): 400.0,
        (2048, "torch_sdpa"): 300.0,
        (2048, "triton"): 450.0,
    }
    rows = pd.DataFrame(
        [
            {
                "head_dim": 64,
                "causal": False,
                "seq_len": n,
                "pass": "forward",
                "backend": backend,
                "tflops": value,
                "status": "ok",
            }
            for (n, backend), value in tflops.items()
        ]
        + [
            {
                "head_dim": 64,
                "causal": False,
                "seq_len": 2048,
                "pass": "forward",
                "backend": "torch_cudnn",
                "status": "skipped",
            }
        ]
    )
    table = summarize(rows).set_index(["seq_len", "backend"])
    assert table.loc[(1024, "triton"), "ratio_to_best_library"] == pytest.approx(0.8)
    assert table.loc[(1024, "triton"), "ratio_to_sdpa"] == pytest.approx(4 / 3)
    assert table.loc[(1024, "triton"), "fastest_library"] == "torch_cudnn"
    assert table.loc[(2048, "triton"), "ratio_to_best_library"] == pytest.approx(1.5)
    assert table.loc[(2048, "triton"), "fastest_library"] == "torch_sdpa"
    assert pd.isna(table.loc[(2048, "triton"), "cudnn_tflops"])
    assert table.loc[(1024, "torch_cudnn"), "ratio_to_best_library"] == 1.0
