"""The reviewer kit: snapshot a build, compare a rerun with it, compare two builds across scale."""

import json
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from softlookup import atomic
from softlookup.reference import archive, compare, rejudge, snapshot


def build(directory, bleu=30.0, verdict="reproduced", delta=2.0):
    """A small build: one claim of each kind, one BLEU row, one paired comparison."""
    directory.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(
        [
            {
                "id": "A3",
                "verdict": "reproduced",
                "measured": "0.401",
                "value": 0.401,
                "ci_low": None,
                "ci_high": None,
            },
            {
                "id": "D1",
                "verdict": verdict,
                "measured": "+2.0 [1.0, 3.0]",
                "value": delta,
                "ci_low": 1.0,
                "ci_high": 3.0,
            },
            {
                "id": "D7",
                "verdict": "reproduced",
                "measured": "3.1x",
                "value": 3.1,
                "ci_low": None,
                "ci_high": None,
            },
        ]
    ).to_csv(directory / "claims.csv", index=False)
    pd.DataFrame(
        [
            {
                "run": "gru_dot-s1",
                "test_set": "test",
                "bucket": "all",
                "metric": "bleu",
                "value": bleu,
                "ci_low": 28.5,
                "ci_high": 31.5,
            }
        ]
    ).to_csv(directory / "scores.csv", index=False)
    pd.DataFrame(
        [
            {
                "comparison": "d1",
                "test_set": "test",
                "bucket": "all",
                "metric": "bleu",
                "delta": delta,
                "ci_low": 1.0,
                "ci_high": 3.0,
            }
        ]
    ).to_csv(directory / "comparisons.csv", index=False)
    return directory


def run_compare(reference, current, tmp_path):
    return compare.main(
        [
            "--reference",
            str(reference),
            "--scores",
            str(current / "scores.csv"),
            "--comparisons",
            str(current / "comparisons.csv"),
            "--claims",
            str(current / "claims.csv"),
            "--out",
            str(tmp_path / "out.csv"),
            "--report",
            str(tmp_path / "out.md"),
        ]
    )


def test_a_copy_of_the_reference_is_the_same_everywhere(tmp_path):
    reference = build(tmp_path / "ref")
    assert run_compare(reference, build(tmp_path / "cur"), tmp_path) == 0
    table = pd.read_csv(tmp_path / "out.csv")
    assert set(table.status) == {"same"}
    assert compare.main(["--check", str(tmp_path / "out.csv")]) == 0
    assert "yes: every claim verdict held" in (tmp_path / "out.md").read_text()


def test_bleu_inside_the_interval_is_within_tolerance_and_outside_is_moved(tmp_path):
    reference = build(tmp_path / "ref")
    assert run_compare(reference, build(tmp_path / "in", bleu=31.0), tmp_path) == 0
    bleu = pd.read_csv(tmp_path / "out.csv").query("section == 'bleu'")
    assert bleu.status.tolist() == ["within tolerance"]
    assert run_compare(reference, build(tmp_path / "out", bleu=33.0), tmp_path) == 0
    bleu = pd.read_csv(tmp_path / "out.csv").query("section == 'bleu'")
    assert bleu.status.tolist() == ["moved"]
    assert "| bleu | gru_dot-s1/test/all | 30 | 33 | moved |" in (tmp_path / "out.md").read_text()


def test_a_flipped_verdict_fails_the_comparison(tmp_path):
    reference = build(tmp_path / "ref")
    current = build(tmp_path / "cur", verdict="not reproduced", delta=-0.5)
    assert run_compare(reference, current, tmp_path) == 1
    table = pd.read_csv(tmp_path / "out.csv")
    assert table.query("section == 'verdict' and item == 'D1'").status.item() == "changed"
    assert table.query("section == 'paired delta'").status.item() == "moved"  # crossed zero
    assert "NO: a claim verdict changed" in (tmp_path / "out.md").read_text()
    assert compare.main(["--check", str(tmp_path / "out.csv")]) == 1


def test_timings_compare_as_ratios_and_probes_exactly():
    assert compare.judge_claim_value("D7", 3.0, 5.0, None, None)[0] == "within tolerance"
    assert compare.judge_claim_value("D7", 3.0, 7.0, None, None)[0] == "moved"
    assert compare.judge_claim_value("D7", -0.001, -0.02, None, None)[0] == "within tolerance"
    assert compare.judge_claim_value("D7", 1.0, 1.6, None, None)[0] == "within tolerance"
    assert compare.judge_claim_value("A3", 0.401, 0.4011, None, None)[0] == "moved"
    assert compare.judge_claim_value("A3", 0.401, 0.401, None, None)[0] == "same"


