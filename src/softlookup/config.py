"""The workflow config: checked before any job, and the runs it names.

`check(config, schema)` first drops the null entries by which a config merged over another
removes one (`drop_removed`, REMOVABLE: `comparisons: {d2_dot_vs_additive: null}`), reports every
schema error in one line each (key and where it sits, before any schema text), then checks what a
schema cannot: a corpus of sitting days (data.archive) is not joined, every sweep names a model
of the config, every sweep point is a valid model config, every test set is a prepared split,
every `run_only` pattern matches something, every `more_seeds` name is a variant.
`variants(config)` lists the variants a config trains; `run_seeds(config, variant)` the seeds one
trains: the config's `seeds`, and for a variant `more_seeds` names, its seeds too.
`sweep_gaps(config, families)` (called with the claims' families of comparisons by
claims/references.py, which the config cannot import) names each trained point of a sweep that a
family pairs with one fixed variant but not this point: a sweep value without its paired test.

A variant is a base model (`transformer`) or a sweep point of one. A sweep is either one key,
`{model: m, key: heads, values: [1, 8]}`, or a grid, `{model: m, grid: {d_k: [16, 64],
scale: [true, false]}}`; a point is named `<model>.<k1>-<v1>.<k2>-<v2>` (grid key order), listing
only the keys whose value differs from the base model's (defaults included), so a point equal to
the base model is the base run and two sweeps reaching the same settings share one run.

`read_config_file(path)` reads one config file as Snakemake does, naming the file and the line
of a syntax error. As a command:

    python -m softlookup.config check-files config/config.yaml config/mine.yaml
    python -m softlookup.config check config/config.yaml config/mine.yaml
    python -m softlookup.config write-json --json '{"run": ...}' --out results/runs/<run>/config.json
    python -m softlookup.config data-dir results/paper/config.json

`check-files` prints one line per file that is missing or does not parse (Snakemake's own message
names neither); `check` does that, then merges the files as Snakemake does (merged_config: the
first under the others) and prints `check`'s one line per problem (`make paper` runs it before
Snakemake, so a wrong config is that line and nothing else); `write-json` writes a run's settings
or the merged config (rules run_config and paper_config), indented with sorted keys; `data-dir`
prints the main corpus's folder of a merged config (`make reference` reads its manifest there).
"""

from __future__ import annotations

import argparse
import fnmatch
import itertools
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import jsonschema
import yaml

from . import rundir
from .paths import CONFIG_SCHEMA, ROOT

_UNSET = object()


class ConfigError(ValueError):
    """A config the workflow cannot run; the message names the key and where it sits."""


@dataclass(frozen=True)
class Variant:
    name: str  # run name without the seed: `transformer`, `transformer.heads-1`
    base_model: str
    sweep: dict = field(default_factory=dict)  # swept key -> value (only those unlike the base)
    model: dict = field(default_factory=dict)  # merged model config, its `train:` included


def value_name(value) -> str:
    """A sweep value as it appears in a run name: true/false, null, 64, 0.5."""
    if isinstance(value, bool):
        return str(value).lower()
    return "null" if value is None else str(value)


def load_schema(path: str | Path) -> dict:
    return yaml.safe_load(Path(path).read_text())


def _yaml_error(path: Path, error: yaml.YAMLError) -> str:
    """A YAML syntax error in one line: the file, the line and column, what is wrong there, and
    where the construct being read began."""
    mark = getattr(error, "problem_mark", None)
    if mark is None:
        return f"{path}: not valid YAML ({' '.join(str(error).split())})"
    began = error.context_mark
    context = (
        f" ({error.context} at line {began.line + 1}, column {began.column + 1})"
        if error.context and began
        else ""
    )
    return f"{path}, line {mark.line + 1}, column {mark.column + 1}: {error.problem}{context}"


