"""scripts/gpu_check.sh --dry: the GPU check's every part, on CPU under the Triton interpreter on
tiny shapes, so the script that will meet the next GPU cannot rot. Also: the training plan the
GPU side reads (benchmarks/paper_runs.json) is the one config/paper.yaml names today."""

from __future__ import annotations

import json
import os
import sys
import tarfile
from pathlib import Path

import pandas as pd
import pytest

from .commands import script

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu_check")
    brought_back = tmp_path_factory.mktemp("device_out")  # the device tool's $OUT
    env = {"GPU_CHECK_PYTHON": sys.executable, "OUT": str(brought_back)}
    done = script("gpu_check.sh", "--dry", "--out", str(out), env=env)
    return out, done, brought_back


def test_every_part_succeeds_in_order(dry_run):
    out, done, _ = dry_run
    parts = pd.read_csv(out / "parts.csv")
    logs = {
        p: (out / f"{p}.log").read_text()[-2000:] for p in parts.part if (out / f"{p}.log").exists()
    }
    assert done.returncode == 0, (done.stdout[-3000:], logs)
    assert set(parts.part[:3]) == {"environment", "warmup", "parity"}  # parity beside warm-up
    assert list(parts.part[3:]) == ["attention", "summary", "decode", "train_lengths", "train_step"]
    assert (parts.exit.astype(str) == "0").all()
    assert "triton" in (out / "environment.log").read_text()


def test_results_come_back_as_one_archive(dry_run):
    out, _, brought_back = dry_run
    with tarfile.open(brought_back / "gpu_check_dry-cpu.tar.gz") as archive:
        names = {Path(name).name for name in archive.getnames()}
    assert {path.name for path in out.iterdir()} <= names and "parts.csv" in names


def test_attention_rows_measure_ours_and_check_gradients(dry_run):
    out, _, _ = dry_run
    rows = pd.read_csv(out / "attention_cpu.csv")
    assert list(rows.seq_len.drop_duplicates()) == [24, 17]  # longest first
    ours = rows[rows.backend.isin(["triton", "triton_atomic"])]
    assert (ours.status == "ok").all() and set(ours["pass"]) == {
        "forward",
        "backward",
        "forward_backward",
    }
    assert ours.max_abs_err.max() < 1e-5
    # every timed row's gradients checked at its own shape, so with the tiles it timed
    assert ours.max_abs_grad_err.notna().all() and ours.max_abs_grad_err.max() < 1e-5
    assert (ours.samples == 1).all() and (ours.time_p20_ms <= ours.time_p80_ms).all()
    tiles = dict(zip(ours.backend + " " + ours["pass"], ours.tiles, strict=False))  # interpreter's
    assert tiles["triton forward_backward"] == "fwd 16x16 w1 s1; dkdv 16x16 w1 s1; dq 16x16 w1 s1"
    assert tiles["triton_atomic backward"] == "dkdv 16x16 w1 s1"
    cudnn = rows[rows.backend == "torch_cudnn"]
    assert (cudnn.status == "skipped").all()  # no cuDNN on CPU: said, not silently dropped


def test_summary_gives_the_ratios_to_the_library_kernels_per_row(dry_run):
    out, _, _ = dry_run
    summary = pd.read_csv(out / "summary.csv")
    assert {"triton", "triton_atomic", "torch_sdpa"} <= set(summary.backend)
    assert summary.ratio_to_sdpa.notna().all()
    assert (summary[summary.backend == "torch_sdpa"].ratio_to_sdpa == 1.0).all()
    # no cuDNN on CPU: the faster library kernel is SDPA in every setting
    assert summary.cudnn_tflops.isna().all() and (summary.fastest_library == "torch_sdpa").all()
    assert (summary.ratio_to_best_library == summary.ratio_to_sdpa).all()
    assert (summary.samples == 1).all()  # --repeats 1 in the dry run


def test_decode_and_training_steps(dry_run):
    out, _, _ = dry_run
    decode = pd.read_csv(out / "decode_cpu.csv")
    assert (decode.status == "ok").all() and decode.max_abs_diff_vs_recompute.max() < 1e-5
    assert set(decode.backend) == {"triton", "torch_sdpa", "torch_sdpa_unmasked", "naive"}
    assert not decode.cuda_graph.any()  # --cuda-graphs is a no-op on CPU
    plan = json.loads((ROOT / "benchmarks" / "paper_runs.json").read_text())
    steps = pd.read_csv(out / "train_steps.csv")
    assert list(steps.variant) == [v["variant"] for v in plan["variants"]]
    assert (steps.status == "ok").all() and (steps.step_ms > 0).all()
    hours = pd.read_csv(out / "gpu_hours.csv")
    assert hours.iloc[-1].variant == "all"
    assert hours.iloc[-1].gpu_hours == pytest.approx(hours.iloc[:-1].gpu_hours.sum())
    assert hours.iloc[-1].runs == len(plan["seeds"]) * len(plan["variants"])
    assert (steps.autocast == "bf16").all()  # the GPU's mixed-precision path, on CPU
    lengths = pd.read_csv(out / "train_step_lengths_cpu.csv")  # D6's rows, longest length first
    assert list(zip(lengths.sentence_tokens, lengths.variant, strict=True)) == [
        (8, "gru_additive"),
        (8, "transformer"),
        (4, "gru_additive"),
        (4, "transformer"),
    ]
    assert (lengths.status == "ok").all() and (lengths.samples == 1).all()


def test_the_training_plan_matches_config_paper_yaml():
    from softlookup.bench.train_step import plan_of

    configs = [Path("config/config.yaml"), Path("config/paper.yaml")]
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        fresh = plan_of(configs)
    finally:
        os.chdir(cwd)
    committed = json.loads((ROOT / "benchmarks" / "paper_runs.json").read_text())
    assert committed == json.loads(json.dumps(fresh)), (
        "benchmarks/paper_runs.json is stale: python -m softlookup.bench.train_step "
        "--write-plan benchmarks/paper_runs.json"
    )