def test_across_scale_names_what_holds_and_what_flips(tmp_path):
    a = build(tmp_path / "config")
    b = build(tmp_path / "paper", verdict="not reproduced")
    assert (
        compare.main(
            [
                "--across",
                str(a / "claims.csv"),
                str(b / "claims.csv"),
                "--names",
                "config",
                "paper",
                "--out",
                str(tmp_path / "across.csv"),
                "--report",
                str(tmp_path / "across.md"),
            ]
        )
        == 0
    )
    table = pd.read_csv(tmp_path / "across.csv").set_index("claim")
    assert table.status.to_dict() == {"A3": "holds", "D1": "flips", "D7": "holds"}
    assert "2 holds, 1 flips" in (tmp_path / "across.md").read_text()


CONFIG = {"seeds": [1], "data": {"src": "de", "tgt": "en"}}
RUN_FILES = ("config.json", "meta.json", "log.csv", "hyp.test.en")


def finished_build(directory):
    """build()'s tables as a finished build has them (every file a reference keeps), its
    results/ with the one run's files, the test set, the manifest and a probe; returns the
    files to snapshot and results/."""
    source = build(directory / "tables")
    scores = pd.read_csv(source / "scores.csv").assign(epoch="final")
    scores.to_csv(source / "scores.csv", index=False)
    (source / "paper.pdf").write_bytes(b"%PDF-1.5 tiny")
    (source / "checks.csv").write_text("claim_id\nA3\n")
    (source / "seed_variance.csv").write_text("family,variant,seed_sd\ngru,a,0.4\n")
    (source / "training.csv").write_text("run,epoch,val_loss\na-s1,1,2.5\n")
    results = directory / "results"
    run = results / "runs" / "gru_dot-s1"
    run.mkdir(parents=True)
    for name in RUN_FILES:
        (run / name).write_text(f"{name} of gru_dot-s1\n")
    data = results / "data" / "multi30k-de-en"
    data.mkdir(parents=True)
    for name in ("manifest.json", "test.de", "test.en"):
        (data / name).write_text(f"{name}\n")
    (results / "probes").mkdir()
    (results / "probes" / "spread.csv").write_text("probe,value\nspread,1.0\n")
    files = {kind: source / name for kind, name in snapshot.FILE_NAMES.items()}
    files["manifest"] = data / "manifest.json"
    return files, results


def make_reference(files, results, out, benchmarks, **options):
    options = {"compare_command": "make compare", "rebuild_command": "make paper"} | options
    rebuild = options.pop("rebuild_command")
    compare_line = options.pop("compare_command")
    return snapshot.snapshot(
        files,
        CONFIG,
        out.name,
        benchmarks,
        out,
        compare_line,
        results=results,
        rebuild_command=rebuild,
        **options,
    )


def test_snapshot_keeps_small_outputs_and_provenance(tmp_path):
    files, results = finished_build(tmp_path / "build")
    bench = tmp_path / "benchmarks" / "train"
    bench.mkdir(parents=True)
    for job, seconds in (("a", 10.0), ("b", 20.0)):
        (bench / f"{job}.tsv").write_text(f"s\th:m:s\n{seconds}\t0:00:{seconds:02.0f}\n")
    out = tmp_path / "reference" / "test"
    command = "make compare CONFIG=config/test.yaml"
    provenance = make_reference(
        files, results, out, tmp_path / "benchmarks", compare_command=command, wall_seconds=61
    )
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [*snapshot.FILE_NAMES.values(), "provenance.json", "README.md", archive.ARCHIVE]
    )
    assert provenance["rule_seconds"] == {"train": 30.0}
    assert json.loads((out / "provenance.json").read_text())["config_hash"]
    assert "1.0 min wall" in (out / "README.md").read_text()
    assert "`make compare CONFIG=config/test.yaml`" in (out / "README.md").read_text()
    part = 'make compare CONFIG="config/converged.yaml config/converged_scale.yaml" RUN=converged'
    make_reference(files, results, out, tmp_path / "benchmarks", compare_command=part)
    assert f"`{part}`" in (out / "README.md").read_text()


