#!/usr/bin/env bash
# Snakemake's own CPU time on a workflow of N two-second jobs on 2 cores, with its default
# job-rate timer (--max-jobs-per-timespan 100/1s), with the profiles' 1000/10s and with 1000/1m.
# Why: every finished job leaves one more 1-second re-evaluation timer running (snakemake 9.x), so
# the scheduler's CPU use grows with the jobs done; in the default study's run it took ~40% of a
# core by the middle of the run, beside two one-thread training jobs on a 2-core machine.
# Usage: scripts/scheduler_overhead.sh [N] [OUT_CSV]   (default 150, benchmarks/scheduler_overhead.csv)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-150}
out=${2:-$root/benchmarks/scheduler_overhead.csv}
snakemake=$root/.venv/bin/snakemake
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/Snakefile" <<'EOF'
rule all:
    input: expand("out/{i}.txt", i=range(int(config["jobs_n"])))
rule one:
    output: "out/{i}.txt"
    benchmark: "bench/{i}.tsv"
    shell: "sleep 2; touch {output}"
EOF
echo "setting,jobs,wall_s,snakemake_cpu_s,snakemake_version" > "$out"
for setting in 100/1s 1000/10s 1000/1m; do
    rm -rf "$work/out" "$work/bench" "$work/.snakemake"
    # %e wall, %U + %S CPU of snakemake and its children (the jobs only sleep)
    /usr/bin/time -o "$work/time" -f "%e %U %S" "$snakemake" -s "$work/Snakefile" -d "$work" \
        --cores 2 --quiet all --config jobs_n="$n" --max-jobs-per-timespan "$setting" >/dev/null 2>&1
    read -r wall user sys < "$work/time"
    cpu=$(python3 -c "print(round($user + $sys, 1))")
    echo "$setting,$n,$wall,$cpu,$("$snakemake" --version)" | tee -a "$out"
done
