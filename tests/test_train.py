"""Training: resuming after a crash reproduces the uninterrupted run; a checkpoint of other
settings or data is never resumed; the best weights survive reruns; NaN is a recorded result."""

import errno
import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
import torch

from softlookup import train as training
from softlookup.models.checkpoint import CheckpointError, load_model

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


def weights(path):
    return load_model(path).state_dict()


def same_weights(a, b) -> bool:
    return all(torch.equal(a[name], b[name]) for name in a)


def test_a_checkpoint_of_other_settings_starts_fresh(data, tmp_path, capsys):
    torch.set_num_threads(1)
    run = {**RUN, "train": {**RUN["train"], "epochs": 1}}
    first = training.train(run, *data, tmp_path / "run")
    old = weights(tmp_path / "run" / "model.pt")
    capsys.readouterr()
    changed = {**run, "train": {**run["train"], "lr": 0.01}}
    second = training.train(changed, *data, tmp_path / "run")
    assert "starting fresh" in capsys.readouterr().out and "train_config" in second["fingerprint"]
    assert second["resumed_from_epoch"] == 0 and second["epochs"] == 1
    assert second["train_config"]["lr"] == 0.01
    assert not same_weights(old, weights(tmp_path / "run" / "model.pt"))
    # the same settings again: the checkpoint is this run's, nothing is retrained
    third = training.train(changed, *data, tmp_path / "run")
    assert third["resumed_from_epoch"] == 1 and third["best_val_loss"] == second["best_val_loss"]
    assert first["fingerprint"]["data"] == second["fingerprint"]["data"]


def test_a_checkpoint_of_other_data_starts_fresh(data, tmp_path, capsys):
    torch.set_num_threads(1)
    data_dir, spm = data
    other = tmp_path / "other_data"
    shutil.copytree(data_dir, other)
    run = {**RUN, "train": {**RUN["train"], "epochs": 1}}
    training.train(run, data_dir, spm, tmp_path / "run")
    lines = (other / "train.en").read_text().splitlines()
    (other / "train.en").write_text("\n".join(lines[:-5]) + "\n")
    sources = (other / "train.de").read_text().splitlines()
    (other / "train.de").write_text("\n".join(sources[:-5]) + "\n")
    capsys.readouterr()
    meta = training.train(run, other, spm, tmp_path / "run")
    assert "starting fresh" in capsys.readouterr().out
    assert meta["resumed_from_epoch"] == 0 and meta["epochs"] == 1


def test_the_best_weights_survive_a_rerun(data, tmp_path, monkeypatch):
    """Validation loss worst at the last epoch: model.pt holds epoch 1's weights, also when it is
    deleted and the run is rebuilt from its finished checkpoint."""
    torch.set_num_threads(1)
    losses = iter([1.0, 2.0])
    monkeypatch.setattr(training, "validation_loss", lambda *args: next(losses))
    meta = training.train(RUN, *data, tmp_path / "run")
    assert meta["best_epoch"] == 1 and meta["epochs"] == 2
    best = weights(tmp_path / "run" / "model.pt")
    last = torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=True)["model"]
    assert not same_weights(best, last)
    (tmp_path / "run" / "model.pt").unlink()
    rebuilt = training.train(RUN, *data, tmp_path / "run")
    assert rebuilt["best_epoch"] == 1 and rebuilt["resumed_from_epoch"] == 2
    assert same_weights(best, weights(tmp_path / "run" / "model.pt"))


def test_training_length_cap_drops_long_sources(data, tmp_path, capsys):
    run = {**RUN, "train": {**RUN["train"], "epochs": 1, "max_source_words": 8}}
    meta = training.train(run, *data, tmp_path / "run")
    data_dir, _ = data
    sources = (data_dir / "train.de").read_text().splitlines()
    assert meta["train_pairs"] == sum(len(s.split()) <= 8 for s in sources) < len(sources)
    assert "max_source_words=8: kept" in capsys.readouterr().out


def test_the_command_line_reads_the_run_config_file(data, tmp_path):
    data_dir, spm = data
    run_dir = tmp_path / "runs" / "gru-s7"
    run_dir.mkdir(parents=True)
    config = {
        **RUN,
        "run": "gru-s7",
        "variant": "gru",
        "base_model": "gru",
        "sweep": {},
        "train": {**RUN["train"], "epochs": 1},
    }
    (run_dir / "config.json").write_text(json.dumps(config))
    training.main(
        [
            "--config",
            str(run_dir / "config.json"),
            "--data-dir",
            str(data_dir),
            "--spm",
            str(spm),
            "--threads",
            "1",
        ]
    )
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["run"]["variant"] == "gru" and meta["epochs"] == 1
    assert {"python", "torch", "commit", "device"} <= set(meta["environment"])
    log = pd.read_csv(run_dir / "log.csv")
    assert {"train_loss", "val_loss", "target_tokens", "wall_s", "tokens_per_s"} <= set(log)


def test_a_compiled_gru_decoder_step_trains_like_the_eager_one(data, tmp_path):
    torch.set_num_threads(1)
    run = {**RUN, "train": {**RUN["train"], "epochs": 1}}
    eager = training.train(run, *data, tmp_path / "eager")
    compiled = training.train(
        {**run, "train": {**run["train"], "compile": True}}, *data, tmp_path / "compiled"
    )
    assert compiled["train_config"]["compile"] and compiled["status"] == "ok"
    assert compiled["best_val_loss"] == pytest.approx(eager["best_val_loss"], rel=1e-4)


def ladder_run(epochs, ladder, patience=5):
    return {
        **RUN,
        "train": {**RUN["train"], "epochs": epochs, "ladder": ladder, "patience": patience},
    }


