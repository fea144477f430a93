"""The workflow config: names that become paths, sweeps, test sets and unknown keys are checked
before any job (softlookup.config, called from the Snakefile); free values never reach a shell
string unquoted; several config files are given as one --configfile list."""

import copy
import functools
import operator
import re
import shutil
from pathlib import Path

import pytest
import yaml
from snakemake.utils import update_config

from softlookup.claims.references import (
    check_claim_names,
    claimed_families,
    project_configs,
    undefined_claim_names,
)
from softlookup.claims.spec import ComparisonCheck, load_claims
from softlookup.config import (
    ConfigError,
    all_variants,
    check,
    convergence_references,
    drop_removed,
    ladder_points,
    load_schema,
    main,
    measured_bench,
    merged_config,
    read_config_file,
    run_seeds,
    select,
    sweep_gaps,
)

from .commands import make, snakemake, stand_in_venv
from .corpora import mirror
from .project import ROOT, project_sources

SCHEMA = load_schema(ROOT / "workflow" / "schemas" / "config.schema.yaml")
HOSTILE = "x; touch {dir}/PWNED; echo "


def merged(*names: str) -> dict:
    """config/<names> over config/config.yaml, as Snakemake merges them."""
    return merged_config([ROOT / "config" / name for name in ("config.yaml", *names)])


@pytest.fixture
def config() -> dict:
    return merged("test.yaml")


def errors_of(config: dict) -> str:
    with pytest.raises(ConfigError) as caught:
        check(config, SCHEMA)
    return str(caught.value)


def write_config(workdir: Path, config: dict, name: str = "mine.yaml") -> str:
    path = workdir / name
    path.write_text(yaml.safe_dump(config))
    return str(path)


# --- the shipped configs -------------------------------------------------------------------------


@pytest.mark.parametrize("files", [(), ("test.yaml",), ("paper.yaml",)])
def test_the_shipped_configs_pass(files):
    variants = check(merged(*files), SCHEMA)
    assert "transformer" in variants


# --- names that become paths or wildcards (issue 12, item 3) -------------------------------------


@pytest.mark.parametrize(
    "where",
    [
        "models",
        "sweeps",
        "sweep key",
        "sweep value",
        "grid key",
        "test set",
        "split name",
        "split stem",
        "analysis test set",
        "analysis run",
        "run_only",
    ],
)
def test_a_hostile_name_fails_validation(config, where, tmp_path):
    evil = HOSTILE.format(dir=tmp_path)
    if where == "models":
        config["models"][evil] = {"arch": "gru"}
    elif where == "sweeps":
        config["sweeps"][evil] = {"model": "sweep_transformer", "key": "heads", "values": [1]}
    elif where == "sweep key":
        config["sweeps"]["heads"]["key"] = evil
    elif where == "sweep value":
        config["sweeps"]["heads"]["values"] = [evil]
    elif where == "grid key":
        config["sweeps"]["grid"] = {"model": "sweep_transformer", "grid": {evil: [1]}}
    elif where == "test set":
        config["evaluate"]["test_sets"].append(evil)
    elif where == "split name":
        config["data"]["splits"][evil] = "test_2016_flickr"
    elif where == "split stem":
        config["data"]["splits"]["test_2016_flickr"] = evil
    elif where == "analysis test set":
        config["analysis"]["test_set"] = evil
    elif where == "analysis run":
        config["analysis"]["runs"] = [evil + "-s1"]
    elif where == "run_only":
        config["run_only"] = [evil]
    message = errors_of(config)
    assert message.startswith("config: ")
    assert not (tmp_path / "PWNED").exists()


def test_a_hostile_mirror_runs_harmlessly_and_a_quote_or_space_works(tmp_path):
    """`mirror` is a free value: quoted into the fetch command, never pasted."""
    workdir = project_sources(tmp_path / "work")
    evil = write_config(workdir, {"mirror": HOSTILE.format(dir=tmp_path)}, "evil.yaml")
    target = "resources/corpora/multi30k/val.de.gz"
    # targets before --configfile: after it they would be read as config files
    result = snakemake(
        workdir, target, "--configfile", "config/test.yaml", evil, env={"SOFTLOOKUP_MIRROR": ""}
    )
    assert result.returncode != 0  # no such mirror directory
    assert not (tmp_path / "PWNED").exists()
    assert not (workdir / target).exists()

    odd = tmp_path / "a mirror's copy"
    odd.mkdir()
    (odd / "multi30k").symlink_to(mirror() / "multi30k")
    good = write_config(workdir, {"mirror": str(odd)}, "odd.yaml")
    result = snakemake(
        workdir, target, "--configfile", "config/test.yaml", good, env={"SOFTLOOKUP_MIRROR": ""}
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert (workdir / target).stat().st_size > 0


# --- a config file that does not parse is named with its line, in one line (issue 25, case 3) ---

UNCLOSED = "seeds: [1, 2\nmodels:\n  gru_none: {hidden_dim: 8}\n"  # the list is never closed


def test_a_config_file_that_does_not_parse_is_named_with_its_line(tmp_path):
    bad = tmp_path / "mine.yaml"
    bad.write_text(UNCLOSED)
    with pytest.raises(ConfigError) as caught:
        read_config_file(bad)
    assert str(caught.value) == (
        f"{bad}, line 2, column 7: expected ',' or ']', but got ':' "
        "(while parsing a flow sequence at line 1, column 8)"
    )


@pytest.mark.parametrize(
    "text, expected",
    [
        (None, "no such config file"),
        ("- seeds\n- models\n", "holds ['seeds', 'models']"),
        ("# only a comment\n", "holds nothing"),
        ("\tseeds: [1]\n", "line 1, column 1"),
    ],
)
def test_a_config_file_snakemake_cannot_read_is_named_in_one_line(tmp_path, text, expected):
    path = tmp_path / "mine.yaml"
    if text is not None:
        path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        read_config_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}") and expected in message, message
    assert len(message.splitlines()) == 1


