#!/usr/bin/env bash
# One-shot GPU check of our attention kernels: decisive rows first, every part under its own
# timeout inside one outer limit (9 minutes), every CSV written row by row.
#
#   scripts/gpu_check.sh                 # on the GPU machine (its python3: torch, Triton, pandas)
#   scripts/gpu_check.sh --dry --out D   # the same steps on CPU: interpreter, tiny shapes (tests)
#
# Parts, in order (each logs to <part>.log; parts.csv says how each ended and how long it took):
#   environment  GPU name, driver (nvidia-smi.csv), python/torch/Triton/CUDA versions
#   warmup       one process per (head dim, causal, forward|backward|backward_atomic), in
#                parallel: Triton compiles and autotunes into its on-disk cache; beside it:
#   parity       tests/test_kernels.py on the compiled kernels (first tile, no autotuning)
#   attention    the benchmark, d = 128 then 64, longest N first, causal and not, bf16; ours
#                (deterministic and five-product backward), torch flash SDPA, torch cuDNN
#                attention, the materialised table up to 4k; forward and backward timed apart,
#                20 samples per row (median, p20, p80); autotuning keyed by N and the grid; after
#                each setting's timing, its forward and gradient errors at the timed shape, so
#                every autotuned tile timed is the one checked -> attention_<device>.csv
#   summary      summary.csv: TFLOP/s per row, flash SDPA's and cuDNN's beside it, the ratio to
#                SDPA and to the faster of the two (the paper reads it)
#   decode       KV-cache decoding vs recomputing, 10 samples per row; torch also with one query
#                and no mask (its best path); every way also replayed from a CUDA graph (no
#                launch cost) -> decode_<device>.csv
#   train_lengths  claim D6: one training step of the GRU with additive attention and of the
#                Transformer (config/paper.yaml's) at sentence lengths 512 down to 16, tokens per
#                batch fixed (8192), 10 samples per row -> train_step_lengths_<device>.csv
#   train_step   one short training step per model of config/paper.yaml (bf16 autocast):
#                train_steps.csv and the GPU-hours estimate gpu_hours.csv
# Results: --out DIR, else benchmarks/gpu/<device name> (commit those). When $OUT is set (the
# device tool), the folder also lands in $OUT as one file, gpu_check_<device name>.tar.gz (the tool
# does not bring back nested folders), packed on every exit. Exit status: 0 when every part
# succeeded.
set -uo pipefail
cd "$(dirname "$0")/.."

dry=0
dest=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dry) dry=1 ;;
    --out) dest="$2"; shift ;;
    *) echo "usage: $0 [--dry] [--out DIR]" >&2; exit 64 ;;
  esac
  shift
done

# the device image's python3, never a copied CPU .venv (GPU_CHECK_PYTHON: the tests' interpreter)
python="${GPU_CHECK_PYTHON:-python3}"
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-4}"
export TRITON_PRINT_AUTOTUNING=1  # the autotuned configs land in the logs
limit="${GPU_CHECK_LIMIT:-540}"   # outer limit, seconds
start=$SECONDS

if [ "$dry" = 1 ]; then
  export TRITON_INTERPRET=1 OMP_NUM_THREADS=1
  device=cpu
  device_name=dry-cpu
  head_dims=(16); seq_lens=(24 17); causal_values=(1); tokens=34; model_dim=16
  naive_max=20; decode=(--decode-prompt-len 20 --decode-new-tokens 2); warm_len=24
  samples=1; decode_samples=1; bench_extra=(--interpret); train_extra=(--dry --steps 1)
  lengths_extra=(--dry --samples 1 --lengths 8 4 --batch-tokens 16)
  parity_select=(-k "decode_matches_full or atomic_and_deterministic")
else
  export TRITON_INTERPRET=0
  device=cuda
  device_name=$("$python" -c 'import torch; assert torch.cuda.is_available()
print(torch.cuda.get_device_name().replace(" ", "_"))') || {
    echo "gpu_check: $python sees no CUDA device" >&2
    exit 2
  }
  head_dims=(128 64); seq_lens=(16384 8192 4096 2048 1024); causal_values=(1 0); tokens=16384
  model_dim=2048; naive_max=4096; decode=(--decode-prompt-len 4096 --decode-new-tokens 100)
  warm_len=1024; samples=20; decode_samples=10; bench_extra=(); train_extra=(--steps 3)
  lengths_extra=(--samples 10)
  parity_select=()
