import gzip
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import urllib.error
from pathlib import Path

import numpy as np
import pytest
import yaml
from snakemake.utils import update_config

from softlookup.config import drop_removed
from softlookup.data import sources
from softlookup.data.batching import length_batches, make_batches
from softlookup.data.prepare import (
    assign_days,
    concatenate_consecutive,
    group_sizes,
    join_groups,
    join_to_lengths,
    key_values,
    normalise,
    prepare,
    prepare_days,
    read_pairs,
)

from .commands import make, pytest_session, snakemake, stand_in_venv
from .corpora import FIXTURE_CORPORA, mirror
from .project import ROOT, project_sources


def test_pair_counts_match_the_released_corpus():
    raw = mirror() / "multi30k"
    expected = {"train": 29000, "val": 1014, "test_2016_flickr": 1000}
    for stem, count in expected.items():
        pairs, dropped = read_pairs(raw / f"{stem}.de.gz", raw / f"{stem}.en.gz")
        assert (len(pairs), dropped) == (count, 0), stem


def prepare_multi30k(out: Path, **options) -> dict:
    """prepare() on the mirror's Multi30k, de -> en, train and valid (+ options)."""
    options.setdefault("splits", {"train": "train", "valid": "val"})
    return prepare(mirror() / "multi30k", out, src="de", tgt="en", **options)


def test_prepare_writes_splits_long_test_set_and_manifest(tmp_path):
    manifest = prepare_multi30k(
        tmp_path,
        splits={"train": "train", "valid": "val", "test_2016_flickr": "test_2016_flickr"},
        max_train_pairs=50,
        concat=[3],
    )
    splits = manifest["splits"]
    assert splits["train"]["pairs"] == 50 and splits["train"]["corpus_pairs"] == 29000
    assert splits["test_2016_flickr.concat3"]["examples"] == 333
    assert splits["test_2016_flickr.concat3"]["pairs"] == 999
    assert splits["test_2016_flickr"]["source_words"]["max"] == 30
    concat = (tmp_path / "test_2016_flickr.concat3.de").read_text().splitlines()
    single = (tmp_path / "test_2016_flickr.de").read_text().splitlines()
    assert concat[1] == " ".join(single[3:6])
    assert (
        manifest["inputs"]["train.de.gz"] == sources.registry()["multi30k"]["files"]["train.de.gz"]
    )


DEFAULT = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
EDGES = DEFAULT["evaluate"]["bucket_edges"]


def test_joined_training_keeps_every_pair_once_and_reaches_80_words(tmp_path):
    manifest = prepare_multi30k(
        tmp_path,
        max_train_pairs=None,
        join={"k": [1, 2, 3, 4, 5, 6], "weights": None, "seed": 0},
        bucket_edges=EDGES,
    )
    raw = mirror() / "multi30k"
    pairs, _ = read_pairs(raw / "train.de.gz", raw / "train.en.gz")
    joined = (tmp_path / "train.de").read_text().splitlines()
    # the same words in the same order: an epoch holds exactly the tokens it held before
    assert " ".join(joined) == " ".join(s for s, _ in pairs)
    train = manifest["splits"]["train"]
    assert train["pairs"] == 29000 and train["examples"] == len(joined)
    assert sum(int(k) * n for k, n in train["groups"].items()) == 29000
    # every k carries about a sixth of the pairs (weights 1/k)
    shares = [int(k) * n / 29000 for k, n in train["groups"].items()]
    assert max(shares) < 0.2 and min(shares) > 0.13
    words = np.array([len(line.split()) for line in joined])
    assert np.percentile(words, 99) > 70 and (words > 60).sum() > 500
    assert sum(train["buckets"].values()) == len(joined) and min(train["buckets"].values()) > 500
    assert manifest["splits"]["valid"]["pairs"] == 1014


def test_the_default_join_keeps_long_inputs_in_distribution(tmp_path):
    join = DEFAULT["data"]["join"]
    manifest = prepare_multi30k(
        tmp_path,
        join=join,
        bucket_edges=EDGES,
    )
    train = manifest["splits"]["train"]
    assert train["pairs"] == 29000 and manifest["join"]["weights"] == join["weights"]
    words = np.array(
        [len(line.split()) for line in (tmp_path / "train.de").read_text().split("\n") if line]
    )
    # hundreds of training inputs in every bucket out to >60 words, and some up to ~80
    assert min(train["buckets"].values()) >= 300, train["buckets"]
    assert (words > 70).sum() >= 100