def test_the_shipped_config_files_pass_the_file_check():
    main(["check-files", *map(str, sorted((ROOT / "config").glob("*.yaml")))])  # no SystemExit


def test_make_names_a_config_file_that_does_not_parse_before_snakemake_runs(tmp_path):
    """`make paper CONFIG=...` with an unclosed list or a misspelt path: one line naming the
    file (and the line), where Snakemake says neither or prints a 27-line traceback."""
    workdir = project_sources(tmp_path / "work")
    for part in ("Makefile", "pyproject.toml"):
        (workdir / part).symlink_to(ROOT / part)
    venv = stand_in_venv(tmp_path / "venv")
    (workdir / "mine.yaml").write_text(UNCLOSED)
    expected = {
        "mine.yaml": "mine.yaml, line 2, column 7: expected ',' or ']'",
        "config/tset.yaml": "config/tset.yaml: no such config file",
    }
    for config, message in expected.items():
        made = make(workdir, "paper", f"CONFIG={config}", f"VENV={venv}", "-o", "tex")
        assert made.returncode != 0
        assert made.stderr.splitlines()[0].startswith(message), made.stderr
        assert "Traceback" not in made.stderr and made.stdout == ""
    assert not (workdir / ".snakemake").exists()  # Snakemake never started


# --- a wrong value: its one line, and nothing else of ours, whichever way the run starts --------
# (issue 49, part 3: Snakemake wrapped it in "WorkflowError in file .../Snakefile, line 51" frames)

WRONG_VALUES = {  # a config file's text -> the line that names its key and value
    "seeds: []\n": "config: seeds: [] should be non-empty",
    "train: {lr: -0.001}\n": "config: train.lr: -0.001 is less than or equal to the minimum of 0",
    "train: {epochs: 0}\n": "config: train.epochs: 0 is less than the minimum of 1",
}


@pytest.mark.parametrize("text", WRONG_VALUES)
def test_a_wrong_value_is_one_line_through_make(tmp_path, text):
    workdir = project_sources(tmp_path / "work")
    for part in ("Makefile", "pyproject.toml"):
        (workdir / part).symlink_to(ROOT / part)
    venv = stand_in_venv(tmp_path / "venv")
    (workdir / "mine.yaml").write_text(text)
    made = make(workdir, "paper", "CONFIG=config/test.yaml mine.yaml", f"VENV={venv}", "-o", "tex")
    assert made.returncode != 0 and made.stdout == ""
    ours, *rest = made.stderr.splitlines()
    assert ours.startswith(WRONG_VALUES[text]) and "mine.yaml" in ours
    assert [line for line in rest if not re.match(r"make(\[\d+\])?: \*\*\*", line)] == [], (
        made.stderr
    )
    assert not (workdir / ".snakemake").exists()  # Snakemake never started


@pytest.mark.parametrize("text", WRONG_VALUES)
def test_a_wrong_value_is_one_line_through_snakemake(tmp_path, text):
    workdir = project_sources(tmp_path)
    (workdir / "mine.yaml").write_text(text)
    result = snakemake(workdir, "--configfile", "config/test.yaml", "mine.yaml", "--dry-run")
    assert result.returncode != 0
    output = (result.stdout + result.stderr).splitlines()
    assert [line for line in output if line.startswith("config: ")] == [output[-1]]
    assert output[-1].startswith(WRONG_VALUES[text])
    assert not [line for line in output if "WorkflowError" in line or 'File "' in line], output


def test_snakemake_names_the_default_config_file_when_it_does_not_parse(tmp_path):
    workdir = project_sources(tmp_path)
    (workdir / "config").unlink()
    shutil.copytree(ROOT / "config", workdir / "config")
    with open(workdir / "config" / "config.yaml", "a") as stream:
        stream.write("seeds: [1, 2\n")
    result = snakemake(workdir, "--configfile", "config/test.yaml", "--dry-run")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert re.search(r"^config/config\.yaml, line \d+, column \d+: ", output, re.M), output


# --- a list naming runs, seeds, variants or sweep values holds each entry once (issue 25, case 2)