def test_a_reference_keeps_what_rejudging_needs_byte_identical(tmp_path):
    """Every run file, the test set, the manifest and the probes, restored as they were; an
    unchanged build packs to the same bytes."""
    files, results = finished_build(tmp_path / "build")
    first, second = tmp_path / "reference" / "test", tmp_path / "again" / "test"
    make_reference(files, results, first, tmp_path / "benchmarks")
    make_reference(files, results, second, tmp_path / "benchmarks")
    packed = (first / archive.ARCHIVE).read_bytes()
    assert packed == (second / archive.ARCHIVE).read_bytes()
    restored = tmp_path / "restored"
    names = archive.unpack(first / archive.ARCHIVE, restored)
    expected = sorted(p.relative_to(results) for p in results.rglob("*") if p.is_file())
    assert sorted(names) == expected
    for name in expected:
        assert (restored / name).read_bytes() == (results / name).read_bytes()


def test_snapshot_reads_the_checkout_state_before_replacing_the_reference(tmp_path, monkeypatch):
    """The committed reference is tracked: read after the copies, every snapshot said
    '(uncommitted changes)'."""
    files, results = finished_build(tmp_path / "build")
    out = tmp_path / "reference" / "test"
    seen = []
    real = snapshot.environment
    monkeypatch.setattr(snapshot, "environment", lambda: seen.append(out.exists()) or real())
    make_reference(files, results, out, tmp_path / "benchmarks")
    assert seen == [False]


@pytest.mark.parametrize("interrupted_at", [1, 4, 8])
def test_an_interrupted_snapshot_leaves_the_old_reference_whole(
    tmp_path, monkeypatch, interrupted_at
):
    """Ctrl-C at the k-th copied file: the committed reference is as it was, and no partial
    folder is left beside it."""
    files, results = finished_build(tmp_path / "build")
    out = tmp_path / "reference" / "test"
    make_reference(files, results, out, tmp_path / "benchmarks")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    (results / "runs" / "gru_dot-s1" / "hyp.test.en").write_text("a new translation\n")
    files["paper"].write_bytes(b"%PDF-1.5 rebuilt")
    copies = []
    real_copy = shutil.copyfile

    def interrupting_copy(source, target, **options):
        copies.append(source)
        if len(copies) == interrupted_at:
            raise KeyboardInterrupt
        return real_copy(source, target, **options)

    monkeypatch.setattr(shutil, "copyfile", interrupting_copy)
    with pytest.raises(KeyboardInterrupt):
        make_reference(files, results, out, tmp_path / "benchmarks")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in out.parent.iterdir()] == ["test"]


def test_a_reference_left_aside_by_a_killed_snapshot_is_put_back(tmp_path):
    """Killed between its two renames, a snapshot leaves only `.test.old-<pid>`: the next one
    starts from it, and the temporary folder of one killed while copying is removed."""
    files, results = finished_build(tmp_path / "build")
    out = tmp_path / "reference" / "test"
    make_reference(files, results, out, tmp_path / "benchmarks")
    out.rename(out.with_name(".test.old-123"))
    (out.parent / ".test.tmp-abc").mkdir()
    atomic.clean_leftovers(out)
    assert [p.name for p in out.parent.iterdir()] == ["test"]
    assert (out / archive.ARCHIVE).is_file()