def read_config_file(path: str | Path) -> dict:
    """One config file read as Snakemake reads it (JSON, else YAML; keys at the top level), or a
    ConfigError in one line naming the file and, for a syntax error, the line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file (looked in {Path.cwd()})") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot be read as a config file ({error})") from None
    try:
        config = json.loads(text)
    except ValueError:
        try:
            config = yaml.safe_load(text)
        except yaml.YAMLError as error:
            raise ConfigError(_yaml_error(path, error)) from None
    if not isinstance(config, dict):
        raise ConfigError(
            f"{path}: a config file holds `key: value` lines at its top level, "
            f"this one holds {'nothing' if config is None else repr(config)[:60]}"
        )
    return config


def _where(path) -> str:
    return ".".join(str(part) for part in path) or "top level"


def _repeated(items: list):
    """The first entry equal to an earlier one, as the schema's uniqueItems compares them (1 and
    1.0 are one entry, 1 and true two)."""
    return next(
        item
        for index, item in enumerate(items)
        if any(
            seen == item and isinstance(seen, bool) == isinstance(item, bool)
            for seen in items[:index]
        )
    )


def _one_line(error: jsonschema.ValidationError) -> str:
    where = _where(error.absolute_path)
    if error.validator == "uniqueItems":
        return (
            f"{where}: {_repeated(error.instance)!r} appears more than once in "
            f"{error.instance}; list each entry once"
        )
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        unknown = sorted(set(error.instance) - set(allowed))
        known = f" (known keys: {', '.join(allowed)})" if allowed else ""
        return f"unknown key {', '.join(map(repr, unknown))} at {where}{known}"
    if error.validator == "required":
        return f"{where}: {error.message}"
    if error.validator == "pattern":
        return f"{where}: {error.instance!r} is not a valid name (allowed: {error.validator_value})"
    if error.validator == "propertyNames":
        return (
            f"{where}: the name {error.instance!r} is not allowed "
            f"(names match {error.schema['propertyNames'].get('pattern', '?')})"
        )
    return f"{where}: {error.message}"


def schema_errors(config: dict, schema: dict) -> list[str]:
    """Every schema violation as one line: what is wrong, with its key path."""
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))
    lines = []
    for error in errors:
        # a oneOf/anyOf failure: its most specific sub-error says more than the summary
        best = jsonschema.exceptions.best_match([error]) if error.context else error
        lines.append(_one_line(best))
    return lines


def _base_models(config: dict) -> dict:
    return {name: dict(cfg) for name, cfg in config["models"].items()}


def _sweep_points(sweep: dict) -> list[dict]:
    """The settings of each point of a sweep, keys in grid (or the one key's) order."""
    if "grid" in sweep:
        keys = list(sweep["grid"])
        return [
            dict(zip(keys, values, strict=True))
            for values in itertools.product(*(sweep["grid"][key] for key in keys))
        ]
    return [{sweep["key"]: value} for value in sweep["values"]]


def _parse(model: dict):
    """The model's full settings (defaults filled) with its `train:` overrides; raises
    ValueError naming the key."""
    from softlookup.models.config import parse_model_config  # imports torch: only when checking

    cfg = dict(model)
    train = cfg.pop("train", {})
    return parse_model_config(cfg), train


def _parsed(where: str, settings: dict):
    """The model code's reading of `settings`; its complaint as a ConfigError naming `where`."""
    try:
        return _parse(settings)
    except (TypeError, ValueError) as error:
        raise ConfigError(f"{where}: {error}") from None


def _point_settings(base: dict, point: dict, train_keys: set[str]) -> dict:
    """A base model's settings with one sweep point applied: a swept `train` key lands in the
    point's `train:` block, every other key in the model's settings."""
    settings = {**base, **{k: v for k, v in point.items() if k not in train_keys}}
    if any(key in train_keys for key in point):
        settings["train"] = {
            **base.get("train", {}),
            **{k: v for k, v in point.items() if k in train_keys},
        }
    return settings


def _differences(point: dict, base_settings, base_train: dict, train_keys: set[str]) -> dict:
    """The keys of a sweep point whose value differs from its base model's (1 == True in Python:
    types are compared too, so `heads: true` is not heads 1)."""
    differs = {}
    for key, value in point.items():
        base_value = (
            base_train.get(key, _UNSET)
            if key in train_keys
            else getattr(base_settings, key, _UNSET)
        )
        if base_value != value or type(base_value) is not type(value):
            differs[key] = value
    return differs


def all_variants(config: dict, schema: dict | None = None) -> dict[str, Variant]:
    """{name: Variant} of every base model and sweep point, `run_only` not applied.

    With `schema`, each merged sweep point is checked against the schema's model definition and
    by the model code, so a bad sweep key or value stops the workflow before any job. A swept key
    of the schema's `train` block (max_source_words, say) lands in the point's `train:` settings
    (without `schema`, the project's schema says which keys those are).
    """
    bases = _base_models(config)
    found = {name: Variant(name, name, {}, cfg) for name, cfg in bases.items()}
    for _, _, variant in swept_variants(config, schema):
        if variant.sweep:  # else the base run itself
            found.setdefault(variant.name, variant)
    return found


def swept_variants(config: dict, schema: dict | None = None) -> list[tuple[str, dict, Variant]]:
    """(sweep, point, variant) of every point of every sweep, in the config's order: a point
    equal to its base model is the base model's own Variant (no swept keys). With `schema`, each
    point is checked as all_variants says."""
    bases = _base_models(config)
    found = []
    train_keys = set((schema or load_schema(CONFIG_SCHEMA))["$defs"]["train"]["properties"])
    parsed = {}
    if schema is not None:  # every base model as the model code sees it, sweeps or not
        parsed = {model: _parsed(f"models.{model}", settings) for model, settings in bases.items()}
    for sweep_name, sweep in (config.get("sweeps") or {}).items():
        model = sweep["model"]
        if model not in bases:
            raise ConfigError(
                f"sweeps.{sweep_name}: model {model!r} is not one of this config's models "
                f"({', '.join(bases)})"
            )
        if model not in parsed:
            parsed[model] = _parsed(f"models.{model}", bases[model])
        base_train = {**(config.get("train") or {}), **bases[model].get("train", {})}
        for point in _sweep_points(sweep):
            settings = _point_settings(bases[model], point, train_keys)
            if schema is not None:
                _check_point(
                    f"sweeps.{sweep_name} point {point} of model {model!r}", settings, schema
                )
            differs = _differences(point, parsed[model][0], base_train, train_keys)
            if not differs:  # the base run itself
                found.append((sweep_name, point, Variant(model, model, {}, bases[model])))
                continue
            name = model + "".join(f".{key}-{value_name(value)}" for key, value in differs.items())
            found.append((sweep_name, point, Variant(name, model, differs, settings)))
    return found


def family_members(pattern: str, comparisons: dict) -> dict[str, dict]:
    """The comparisons a family pattern (`d5_heads{x}_vs_heads1`) names: {x} stands for any text."""
    family = re.compile(re.escape(pattern).replace(re.escape("{x}"), ".+"))
    return {
        name: pair
        for name, pair in comparisons.items()
        if isinstance(pair, dict) and family.fullmatch(name)
    }


def sweep_gaps(config: dict, families: dict[str, str]) -> list[str]:
    """One line per point of a sweep that a family of comparisons leaves unpaired.

    families: pattern -> who needs it ("claim D5"). A family whose comparisons all hold one
    variant of a sweep (or its base model) on one side and points of that sweep (or its base) on
    the other is that sweep's family: every point the config trains (run_only applied) that is
    not the fixed variant must be in one of its comparisons, or a new value of the sweep trains
    and no claim judges it. Comparisons naming variants this config does not define are left
    aside (a merged config may move the base model onto a swept value)."""
    comparisons = config.get("comparisons") or {}
    trained = select(all_variants(config), config.get("run_only"))
    points: dict[str, list[tuple[dict, Variant]]] = {}
    for sweep, point, variant in swept_variants(config):
        points.setdefault(sweep, []).append((point, variant))
    lines = []
    for pattern, who in families.items():
        members = family_members(pattern, comparisons)
        for fixed_side, other_side in (("a", "b"), ("b", "a")):
            fixed = {pair.get(fixed_side) for pair in members.values()}
            others = {pair.get(other_side) for pair in members.values()} & set(trained)
            if len(fixed) != 1 or not others:
                continue
            (fixed_variant,) = fixed
            for sweep, swept in points.items():
                base = swept[0][1].base_model
                family = {variant.name for _, variant in swept} | {base}
                if fixed_variant not in family or not others <= family:
                    continue
                for point, variant in swept:
                    if variant.name in others | {fixed_variant} or variant.name not in trained:
                        continue
                    lines.append(
                        _unpaired(sweep, point, variant.name, pattern, who, members, fixed_side)
                    )
    return list(dict.fromkeys(lines))


def _unpaired(
    sweep: str, point: dict, variant: str, pattern: str, who: str, members: dict, side: str
) -> str:
    """The line of a sweep point without a comparison in its family, with the entry to add."""
    pair = next(iter(members.values()))
    other = "b" if side == "a" else "a"
    value = "-".join(value_name(value) for value in point.values())
    name = pattern.replace("{x}", value)
    entry = {side: pair[side], other: variant, "test_set": pair.get("test_set")}
    fields = ", ".join(f"{key}: {text}" for key, text in sorted(entry.items()) if text)
    add = (
        f"; add comparisons.{name}: {{{fields}}}"
        if name not in members
        else f"; add a comparison named as {pattern!r} pairing {pair[side]} with it"
    )
    values = ", ".join(f"{key} {value_name(v)}" for key, v in point.items())
    return (
        f"sweeps.{sweep}: {values} ({variant}) trains but no comparison of {who}'s family"
        f" {pattern!r} pairs it with {pair[side]}{add}"
    )


def _check_point(where: str, settings: dict, schema: dict) -> None:
    """A sweep point's merged settings against the schema's model definition, then the model
    code; the first complaint as a ConfigError naming `where`."""
    errors = schema_errors(settings, {"$defs": schema["$defs"], "$ref": "#/$defs/model"})
    if errors:
        raise ConfigError(f"{where}: {errors[0]}")
    _parsed(where, settings)


def select(variants: dict[str, Variant], patterns: list[str] | None) -> dict[str, Variant]:
    """The variants `run_only` names (names or glob patterns); all when it is unset."""
    if not patterns:
        return dict(variants)
    chosen = {}
    for pattern in patterns:
        matches = [name for name in variants if fnmatch.fnmatchcase(name, pattern)]
        if not matches:
            raise ConfigError(
                f"run_only: {pattern!r} matches none of this config's variants "
                f"({', '.join(variants)})"
            )
        chosen.update((name, variants[name]) for name in matches)
    return {name: variant for name, variant in variants.items() if name in chosen}


def run_seeds(config: dict, variant: str) -> list[int]:
    """The seeds `variant` trains on: the config's `seeds`, with its own `more_seeds` added."""
    more = (config.get("more_seeds") or {}).get(variant, [])
    return sorted({int(seed) for seed in [*config["seeds"], *more]})


def unknown_more_seeds(config: dict, variants: dict[str, Variant]) -> list[str]:
    """One line per `more_seeds` name that is none of this config's variants."""
    return [
        f"more_seeds: {name!r} is none of this config's variants ({', '.join(variants)})"
        for name in config.get("more_seeds") or {}
        if name not in variants
    ]


def ladder_points(train: dict) -> list[int]:
    """A run's training-budget points (epochs) below its epoch cap, from its train settings:
    "final" and points at or past the cap are the final model."""
    return sorted({p for p in train.get("ladder") or [] if p != "final" and p < train["epochs"]})


def data_dir(config: dict) -> str:
    """The main corpus's prepared folder, results/data/<corpus>-<src>-<tgt> (splits, manifest.json,
    spm.model); data.extra corpora have their own, results/data/<name>."""
    return "results/data/{corpus}-{src}-{tgt}".format(**config["data"])


def prepared_splits(config: dict) -> list[str]:
    """Every split prepare writes: data.splits, <test split>.concat<k>, data.joined_tests."""
    splits = list(config["data"]["splits"])
    concat = config["data"].get("concat") or []
    return (
        splits
        + [f"{s}.concat{k}" for s in splits if s.startswith("test") for k in concat]
        + list(config["data"].get("joined_tests") or {})
    )


def convergence_references(config: dict) -> list[Path]:
    """The committed reference folders of `convergence.references`, relative to the checkout
    (a `make paper RUN=...` build works in runs/<name>/, where results/ is its own). Read when
    the workflow is parsed, so a folder without a build, or a `seed_parts` group naming a folder
    the references leave out, stops the run before any job."""
    convergence = config.get("convergence") or {}
    named = convergence.get("references") or []
    folders = [ROOT / folder for folder in named]
    missing = [str(folder) for folder in folders if not (folder / "claims.csv").is_file()]
    if missing:
        raise ConfigError(f"convergence.references: no reference build (claims.csv) in {missing}")
    for group in convergence.get("seed_parts") or []:
        absent = [folder for folder in group if folder not in named]
        if absent:
            raise ConfigError(
                f"convergence.seed_parts: {absent} not in convergence.references (a config that"
                " drops references drops their seed_parts too: seed_parts: [])"
            )
    return folders


# the benchmarks scripts/gpu_check.sh measures that the ledger and the paper read
MEASURED_KINDS = ("attention", "decode", "train_step_lengths")


def measured_bench(config: dict) -> list[str]:
    """The bench CSVs of bench.measured: <folder>/<kind>_<device>.csv of MEASURED_KINDS, measured
    outside the workflow (scripts/gpu_check.sh) and read as they are, for devices it does not run
    itself."""
    paths = []
    for folder in config["bench"].get("measured") or []:
        found = sorted(
            (str(path), path.stem[len(kind) + 1 :])
            for kind in MEASURED_KINDS
            for path in Path(folder).glob(f"{kind}_*.csv")
        )
        if not found:
            raise ConfigError(
                f"bench.measured: {folder!r} holds no attention_<device>.csv or decode_<device>.csv"
            )
        for path, device in found:
            if device in config["bench"]["devices"]:
                raise ConfigError(
                    f"bench.measured: {path} is for device {device!r}, which bench.devices also"
                    " benchmarks; keep one of the two"
                )
            if any(Path(path).name == Path(seen).name for seen in paths):
                raise ConfigError(f"bench.measured: {path} and another folder's share its device")
            paths.append(path)
    return paths


# Entries a config merged over another removes by setting them to null (Snakemake merges dicts
# key by key, so a later file cannot drop a key otherwise): `*` is every key of that mapping.
REMOVABLE = (
    "data.splits.*",
    "data.join",
    "data.joined_tests",
    "data.joined_tests.*",
    "comparisons.*",
    "convergence.effects.*",
    "more_seeds",
    "more_seeds.*",
)


def drop_removed(config: dict) -> dict:
    """`config` without the null entries of REMOVABLE (in place, so that the rules read it so);
    returns it. `data.splits: {test_2016_flickr: null}` drops that split, say."""
    for path in REMOVABLE:
        *parents, last = path.split(".")
        mapping = config
        for key in parents:
            mapping = mapping.get(key) if isinstance(mapping, dict) else None
        if not isinstance(mapping, dict):
            continue
        for key in list(mapping) if last == "*" else [last]:
            if key in mapping and mapping[key] is None:
                del mapping[key]
    return config


def archive_conflicts(data: dict) -> list[str]:
    """One line per data key that a corpus of sitting days (data.archive) cannot have: its
    splits are whole days, never joined or concatenated pairs."""
    if not data.get("archive"):
        return []
    return [
        f"data.{key}: {data[key]!r} joins pairs, which a corpus of sitting days "
        f"(data.archive {data['archive']!r}) does not; set data.{key}: null"
        for key in ("join", "joined_tests", "concat")
        if data.get(key)
    ]


def check(config: dict, schema: dict, files: list[str] | None = None) -> dict[str, Variant]:
    """Stop with one line per problem, before any job; returns the selected variants.

    First drops the null entries a merged config removes (drop_removed), in place."""
    drop_removed(config)
    errors = schema_errors(config, schema) or archive_conflicts(config["data"])
    source = f" (config files: {', '.join(map(str, files))})" if files else ""
    if errors:
        raise ConfigError("\n".join(f"config: {line}{source}" for line in errors))
    try:
        every = all_variants(config, schema)
        unknown = unknown_more_seeds(config, every)
        if unknown:
            raise ConfigError(unknown[0])
        variants = select(every, config.get("run_only"))
        measured_bench(config)
        prepared = prepared_splits(config)
        for test_set in config["evaluate"]["test_sets"]:
            if test_set not in prepared:
                raise ConfigError(
                    f"evaluate.test_sets: {test_set!r} is not a prepared split; data.splits, "
                    f"data.concat and data.joined_tests give: {', '.join(prepared)}"
                )
    except ConfigError as error:
        raise ConfigError(f"config: {error}{source}") from None
    return variants


def file_problems(paths: list[Path]) -> list[str]:
    """One line per config file that is missing or does not parse."""
    problems = []
    for path in paths:
        try:
            read_config_file(path)
        except ConfigError as error:
            problems.append(str(error))
    return problems


def merged_config(paths: list[Path]) -> dict:
    """The config files merged as Snakemake merges them: the first (the Snakefile's own,
    config/config.yaml) under the others, which it first merges among themselves, each over the
    ones before it. So a mapping in a later file merges into the first file's even where a file
    between them set it to null (`more_seeds: null` in one, `more_seeds: {gru_dot: [2]}` in the
    next, keeps config.yaml's entries beside gru_dot's); a null per entry removes them for good."""
    from snakemake.utils import update_config  # here only: Snakemake's own merge, as it reads them

    first, *command_line = map(read_config_file, paths)
    overwrite: dict = {}
    for config in command_line:
        update_config(overwrite, config)
    update_config(first, overwrite)
    return first


def merged_problems(paths: list[Path]) -> list[str]:
    """One line per problem of the config files merged as Snakemake merges them (merged_config),
    checked as the Snakefile checks them (`check`, against the schema); the files' own problems
    (file_problems) first."""
    problems = file_problems(paths)
    if problems:
        return problems
    try:
        check(merged_config(paths), load_schema(CONFIG_SCHEMA), files=[*map(str, paths)])
    except ConfigError as error:
        return str(error).splitlines()
    return []


def write_json(text: str, out: Path) -> None:
    """`text` (JSON) written to `out` indented with sorted keys (the same settings given in
    another key order are the same file), whole or not at all, as every run JSON file is."""
    rundir.write_json(json.loads(text), out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Config files: check them; write settings.")
    commands = parser.add_subparsers(dest="command", required=True)
    check_files = commands.add_parser(
        "check-files", help="one line per config file that is missing or does not parse"
    )
    check_files.add_argument("files", nargs="+", type=Path)
    check_merged = commands.add_parser(
        "check", help="check-files, then one line per problem of the files merged in order"
    )
    check_merged.add_argument("files", nargs="+", type=Path)
    write = commands.add_parser("write-json", help="write JSON indented, keys sorted")
    write.add_argument("--json", required=True, help="the JSON text")
    write.add_argument("--out", required=True, type=Path)
    folder = commands.add_parser("data-dir", help="the main corpus's folder of a merged config")
    folder.add_argument("config", type=Path, help="the merged config as JSON")
    args = parser.parse_args(argv)
    if args.command == "write-json":
        write_json(args.json, args.out)
        print(f"wrote {args.out}")
        return
    if args.command == "data-dir":
        print(data_dir(json.loads(args.config.read_text())))
        return
    problems = (merged_problems if args.command == "check" else file_problems)(args.files)
    if problems:
        sys.exit("\n".join(problems))


if __name__ == "__main__":
    main()