DUPLICATED = {  # key -> a list holding one entry twice
    "seeds": [1, 2, 1],
    "run_only": ["gru_none", "gru_*", "gru_none"],
    "sweeps.heads.values": [1, 8, 1],
    "sweeps.dk_scale.grid.d_k": [16, 16],
    "analysis.runs": ["gru_none-s1", "gru_none-s1"],
    "evaluate.test_sets": ["test_2016_flickr", "test_2016_flickr"],
    "bench.devices": ["cpu", "cpu"],
    "data.concat": [2, 2],
    "probes.spread.dims": [8, 8],
}


@pytest.mark.parametrize("key", DUPLICATED)
def test_a_duplicate_list_entry_is_refused_naming_the_key(config, key):
    """`seeds: [1, 1]` doubled every row of scores.csv and training.csv."""
    *parents, last = key.split(".")
    functools.reduce(operator.getitem, parents, config)[last] = DUPLICATED[key]
    message = errors_of(config)
    assert message.startswith(f"config: {key}: ") and "more than once" in message, message
    assert len(message.splitlines()) == 1


# --- sweeps are checked as merged model configs before any job (issue 12, item 5) ---------------


def test_an_unknown_sweep_model_is_named(config):
    config["sweeps"]["heads"]["model"] = "transfomer"
    message = errors_of(config)
    assert "sweeps.heads" in message and "'transfomer'" in message


def test_a_bad_sweep_key_is_named(config):
    config["sweeps"]["heads"]["key"] = "hedas"
    message = errors_of(config)
    assert "sweeps.heads" in message and "hedas" in message


def test_a_sweep_value_the_model_rejects_is_named(config):
    config["sweeps"]["heads"]["values"] = [3]  # d_model 32 is not divisible by 3
    message = errors_of(config)
    assert "sweeps.heads" in message and "heads" in message and "3" in message


def test_a_sweep_value_of_the_wrong_type_is_named(config):
    config["sweeps"]["scale"]["values"] = [7]
    message = errors_of(config)
    assert "sweeps.scale" in message and "scale" in message


def test_a_bad_sweep_fails_before_any_job(tmp_path):
    workdir = project_sources(tmp_path)
    mine = write_config(
        workdir,
        {"sweeps": {"heads": {"model": "sweep_transformer", "key": "heads", "values": [3]}}},
    )
    result = snakemake(workdir, "--configfile", "config/test.yaml", mine, "--dry-run")
    assert result.returncode != 0
    assert "sweeps.heads" in result.stdout + result.stderr
    assert not (workdir / "results").exists() and not (workdir / "resources").exists()


# --- benchmarks measured elsewhere ----------------------------------------------------------------


def test_the_default_reads_the_committed_gpu_benchmarks(config):
    assert measured_bench(config) == [
        "benchmarks/gpu/NVIDIA_H200/attention_cuda.csv",
        "benchmarks/gpu/NVIDIA_H200/decode_cuda.csv",
        "benchmarks/gpu/NVIDIA_H200/train_step_lengths_cuda.csv",  # D6's GPU rows
    ]


def test_a_measured_folder_without_bench_csvs_is_named(config, tmp_path):
    config["bench"]["measured"] = [str(tmp_path)]
    assert f"bench.measured: '{tmp_path}' holds no attention_<device>.csv" in errors_of(config)


def test_measured_training_step_rows_are_read_for_their_device(config, tmp_path):
    (tmp_path / "decode_cuda.csv").write_text("device\ncuda\n")
    (tmp_path / "train_step_lengths_cuda.csv").write_text("device\ncuda\n")  # D6's GPU rows
    config["bench"]["measured"] = [str(tmp_path)]
    assert measured_bench(config) == [
        str(tmp_path / "decode_cuda.csv"),
        str(tmp_path / "train_step_lengths_cuda.csv"),
    ]
    (tmp_path / "decode_cuda.csv").unlink()
    config["bench"]["devices"] = ["cpu", "cuda"]  # the device after the kind, not after its "_"
    assert "train_step_lengths_cuda.csv is for device 'cuda'" in errors_of(config)


def test_a_measured_device_the_workflow_also_benchmarks_is_refused(config):
    config["bench"]["devices"] = ["cpu", "cuda"]
    message = errors_of(config)
    assert "attention_cuda.csv is for device 'cuda', which bench.devices also" in message


# --- test sets (issue 12, item 6) ----------------------------------------------------------------


def test_a_test_set_missing_from_the_splits_is_named(config):
    config["evaluate"]["test_sets"].append("test_2017_flickr")
    message = errors_of(config)
    assert "evaluate.test_sets" in message and "'test_2017_flickr'" in message


def test_a_concatenated_test_set_needs_its_k_in_data_concat(config):
    config["evaluate"]["test_sets"].append("test_2016_flickr.concat5")
    assert "test_2016_flickr.concat5" in errors_of(config)
    config["data"]["concat"] = [3, 5]
    check(config, SCHEMA)


# --- a sweep value equal to the base model's shares the base run (issue 12, item 9) -------------


