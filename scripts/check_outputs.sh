#!/usr/bin/env bash
# Runs the checker on the simulator (no GPU needed) for each topic that has a lesson chapter, as
# `gridsync check TOPIC`, and writes what it printed to DIR/check-TOPIC.txt (the lessons'
# chapters include these files: book/src/output/). The first line of each file names the
# command, the simulator and the date; a topic the binary does not list is skipped.
#
#   scripts/check_outputs.sh GRIDSYNC DIR
#
# CHECK_LIMIT bounds each topic's run (seconds, default 300: on two loaded cores the reduce
# topic's 20 kernels take the longest).
set -u
bin=$1
dir=$2
limit=${CHECK_LIMIT:-300}
mkdir -p "$dir"
listed=$("$bin" check --list 2>/dev/null | awk 'NR > 1 { print $1 }' | sort -u)
run() {
    local topic=$1
    if ! grep -qx -- "$topic" <<< "$listed"; then
        echo "$topic: not a topic of this binary, skipped"
        return
    fi
    {
        printf '$ gridsync check %s    # the simulator (CPU threads), %s\n' "$topic" "$(date -u +%Y-%m-%d)"
        timeout "$limit" "$bin" check "$topic" 2>&1
    } > "$dir/check-$topic.txt"
    echo "$topic: rc=$?"
}
for topic in race atomics locks barrier mbarrier pipeline histogram reduce count-above dot \
    neighbor streams; do
    run "$topic"
done
