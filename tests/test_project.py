"""A checkout where the paper has been built (`make paper`, then `make test`, the README's order)
gives every test the outcome of a fresh clone: a test's working directory holds the project's
sources only, never a build's outputs (issue 37)."""

import re
from pathlib import Path

import pytest

from softlookup.config import all_variants, merged_config, select

from .commands import snakemake
from .project import project_sources

# what `make paper` (and `make paper RUN=paper`) leaves in a clone beside its sources
BUILD_OUTPUTS = {
    "paper/paper.pdf": "%PDF-1.5 the finished paper",
    "paper/generated/results.tex": "built",
    "paper/build/paper.aux": "built",
    "results/runs/gru_dot-s1/model.pt": "built",
    "results/tables/scores.csv": "run,test_set,bleu\n",
    "results/paper/config.json": "{}",
    ".snakemake/metadata/cGFwZXIvcGFwZXIucGRm": "{}",
    "runs/paper/paper/paper.pdf": "%PDF-1.5 another config's paper",
}


def built_checkout(path: Path) -> Path:
    """The project's sources with a finished build's outputs in place."""
    checkout = project_sources(path)
    for name, text in BUILD_OUTPUTS.items():
        (checkout / name).parent.mkdir(parents=True, exist_ok=True)
        (checkout / name).write_text(text)
    return checkout


@pytest.mark.parametrize("copy", [False, True], ids=["linked", "copied"])
def test_a_built_checkout_still_plans_every_job_of_the_tests(tmp_path, copy):
    """The dry runs of the tests plan their jobs: the final PDF in the checkout's paper/ made
    Snakemake see the paper as built and plan no training (`assert set() == {'gru_dot-s1'}`)."""
    workdir = project_sources(tmp_path / "work", copy, checkout=built_checkout(tmp_path / "built"))
    assert [name for name in BUILD_OUTPUTS if (workdir / name).exists()] == []
    result = snakemake(workdir, "--configfile", "config/test.yaml", "--dry-run")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Job stats:" in result.stdout, result.stdout[-2000:]  # not "Nothing to be done"
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", result.stdout.split("Job stats:")[1], re.M))
    config = merged_config([workdir / "config" / name for name in ("config.yaml", "test.yaml")])
    runs = len(select(all_variants(config), config.get("run_only"))) * len(config["seeds"])
    assert (jobs["train"], jobs["paper"]) == (str(runs), "1")
