"""The `run_config` rule: each run's settings in results/runs/<run>/config.json (contract item 3),
rewritten exactly when a setting of that run changes, by a call of the package (softlookup.config
write-json) like every other rule."""

import json

import yaml

from .commands import snakemake
from .project import project_sources

RUN = "results/runs/sweep_transformer.heads-1-s1/config.json"


def test_run_config_holds_the_settings_and_follows_their_changes(tmp_path):
    workdir = project_sources(tmp_path, copy=True)
    first = snakemake(workdir, RUN, "--configfile", "config/test.yaml")
    assert first.returncode == 0, first.stderr[-2000:]
    settings = json.loads((workdir / RUN).read_text())
    assert set(settings) == {
        "run",
        "variant",
        "base_model",
        "sweep",
        "seed",
        "src",
        "tgt",
        "model",
        "train",
    }
    assert settings["run"] == "sweep_transformer.heads-1-s1" and settings["seed"] == 1
    assert settings["base_model"] == "sweep_transformer" and settings["sweep"] == {"heads": 1}
    assert settings["model"]["heads"] == 1 and "train" not in settings["model"]
    assert settings["train"]["epochs"] == 1  # test.yaml's train defaults

    again = snakemake(workdir, RUN, "--dry-run", "--configfile", "config/test.yaml")
    assert "Nothing to be done" in again.stdout + again.stderr

    config = yaml.safe_load((workdir / "config" / "test.yaml").read_text())
    config["models"]["sweep_transformer"]["train"] = {"lr": 0.004}  # the model's own override
    config["models"]["sweep_transformer"]["dropout"] = 0.05
    changed = workdir / "config" / "changed.yaml"
    changed.write_text(yaml.safe_dump(config))
    rerun = snakemake(workdir, RUN, "--configfile", str(changed))
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    settings = json.loads((workdir / RUN).read_text())
    assert settings["train"]["lr"] == 0.004 and settings["model"]["dropout"] == 0.05
