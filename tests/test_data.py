import gzip
import shutil

import pytest

from softlookup.data import sources
from softlookup.data.batching import length_batches, make_batches
from softlookup.data.prepare import concatenate_consecutive, normalise, prepare, read_pairs

from .corpora import mirror


def test_pair_counts_match_the_released_corpus():
    raw = mirror() / "multi30k"
    expected = {"train": 29000, "val": 1014, "test_2016_flickr": 1000}
    for stem, count in expected.items():
        pairs, dropped = read_pairs(raw / f"{stem}.de.gz", raw / f"{stem}.en.gz")
        assert (len(pairs), dropped) == (count, 0), stem


def test_prepare_writes_splits_long_test_set_and_manifest(tmp_path):
    manifest = prepare(
        mirror() / "multi30k",
        tmp_path,
        src="de",
        tgt="en",
        splits={"train": "train", "valid": "val", "test_2016_flickr": "test_2016_flickr"},
        max_train_pairs=50,
        concat=[3],
    )
    splits = manifest["splits"]
    assert splits["train"]["pairs"] == 50 and splits["train"]["corpus_pairs"] == 29000
    assert splits["test_2016_flickr.concat3"]["pairs"] == 333
    assert splits["test_2016_flickr"]["source_words"]["max"] == 30
    concat = (tmp_path / "test_2016_flickr.concat3.de").read_text().splitlines()
    single = (tmp_path / "test_2016_flickr.de").read_text().splitlines()
    assert concat[1] == " ".join(single[3:6])
    assert (
        manifest["inputs"]["train.de.gz"] == sources.registry()["multi30k"]["files"]["train.de.gz"]
    )


def test_normalise_composes_unicode_and_collapses_spaces():
    assert normalise("  Ein  Mann \t läuft \n") == "Ein Mann läuft"
    assert normalise("Ma\u0308dchen") == "Mädchen"


def test_concatenate_drops_the_remainder():
    pairs = [(str(i), str(-i)) for i in range(7)]
    assert concatenate_consecutive(pairs, 3) == [("0 1 2", "0 -1 -2"), ("3 4 5", "-3 -4 -5")]


def test_fetch_from_mirror_verifies_sha256(tmp_path):
    dest = sources.fetch("multi30k", "val.en.gz", tmp_path / "val.en.gz", mirror())
    assert sources.sha256_of(dest) == sources.registry()["multi30k"]["files"]["val.en.gz"]


def test_corrupted_mirror_file_fails_naming_it_and_leaves_nothing(tmp_path):
    bad_mirror = tmp_path / "mirror"
    (bad_mirror / "multi30k").mkdir(parents=True)
    shutil.copy(mirror() / "multi30k" / "val.en.gz", bad_mirror / "multi30k" / "val.en.gz")
    with gzip.open(bad_mirror / "multi30k" / "val.en.gz", "ab") as stream:
        stream.write(b"one more line\n")
    dest = tmp_path / "out" / "val.en.gz"
    with pytest.raises(sources.ChecksumError, match="multi30k/val.en.gz.*expected"):
        sources.fetch("multi30k", "val.en.gz", dest, bad_mirror)
    assert not dest.exists() and list(dest.parent.iterdir()) == []


def test_missing_mirror_file_and_unknown_names_fail_clearly(tmp_path):
    with pytest.raises(FileNotFoundError, match="no multi30k/train.de.gz"):
        sources.fetch("multi30k", "train.de.gz", tmp_path / "x", tmp_path)
    with pytest.raises(KeyError, match="no file 'nope.gz'"):
        sources.fetch("multi30k", "nope.gz", tmp_path / "x", mirror())


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
    rows = dict(zip(batch.index, range(2)))
    assert batch.src[rows[1]].tolist() == [7, 3, 0]
    assert batch.tgt_in[rows[1]].tolist() == [2, 9, 10, 11]
    assert batch.tgt_out[rows[0]].tolist() == [8, 3, 0, 0]
    assert batch.target_tokens == 2 + 4
