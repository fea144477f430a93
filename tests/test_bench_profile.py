"""The training-step profile (scripts/profile_training.py, issue 50): every phase timed, the operators ranked by self time,
the time no operator accounts for reported, and the step's matrix arithmetic counted against the
thread's best matrix-product rate, for a GRU and a Transformer."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

from .commands import load_script
from .corpora import tiny_corpus

profile_training = load_script("profile_training.py")
PHASES, profile_variant = profile_training.PHASES, profile_training.profile_variant

TINY = {
    "gru_additive": {"arch": "gru", "attention": "additive", "emb_dim": 16, "hidden_dim": 16},
    "transformer": {
        "arch": "transformer",
        "d_model": 16,
        "heads": 2,
        "ffn_dim": 32,
        "enc_layers": 1,
        "dec_layers": 1,
    },
}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    data_dir, _ = tiny_corpus(tmp_path_factory.mktemp("data"), {"train": "train", "valid": "val"})
    return data_dir


@pytest.mark.parametrize("variant", sorted(TINY))
def test_a_profile_times_every_phase_and_ranks_the_operators(data_dir, variant):
    entry = {"variant": variant, "model": TINY[variant], "train": {"max_tokens": 128}}
    # every operator kept: which ones make a top 5 depends on the host's load
    phases, ops, flops = profile_variant(entry, data_dir, steps=2, warmup=1, top=1000)
    phases, ops = pd.DataFrame(phases), pd.DataFrame(ops)
    assert phases["phase"].tolist() == PHASES
    assert (phases["ms_per_step"] > 0).all(), phases  # the decoder's own, after the output's
    assert phases["share"].sum() == pytest.approx(1.0)
    assert ops["op"].iloc[-1] == "unattributed" and ops["op"].is_unique
    ranked = ops["self_ms_per_step"].iloc[:-1]
    assert ranked.is_monotonic_decreasing and (ranked > 0).all(), ops
    assert ops.loc[ops["op"] == "aten::mm", "calls_per_step"].item() > 0
    # the profiler's clock and the phases' are two clocks: a few percent apart on 2 tiny steps
    assert ops["share"].iloc[:-1].sum() <= 1.1, ops
    # the floor: the step's products at the best rate; tiny shapes run far below it
    assert flops["gflop_per_step"] > 0 and flops["peak_gflops"] > 0, flops
    assert flops["floor_ms"] == pytest.approx(1e3 * flops["gflop_per_step"] / flops["peak_gflops"])
    assert 0 < flops["floor_share"] < 1 and flops["floor_ms"] < flops["step_ms"], flops


def test_the_flop_count_is_the_products_arithmetic():
    """One (m,k) x (k,n) product forward and backward: 2mkn, then 2 x 2mkn for both gradients."""
    m, k, n = 8, 16, 4
    a = torch.randn(m, k, requires_grad=True)
    b = torch.randn(k, n, requires_grad=True)
    row = profile_training.arithmetic_floor(
        lambda: (a @ b).sum().backward(), step_ms=1.0, variant="mm"
    )
    assert row["gflop_per_step"] * 1e9 == 3 * 2 * m * k * n


@pytest.mark.parametrize("variant", sorted(TINY))
def test_a_compiled_copy_trains_like_the_eager_model_and_is_timed_beside_it(data_dir, variant):
    entry = {"variant": variant, "model": TINY[variant], "train": {"max_tokens": 128}}
    row = profile_training.compiled_ratio(entry, data_dir, steps=2, warmup=1)
    assert row["eager_ms"] > 0 and row["compiled_ms"] > 0, row
    assert row["ratio"] == pytest.approx(row["compiled_ms"] / row["eager_ms"])
    assert row["first_step_s"] > 1e-3 * row["compiled_ms"], row  # the compile comes first
    # the same weights, batches and dropout masks: the losses agree up to float noise
    assert row["max_loss_gap"] < 1e-4, row
