# Probes of the worked, statistical and counting claims (A1-C3): one job per probe, each writing a
# tidy CSV results/probes/<probe>.csv (probe, quantity, setting columns, value); and their figure.
# Each probe's options come from config["probes"][<probe>] (keys = CLI options, lists joined by
# commas), its seed from config["probes"]["seed"]; the worked examples are exact and take none.
# Options travel as a list param, quoted element by element ({params.options:q}).
from softlookup.probes import PROBES
from softlookup.probes.cli import cli_options

PROBE_CSVS = expand("results/probes/{probe}.csv", probe=PROBES)
PROBE_FIGURES = ["results/figures/probes.pdf"]


rule probe:
    output:
        "results/probes/{probe}.csv",
    log:
        "results/logs/probes/{probe}.log",
    benchmark:
        "results/benchmarks/probe/{probe}.tsv"
    wildcard_constraints:
        probe="|".join(PROBES),
    params:
        options=lambda w: cli_options(config["probes"].get(w.probe, {}), config["probes"]["seed"]),
    shell:
        "{PYTHON}.probes {wildcards.probe} --out {output:q} {params.options:q} > {log:q} 2>&1"


rule probe_figures:
    input:
        PROBE_CSVS,  # the figure module reads results/probes/ as the report does
    output:
        report(PROBE_FIGURES, category="Probes"),
    log:
        "results/logs/probes/figures.log",
    benchmark:
        "results/benchmarks/probe_figures/all.tsv"
    shell:
        "{PYTHON}.report.figures.probes --results results --out {output:q} > {log:q} 2>&1"