def test_a_sweep_point_equal_to_the_base_model_is_the_base_run(config):
    base_heads = config["models"]["sweep_transformer"]["heads"]
    config["sweeps"]["heads"]["values"] = [1, base_heads]
    # scale: true is the Transformer's default, unset in the model: still the base run
    config["sweeps"]["scale"]["values"] = [False, True]
    names = set(check(config, SCHEMA))
    assert f"sweep_transformer.heads-{base_heads}" not in names
    assert "sweep_transformer.scale-true" not in names
    assert {
        "sweep_transformer",
        "sweep_transformer.heads-1",
        "sweep_transformer.scale-false",
    } <= names


def test_a_value_equal_to_the_base_trains_no_duplicate_job(tmp_path):
    workdir = project_sources(tmp_path)
    mine = write_config(
        workdir,
        {
            "run_only": ["sweep_transformer", "sweep_transformer.heads-*"],
            "analysis": {"runs": ["sweep_transformer-s1"]},
            "sweeps": {"heads": {"model": "sweep_transformer", "key": "heads", "values": [1, 2]}},
        },
    )
    result = snakemake(workdir, "--configfile", "config/test.yaml", mine, "--dry-run")
    assert result.returncode == 0, result.stderr[-3000:]
    trained = set(re.findall(r"results/runs/([^/\s]+)/model\.pt", result.stdout))
    # test.yaml's sweep_transformer has 2 heads: heads-2 is the base run
    assert trained == {"sweep_transformer-s1", "sweep_transformer.heads-1-s1"}


# --- grid sweeps and run_only ------------------------------------------------------------------


def test_a_grid_sweep_names_its_points_in_grid_key_order(config):
    config["sweeps"] = {
        "dk": {"model": "sweep_transformer", "grid": {"d_k": [8, 16], "scale": [True, False]}}
    }
    variants = all_variants(config, SCHEMA)
    points = sorted(name for name in variants if name.startswith("sweep_transformer."))
    # scale: true is the base's value, so it stays out of the name
    assert points == [
        "sweep_transformer.d_k-16",
        "sweep_transformer.d_k-16.scale-false",
        "sweep_transformer.d_k-8",
        "sweep_transformer.d_k-8.scale-false",
    ]
    point = variants["sweep_transformer.d_k-8.scale-false"]
    assert point.base_model == "sweep_transformer"
    assert point.sweep == {"d_k": 8, "scale": False}
    assert point.model["d_k"] == 8 and point.model["scale"] is False
    # d_k 16 = d_model 32 / 2 heads differs from d_k null by name only; it is trained as its own
    assert list(variants["sweep_transformer.d_k-16"].sweep) == ["d_k"]


def test_a_grid_point_equal_to_the_base_is_the_base_run(config):
    config["sweeps"] = {
        "g": {"model": "sweep_transformer", "grid": {"heads": [1, 2], "causal_mask": [True, False]}}
    }
    names = set(all_variants(config, SCHEMA))
    assert "sweep_transformer.heads-2.causal_mask-true" not in names
    assert {
        "sweep_transformer.heads-1",
        "sweep_transformer.causal_mask-false",
        "sweep_transformer.heads-1.causal_mask-false",
    } <= names


def test_run_only_chooses_what_a_merged_config_trains(config):
    config["sweeps"] = {}
    config["run_only"] = ["gru_*", "transformer"]
    assert set(check(config, SCHEMA)) == {
        "gru_none",
        "gru_additive",
        "gru_dot",
        "gru_general",
        "gru_scaled_dot",
        "transformer",
    }
    config["run_only"] = ["gru_nope"]
    assert "run_only: 'gru_nope' matches none" in errors_of(config)
    assert set(select({"a": 1, "b": 2}, None)) == {"a", "b"}


def test_more_seeds_add_to_the_seeds_of_the_variants_it_names():
    config = merged()
    assert run_seeds(config, "gru_dot") == [1, 2, 3, 4]  # the default's D2 GRUs
    assert run_seeds(config, "gru_none") == [1, 2]
    config["more_seeds"] = {"gru_none": [2, 7]}  # a seed the config has counts once
    assert run_seeds(config, "gru_none") == [1, 2, 7]
    assert run_seeds(config, "gru_dot") == [1, 2]


def test_a_more_seeds_name_that_is_no_variant_is_named(config):
    config["more_seeds"] = {"gru_dott": [3]}
    assert "more_seeds: 'gru_dott' is none of this config's variants" in errors_of(config)
    config["more_seeds"] = {"gru_dot": []}
    assert "more_seeds.gru_dot" in errors_of(config)


@pytest.mark.parametrize(
    "names", [("test.yaml",), ("long.yaml",), ("paper.yaml",), ("converged.yaml",)]
)
def test_the_other_shipped_configs_remove_the_defaults_more_seeds(names):
    config = merged(*names)
    check(config, SCHEMA)
    trained = select(all_variants(config), config.get("run_only"))
    assert all(run_seeds(config, variant) == config["seeds"] for variant in trained)