def test_long_test_set_fills_every_bucket_with_50_real_sentences(tmp_path):
    """The default config's joined test set: >= 50 inputs in every bucket out to >60 words."""
    manifest = prepare_multi30k(
        tmp_path,
        splits={"train": "train", "valid": "val", "test_2016_flickr": "test_2016_flickr"},
        max_train_pairs=10,
        joined_tests=DEFAULT["data"]["joined_tests"],
        bucket_edges=EDGES,
    )
    assert "test_long" in DEFAULT["evaluate"]["test_sets"]
    long = manifest["splits"]["test_long"]
    assert list(long["buckets"]) == ["1-10", "11-15", "16-20", "21-30", "31-45", "46-60", ">60"]
    assert min(long["buckets"].values()) >= 50, long["buckets"]
    assert long["pairs"] == 2000
    assert long["joined_from"] == ["test_2016_flickr", "test_2017_flickr"]
    assert long["source_words"]["max"] <= 100
    # the single-sentence test set stops at 30 words: why the joined one exists
    assert manifest["splits"]["test_2016_flickr"]["buckets"]["31-45"] == 0
    # sources and targets stay aligned: each line joins the same consecutive pairs on both sides
    raw = mirror() / "multi30k"
    first, _ = read_pairs(raw / "test_2016_flickr.de.gz", raw / "test_2016_flickr.en.gz")
    src = (tmp_path / "test_long.de").read_text().splitlines()
    tgt = (tmp_path / "test_long.en").read_text().splitlines()
    assert len(src) == len(tgt) == long["examples"] == 634
    assert src[1].startswith(first[1][0]) and tgt[1].startswith(first[1][1])


def test_group_sizes_cover_the_pairs_exactly_and_follow_the_weights():
    sizes = group_sizes(10001, [1, 2, 3], None, seed=3)
    assert sum(sizes) == 10001 and set(sizes) <= {1, 2, 3}
    pairs_per_k = [k * sizes.count(k) for k in (1, 2, 3)]
    assert max(pairs_per_k) / min(pairs_per_k) < 1.2  # 1/k weights: equal pairs per k
    assert group_sizes(50, [4], [1.0], seed=0) == [4] * 12 + [2]
    assert group_sizes(100, [1, 2], [0.5, 0.5], seed=7) == group_sizes(100, [1, 2], [1, 1], seed=7)
    with pytest.raises(ValueError, match="weights"):
        group_sizes(10, [1, 2], [1.0], seed=0)
    with pytest.raises(ValueError, match="positive"):
        group_sizes(10, [0, 2], None, seed=0)


def test_join_groups_and_join_to_lengths_use_consecutive_pairs_once():
    pairs = [(" ".join(["w"] * n), f"t{i}") for i, n in enumerate([3, 4, 5, 2, 8, 1, 6, 7, 2, 9])]
    assert join_groups(pairs[:3], [2, 1]) == [("w w w w w w w", "t0 t1"), ("w w w w w", "t2")]
    joined = join_to_lengths(pairs, [0, 5, 10])
    # round-robin targets: more than 0 words (one pair), more than 5, more than 10, again...
    assert [len(s.split()) for s, _ in joined] == [3, 9, 11, 6, 7, 11]
    assert " ".join(t for _, t in joined) == " ".join(f"t{i}" for i in range(10))
    # pairs left over that cannot reach their target are dropped, not stretched into a bucket
    assert join_to_lengths(pairs[:2], [0, 10]) == [pairs[0]]


def test_key_values_parse_splits():
    assert key_values(["train=train", "test_x=a+b"]) == {"train": "train", "test_x": "a+b"}
    with pytest.raises(Exception, match="NAME=VALUE"):
        key_values(["train"])


def test_normalise_composes_unicode_and_collapses_spaces():
    assert normalise("  Ein  Mann \t läuft \n") == "Ein Mann läuft"
    assert normalise("Ma\u0308dchen") == "Mädchen"