def test_a_ladder_point_keeps_the_best_weights_of_its_first_epochs(data, tmp_path, monkeypatch):
    """Point k holds the best validation weights of epochs 1..k; the cap is the final model."""
    losses = iter([3.0, 2.0, 2.5, 1.0])  # epoch 2 best by its third; epoch 4 best of all
    monkeypatch.setattr(training, "validation_loss", lambda *args: next(losses))
    meta = training.train(ladder_run(4, [1, 3, 4, "final"]), *data, tmp_path)
    assert meta["stop_reason"] == "epoch cap"
    assert {k: v["weights_epoch"] for k, v in meta["ladder"].items()} == {
        "1": 1,
        "3": 2,
        "final": 4,
    }
    for point in (1, 3):
        kept = load_model(tmp_path / "ladder" / f"e{point}.pt").state_dict()
        assert kept.keys() == load_model(tmp_path / "model.pt").state_dict().keys()
    three = load_model(tmp_path / "ladder" / "e3.pt").state_dict()
    final = load_model(tmp_path / "model.pt").state_dict()
    assert not all(torch.equal(three[name], final[name]) for name in final)


def test_a_point_past_an_early_stop_is_the_final_model(data, tmp_path, monkeypatch):
    losses = iter([2.0, 2.5, 2.6])  # no better epoch after the first: patience 2 stops at 3
    monkeypatch.setattr(training, "validation_loss", lambda *args: next(losses))
    meta = training.train(ladder_run(10, [2, 8], patience=2), *data, tmp_path)
    assert meta["stop_reason"] == "early stop" and meta["epochs"] == 3
    assert meta["ladder"]["8"] == {"weights_epoch": 1, "val_loss": 2.0, "stopped_before": True}
    eight = (tmp_path / "ladder" / "e8.pt").read_bytes()
    assert eight == (tmp_path / "model.pt").read_bytes()


def test_a_ladder_point_added_after_training_is_refused(data, tmp_path):
    training.train(ladder_run(2, []), *data, tmp_path)
    with pytest.raises(RuntimeError, match="ladder point 1 was not kept"):
        training.train(ladder_run(2, [1]), *data, tmp_path)  # same checkpoint: ladder not in it


# ---- a failed write (issue 35): which file, the OS reason, in one line; no partial file left ----


def full_disk(real_statvfs):
    """os.statvfs as on a full disk: every other field as it is."""

    def statvfs(path):
        stats = real_statvfs(path)
        fields = [
            getattr(stats, name)
            for name in (
                "f_bsize",
                "f_frsize",
                "f_blocks",
                "f_bfree",
                "f_bavail",
                "f_files",
                "f_ffree",
                "f_favail",
                "f_flag",
                "f_namemax",
            )
        ]
        fields[3] = fields[4] = 0  # f_bfree, f_bavail
        return os.statvfs_result(fields)

    return statvfs


def torch_full_disk(state, path):
    """torch.save on a full disk: half a zip file, then torch's own words."""
    with open(path, "wb") as stream:
        stream.write(b"PK\x03\x04" + b"\0" * 100)
    raise RuntimeError(
        "[enforce fail at inline_container.cc:672] . unexpected pos 552064 vs 551956"
    )


def test_a_checkpoint_on_a_full_disk_says_so_and_keeps_the_last_good_one(tmp_path, monkeypatch):
    from softlookup.atomic import WriteError
    from softlookup.models.checkpoint import save_atomic

    path = tmp_path / "checkpoint.pt"
    save_atomic({"epoch": 1}, path)
    monkeypatch.setattr(torch, "save", torch_full_disk)
    monkeypatch.setattr(os, "statvfs", full_disk(os.statvfs))
    with pytest.raises(WriteError) as failed:
        save_atomic({"epoch": 2}, path)
    assert (
        str(failed.value) == f"cannot write {path}: No space left on device (partial file removed)"
    )
    assert failed.value.errno == errno.ENOSPC
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.pt"]  # no .partial left
    assert torch.load(path, weights_only=True) == {"epoch": 1}


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (errno.ENOSPC, "No space left on device"),
        (errno.EROFS, "Read-only file system"),
        (errno.EACCES, "Permission denied"),
    ],
)
def test_a_failed_write_names_the_file_and_the_os_reason(tmp_path, monkeypatch, code, reason):
    from softlookup.atomic import WriteError
    from softlookup.models.checkpoint import copy_atomic
    from softlookup.rundir import write_json

    def refused(source, target):
        Path(target).write_bytes(b"half")
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(shutil, "copyfile", refused)
    source, target = tmp_path / "best.pt", tmp_path / "model.pt"
    source.write_bytes(b"weights")
    with pytest.raises(WriteError, match=f"^cannot write {target}: {reason} "):
        copy_atomic(source, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best.pt"]

    def refused_text(self, text):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(Path, "write_text", refused_text)
    with pytest.raises(WriteError, match=f"cannot write {tmp_path / 'meta.json'}: {reason}"):
        write_json({"status": "ok"}, tmp_path / "meta.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best.pt"]


def test_a_source_that_cannot_be_read_is_not_called_a_failed_write(tmp_path, monkeypatch):
    from softlookup.atomic import WriteError
    from softlookup.models.checkpoint import copy_atomic

    source, target = tmp_path / "best.pt", tmp_path / "model.pt"

    def unreadable(source, target):
        raise PermissionError(errno.EACCES, "Permission denied", str(source))

    monkeypatch.setattr(shutil, "copyfile", unreadable)
    with pytest.raises(PermissionError) as failed:
        copy_atomic(source, target)
    assert not isinstance(failed.value, WriteError) and failed.value.filename == str(source)
    assert list(tmp_path.iterdir()) == []