def test_a_file_merged_over_the_test_config_adds_seeds_to_one_variant(tmp_path):
    mine = tmp_path / "mine.yaml"
    mine.write_text("more_seeds: {gru_dot: [2]}\n")
    config = merged_config([ROOT / "config" / "config.yaml", ROOT / "config" / "test.yaml", mine])
    check(config, SCHEMA)
    assert config["more_seeds"] == {"gru_dot": [2]}


def test_files_merge_as_snakemake_merges_them_the_first_under_the_others(tmp_path):
    """Snakemake merges the command line's files among themselves, then over the Snakefile's: a
    whole null between two mappings is lost (test.yaml removes more_seeds entry by entry so)."""
    files = [tmp_path / f"{name}.yaml" for name in "abc"]
    for path, text in zip(files, ["x: {p: 1}", "x: null", "x: {q: 2}"], strict=True):
        path.write_text(text + "\n")
    assert merged_config(files) == {"x": {"p": 1, "q": 2}}
    assert merged_config(files[1:]) == {"x": {"q": 2}}


# --- an unknown key: one line with the key and its path, no schema dump (issue 12, item 10) -----


def test_an_unknown_top_level_key_is_one_line_with_key_and_path(config):
    config["evalute"] = {"beam_size": 2}
    message = errors_of(config)
    assert message.splitlines()[0].startswith("config: unknown key 'evalute' at top level")
    assert "$schema" not in message and "additionalProperties" not in message


def test_an_unknown_nested_key_names_its_path(config):
    config["models"]["gru_none"]["hiden_dim"] = 32
    assert "unknown key 'hiden_dim' at models.gru_none" in errors_of(config)


def test_snakemake_reports_the_unknown_key_first(tmp_path):
    workdir = project_sources(tmp_path)
    mine = write_config(workdir, {"evalute": {"beam_size": 2}})
    result = snakemake(workdir, "--configfile", "config/test.yaml", mine, "--dry-run")
    assert result.returncode != 0
    output = result.stdout + result.stderr
    lines = [line for line in output.splitlines() if "evalute" in line]
    assert lines and "unknown key 'evalute' at top level" in lines[0] and mine in lines[0]
    assert "$schema" not in output
    assert not (workdir / "results").exists()


# --- several config files: one --configfile followed by the list (issue 13, item 8) -----------


def test_two_config_files_go_in_one_configfile_list(tmp_path):
    """`--configfile a --configfile b` keeps only b; the README's form keeps both."""
    workdir = project_sources(tmp_path)
    mine = write_config(workdir, {"run_only": ["gru_dot"], "analysis": {"runs": ["gru_dot-s1"]}})
    both = snakemake(workdir, "--configfile", "config/test.yaml", mine, "--dry-run", "-p")
    assert both.returncode == 0, both.stderr[-3000:]
    assert set(re.findall(r"results/runs/([^/\s]+)/model\.pt", both.stdout)) == {"gru_dot-s1"}
    assert "400" in re.search(r"--max-train-pairs\W+(\d+)", both.stdout).group(1)  # test.yaml
    readme = (ROOT / "README.md").read_text()
    assert "--configfile config/test.yaml config/mine.yaml" in readme
    assert not re.search(r"snakemake[^\n`]*--configfile \S+ --configfile", readme)


def test_rules_find_the_projects_python_without_an_activated_venv(tmp_path):
    workdir = project_sources(tmp_path)
    target = "results/probes/worked_examples.csv"
    result = snakemake(workdir, target, "--configfile", "config/test.yaml")
    assert result.returncode == 0, result.stderr[-3000:]
    assert (workdir / target).stat().st_size > 0


def test_the_schema_keeps_every_name_pattern():
    """A guard against a later edit loosening a pattern."""
    text = copy.deepcopy(SCHEMA)
    assert text["$defs"]["name"]["pattern"] == "^[A-Za-z0-9_]+$"
    assert text["properties"]["models"]["propertyNames"]["pattern"] == "^[A-Za-z0-9_]+$"


def test_two_configs_keep_their_results_side_by_side(tmp_path):
    """`make rundir RUN=<name>` + --directory runs/<name>: results never clobber each other."""
    workdir = project_sources(tmp_path)
    (workdir / "Makefile").symlink_to(ROOT / "Makefile")
    made = make(workdir, "rundir", "RUN=small")
    assert made.returncode == 0, made.stderr
    target = "results/probes/worked_examples.csv"
    for directory in (".", "runs/small"):
        result = snakemake(
            workdir, target, "--directory", directory, "--configfile", "config/test.yaml"
        )
        assert result.returncode == 0, result.stderr[-3000:]
    assert (workdir / target).is_file() and (workdir / "runs" / "small" / target).is_file()
    assert (workdir / "runs" / "small" / "paper" / "paper.tex").resolve().is_file()


def test_a_base_model_the_model_code_rejects_is_named(config):
    config["models"]["transformer"]["heads"] = 3  # d_model 32
    message = errors_of(config)
    assert "models.transformer" in message and "heads" in message


def test_a_joined_test_set_is_a_prepared_split(config):
    config["data"]["joined_tests"] = {"test_long": ["test_2016_flickr"]}
    config["evaluate"]["test_sets"] = ["test_2016_flickr", "test_long"]
    check(config, SCHEMA)


