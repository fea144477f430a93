# The claims ledger: every claim of config/claims.yaml judged from the evidence files below, into
# results/claims/claims.csv (one row per claim) and results/claims/checks.csv (one row per
# check). The ledger reads exactly the files passed to it, and every one of them is an input of
# this rule: a leftover file the workflow did not declare can never decide a claim. The report
# renders both tables (and every LaTeX macro) from these CSVs.

CLAIMS_OUTPUTS = ["results/claims/claims.csv", "results/claims/checks.csv"]


rule claims_ledger:
    input:
        claims="config/claims.yaml",
        schema="workflow/schemas/claims.schema.yaml",
        wording="paper/sections/_wording.tex",  # words checks.csv's and claims.csv's `text`
        probes=PROBE_CSVS,
        scores="results/tables/scores.csv",
        comparisons="results/tables/comparisons.csv",
        training="results/tables/training.csv",
        bench=BENCH_CSVS,
        analysis=ANALYSIS_CSVS,
    output:
        claims=report("results/claims/claims.csv", category="Claims"),
        checks="results/claims/checks.csv",
    log:
        "results/logs/claims/ledger.log",
    benchmark:
        "results/benchmarks/claims_ledger/all.tsv"
    shell:
        "{PYTHON}.claims.ledger --claims {input.claims:q} --probes {input.probes:q}"
        " --scores {input.scores:q} --comparisons {input.comparisons:q}"
        " --training {input.training:q} --bench {input.bench:q} --analysis {input.analysis:q}"
        " --out {output.claims:q} --out-checks {output.checks:q} > {log:q} 2>&1"
        " && {PYTHON}.report.wording --claims {output.claims:q} --checks {output.checks:q}"
        " >> {log:q} 2>&1"
