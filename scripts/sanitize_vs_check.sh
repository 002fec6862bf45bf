#!/usr/bin/env bash
# The checker against compute-sanitizer, kernel by kernel: every deliberately broken kernel of
# `gridsync check` run on the GPU by its lesson's command under racecheck, synccheck, memcheck and
# initcheck (each run instrumenting that one kernel alone), beside what the checker found on the
# simulator (`gridsync check --json`, the same binary). Prints a Markdown table.
#
#   scripts/sanitize_vs_check.sh [GRIDSYNC] [OUT_DIR]
#
# GRIDSYNC is the binary (default target/release/gridsync); each run's output goes to
# OUT_DIR/<kernel>.<tool>.log (default sanitize-vs-check/). SANITIZE_LIMIT bounds each run
# (seconds, default 120). The broken kernels' bounded waits are left at their own bounds
# (GRIDSYNC_WAIT_SCALE=1): a deadlock should end as the kernel's timeout, not after 100 of them.
set -uo pipefail
bin=${1:-target/release/gridsync}
out=${2:-sanitize-vs-check}
mkdir -p "$out"
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
limit=${SANITIZE_LIMIT:-120}
export GRIDSYNC_WAIT_SCALE=1

# kernel | the gridsync command that launches it on a GPU
rows=(
  "add_one|race"
  "add_one_block_scope|race"
  "lock_unfenced|locks --shape 3x96"
  "xpx_no_barrier|barrier --blocks 8 --threads 64 --iterations 10 --repeats 1"
  "xpx_sync_threads|barrier --blocks 8 --threads 64 --iterations 10 --repeats 1"
  "xpx_plain_spin|barrier --blocks 8 --threads 64 --iterations 10 --repeats 1"
  "xpx_count_to_n|barrier --blocks 8 --threads 64 --iterations 10 --repeats 1"
  "relay_no_wait|mbarrier --rounds 50 --blocks 4"
  "relay_stuck_parity|mbarrier --rounds 50 --blocks 4"
  "relay_wait_before_arrive|mbarrier --rounds 50 --blocks 4"
  "pipeline_no_full_wait|pipeline --tiles 300 --blocks 3"
  "pipeline_no_empty_wait|pipeline --tiles 300 --blocks 3"
  "find_neighbor_wrong_f32|neighbor --len 2000"
)
read -r -a tools <<<"${SANITIZE_TOOLS:-racecheck synccheck memcheck initcheck}"

# What the checker found for each kernel: "data race ×2", "scope race", "stuck wait", "nothing".
"$bin" check --json >"$out/check.json" 2>"$out/check.log"
checker() {
  python3 - "$out/check.json" "$1" <<'EOF'
import json, sys
v = json.load(open(sys.argv[1]))
k = next((k for k in v["kernels"] if k["kernel"] == sys.argv[2]), None)
if k is None:
    print("not checked")
else:
    kinds = {}
    for f in k["findings"]:
        kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
    parts = [f"{n} ({c} pair{'s' if c > 1 else ''} of lines)" for n, c in kinds.items()]
    if k["stuck"]:
        parts.append("stuck wait")
    print(", ".join(parts) or "nothing")
EOF
}

summary() { # the findings of one log: "0 hazards", "3 errors", or "did not finish"
  local log=$1 rc=$2
  if grep -q "RACECHECK SUMMARY" "$log"; then
    grep -o "RACECHECK SUMMARY: [0-9]* hazard[s]* displayed ([0-9]* error[s]*, [0-9]* warning[s]*)" "$log" |
      tail -1 | sed 's/RACECHECK SUMMARY: //; s/ displayed//'
  elif grep -q "ERROR SUMMARY" "$log"; then
    grep -o "ERROR SUMMARY: [0-9]* error[s]*" "$log" | tail -1 | sed 's/ERROR SUMMARY: //'
  else
    echo "did not finish (exit $rc)"
  fi
}

header="| kernel | the checker (simulator) |"
rule="|---|---|"
for t in "${tools[@]}"; do header+=" $t |"; rule+="---|"; done
echo "$header"
echo "$rule"
for row in "${rows[@]}"; do
  IFS='|' read -r kernel args <<<"$row"
  line="| \`$kernel\` | $(checker "$kernel") |"
  for tool in "${tools[@]}"; do
    extra=()
    [ "$tool" = racecheck ] && extra=(--racecheck-report hazard --num-cuda-barriers 64)
    log="$out/$kernel.$tool.log"
    # shellcheck disable=SC2086
    timeout "$limit" "$cs" --tool "$tool" "${extra[@]}" --kernel-name "kne=$kernel" \
      --print-limit 5 "$bin" $args >"$log" 2>&1
    line+=" $(summary "$log" $?) |"
  done
  echo "$line"
done