def test_a_sweep_over_a_train_key_lands_in_the_points_train_settings(config):
    config.pop("run_only")
    config["sweeps"]["words"] = {
        "model": "sweep_transformer",
        "key": "max_source_words",
        "values": [20],
    }
    point = check(config, SCHEMA)["sweep_transformer.max_source_words-20"]
    assert point.model["train"]["max_source_words"] == 20
    assert "max_source_words" not in {k for k in point.model if k != "train"}
    config["sweeps"]["words"]["values"] = ["many"]
    assert "sweeps.words" in errors_of(config)


def test_the_train_defaults_must_choose_an_epoch_count(config):
    del config["train"]["epochs"]
    assert "epochs" in errors_of(config)
    config["train"]["epochs"] = 2
    config["models"]["gru_none"]["train"] = {"lr": 0.001}  # a model's override needs none
    check(config, SCHEMA)


# --- scheduling: the longest training jobs first ------------------------------------------------


def test_training_jobs_are_prioritised_by_threads_times_epochs(tmp_path):
    workdir = project_sources(tmp_path)
    mine = write_config(
        workdir,
        {
            "run_only": ["gru_none", "transformer", "sweep_transformer"],
            "analysis": {"runs": ["transformer-s1"]},
            "resources": {
                "threads": {"train": 1, "train_by_model": {"transformer": 2}, "translate": 1}
            },
            "models": {"gru_none": {"train": {"epochs": 3}}},
        },
    )
    result = snakemake(workdir, "--configfile", "config/test.yaml", mine, "--dry-run")
    assert result.returncode == 0, result.stderr[-3000:]
    jobs = re.findall(
        r"rule train:.*?variant=([^,\s]+), seed=\d+\s+priority: (\d+)", result.stdout, flags=re.S
    )
    priority = {variant: int(value) for variant, value in jobs}
    epochs = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())["train"]["epochs"]
    assert priority == {"transformer": 2 * epochs, "gru_none": 3, "sweep_transformer": epochs}


# --- the converged study (issue 22) ---------------------------------------------------------------

CONVERGED_PARTS = ["converged_recurrent.yaml", "converged_scale.yaml", "converged_heads.yaml"]


def test_the_converged_study_and_its_parts_pass_and_cover_it():
    whole = check(merged("converged.yaml"), SCHEMA)
    parts = [check(merged("converged.yaml", part), SCHEMA) for part in CONVERGED_PARTS]
    assert set().union(*parts) == set(whole)
    for variant in whole.values():  # every run stops early or at a cap of 10, keeping 1, 2, 4, 8
        train = {**merged("converged.yaml")["train"], **variant.model.get("train", {})}
        assert train["epochs"] == 10 and ladder_points(train) == [1, 2, 4, 8]


@pytest.mark.parametrize("part", CONVERGED_PARTS)
def test_a_converged_part_trains_enough_of_every_family_it_touches(part):
    """A part deciding D3 with two values of d_k would leave the claim's slope check pending: a
    family check that a part trains at all needs its min_points members there."""
    config = merged("converged.yaml", part)
    trained = set(check(config, SCHEMA))
    claims, _ = load_claims(ROOT / "config" / "claims.yaml")
    families = {
        c
        for claim in claims
        for c in claim.checks
        if isinstance(c, ComparisonCheck) and "{x}" in c.comparison
    }
    for family in families:
        pattern = re.compile(re.escape(family.comparison).replace(re.escape("{x}"), r"\d+"))
        members = [
            name
            for name, pair in config["comparisons"].items()
            if pattern.fullmatch(name) and {pair["a"], pair["b"]} <= trained
        ]
        assert not members or len(members) >= family.min_points, (family.comparison, members)


def test_a_ladder_point_must_be_an_epoch_or_final(config):
    config["train"]["ladder"] = [1, "last"]
    assert "ladder" in errors_of(config)
    config["train"]["ladder"] = [2, 2]
    assert "ladder" in errors_of(config)


# --- the long-sentence study: a corpus of sitting days as the main corpus; null removes --------


def test_the_long_study_passes_and_trains_only_claim_d1s_grus():
    config = merged("long.yaml")
    variants = check(config, SCHEMA)
    assert set(variants) == {"gru_none", "gru_additive"}
    assert set(config["comparisons"]) == {"d1_additive_vs_none"}
    assert {pair["test_set"] for pair in config["comparisons"].values()} == {"test_europarl"}
    assert "join" not in config["data"] and "joined_tests" not in config["data"]
    assert set(config["data"]["splits"]) == {"train", "valid", "test_europarl"}
    assert set(config["convergence"]["effects"]) == {"D1"}
    assert config["seeds"] == [1, 2] and ladder_points(config["train"]) == [2, 4]


