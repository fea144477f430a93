#!/usr/bin/env bash
# GPU check of our attention kernels, one command, under 8 minutes on one H200:
#   1. the parity tests (tests/test_kernels.py) with the compiled Triton kernels on CUDA:
#      fp32/fp16/bf16 against the fp32 reference, plus larger shapes (N up to 4096);
#   2. the benchmark: N = 1k..16k, d = 64 and 128, bf16, causal and not, fwd and fwd+bwd, our
#      kernel vs torch's flash SDPA vs the materialised table; decoding with a KV cache.
# Writes attention_cuda.csv, decode_cuda.csv, parity.xml and the logs to $OUT when set, else to
# benchmarks/gpu/<device name>/ (commit those; see benchmarks/README.md).
# Exits non-zero when the parity tests fail; the benchmark still runs. Time limits: tests 180 s,
# benchmark 270 s (its CSVs are written row by row, so a cut-short run keeps what it measured).
set -uo pipefail
cd "$(dirname "$0")/.."

python=python
[ -x .venv/bin/python ] && python=.venv/bin/python
export PYTHONPATH="src${PYTHONPATH:+:$PYTHONPATH}"
export TRITON_INTERPRET=0        # compiled kernels, never the CPU interpreter
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-8}"

device_name=$("$python" -c 'import torch; print(torch.cuda.get_device_name().replace(" ", "_"))') || {
  echo "gpu_check: torch sees no CUDA device" >&2
  exit 2
}
dest="${OUT:-benchmarks/gpu/$device_name}"
mkdir -p "$dest"
echo "gpu_check: $device_name -> $dest"

# 1. parity: one tile shape per kernel (no autotuning), so the many test shapes compile fast
SOFTLOOKUP_AUTOTUNE=0 timeout 180 "$python" -m pytest -q -p no:cacheprovider tests/test_kernels.py \
  --junitxml "$dest/parity.xml" 2>&1 | tee "$dest/parity.log"
tests_status=${PIPESTATUS[0]}

# 2. benchmark (autotuned kernels)
timeout 270 "$python" -m softlookup.bench.kernels --device cuda \
  --out "$dest/attention_cuda.csv" --decode-out "$dest/decode_cuda.csv" \
  --seq-lens 1024 2048 4096 8192 16384 --head-dims 64 128 --dtype bfloat16 --causal both \
  --tokens 16384 --model-dim 2048 --naive-max-len 8192 \
  --decode-prompt-len 4096 --decode-new-tokens 100 2>&1 | tee "$dest/bench.log"
bench_status=${PIPESTATUS[0]}

# 3. the targets at a glance: fwd+bwd TFLOP/s of ours vs torch's flash SDPA, memory, error
"$python" - "$dest/attention_cuda.csv" <<'EOF' 2>&1 | tee "$dest/summary.txt"
import sys

import pandas as pd

rows = pd.read_csv(sys.argv[1])
ok = rows[rows.status == "ok"]
keys = ["pass", "head_dim", "causal", "seq_len"]
backends = ["triton", "torch_sdpa", "naive"]
table = ok.pivot_table(index=keys, columns="backend", values="tflops").reindex(columns=backends)
table["triton/sdpa"] = table["triton"] / table["torch_sdpa"]
print("TFLOP/s\n", table.round(2).to_string())
memory = ok.pivot_table(index=keys, columns="backend", values="peak_mem_mib")
print("peak MiB\n", memory.reindex(columns=backends).round(1).to_string())
print("max abs error vs fp32 reference (bf16)\n", ok.groupby("backend").max_abs_err.max().to_string())
EOF

echo "gpu_check: tests exit $tests_status, benchmark exit $bench_status; files in $dest"
[ "$tests_status" -eq 0 ] && [ "$bench_status" -eq 0 ]
