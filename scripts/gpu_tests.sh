#!/usr/bin/env bash
# Runs the GPU tests of test binaries built where no NVIDIA driver was found (there they are
# compiled as ignored): each binary's ignored tests, one binary after another, with a bound on
# each; one line per binary on stdout, every binary's output in LOG.
#
#   cargo test --no-run --message-format=json   # lists the test executables; copy them to DIR
#   scripts/gpu_tests.sh DIR LOG [NAME…]          # on the GPU machine
#
# DIR holds the test binaries named after their test file (runtime, neighbor, …; `lib` for the
# library's unit tests), those of the command's crate with `cli-` before the name (cli-runtime,
# …; `cli-lib` for its unit tests), the `gridsync` binary (for the CLI tests) and, for the
# own-kernel test, the example's `own-kernel` binary. Without NAMEs, every test binary in DIR
# runs. Exits non-zero if any binary failed.
set -u
dir=$1
log=$2
shift 2
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    for f in "$dir"/*; do
        name=$(basename "$f")
        case $name in gridsync | own-kernel | *.sh) continue ;; esac
        [ -x "$f" ] && [ -f "$f" ] && names+=("$name")
    done
fi
export GRIDSYNC_BIN="$dir/gridsync" OWN_KERNEL_BIN="$dir/own-kernel"
: > "$log"
failed=0
for name in "${names[@]}"; do
    start=$(date +%s)
    out=$(timeout "${GRIDSYNC_TEST_TIMEOUT:-400}" "$dir/$name" --ignored --test-threads=4 2>&1)
    rc=$?
    printf '=== %s (rc %s)\n%s\n' "$name" "$rc" "$out" >> "$log"
    summary=$(printf '%s\n' "$out" | grep -E '^test result' | tail -1)
    echo "$name: rc=$rc, $(( $(date +%s) - start )) s, ${summary:-no result}"
    [ $rc -eq 0 ] || failed=1
done
exit $failed