@pytest.mark.parametrize("study", ["long.yaml", "converged.yaml"])
def test_a_study_that_drops_the_references_drops_their_seed_parts(study):
    config = merged(study)
    assert convergence_references(config) == []
    config["convergence"]["seed_parts"] = merged()["convergence"]["seed_parts"]  # left behind
    with pytest.raises(ConfigError, match="convergence.seed_parts: .* not in convergence.ref"):
        convergence_references(config)  # read when the workflow is parsed, before any job


@pytest.mark.parametrize(
    "key, value",
    [
        ("join", {"k": [1, 2]}),
        ("joined_tests", {"test_long": ["test_2016_flickr"]}),
        ("concat", [2]),
    ],
)
def test_a_day_archive_refuses_joined_pairs_naming_the_key(key, value):
    config = merged("long.yaml")
    config["data"][key] = value
    message = errors_of(config)
    assert message.startswith(f"config: data.{key}: ") and "data.archive" in message
    assert f"set data.{key}: null" in message


def test_day_patterns_are_splits_of_an_archive_only():
    config = merged("long.yaml")
    del config["data"]["archive"]
    assert "data.splits.train" in errors_of(config)  # 'ep-01-09-*+...' is no file stem


def test_a_merged_config_removes_an_entry_by_setting_it_to_null(config):
    update_config(
        config,
        {
            "data": {
                "splits": {"test_2016_flickr": None, "test_2017": "test_2017_flickr"},
                "join": None,
                "joined_tests": {"test_long": None},
            },
            "comparisons": {"d2_dot_vs_additive": None},
            "convergence": {"effects": {"D2": None}},
            "evaluate": {"test_sets": ["test_2017"]},
            "analysis": {"test_set": "test_2017"},
        },
    )
    check(config, SCHEMA)
    data = config["data"]
    assert set(data["splits"]) == {"train", "valid", "test_2017"}
    assert "join" not in data and data["joined_tests"] == {}
    assert (
        "d2_dot_vs_additive" not in config["comparisons"]
        and "d2_dot_vs_general" in (config["comparisons"])
    )
    assert "D2" not in config["convergence"]["effects"]
    update_config(config, {"data": {"joined_tests": None}})
    assert "joined_tests" not in drop_removed(config)["data"]


def test_a_null_outside_the_removable_entries_is_still_an_error(config):
    update_config(config, {"evaluate": {"bootstrap": None}})
    assert "evaluate.bootstrap" in errors_of(config)