def test_concatenate_drops_the_remainder():
    pairs = [(str(i), str(-i)) for i in range(7)]
    assert concatenate_consecutive(pairs, 3) == [("0 1 2", "0 -1 -2"), ("3 4 5", "-3 -4 -5")]


def corrupted_mirror(tmp_path: Path, origin: Path = FIXTURE_CORPORA) -> Path:
    """A mirror whose multi30k/val.en.gz is `origin`'s with one line too many; val.de.gz is
    `origin`'s (the full mirror's, whose sha256 matches, or the fixture corpus's)."""
    bad_mirror = tmp_path / "mirror"
    (bad_mirror / "multi30k").mkdir(parents=True)
    shutil.copy(origin / "multi30k" / "val.en.gz", bad_mirror / "multi30k" / "val.en.gz")
    with gzip.open(bad_mirror / "multi30k" / "val.en.gz", "ab") as stream:
        stream.write(b"one more line\n")
    (bad_mirror / "multi30k" / "val.de.gz").symlink_to(origin / "multi30k" / "val.de.gz")
    return bad_mirror


def offline(*args, **kwargs):
    raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")


def test_fetch_from_mirror_verifies_sha256(tmp_path):
    dest = sources.fetch("multi30k", "val.en.gz", tmp_path / "val.en.gz", mirror())
    assert sources.sha256_of(dest) == sources.registry()["multi30k"]["files"]["val.en.gz"]


def test_corrupted_mirror_file_fails_naming_it_and_leaves_nothing(tmp_path):
    dest = tmp_path / "out" / "val.en.gz"
    with pytest.raises(sources.ChecksumError, match="multi30k/val.en.gz.*expected"):
        sources.fetch("multi30k", "val.en.gz", dest, corrupted_mirror(tmp_path))
    assert not dest.exists() and list(dest.parent.iterdir()) == []


def test_missing_mirror_file_and_unknown_names_fail_clearly(tmp_path):
    with pytest.raises(FileNotFoundError, match="no multi30k/train.de.gz"):
        sources.fetch("multi30k", "train.de.gz", tmp_path / "x", tmp_path)
    with pytest.raises(LookupError, match="no file 'nope.gz'"):
        sources.fetch("multi30k", "nope.gz", tmp_path / "x", FIXTURE_CORPORA)


@pytest.mark.parametrize(
    "case, corpus, name, expected",
    [
        ("checksum", "multi30k", "val.en.gz", "sha256 mismatch for multi30k/val.en.gz"),
        ("missing file", "multi30k", "test_2017_flickr.en.gz", "has no multi30k/test_2017_flickr"),
        ("unreachable URL", "multi30k", "val.en.gz", "cannot download multi30k/val.en.gz"),
        ("unknown corpus", "multi31k", "val.en.gz", "unknown corpus 'multi31k'"),
    ],
)
def test_an_expected_fetch_error_is_one_line_without_traceback(
    tmp_path, monkeypatch, capsys, case, corpus, name, expected
):
    """The command's message (the job's log), not a traceback (issue 25, case 4)."""
    monkeypatch.setenv(sources.MIRROR_ENV, str(corrupted_mirror(tmp_path)))
    if case == "unreachable URL":
        monkeypatch.delenv(sources.MIRROR_ENV)
        monkeypatch.setattr(sources.urllib.request, "urlopen", offline)
    with pytest.raises(SystemExit) as stopped:
        sources.main(["--corpus", corpus, "--file", name, "--out", str(tmp_path / "out" / name)])
    message = str(stopped.value.code)
    assert message.startswith(f"fetch {corpus}/{name}: ") and expected in message, message
    assert len(message.splitlines()) == 1
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


