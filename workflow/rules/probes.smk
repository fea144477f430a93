# Probes of the worked, statistical and counting claims; their figures; the claims ledger.
# Each probe's options come from config["probes"][<probe>] (keys = CLI options), its seed from
# config["probes"]["seed"]; the worked examples are exact and take none.

PROBES = ["worked_examples", "spread", "saturation", "order", "averaging", "diagnostics",
          "counting"]
PROBE_CSVS = expand("results/probes/{probe}.csv", probe=PROBES)
PROBE_FIGURES = expand("results/figures/{figure}.pdf", figure=["spread", "saturation", "collapse"])
CLAIMS_OUTPUTS = expand("results/claims/{file}",
                        file=["claims.csv", "claims_table.tex", "claims_macros.tex"])


def probe_options(probe):
    """config["probes"][probe] as CLI options: n_pairs: 10000 -> --n-pairs 10000, lists joined
    by commas; plus the shared seed."""
    settings = config["probes"].get(probe, {})
    options = [f"--seed {config['probes']['seed']}"]
    for key, value in settings.items():
        text = ",".join(str(v) for v in value) if isinstance(value, list) else str(value)
        options.append(f"--{key.replace('_', '-')} {text}")
    return " ".join(options)


rule probe:
    output:
        "results/probes/{probe}.csv",
    log:
        "results/logs/probes/{probe}.log",
    wildcard_constraints:
        probe="|".join(PROBES),
    params:
        options=lambda wildcards: probe_options(wildcards.probe),
    shell:
        "{PYTHON}.probes.{wildcards.probe} --out {output} {params.options} > {log} 2>&1"


rule probe_figures:
    input:
        "results/probes/spread.csv",
        "results/probes/saturation.csv",
        "results/probes/averaging.csv",
    output:
        report(PROBE_FIGURES, category="Probes"),
    log:
        "results/logs/probes/figures.log",
    shell:
        "{PYTHON}.report.figures.probes --probes-dir results/probes --out-dir results/figures > {log} 2>&1"


rule claims_ledger:
    input:
        claims="config/claims.yaml",
        probes=PROBE_CSVS,
        scores="results/tables/scores.csv",
        bench=BENCH_CSVS,
    output:
        csv=report("results/claims/claims.csv", category="Claims"),
        table="results/claims/claims_table.tex",
        macros="results/claims/claims_macros.tex",
    log:
        "results/logs/probes/claims_ledger.log",
    shell:
        "{PYTHON}.claims.ledger --claims {input.claims} --probes-dir results/probes"
        " --scores {input.scores} --bench-dir results/bench --out {output.csv}"
        " --out-tex {output.table} --out-macros {output.macros} > {log} 2>&1"