def test_the_long_study_resolves_its_whole_dag_in_a_dry_run(tmp_path):
    """`make paper CONFIG="config/config.yaml config/long.yaml"` without running a job: the
    archive is fetched and prepared by prepare_corpus, 4 runs trained and translated on
    test_europarl at every budget point, and the paper built."""
    workdir = project_sources(tmp_path)
    result = snakemake(
        workdir, "--configfile", "config/config.yaml", "config/long.yaml", "--dry-run"
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", result.stdout.split("Job stats:")[1], re.M))
    assert (
        jobs["prepare_corpus"],
        jobs["train"],
        jobs["translate"],
        jobs["compare"],
        jobs["paper"],
    ) == ("1", "4", "4", "1", "1")
    assert "--archive resources/corpora/europarl-it-en/it-en-1996-2001.tar.gz" in result.stdout
    assert "test_europarl" in result.stdout and "test_2016_flickr" not in result.stdout
    assert not (workdir / "results").exists()


# --- names a claim gives: defined by some config, or the workflow stops before any job --------


def claims_with(tmp_path: Path, old: str, new: str) -> Path:
    """config/ copied to tmp_path, its claims.yaml with `old` replaced by `new` (once)."""
    folder = tmp_path / "config"
    shutil.copytree(ROOT / "config", folder)
    text = (folder / "claims.yaml").read_text()
    assert text.count(old) >= 1, old
    (folder / "claims.yaml").write_text(text.replace(old, new, 1))
    return folder / "claims.yaml"


@pytest.mark.parametrize(
    "old, new, key",
    [
        ("comparison: d1_additive_vs_none,", "comparison: d1_additive_vs_none_typo,", "comparison"),
        ("probe: spread,", "probe: sprad,", "probe"),
        (
            "comparison: d1_additive_vs_none,",
            "comparison: d1_additive_vs_none, test_set: test_lnog,",
            "test_set",
        ),
    ],
)
def test_a_claim_naming_what_no_config_defines_is_named_with_its_key(tmp_path, old, new, key):
    claims = claims_with(tmp_path, old, new)
    with pytest.raises(ConfigError) as caught:
        check_claim_names(merged("test.yaml"), claims)
    message = str(caught.value)
    assert len(message.splitlines()) == 1 and message.startswith(f"config: {claims}: claim ")
    wrong = new.split(f"{key}: ")[-1].rstrip(",")
    assert f": {key} {wrong!r} is defined by no config; did you mean " in message


def test_the_shipped_claims_name_only_what_the_configs_define():
    configs = project_configs(ROOT / "config" / "claims.yaml")
    assert undefined_claim_names(ROOT / "config" / "claims.yaml", configs) == []
    assert undefined_claim_names(ROOT / "config" / "claims.yaml", [merged()]) == []


def test_a_comparison_this_config_removes_or_does_not_train_is_no_error(config):
    update_config(config, {"comparisons": {"d1_additive_vs_none": None}, "run_only": ["gru_dot"]})
    check(config, SCHEMA)  # drops the removed comparison
    assert "d1_additive_vs_none" not in config["comparisons"]
    check_claim_names(config, ROOT / "config" / "claims.yaml")  # defined by config.yaml: pending


# --- a sweep value without its paired comparison (issue 49) -------------------------------------

CLAIMS = ROOT / "config" / "claims.yaml"
D5 = "d5_heads{x}_vs_heads1"


@pytest.mark.parametrize(
    "files",
    [
        (),
        ("test.yaml",),
        ("paper.yaml",),
        ("long.yaml",),
        ("converged.yaml", "converged_recurrent.yaml"),
        ("converged.yaml", "converged_scale.yaml"),
        ("converged.yaml", "converged_heads.yaml", "converged_heads_seeds.yaml"),
    ],
)
def test_the_shipped_configs_pair_every_sweep_value_their_claims_need(files):
    config = merged(*files)
    check(config, SCHEMA)
    assert D5 in claimed_families(CLAIMS)
    assert sweep_gaps(config, claimed_families(CLAIMS)) == []
    check_claim_names(config, CLAIMS)


def test_a_new_sweep_value_without_its_familys_comparison_is_one_line():
    """config.yaml's d5_* comparisons repeat the heads sweep's values: a value added to the sweep
    alone would train and never be judged."""
    config = merged()
    config["sweeps"]["heads"]["values"].append(16)
    check(config, SCHEMA)
    with pytest.raises(ConfigError) as caught:
        check_claim_names(config, CLAIMS)
    message = str(caught.value)
    assert len(message.splitlines()) == 1, message
    assert message.startswith("config: sweeps.heads: heads 16 (sweep_transformer.heads-16) ")
    assert f"claim D5's family {D5!r}" in message and "sweep_transformer.heads-1" in message
    entry = (
        "comparisons.d5_heads16_vs_heads1: {a: sweep_transformer.heads-1,"
        " b: sweep_transformer.heads-16, test_set: test_2016_flickr}"
    )
    assert message.endswith(entry), message
    # the entry it names is the repair
    config["comparisons"]["d5_heads16_vs_heads1"] = {
        "a": "sweep_transformer.heads-1",
        "b": "sweep_transformer.heads-16",
        "test_set": "test_2016_flickr",
    }
    check_claim_names(config, CLAIMS)


def test_a_sweep_value_run_only_leaves_out_needs_no_comparison(config):
    config["sweeps"]["heads"]["values"] = [1, 4]
    config["run_only"] = ["sweep_transformer", "sweep_transformer.heads-1"]
    check(config, SCHEMA)
    assert sweep_gaps(config, {D5: "claim D5"}) == []
    config["run_only"].append("sweep_transformer.heads-4")
    (line,) = sweep_gaps(config, {D5: "claim D5"})
    # test.yaml's d5_heads4_vs_heads1 pairs heads-1 with its base (2 heads): the name is taken
    assert line.startswith("sweeps.heads: heads 4 (sweep_transformer.heads-4) trains but ")
    assert line.endswith(
        f"add a comparison named as {D5!r} pairing sweep_transformer.heads-1 with it"
    )


def test_a_sweep_value_without_its_comparison_fails_the_dry_run_in_one_line(tmp_path):
    workdir = project_sources(tmp_path)
    (workdir / "mine.yaml").write_text("sweeps: {heads: {values: [1, 4]}}\n")
    result = snakemake(workdir, "--configfile", "config/test.yaml", "mine.yaml", "--dry-run")
    assert result.returncode != 0
    output = (result.stdout + result.stderr).splitlines()
    assert [line for line in output if line.startswith("config: ")] == [output[-1]], output
    assert output[-1].startswith("config: sweeps.heads: heads 4 (sweep_transformer.heads-4) ")
    assert not [line for line in output if "WorkflowError" in line or 'File "' in line], output
    assert not (workdir / "results").exists()


def test_a_family_varying_both_sides_or_naming_no_sweep_is_no_sweep_family(config):
    check(config, SCHEMA)
    families = {"d3_scaled_vs_unscaled_dk{x}": "claim D3", "d1_{x}_vs_none": "claim D1"}
    config["sweeps"]["dk_scale"]["grid"]["d_k"].append(256)
    assert sweep_gaps(config, families) == []


def test_a_misspelt_claim_fails_the_dry_run_before_any_job(tmp_path):
    workdir = project_sources(tmp_path / "work")
    (workdir / "config").unlink()
    claims_with(
        workdir, "comparison: d1_additive_vs_none,", "comparison: d1_additive_vs_none_typo,"
    )
    result = snakemake(workdir, "--configfile", "config/test.yaml", "--dry-run")
    assert result.returncode != 0
    said = result.stdout + result.stderr
    assert "claim D1" in said and "comparison 'd1_additive_vs_none_typo' is defined by no" in said
    assert not (workdir / "results").exists() and not (workdir / "resources").exists()