def test_a_failed_fetch_is_the_workflows_last_word_with_its_rule_and_log(tmp_path):
    """keep-going runs every other job first; the run then ends naming the failed rule, its log
    and the log's one line, right above Snakemake's own closing lines (issue 25, case 4)."""
    workdir = project_sources(tmp_path / "work")
    targets = [f"resources/corpora/multi30k/{name}" for name in ("val.en.gz", "val.de.gz")]
    result = snakemake(
        workdir,
        *targets,
        "--configfile",
        "config/test.yaml",
        env={sources.MIRROR_ENV: str(corrupted_mirror(tmp_path, mirror()))},
    )
    assert result.returncode != 0
    log = "results/logs/fetch/multi30k/val.en.gz.log"
    written = (workdir / log).read_text().splitlines()
    assert len(written) == 1 and written[0].startswith("fetch multi30k/val.en.gz: sha256 mismatch")
    assert not (workdir / targets[0]).exists() and (workdir / targets[1]).is_file()
    lines = (result.stdout + result.stderr).splitlines()
    assert "Traceback" not in "\n".join(lines)
    last = max(i for i, line in enumerate(lines) if line.startswith("failed: "))
    assert lines[last] == f"failed: rule fetch_corpus_file, log {log}: {written[0]}"
    closing = ("Complete log(s): ", "Elapsed time: ", "WorkflowError:", "At least one job")
    assert all(line.startswith(closing) for line in lines[last + 1 :]), lines[last:]


# --- a relative mirror means the same place everywhere (issue 37, item 2) --------------------------


def test_a_relative_mirror_is_joined_to_the_directory_it_was_given_in(tmp_path, monkeypatch):
    monkeypatch.setenv(sources.MIRROR_ENV, "../shared/corpora")
    found = sources.resolve_mirror("elsewhere", tmp_path / "work")  # the variable wins
    assert str(found) == f"{tmp_path}/work/../shared/corpora"  # the value, and where it was given
    monkeypatch.setenv(sources.MIRROR_ENV, "")
    assert sources.resolve_mirror("corpora", tmp_path) == tmp_path / "corpora"
    monkeypatch.setenv(sources.MIRROR_ENV, str(tmp_path))
    assert sources.resolve_mirror(None, Path("/elsewhere")) == tmp_path  # absolute: as given
    monkeypatch.delenv(sources.MIRROR_ENV)
    assert sources.resolve_mirror(None, tmp_path) is None


def test_a_relative_mirror_given_to_make_serves_a_build_in_runs(tmp_path):
    """`SOFTLOOKUP_MIRROR=../shared/corpora make paper RUN=small`: Snakemake works in
    runs/small/, the mirror is still the one beside the clone; a wrong one fails naming the
    value as given, where it was given, and the path that led to."""
    clone = project_sources(tmp_path / "clone")
    for part in ("Makefile", "pyproject.toml"):
        (clone / part).symlink_to(ROOT / part)
    (tmp_path / "shared" / "corpora").mkdir(parents=True)
    (tmp_path / "shared" / "corpora" / "multi30k").symlink_to(mirror() / "multi30k")
    venv = stand_in_venv(tmp_path / "venv")

    def make_paper(relative_mirror: str) -> subprocess.CompletedProcess:
        """Only the fetch jobs (--until), with a stand-in .venv and TeX (-o tex)."""
        return make(
            clone,
            *("paper", "RUN=small", "CONFIG=config/test.yaml", f"VENV={venv}", "-o", "tex"),
            "SNAKEMAKE_ARGS=--until fetch_corpus_file --cores 1",
            env={sources.MIRROR_ENV: relative_mirror},
        )

    made = make_paper("../shared/corpora")
    assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
    fetched = clone / "resources" / "corpora" / "multi30k"  # runs/small/resources: the clone's
    assert (fetched / "val.de.gz").stat().st_size > 0

    for path in fetched.iterdir():
        path.unlink()
    made = make_paper("../corpora")
    assert made.returncode != 0
    failed = [line for line in made.stderr.splitlines() if line.startswith("failed: ")]
    assert failed and all(
        f"mirror {clone}/../corpora has no multi30k/" in line
        and f"(looked for {tmp_path}/corpora/multi30k/" in line
        for line in failed
    ), failed


