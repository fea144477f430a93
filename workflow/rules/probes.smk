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


def bench_csvs():
    """Benchmark CSVs this config's bench rules write (BENCH_CSVS, from bench.smk), if any: the
    ledger reads whatever is in results/bench, and reruns when these change."""
    return globals().get("BENCH_CSVS", [])


rule probe_worked_examples:
    output:
        "results/probes/worked_examples.csv",
    log:
        "results/logs/probes/worked_examples.log",
    params:
        options=probe_options("worked_examples"),
    shell:
        "{PYTHON}.probes.worked_examples --out {output} {params.options} > {log} 2>&1"


rule probe_spread:
    output:
        "results/probes/spread.csv",
    log:
        "results/logs/probes/spread.log",
    params:
        options=probe_options("spread"),
    shell:
        "{PYTHON}.probes.spread --out {output} {params.options} > {log} 2>&1"


rule probe_saturation:
    output:
        "results/probes/saturation.csv",
    log:
        "results/logs/probes/saturation.log",
    params:
        options=probe_options("saturation"),
    shell:
        "{PYTHON}.probes.saturation --out {output} {params.options} > {log} 2>&1"


rule probe_order:
    output:
        "results/probes/order.csv",
    log:
        "results/logs/probes/order.log",
    params:
        options=probe_options("order"),
    shell:
        "{PYTHON}.probes.order --out {output} {params.options} > {log} 2>&1"


rule probe_averaging:
    output:
        "results/probes/averaging.csv",
    log:
        "results/logs/probes/averaging.log",
    params:
        options=probe_options("averaging"),
    shell:
        "{PYTHON}.probes.averaging --out {output} {params.options} > {log} 2>&1"


rule probe_diagnostics:
    output:
        "results/probes/diagnostics.csv",
    log:
        "results/logs/probes/diagnostics.log",
    params:
        options=probe_options("diagnostics"),
    shell:
        "{PYTHON}.probes.diagnostics --out {output} {params.options} > {log} 2>&1"


rule probe_counting:
    output:
        "results/probes/counting.csv",
    log:
        "results/logs/probes/counting.log",
    params:
        options=probe_options("counting"),
    shell:
        "{PYTHON}.probes.counting --out {output} {params.options} > {log} 2>&1"


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
        "{PYTHON}.probes.plots --probes-dir results/probes --out-dir results/figures > {log} 2>&1"


rule claims_ledger:
    input:
        claims="config/claims.yaml",
        probes=PROBE_CSVS,
        scores="results/tables/scores.csv",
        bench=bench_csvs(),
    output:
        csv=report("results/claims/claims.csv", category="Claims"),
        table="results/claims/claims_table.tex",
        macros="results/claims/claims_macros.tex",
    log:
        "results/logs/probes/claims_ledger.log",
    shell:
        "{PYTHON}.probes.ledger --claims {input.claims} --probes-dir results/probes"
        " --scores {input.scores} --bench-dir results/bench --out {output.csv}"
        " --out-tex {output.table} --out-macros {output.macros} > {log} 2>&1"