fi
dest="${dest:-benchmarks/gpu/$device_name}"
mkdir -p "$dest"
rm -f "$dest"/*.csv "$dest"/*.log "$dest"/*.xml  # no part's old files beside this run's
if [ -n "${OUT:-}" ]; then
  trap 'tar -C "$dest" -czf "$OUT/gpu_check_$device_name.tar.gz" .' EXIT
fi
echo "part,exit,seconds" > "$dest/parts.csv"

left() { echo $((limit - (SECONDS - start))); }

# run_part NAME MAX_SECONDS CMD...: CMD under a timeout of min(MAX, what is left - 10 s)
run_part() {
  local name=$1 want=$2 began=$SECONDS status
  shift 2
  local budget=$(($(left) - 10))
  [ "$budget" -lt "$want" ] && want=$budget
  if [ "$want" -lt 5 ]; then
    echo "gpu_check: $name skipped, out of time" | tee -a "$dest/gpu_check.log"
    echo "$name,skipped,0" >> "$dest/parts.csv"
    return
  fi
  echo "gpu_check: $name (timeout ${want}s, $(left)s left)" | tee -a "$dest/gpu_check.log"
  timeout -k 5 "$want" "$@" > "$dest/$name.log" 2>&1
  status=$?
  echo "$name,$status,$((SECONDS - began))" >> "$dest/parts.csv"
  echo "gpu_check: $name exit $status after $((SECONDS - began))s" | tee -a "$dest/gpu_check.log"
  tail -n 5 "$dest/$name.log"
}

command -v nvidia-smi > /dev/null && timeout 20 nvidia-smi \
  --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv > "$dest/nvidia-smi.csv"
run_part environment 30 "$python" -c '
import json, torch, triton
from softlookup.provenance import environment
env = environment()
env.update(cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version())
print(json.dumps(env, indent=1, default=str))'

# compile in parallel: the warm-up processes, and the parity tests beside them (their shapes
# compile other specialisations); the benchmark starts when both are done, on a quiet GPU
parallel=()
"$python" -c 'import xdist' 2> /dev/null && parallel=(-n 8)
run_part parity 170 env SOFTLOOKUP_AUTOTUNE=0 "$python" -m pytest -v -p no:cacheprovider \
  "${parallel[@]}" tests/test_kernels.py --junitxml "$dest/parity.xml" "${parity_select[@]}" &
parity_pid=$!
run_part warmup 150 "$python" -m softlookup.bench.warmup --device "$device" \
  --head-dims "${head_dims[@]}" --causal "${causal_values[@]}" --seq-len "$warm_len" \
  --tokens "$tokens" --model-dim "$model_dim"
wait "$parity_pid"

causal_flag=both
[ "${#causal_values[@]}" = 1 ] && causal_flag=true
run_part attention 270 "$python" -m softlookup.bench.kernels --device "$device" \
  --out "$dest/attention_$device.csv" --head-dims "${head_dims[@]}" --seq-lens "${seq_lens[@]}" \
  --causal "$causal_flag" --tokens "$tokens" --model-dim "$model_dim" \
  --naive-max-len "$naive_max" --grad-check --repeats "$samples" \
  --backends triton torch_sdpa torch_cudnn triton_atomic naive "${bench_extra[@]}"

run_part summary 20 "$python" -m softlookup.bench.summary "$dest/attention_$device.csv" \
  --out "$dest/summary.csv"

run_part decode 80 "$python" -m softlookup.bench.kernels --device "$device" \
  --decode-out "$dest/decode_$device.csv" --head-dims "${head_dims[@]}" \
  --tokens "$tokens" --model-dim "$model_dim" --repeats "$decode_samples" --cuda-graphs \
  --backends triton torch_sdpa torch_sdpa_unmasked naive "${decode[@]}" "${bench_extra[@]}"

# the models' head dims (16..256) are new to the kernel cache: one tile each, no autotuning
run_part train_lengths 90 env SOFTLOOKUP_AUTOTUNE=0 "$python" -m softlookup.bench.train_lengths \
  --device "$device" --plan benchmarks/paper_runs.json \
  --out "$dest/train_step_lengths_$device.csv" "${lengths_extra[@]}"

run_part train_step 110 env SOFTLOOKUP_AUTOTUNE=0 "$python" -m softlookup.bench.train_step \
  --device "$device" --plan benchmarks/paper_runs.json --out "$dest/train_steps.csv" \
  --estimate-out "$dest/gpu_hours.csv" "${train_extra[@]}"

echo "gpu_check: done in $((SECONDS - start))s; files in $dest" | tee -a "$dest/gpu_check.log"
# 0 when every part (the background parity run included) exited 0
awk -F, 'NR > 1 && $2 != "0" { bad = 1 } END { exit bad }' "$dest/parts.csv"
