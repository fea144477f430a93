"""profiles/slurm: what each job asks of SLURM, checked against a stand-in sbatch (fast, runs
everywhere) and on a live one-node SLURM cluster (marker `slurm`, run by .ci/run; skipped with the
reason where SLURM cannot be started)."""

import ast
import fnmatch
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from . import slurm_cluster
from .corpora import mirror
from .project import ROOT, project_sources

SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
FAKE_SBATCH = """#!/bin/sh
echo "$@" >> "{log}"
echo "stand-in sbatch: not submitting" >&2
exit 1
"""


def fake_slurm(bin_dir: Path, log: Path) -> None:
    """sbatch records its arguments and refuses; sacctmgr and sinfo answer as a cluster would."""
    bin_dir.mkdir()
    scripts = {
        "sbatch": FAKE_SBATCH.format(log=log),
        "sacctmgr": '#!/bin/sh\necho "${SBATCH_ACCOUNT:-none}"\n',
        "sinfo": '#!/bin/sh\necho PARTITION\necho "${SBATCH_PARTITION:-debug}*"\n',
        "sacct": "#!/bin/sh\nexit 1\n",
        "scontrol": "#!/bin/sh\nexit 1\n",
    }
    for name, text in scripts.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)


def requests(tmp_path: Path, *configs: str) -> dict[str, str]:
    """rule -> the sbatch arguments of its job's first attempt, for a training job and the CPU
    benchmark."""
    workdir = project_sources(tmp_path / "work")
    data = workdir / "results" / "data" / "multi30k-de-en"
    data.mkdir(parents=True)
    now = time.time()
    for age, name in enumerate(("spm.model", "train.de", "train.en", "valid.de", "valid.en")):
        (data / name).touch()
        os.utime(data / name, (now - age, now - age))  # the BPE model newer than its inputs
    log = tmp_path / "sbatch.log"
    fake_slurm(tmp_path / "bin", log)
    env = {
        **os.environ,
        "PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin",
        "SBATCH_ACCOUNT": "acct1",
        "SBATCH_PARTITION": "gpuq",
    }
    result = subprocess.run(
        [
            SNAKEMAKE,
            "--workflow-profile",
            "profiles/slurm",
            "--configfile",
            *configs,
            "--slurm-init-seconds-before-status-checks",
            "1",
            "--jobs",
            "4",
            "results/runs/transformer-s1/model.pt",
            "results/bench/attention_cpu.csv",
        ],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert log.exists(), result.stdout[-3000:] + result.stderr[-3000:]
    found = {}
    for line in log.read_text().splitlines():
        rule = re.search(r"--comment rule_(\S+)", line).group(1).split("_wildcards")[0]
        found.setdefault(rule, line.split(" --wrap")[0])  # the first attempt's
    return found


def test_the_sbatch_request_keeps_runtime_memory_cpus_and_gpus(tmp_path):
    asked = requests(tmp_path, "config/paper.yaml")
    assert set(asked) == {"train", "bench_attention"}  # run_config is a local rule
    train = asked["train"]
    for option in ("-A acct1", "-p gpuq", "-t 240", "--mem 32000", "--cpus-per-task=8", "--gpus=1"):
        assert option in train, (option, train)
    bench = asked["bench_attention"]
    assert "--gpus" not in bench and "gres" not in bench  # the CPU benchmark never asks
    assert "--cpus-per-task=8" in bench and "-A acct1" in bench and "-t 60" in bench


def test_one_switch_turns_the_gpu_requests_off(tmp_path):
    off = tmp_path / "cpu.yaml"
    off.write_text(yaml.safe_dump({"resources": {"gpus_per_training_job": 0}}))
    asked = requests(tmp_path, "config/paper.yaml", str(off))
    assert "--gpus" not in asked["train"] and "-t 240" in asked["train"]


def rule_blocks() -> dict[str, str]:
    """{rule: its text} of every rule in workflow/rules/*.smk and the Snakefile; a rule made by
    `use rule a as b` has a's text, and its own."""
    blocks = {}
    for path in [ROOT / "Snakefile", *sorted((ROOT / "workflow" / "rules").glob("*.smk"))]:
        parts = re.split(
            r"^ *(?:(?:rule|checkpoint) (\w+)|use rule (\w+) as (\w+) with):\n",
            path.read_text(),
            flags=re.M,
        )
        for name, parent, copy, text in zip(*(parts[i::4] for i in (1, 2, 3, 4)), strict=True):
            blocks[name or copy] = blocks[parent] + text if parent else text
    return blocks


def cluster_patterns() -> tuple[str, ...]:
    """The Snakefile's CLUSTER_RULES: names or patterns of the rules whose jobs are queued."""
    found = re.search(
        r"^CLUSTER_RULES = (\(.*?\))$", (ROOT / "Snakefile").read_text(), flags=re.M | re.S
    )
    return ast.literal_eval(found.group(1))


def test_only_the_named_heavy_rules_reach_the_cluster(tmp_path):
    workdir = project_sources(tmp_path)
    result = subprocess.run(
        [SNAKEMAKE, "--list-rules"], cwd=workdir, capture_output=True, text=True, check=False
    )
    rules, blocks, patterns = set(result.stdout.split()), rule_blocks(), cluster_patterns()
    assert set(blocks) <= rules, set(blocks) - rules  # (rules named in code: only --list-rules)
    stale = [p for p in patterns if not fnmatch.filter(rules, p)]
    assert not stale, stale  # each names a rule of the workflow
    queued = {rule for rule in rules if any(fnmatch.fnmatchcase(rule, p) for p in patterns)}
    # a rule that asks for threads or resources is heavy: it must be named, not run locally
    asking = {
        name
        for name, text in blocks.items()
        if re.search(r"^    (threads|resources):", text, flags=re.M)
    }
    assert asking <= queued, asking - queued
    # every other rule is local, the light ones added later included
    assert {"fetch_corpus_file", "paper", "figure_length_curves"}.isdisjoint(queued)


# --- a live one-node SLURM --------------------------------------------------------------------


def cancel_first_training_job(env: dict, run: str, cancelled: list, stop: threading.Event):
    """Play the time limit: cancel the first SLURM job that trains `run`, once."""
    comment = f"rule_train_wildcards_{run.replace('-s', '_')}"
    while not stop.is_set() and not cancelled:
        for job in slurm_cluster.jobs(env):
            if job.get("Comment") == comment and job.get("JobState") in ("PENDING", "RUNNING"):
                subprocess.run(["scancel", job["JobId"]], env=env, check=False)
                cancelled.append(job["JobId"])
                return
        time.sleep(0.3)


@pytest.mark.slurm
def test_the_tiny_config_runs_on_a_live_slurm(tmp_path):
    reason = slurm_cluster.unavailable()
    if reason:
        pytest.skip(reason)
    workdir = project_sources(tmp_path / "work", copy=True)
    # the tiny config, three of its runs (about 30 SLURM jobs), a training job may be retried once
    runs = ["gru_none", "gru_dot", "transformer"]
    retry = workdir / "retry.yaml"
    retry.write_text(
        yaml.safe_dump(
            {
                "run_only": runs,
                "resources": {"train_retries": 1},
                "analysis": {"runs": [f"{run}-s1" for run in runs], "every_run": False},
            }
        )
    )
    started = time.monotonic()
    with slurm_cluster.local_slurm(tmp_path / "slurm", gres=True) as env:
        env = {
            **env,
            "SOFTLOOKUP_MIRROR": str(mirror()),
            "SBATCH_PARTITION": "debug",
            "PATH": "/usr/bin:/bin",
        }
        cancelled, stop = [], threading.Event()
        watcher = threading.Thread(
            target=cancel_first_training_job,
            args=(env, "gru_none-s1", cancelled, stop),
            daemon=True,
        )
        watcher.start()
        # The README's command, plus only the status option a cluster without accounting needs
        command = [
            SNAKEMAKE,
            "--workflow-profile",
            "profiles/slurm",
            "--configfile",
            "config/test.yaml",
            str(retry),
            "--slurm-status-command",
            "squeue",
            "--slurm-keep-successful-logs",
            "--slurm-init-seconds-before-status-checks",
            "2",
            "--latency-wait",
            "10",
        ]
        result = subprocess.run(
            command, cwd=workdir, env=env, capture_output=True, text=True, check=False, timeout=2400
        )
        stop.set()
        output = result.stdout + result.stderr
        (tmp_path / "snakemake.out").write_text(output)
        assert result.returncode == 0, output[-5000:]
        main_run = time.monotonic() - started

        assert (workdir / "paper" / "paper.pdf").read_bytes()[:5] == b"%PDF-"
        logs = workdir / ".snakemake" / "slurm_logs"
        trained = {path.parent.name for path in logs.glob("rule_train/*/*.log")}
        assert trained == {f"{run}_1" for run in runs}  # SLURM job ids: rule_train/<run>/<id>.log
        # local rules never went through sbatch
        assert not (logs / "rule_paper").exists() and not (logs / "rule_fetch_corpus_file").exists()
        # the cancelled training job was resubmitted and finished
        assert cancelled, "no training job was seen in the queue"
        attempts = {
            job["JobId"]: job["JobState"]
            for job in slurm_cluster.jobs(env)
            if job.get("Comment") == "rule_train_wildcards_gru_none_1"
        }
        assert attempts.pop(cancelled[0]) == "CANCELLED"
        assert "COMPLETED" in attempts.values(), attempts
        cpu_jobs = [
            job
            for job in slurm_cluster.jobs(env)
            if job.get("Comment", "").startswith(("rule_train_", "rule_bench_"))
        ]
        assert cpu_jobs and all("gpu" not in job.get("TresPerJob", "") for job in cpu_jobs)

        # GRES: with the switch on, training asks for and receives one GPU
        gpu = workdir / "gpu.yaml"
        gpu.write_text(yaml.safe_dump({"resources": {"gpus_per_training_job": 1}}))
        # the target before the options (after --configfile or --forcerun it would be read as
        # one more config file or rule name)
        result = subprocess.run(
            [
                SNAKEMAKE,
                "results/runs/gru_none-s1/model.pt",
                *command[1:6],
                str(gpu),
                *command[6:],
                "--forcerun",
                "train",
            ],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=900,
        )
        assert result.returncode == 0, (result.stdout + result.stderr)[-5000:]
        gpu_jobs = [
            job
            for job in slurm_cluster.jobs(env)
            if job.get("Comment") == "rule_train_wildcards_gru_none_1"
            and job.get("JobState") == "COMPLETED"
        ]
        assert any(job.get("TresPerJob") == "gres:gpu:1" for job in gpu_jobs), gpu_jobs
    print(
        f"live SLURM: tiny config {main_run:.0f} s, whole test {time.monotonic() - started:.0f} s"
    )
