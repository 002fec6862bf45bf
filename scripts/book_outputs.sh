#!/usr/bin/env bash
# Runs each topic's command as the book shows it, on the GPU of this machine, and writes what it
# printed to DIR/<topic>.txt (the book includes these files: book/src/output/). The first line
# of each file names the command, the device and the date.
#
#   scripts/book_outputs.sh GRIDSYNC DIR
set -u
bin=$1
dir=$2
mkdir -p "$dir"
device=$("$bin" info 2>/dev/null | sed -n 's/^device[^:]*: *//p' | head -1)
[ -n "$device" ] || device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
run() {
    local name=$1
    shift
    {
        printf '$ %s    # %s, %s\n' "gridsync${*:+ $*}" "$device" "$(date -u +%Y-%m-%d)"
        timeout 120 "$bin" "$@" 2>&1
    } > "$dir/$name.txt"
    echo "$name: rc=$?"
}
run tour
run race race
run atomics atomics
run locks locks
run count-above count-above
run dot dot
run reduce reduce
run histogram histogram
run streams streams
run barrier barrier
run mbarrier mbarrier
run pipeline pipeline
run neighbor neighbor
run multi-reduce multi reduce
run multi-barrier multi barrier
run multi-lock multi lock
run litmus litmus --test MP --test MP+lock --test MP+atomic --placement sms --iterations 1000000
run litmus-primitives litmus --primitives --acquisitions 10000000 --rounds 100000
