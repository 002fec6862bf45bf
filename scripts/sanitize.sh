#!/usr/bin/env bash
# The sanitizer matrix: every library kernel under compute-sanitizer's memcheck, racecheck,
# synccheck and initcheck, at shapes that take every path — rings that wrap (more fills than
# stages), short last tiles, grids of more than one wave, partial warps, clusters; the cell
# lists' fills on graphene (rows of 3) and on random points with about 14 neighbors each, past
# the 8 a row keeps in registers (the long-row path), in grids of more than one wave.
#
#   scripts/sanitize.sh [GRIDSYNC] [OUT_DIR]
#
# GRIDSYNC is the release binary (default target/release/gridsync); each run's whole output
# goes to OUT_DIR/<row>.<tool>.log (default sanitize-logs/), and a Markdown table of the
# findings to standard output. Exit 1 if any cell has an error or hazard, or did not finish.
# SANITIZE_ONLY=REGEX keeps the rows whose name matches (to share the rows out over GPUs:
# CUDA_VISIBLE_DEVICES=1 SANITIZE_ONLY='^(reduce|neighbor)' scripts/sanitize.sh …);
# SANITIZE_TOOLS="memcheck racecheck" runs only those tools; SANITIZE_LIMIT bounds each run
# (seconds, default 600).
#
# Under a sanitizer gridsync stretches its kernels' bounded waits by itself (x100, see
# README "Running under compute-sanitizer"; GRIDSYNC_WAIT_SCALE overrides), so a slow run is a
# slow run, not a timeout. The lessons' deliberately broken kernels (a read before the copy
# lands, a stage refilled while read, a wait that never comes) are excluded by name: they are
# there to be caught, and `racecheck` does catch them — see the last rows.
#
# racecheck counts the mbarriers it tracks from the compiler's count of barriers in the
# source; gridsync's barriers live in dynamic shared memory, where that count is not known,
# so every racecheck run is given --num-cuda-barriers (docs/perf-notes.md, "Sanitizers").
set -uo pipefail
bin=${1:-target/release/gridsync}
out=${2:-sanitize-logs}
mkdir -p "$out"
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
broken='kns=pipeline_no_full_wait,kns=pipeline_no_empty_wait,kns=relay_no_wait,kns=relay_stuck_parity,kns=relay_wait_before_arrive,kns=mbarrier_wrong_parity'
limit=${SANITIZE_LIMIT:-600}

# name | gridsync arguments
rows=(
  "histogram-ring-full|histogram --bins 256 --bytes 65536 --blocks 1"
  "histogram-ring-wraps|histogram --bins 256 --bytes 81920 --blocks 1"
  "histogram-short-tail|histogram --bins 256 --bytes 81953 --blocks 2"
  "histogram-20MB|histogram --bins 256 --bytes 20000000"
  "histogram-ascii-waves|histogram --bins 128 --bytes 100003"
  "histogram-u16|histogram --bins 65536 --len 200003"
  "histogram-u16-tokens|histogram --bins 65536 --len 200003 --tokens"
  "reduce-pipeline-f32|reduce --len 5000003 --random --repeats 1 --accumulate f32"
  "reduce-pipeline-f64|reduce --len 5000003 --random --repeats 1 --accumulate f64"
  "reduce-pipeline-kahan|reduce --len 5000003 --random --repeats 1 --accumulate kahan"
  "reduce-odd|reduce --len 1003 --random --repeats 1"
  "pipeline-lesson|pipeline --tiles 300 --blocks 3"
  "mbarrier-lesson|mbarrier --rounds 50 --blocks 4"
  "dot|dot --len 100003 --random"
  "count-above|count-above --len 100003"
  "neighbor|neighbor --len 20000"
  "neighbor-f64|neighbor --len 20000 --double"
  "neighbor-long-rows|neighbor --generate random --len 300007 --cutoff 2.9 --max-neighbors 64 --all-pairs-max-atoms 0"
  "neighbor-long-rows-3d-f64|neighbor --generate random3 --len 300007 --cutoff 2.5 --max-neighbors 64 --double --all-pairs-max-atoms 0"
  "locks|locks --shape 3x96 --shape 132x256"
  "barrier|barrier --blocks 132 --threads 256 --iterations 10 --repeats 1"
)
read -r -a tools <<<"${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}"
only=${SANITIZE_ONLY:-.}

summary() { # the findings of one log: "clean", "N errors", or "did not finish"
  local log=$1 rc=$2
  if grep -q "RACECHECK SUMMARY" "$log"; then
    grep -o "RACECHECK SUMMARY: [0-9]* hazard[s]* displayed ([0-9]* error[s]*, [0-9]* warning[s]*)" "$log" | tail -1 |
      sed 's/RACECHECK SUMMARY: //'
  elif grep -q "ERROR SUMMARY" "$log"; then
    grep -o "ERROR SUMMARY: [0-9]* error[s]*" "$log" | tail -1 | sed 's/ERROR SUMMARY: //'
  else
    echo "did not finish (exit $rc)"
  fi
}

failed=0
header="| row | command |"
rule="|---|---|"
for t in "${tools[@]}"; do header+=" $t |"; rule+="---|"; done
echo "$header"
echo "$rule"
for row in "${rows[@]}"; do
  name=${row%%|*}
  args=${row#*|}
  [[ $name =~ $only ]] || continue
  cells=()
  for tool in "${tools[@]}"; do
    extra=()
    [ "$tool" = racecheck ] && extra=(--racecheck-report hazard --num-cuda-barriers 64)
    log="$out/$name.$tool.log"
    # shellcheck disable=SC2086
    timeout "$limit" "$cs" --tool "$tool" "${extra[@]}" --kernel-name-exclude "$broken" \
      --print-limit 20 "$bin" $args >"$log" 2>&1
    rc=$?
    s=$(summary "$log" "$rc")
    case "$s" in
      "0 errors" | "0 hazards displayed (0 errors, 0 warnings)") cells+=("clean") ;;
      *) cells+=("**$s**"); failed=1 ;;
    esac
    # A run that failed its own check (a wrong result) is a finding too.
    if [ "$rc" -ne 0 ] && [ "${cells[-1]}" = clean ]; then cells[-1]="**exit $rc**"; failed=1; fi
  done
  line="| $name | \`$args\` |"
  for c in "${cells[@]}"; do line+=" $c |"; done
  echo "$line"
done

# The lessons' broken kernels, alone: racecheck must find them (a tool that finds nothing here
# would make the clean rows above worth nothing).
[[ broken =~ $only || $only = . ]] || exit $failed
echo
echo "| must be found | command | kernel | racecheck |"
echo "|---|---|---|---|"
for row in "pipeline-broken|pipeline --tiles 300 --blocks 3|pipeline_no_full_wait" \
           "mbarrier-broken|mbarrier --rounds 50 --blocks 4|relay_no_wait"; do
  IFS='|' read -r name args kernel <<<"$row"
  log="$out/$name.racecheck.log"
  # shellcheck disable=SC2086
  timeout "$limit" "$cs" --tool racecheck --racecheck-report hazard --num-cuda-barriers 64 \
    --kernel-name "kns=$kernel" --print-limit 5 "$bin" $args >"$log" 2>&1
  s=$(summary "$log" $?)
  echo "| $name | \`$args\` | $kernel | $s |"
  case "$s" in "0 hazards"*) failed=1 ;; esac
done
exit $failed
