"""Training: resuming after a crash reproduces the uninterrupted run; NaN is a recorded result."""

import json

import pandas as pd
import pytest
import torch

from softlookup import train as training
from softlookup.models.checkpoint import CheckpointError
from softlookup.evaluate.translate import load_model

from .corpora import tiny_corpus

RUN = {
    "model": {
        "arch": "gru",
        "attention": "additive",
        "emb_dim": 16,
        "hidden_dim": 16,
        "dropout": 0.1,
    },
    "train": {"epochs": 2, "max_tokens": 256, "warmup_steps": 2, "patience": 5},
    "seed": 7,
    "src": "de",
    "tgt": "en",
}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return tiny_corpus(tmp_path_factory.mktemp("data"), {"train": "train", "valid": "val"})


def test_a_run_killed_mid_epoch_resumes_to_the_same_result(data, tmp_path, monkeypatch):
    torch.set_num_threads(1)
    straight = training.train(RUN, *data, tmp_path / "straight")
    assert straight["status"] == "ok" and straight["epochs"] == 2
    steps_per_epoch = pd.read_csv(tmp_path / "straight" / "log.csv").steps[0]

    real_batch_loss, calls = training.batch_loss, []

    def crash_in_second_epoch(*args, **kwargs):
        calls.append(1)
        if len(calls) == steps_per_epoch + 2:
            raise KeyboardInterrupt("killed")
        return real_batch_loss(*args, **kwargs)

    monkeypatch.setattr(training, "batch_loss", crash_in_second_epoch)
    with pytest.raises(KeyboardInterrupt):
        training.train(RUN, *data, tmp_path / "resumed")
    assert not (tmp_path / "resumed" / "meta.json").exists()
    monkeypatch.setattr(training, "batch_loss", real_batch_loss)
    resumed = training.train(RUN, *data, tmp_path / "resumed")

    straight_log = pd.read_csv(tmp_path / "straight" / "log.csv")
    resumed_log = pd.read_csv(tmp_path / "resumed" / "log.csv")
    columns = ["epoch", "steps", "train_loss", "val_loss", "lr"]
    pd.testing.assert_frame_equal(straight_log[columns], resumed_log[columns])
    assert resumed["best_val_loss"] == straight["best_val_loss"]
    a = load_model(tmp_path / "straight" / "model.pt").state_dict()
    b = load_model(tmp_path / "resumed" / "model.pt").state_dict()
    assert all(torch.equal(a[name], b[name]) for name in a)


def test_a_nan_loss_is_recorded_as_diverged(data, tmp_path, monkeypatch):
    monkeypatch.setattr(
        training,
        "batch_loss",
        lambda *args, **kwargs: torch.tensor(float("nan"), requires_grad=True),
    )
    meta = training.train(RUN, *data, tmp_path / "run")
    assert meta["status"] == "diverged"
    on_disk = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert on_disk["status"] == "diverged" and (tmp_path / "run" / "model.pt").exists()


def test_truncated_or_foreign_checkpoints_fail_clearly(data, tmp_path):
    run = {**RUN, "train": {**RUN["train"], "epochs": 1}}
    training.train(run, *data, tmp_path / "run")
    model_file = tmp_path / "run" / "model.pt"
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(model_file.read_bytes()[: model_file.stat().st_size // 2])
    with pytest.raises(CheckpointError, match="truncated.pt cannot be read"):
        load_model(truncated)
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(2)}, foreign)
    with pytest.raises(CheckpointError, match="missing"):
        load_model(foreign)


def test_unknown_train_key_is_named():
    with pytest.raises(ValueError, match="epoks"):
        training.TrainConfig.from_dict({"epoks": 3})
