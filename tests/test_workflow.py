"""The whole workflow on config/test.yaml, in a copy of the project in a temporary directory
(Snakemake finds the corpus mirror through $SOFTLOOKUP_MIRROR, set for the session by
conftest.py)."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from fnmatch import fnmatch
from pathlib import Path

import pandas as pd
import pytest
import yaml

from softlookup.claims.verdicts import VERDICTS
from softlookup.config import all_variants, merged_config, select

from .commands import bare_environment, snakemake, snakemake_command
from .project import project_sources


def clone_in_a_path_with_a_space(parent: Path) -> tuple[Path, Path]:
    """A copy of the project at `<parent>/with space/é/p` with its own .venv inside, as `make`
    creates it (here a link to the venv running the tests), and that venv's Python: its path,
    which every rule calls, has a space and a non-ASCII letter."""
    workdir = parent / "with space" / "é" / "p"
    workdir.mkdir(parents=True)
    project_sources(workdir, copy=True)
    (workdir / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    return workdir, workdir / ".venv" / "bin" / "python"


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """The whole DAG, run from a clone whose path has a space and a non-ASCII letter."""
    workdir, python = clone_in_a_path_with_a_space(tmp_path_factory.mktemp("workflow"))
    result = snakemake(workdir, "--configfile", "config/test.yaml", python=python, cores=2)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return workdir


@pytest.mark.workflow
def test_workflow_builds_the_paper_tables_and_figure(finished_run):
    pdf = finished_run / "paper" / "paper.pdf"
    assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 20_000
    figure = finished_run / "results" / "figures" / "bleu_by_length.pdf"
    assert figure.read_bytes()[:5] == b"%PDF-"

    scores = pd.read_csv(finished_run / "results" / "tables" / "scores.csv")
    config = merged_config(
        [finished_run / "config" / name for name in ("config.yaml", "test.yaml")]
    )
    variants = select(all_variants(config), config.get("run_only"))
    runs = {f"{variant}-s{seed}" for variant in variants for seed in config["seeds"]}
    assert set(scores.run) == runs
    overall = scores[(scores.bucket == "all") & scores.metric.isin(["bleu", "chrf"])]
    assert len(overall) == len(runs) * len(config["evaluate"]["test_sets"]) * 2
    assert overall.value.between(0, 100).all() and (overall.ci_low <= overall.ci_high).all()
    assert (overall[overall.metric == "chrf"].value > 0).all()
    assert overall.signature.str.contains("nrefs:1").all()
    assert (scores.tokens_per_s > 0).all()
    assert set(scores.status) == {"ok"}

    claims = pd.read_csv(finished_run / "results" / "claims" / "claims.csv")
    spec = yaml.safe_load((finished_run / "config" / "claims.yaml").read_text())
    assert set(claims.id) == {claim["id"] for claim in spec["claims"]}
    assert claims.verdict.isin(VERDICTS).all()
    verdicts = claims.set_index("id").verdict
    exact = verdicts[verdicts.index.str.match(r"[AC]")]
    assert (exact.drop("A3") == "reproduced").all(), exact
    assert verdicts["A3"] == "partly"  # token 1's row ties: token 3 is the peak of two rows

    setup = (finished_run / "results" / "paper" / "generated" / "setup.tex").read_text()
    assert (
        "the training split holds 400 pairs" in setup and "the validation split 1,014" in setup
    )  # the manifest's


@pytest.mark.workflow
def test_a_finished_workflow_has_nothing_left_to_do(finished_run):
    result = snakemake(finished_run, "--configfile", "config/test.yaml", "--dry-run")
    assert result.returncode == 0
    assert "Nothing to be done" in result.stdout + result.stderr


@pytest.mark.workflow
def test_the_reviewer_report_bundles_the_outputs(finished_run):
    result = snakemake(finished_run, "--configfile", "config/test.yaml", "--report", "report.zip")
    assert result.returncode == 0, result.stderr[-2000:]
    with zipfile.ZipFile(finished_run / "report.zip") as report:
        names = report.namelist()
    assert any(name.endswith("paper.pdf") for name in names)
    assert any(name.endswith("claims.csv") for name in names)


def planned_jobs(dry_run_output: str) -> dict[str, int]:
    """The 'Job stats' table of a dry run: rule -> number of jobs."""
    table = dry_run_output.split("Job stats:")[1].split("total")[0]
    rows = [line.split() for line in table.splitlines()]
    return {row[0]: int(row[1]) for row in rows if len(row) == 2 and row[1].isdigit()}


# A deleted file of a finished build, and the jobs a rerun plans (issue 49, part 1): the one that
# writes it and those that read it, never another run's training or the corpus's preparation.
# (Snakemake reruns a job whose output is missing only when a target, or a job that runs anyway,
# needs it: rule all names every file of the build, common.smk's get_final_output.)
REPAIRS = {
    "results/runs/gru_none-s1/hyp.test_2016_flickr.en": {"translate": 1, "score": 1},
    "results/runs/gru_none-s1/model.pt": {"train": 1, "translate": 2, "score": 2},
    "results/tables/scores.csv": {"collect_scores": 1},
}


@pytest.mark.workflow
@pytest.mark.parametrize("deleted", REPAIRS)
def test_a_rerun_rebuilds_a_deleted_file_and_what_depends_on_it(finished_run, deleted):
    aside = finished_run / "aside"
    (finished_run / deleted).rename(aside)  # put back below, its time unchanged
    try:
        result = snakemake(finished_run, "--configfile", "config/test.yaml", "--dry-run")
    finally:
        aside.rename(finished_run / deleted)
    assert result.returncode == 0, result.stderr[-3000:]
    jobs = planned_jobs(result.stdout)
    for rule, count in REPAIRS[deleted].items():
        assert jobs.get(rule) == count, (rule, jobs)
    for rule in ("fetch_corpus_file", "prepare_corpus", "train_bpe", "run_config", "train"):
        assert jobs.get(rule, 0) == REPAIRS[deleted].get(rule, 0), (rule, jobs)
    assert {"collect_scores", "paper"} <= set(jobs)  # the tables and the paper read it


@pytest.mark.workflow
def test_adding_a_sweep_value_adds_only_its_jobs(finished_run):
    config = yaml.safe_load((finished_run / "config" / "test.yaml").read_text())
    config["sweeps"] = {"heads": {"model": "sweep_transformer", "key": "heads", "values": [1, 4]}}
    # and its paired test, which the claims check asks for (test.yaml's base has 2 heads)
    heads = {"a": "sweep_transformer.heads-1", "test_set": "test_2016_flickr"}
    config["comparisons"] = {
        "d5_heads2_vs_heads1": {**heads, "b": "sweep_transformer"},
        "d5_heads4_vs_heads1": {**heads, "b": "sweep_transformer.heads-4"},
    }
    extended = finished_run / "config" / "extended.yaml"
    extended.write_text(yaml.safe_dump(config, sort_keys=False))  # as a user edits: same order
    result = snakemake(finished_run, "--configfile", str(extended), "--dry-run")
    jobs = planned_jobs(result.stdout)
    assert (jobs["train"], jobs["translate"], jobs["score"]) == (1, 2, 2)
    assert "prepare_corpus" not in jobs and "train_bpe" not in jobs
    assert "results/runs/sweep_transformer.heads-4-s1/model.pt" in result.stdout


@pytest.mark.workflow
def test_more_seeds_for_one_variant_add_only_its_runs(finished_run):
    extended = finished_run / "config" / "more_seeds.yaml"
    extended.write_text("more_seeds: {gru_dot: [2]}\n")
    result = snakemake(finished_run, "--configfile", "config/test.yaml", str(extended), "--dry-run")
    jobs = planned_jobs(result.stdout)
    assert jobs["train"] == 1 and "results/runs/gru_dot-s2/model.pt" in result.stdout
    assert "gru_none-s2" not in result.stdout  # the other variants keep the config's seeds
    assert {"compare", "collect_scores"} <= set(jobs)  # its pairs now have two seeds


def test_every_kind_of_rule_runs_from_a_path_with_a_space_and_an_accent(tmp_path):
    """The two rules that were `run:` blocks (Snakemake starts those through an unquoted
    interpreter path) and a shell rule (issue 25, case 1); `finished_run` runs the whole DAG
    from such a path."""
    workdir, python = clone_in_a_path_with_a_space(tmp_path)
    run, paper, corpus = (
        "results/runs/gru_none-s1/config.json",
        "results/paper/config.json",
        "resources/corpora/multi30k/val.de.gz",
    )
    result = snakemake(
        workdir, run, paper, corpus, "--configfile", "config/test.yaml", python=python
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert json.loads((workdir / run).read_text())["run"] == "gru_none-s1"
    assert json.loads((workdir / paper).read_text())["seeds"] == [1]
    assert (workdir / corpus).stat().st_size > 0


def test_a_malformed_config_fails_before_any_job_naming_the_key(tmp_path):
    workdir = project_sources(tmp_path, copy=True)
    config = yaml.safe_load((workdir / "config" / "test.yaml").read_text())
    config["models"]["gru_none"]["hiden_dim"] = 32
    bad = workdir / "config" / "bad.yaml"
    bad.write_text(yaml.safe_dump(config))
    result = snakemake(workdir, "--configfile", str(bad), "--dry-run")
    assert result.returncode != 0
    assert "hiden_dim" in result.stderr + result.stdout
    assert not (workdir / "results").exists()


def test_ctrl_c_ends_with_one_line_naming_what_it_stopped(tmp_path):
    """Ctrl-C signals Snakemake and its jobs (the terminal's process group): the run ends with
    one line naming the jobs it stopped and saying the same command resumes, which it does
    (issue 49, part 3). The signal comes once the job runs (its shell has opened its log), a
    second into the coverage simulation, which runs for seconds: Snakemake's log handler
    swallows a KeyboardInterrupt raised while it prints the job it is starting."""
    workdir = project_sources(tmp_path, copy=True)
    command = snakemake_command("results/tables/coverage.csv", "--configfile", "config/test.yaml")
    run = subprocess.Popen(
        command,
        cwd=workdir,
        env=bare_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    job_log = workdir / "results" / "logs" / "coverage.log"
    for _ in range(1200):
        if job_log.exists() or run.poll() is not None:
            break
        time.sleep(0.1)
    time.sleep(1)
    os.killpg(run.pid, signal.SIGINT)
    output = run.stdout.read()
    assert run.wait(timeout=120) != 0, output
    ours = [line for line in output.splitlines() if line.startswith("interrupted: ")]
    assert ours == [
        "interrupted: stopped coverage (results/tables/coverage.csv); run the same command again"
        " to resume (it reruns only what is missing or unfinished)"
    ], output
    resumed = subprocess.run(
        command, check=False, cwd=workdir, env=bare_environment(), capture_output=True, text=True
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert (workdir / "results" / "tables" / "coverage.csv").stat().st_size > 0


@pytest.mark.workflow
def test_the_paper_reads_whole(finished_run):
    """pdftotext finds the ledger and a ledger number, no placeholder, and no blank page."""
    from .test_paper import assert_paper_is_complete

    assert_paper_is_complete(finished_run)


@pytest.mark.workflow
def test_a_rerun_compared_with_its_own_reference(finished_run):
    """`make compare` on the tiny run: against a copy of its own outputs everything is the same;
    a BLEU moved beyond its interval is flagged, a flipped verdict fails the comparison."""
    results = finished_run / "results"
    reference = results / "reference" / "test"
    reference.mkdir(parents=True)
    for table in ("tables/scores.csv", "tables/comparisons.csv", "claims/claims.csv"):
        shutil.copy(results / table, reference / Path(table).name)

    def compare() -> tuple[pd.DataFrame, int]:
        result = snakemake(
            finished_run, "results/compare/compare.md", "--configfile", "config/test.yaml", cores=2
        )
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        table = results / "compare" / "compare.csv"
        check = subprocess.run(
            [sys.executable, "-m", "softlookup.reference.compare", "--check", str(table)],
            check=False,
            capture_output=True,
            text=True,
        )
        return pd.read_csv(table), check.returncode

    try:
        table, status = compare()
        assert set(table.status) == {"same"} and status == 0

        scores = pd.read_csv(reference / "scores.csv")
        moved = scores.index[(scores.metric == "bleu") & (scores.bucket == "all")][0]
        shift = scores.loc[moved, "ci_high"] - scores.loc[moved, "ci_low"] + 5
        scores.loc[moved, ["value", "ci_low", "ci_high"]] += shift  # rerun outside its interval
        scores.to_csv(reference / "scores.csv", index=False)
        claims = pd.read_csv(reference / "claims.csv")
        claims.loc[0, "verdict"] = "pending" if claims.loc[0, "verdict"] != "pending" else "partly"
        claims.to_csv(reference / "claims.csv", index=False)

        table, status = compare()
        assert status == 1
        assert table.query("section == 'bleu'").status.value_counts().get("moved") == 1
        flipped = table.query("section == 'verdict' and status == 'changed'")
        assert flipped.item.tolist() == [claims.loc[0, "id"]]
    finally:
        shutil.rmtree(results / "reference")


@pytest.mark.workflow
def test_a_reference_rejudged_from_its_archive_repeats_its_ledger(finished_run, tmp_path):
    """`make reference`'s snapshot of the tiny build, re-judged by `make rejudge`'s module in a
    scratch run directory from its hypotheses.tar.gz alone: no job that trains, translates or
    measures is planned, and the same code gives the same comparisons, checks and claims."""
    from softlookup.reference import rejudge, snapshot

    results = finished_run / "results"
    reference = tmp_path / "reference" / "test"
    tables = {"scores": "tables", "comparisons": "tables", "seed_variance": "tables"}
    tables |= {"training": "tables", "claims": "claims", "checks": "claims"}
    snapshot.main(
        [
            "--config-name=test",
            f"--config-json={results / 'paper' / 'config.json'}",
            f"--paper={finished_run / 'paper' / 'paper.pdf'}",
            *(
                f"--{kind.replace('_', '-')}={results / f'{where}/{kind}.csv'}"
                for kind, where in tables.items()
            ),
            f"--manifest={next((results / 'data').glob('*/manifest.json'))}",
            f"--benchmarks={results / 'benchmarks'}",
            f"--results={results}",
            f"--out={reference}",
            "--compare-command=make compare CONFIG=config/test.yaml",
            "--rebuild-command=make paper CONFIG=config/test.yaml",
        ]
    )
    scratch = project_sources(tmp_path / "runs" / "rejudge-test", checkout=finished_run)
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    env.update(PATH="/usr/bin:/bin")

    def rejudged(*options: str) -> subprocess.CompletedProcess:
        command = [str(finished_run / ".venv" / "bin" / "python"), "-m", rejudge.__name__]
        arguments = [f"--reference={reference}", f"--directory={scratch}", "--configfile"]
        # the config as the run directory links it (the paper's rerun command names it relative
        # to the run: config/test.yaml, whatever characters the checkout's path holds)
        return subprocess.run(
            [*command, *arguments, str(scratch / "config" / "test.yaml"), *options],
            cwd=finished_run,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )

    plan = rejudged("--dry-run")
    assert plan.returncode == 0, plan.stdout[-3000:] + plan.stderr[-3000:]
    jobs = planned_jobs(plan.stdout)
    assert {"score", "compare", "claims_ledger", "paper"} <= set(jobs)
    assert not [rule for rule in jobs if any(fnmatch(rule, p) for p in rejudge.MEASURING)]
    done = rejudged()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for table in ("tables/comparisons.csv", "claims/checks.csv", "claims/claims.csv"):
        built = pd.read_csv(results / table)
        pd.testing.assert_frame_equal(pd.read_csv(reference / Path(table).name), built)
    assert json.loads((reference / "provenance.json").read_text())["rejudged"]["commit"]