def test_snapshot_refuses_an_unfinished_build_in_one_line(tmp_path):
    files, results = finished_build(tmp_path / "build")
    hypotheses = results / "runs" / "gru_dot-s1" / "hyp.test.en"
    hypotheses.unlink()
    arguments = [f"--{kind.replace('_', '-')}={path}" for kind, path in files.items()]
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    out = tmp_path / "reference" / "test"
    refused = subprocess.run(
        [sys.executable, "-m", "softlookup.reference.snapshot", "--config-name=test",
         f"--config-json={tmp_path / 'config.json'}", *arguments,
         f"--benchmarks={tmp_path}", f"--results={results}", f"--out={out}",
         "--compare-command=make compare", "--rebuild-command=make paper CONFIG=config/test.yaml"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert refused.returncode != 0 and not refused.stdout
    assert refused.stderr.strip().splitlines() == [
        f"cannot make a reference: {hypotheses} is missing; rebuild it with"
        " `make paper CONFIG=config/test.yaml`"
    ]
    assert not out.parent.exists()
    files["paper"].unlink()
    with pytest.raises(FileNotFoundError, match="paper.pdf is missing"):
        make_reference(files, results, out, tmp_path / "benchmarks")


def seed_aware(directory, delta=2.0):
    """build()'s comparison as evaluate.compare now writes it: gru_dot (system b, two seeds) with
    its seed-mean se 1.0 on 4 df, and the delta's seed-aware interval [-1, 5]."""
    table = pd.read_csv(directory / "comparisons.csv")
    table = table.assign(
        system_a="gru_none",
        system_b="gru_dot",
        delta=delta,
        ci_low=-1.0,
        ci_high=5.0,
        df=6.0,
        se_a=0.5,
        df_a=4.0,
        se_b=1.0,
        df_b=4.0,
        seeds=2,
    )
    table.to_csv(directory / "comparisons.csv", index=False)
    return directory


def test_a_rerun_within_the_seed_aware_interval_is_within_tolerance(tmp_path):
    """A rerun on another CPU moves a run as a new seed does: BLEU 33 is outside the run's
    sentence interval [28.5, 31.5] but inside 30 +- t(4) sqrt(2) 1.0 = 30 +- 3.93; the delta
    +4 is outside its old interval [1, 3], inside the seed-aware [-1, 5]. Every verdict held."""
    reference = seed_aware(build(tmp_path / "ref"))
    current = seed_aware(build(tmp_path / "cur", bleu=33.0), delta=4.0)
    assert run_compare(reference, current, tmp_path) == 0
    table = pd.read_csv(tmp_path / "out.csv").set_index("section")
    assert table.loc["bleu", "status"] == "within tolerance"
    assert table.loc["paired delta", "status"] == "within tolerance"
    assert table.loc["bleu", "tolerance"] == compare.SEED_AWARE
    assert run_compare(reference, build(tmp_path / "far", bleu=34.5), tmp_path) == 0
    assert pd.read_csv(tmp_path / "out.csv").query("section == 'bleu'").status.item() == "moved"
    changed = build(tmp_path / "changed", bleu=33.0, verdict="not reproduced")
    assert run_compare(reference, changed, tmp_path) == 1  # a changed verdict still fails


def test_an_old_reference_falls_back_to_its_ci_columns_and_says_so(tmp_path):
    reference = build(tmp_path / "ref")  # no df columns: written before seed-aware intervals
    assert run_compare(reference, build(tmp_path / "cur", bleu=31.0), tmp_path) == 0
    table = pd.read_csv(tmp_path / "out.csv").set_index("section")
    assert table.loc["bleu", "status"] == "within tolerance"
    assert "predates seed-aware intervals" in table.loc["bleu", "tolerance"]
    assert "predates seed-aware intervals" in table.loc["paired delta", "tolerance"]


def test_rejudging_restores_the_archive_and_stores_the_rejudged_files_whole(tmp_path):
    """restore empties the scratch results/ and fills it from the archive; store replaces the
    re-judged files, keeps the archive and records the re-judging in provenance.json."""
    files, results = finished_build(tmp_path / "build")
    reference = tmp_path / "reference" / "test"
    make_reference(files, results, reference, tmp_path / "benchmarks")
    scratch = tmp_path / "runs" / "rejudge-test"
    (scratch / "results" / "tables").mkdir(parents=True)
    (scratch / "results" / "tables" / "stale.csv").write_text("left by an earlier run\n")
    restored = rejudge.restore(reference, scratch)
    assert sorted(p.relative_to(scratch / "results") for p in scratch.rglob("*.*")) == restored
    for name, made in rejudge.REJUDGED.items():
        (scratch / made).parent.mkdir(parents=True, exist_ok=True)
        (scratch / made).write_text(f"re-judged {name}\n")
    archived = (reference / archive.ARCHIVE).read_bytes()
    rejudge.store(reference, scratch)
    assert (reference / "claims.csv").read_text() == "re-judged claims.csv\n"
    assert (reference / archive.ARCHIVE).read_bytes() == archived
    provenance = json.loads((reference / "provenance.json").read_text())
    assert provenance["rejudged"]["commit"] and provenance["config_hash"]


def test_a_reference_without_its_archive_cannot_be_rejudged(tmp_path):
    reference = tmp_path / "reference" / "test"
    reference.mkdir(parents=True)
    with pytest.raises(rejudge.RejudgeError, match="has no hypotheses.tar.gz"):
        rejudge.restore(reference, tmp_path / "runs" / "rejudge-test")