def test_a_snakemake_started_by_a_test_finds_the_mirror_from_a_temporary_directory(tmp_path):
    """As test_workflow.py hands the session's mirror to Snakemake in a temporary directory."""
    workdir = project_sources(tmp_path / "work")
    fetched = "resources/corpora/multi30k/val.de.gz"
    result = snakemake(
        workdir,
        fetched,
        "--configfile",
        "config/test.yaml",
        env={sources.MIRROR_ENV: str(mirror())},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert (workdir / fetched).stat().st_size > 0


def test_make_test_with_the_readmes_relative_mirror(tmp_path):
    """`SOFTLOOKUP_MIRROR=../shared/corpora make test`: pytest, started in the checkout, gives
    the tests the mirror as meant there, not in their temporary directories."""
    relative = os.path.relpath(mirror(), ROOT)
    test = "tests/test_data.py::" + (
        "test_a_snakemake_started_by_a_test_finds_the_mirror_from_a_temporary_directory"
    )
    result = pytest_session(
        ROOT, test, "--basetemp", str(tmp_path / "inner"), env={sources.MIRROR_ENV: relative}
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert "1 passed" in result.stdout


def test_failed_copy_leaves_no_temp_file(tmp_path, monkeypatch):
    def disk_full(source, target):
        Path(target).write_bytes(b"half a corpus file")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(sources.shutil, "copyfile", disk_full)
    dest = tmp_path / "out" / "val.en.gz"
    with pytest.raises(OSError, match=f"^cannot write {dest}: No space left on device"):
        sources.fetch("multi30k", "val.en.gz", dest, FIXTURE_CORPORA)
    assert list(dest.parent.iterdir()) == []


def test_download_without_network_names_the_mirror_variable(tmp_path, monkeypatch):
    monkeypatch.delenv(sources.MIRROR_ENV, raising=False)
    monkeypatch.setattr(sources.urllib.request, "urlopen", offline)
    dest = tmp_path / "out" / "val.en.gz"
    with pytest.raises(ConnectionError, match="SOFTLOOKUP_MIRROR.*multi30k/val.en.gz"):
        sources.fetch("multi30k", "val.en.gz", dest, None)
    assert list(dest.parent.iterdir()) == []
    with pytest.raises(FileNotFoundError, match="SOFTLOOKUP_MIRROR"):
        sources.fetch("europarl-it-en", "it-en-1996-2001.tar.gz", dest, None)


def test_fetched_file_is_readable_by_everyone(tmp_path):
    dest = sources.fetch("multi30k", "val.de.gz", tmp_path / "val.de.gz", mirror())
    assert stat.S_IMODE(dest.stat().st_mode) == 0o644


def test_europarl_registry_entry_matches_the_mirror():
    expected = (mirror() / "europarl-it-en" / "SHA256SUMS").read_text().split()[0]
    assert sources.registry()["europarl-it-en"]["files"]["it-en-1996-2001.tar.gz"] == expected


EUROPARL_DAYS = ["ep-96-04-15", "ep-99-03-12", "ep-01-11-28", "ep-01-12-10", "ep-01-12-12"]


@pytest.fixture(scope="module")
def few_europarl_days(tmp_path_factory):
    """The real archive cut down to five sitting days (both languages), as a small tar.gz."""
    out = tmp_path_factory.mktemp("europarl") / "few-days.tar.gz"
    wanted = {f"{day}.al" for day in EUROPARL_DAYS}
    with (
        tarfile.open(mirror() / "europarl-it-en" / "it-en-1996-2001.tar.gz") as full,
        tarfile.open(out, "w:gz") as small,
    ):
        for member in full:
            if member.isfile() and member.name.rsplit("/", 1)[-1] in wanted:
                small.addfile(member, io.BytesIO(full.extractfile(member).read()))
    return out


def test_europarl_preparation_holds_out_whole_days(few_europarl_days, tmp_path):
    manifest = prepare_days(
        few_europarl_days,
        tmp_path,
        src="it",
        tgt="en",
        splits={"train": "rest", "valid": "ep-01-11-2*", "test_europarl": "ep-01-12-*"},
        bucket_edges=[0, 10, 20, 30, 45, 60, 80],
    )
    splits = manifest["splits"]
    assert (splits["train"]["days"], splits["valid"]["days"], splits["test_europarl"]["days"]) == (
        2,
        1,
        2,
    )
    # chronological order: 1996 before 1999, whatever the two-digit year says
    assert (splits["train"]["first_day"], splits["train"]["last_day"]) == (
        "ep-96-04-15",
        "ep-99-03-12",
    )
    train = set((tmp_path / "train.it").read_text().splitlines())
    test = (tmp_path / "test_europarl.it").read_text().splitlines()
    assert len(test) == splits["test_europarl"]["pairs"] > 1000
    # different sittings: only procedural formulas ("( La seduta termina ... )") recur
    assert len(train & set(test)) < 0.02 * len(test)
    text = (tmp_path / "test_europarl.it").read_text(encoding="utf-8")
    assert "è" in text and "\ufffd" not in text  # Latin-1 decoded, not mangled
    # natural long sentences: the length axis past 60 words
    assert (
        splits["test_europarl"]["buckets"][">80"] + splits["test_europarl"]["buckets"]["61-80"] > 50
    )
    en = (tmp_path / "test_europarl.en").read_text().splitlines()
    assert len(en) == len(test) and all(en)


def test_day_splits_must_not_overlap_or_match_nothing():
    days = ["ep-00-01-01", "ep-00-01-02", "ep-00-02-01"]
    assert assign_days(days, {"train": "rest", "test": "ep-00-02-*"}) == {
        "train": ["ep-00-01-01", "ep-00-01-02"],
        "test": ["ep-00-02-01"],
    }
    with pytest.raises(ValueError, match="both"):
        assign_days(days, {"valid": "ep-00-01-*", "test": "ep-00-01-02"})
    with pytest.raises(ValueError, match="matches no day"):
        assign_days(days, {"train": "rest", "test": "ep-09-*"})


def test_environment_variable_overrides_configured_mirror(monkeypatch, tmp_path):
    monkeypatch.setenv(sources.MIRROR_ENV, str(tmp_path))
    assert sources.resolve_mirror("/somewhere/else") == tmp_path
    monkeypatch.delenv(sources.MIRROR_ENV)
    assert sources.resolve_mirror(None) is None


def test_length_batches_respect_the_token_budget_and_cover_every_row():
    lengths = [3, 17, 5, 9, 30, 2, 2, 11, 8, 25]
    batches = length_batches(lengths, 40, shuffle=True, seed=4)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert all(len(b) * max(lengths[i] for i in b) <= 40 for b in batches if len(b) > 1)
    assert batches == length_batches(lengths, 40, shuffle=True, seed=4)


def test_batches_add_bos_eos_and_pad():
    batch = make_batches([[5, 6], [7]], [[8], [9, 10, 11]], 100, shuffle=False)[0]
    rows = dict(zip(batch.index, range(2), strict=True))
    assert batch.src[rows[1]].tolist() == [7, 3, 0]
    assert batch.tgt_in[rows[1]].tolist() == [2, 9, 10, 11]
    assert batch.tgt_out[rows[0]].tolist() == [8, 3, 0, 0]
    assert batch.target_tokens == 2 + 4


def test_the_long_studys_europarl_subset_has_its_measured_counts(tmp_path):
    """`prepare --archive` with config/long.yaml's day patterns (merged over config.yaml, as the
    rule prepare_corpus calls it): the pair counts its header states, natural sentences past 60
    words in the test set, no sitting day in two splits."""
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    update_config(config, yaml.safe_load((ROOT / "config" / "long.yaml").read_text()))
    data = drop_removed(config)["data"]
    archive = mirror() / data["corpus"] / data["archive"]
    command = [
        sys.executable,
        "-m",
        "softlookup.data.prepare",
        "--archive",
        str(archive),
        "--out-dir",
        str(tmp_path),
        "--src",
        data["src"],
        "--tgt",
        data["tgt"],
        "--splits",
        *[f"{split}={days}" for split, days in data["splits"].items()],
        "--bucket-edges",
        *map(str, config["evaluate"]["bucket_edges"]),
    ]
    subprocess.run(command, check=True, capture_output=True, text=True)
    splits = json.loads((tmp_path / "manifest.json").read_text())["splits"]
    assert {name: split["pairs"] for name, split in splits.items()} == {
        "train": 13_489,
        "valid": 3_569,
        "test_europarl": 4_286,
    }
    assert [splits[name]["days"] for name in splits] == [7, 2, 2]
    test = splits["test_europarl"]
    assert test["examples"] == test["pairs"]  # one sentence a line: nothing joined
    assert test["buckets"][">60"] == 226 and test["source_words"]["max"] == 166
    assert splits["train"]["last_day"] < splits["valid"]["first_day"] < test["first_day"]
