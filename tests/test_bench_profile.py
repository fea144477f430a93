"""The training-step profile (scripts/profile_training.py, issue 50): every phase timed, the operators ranked by self time,
and the time no operator accounts for reported, for a GRU and a Transformer."""

from __future__ import annotations

import pandas as pd
import pytest

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
    phases, ops = profile_variant(entry, data_dir, steps=2, warmup=1, top=5)
    phases, ops = pd.DataFrame(phases), pd.DataFrame(ops)
    assert phases["phase"].tolist() == PHASES
    assert (phases["ms_per_step"] > 0).all(), phases  # the decoder's own, after the output's
    assert phases["share"].sum() == pytest.approx(1.0)
    assert ops["op"].iloc[-1] == "unattributed" and len(ops) == 6
    ranked = ops["self_ms_per_step"].iloc[:-1]
    assert ranked.is_monotonic_decreasing and (ranked > 0).all(), ops
    assert ops.loc[ops["op"] == "aten::mm", "calls_per_step"].item() > 0
    # the profiler's clock and the phases' are two clocks: a few percent apart on 2 tiny steps
    assert ops["share"].iloc[:-1].sum() <= 1.1, ops
