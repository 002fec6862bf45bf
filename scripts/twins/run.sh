#!/usr/bin/env bash
# Runs gridsync's bandwidth benchmarks beside their nvcc twins (scripts/twins/*.cu, issue 36) on
# the GPU of this machine, and sets the SASS of each pair side by side.
#
# 1. Builds each twin (reduce, count_above, dot, histogram) with nvcc -O3 -arch=sm_90 -lineinfo
#    into OUTDIR/bin/ (the log in OUTDIR/build.log).
# 2. For each benchmark, three rounds of: `GRIDSYNC --json bench <name>` at its default sizes,
#    written out explicitly (OUTDIR/<name>.gridsync.rK.json), then the twin at each size with
#    the grid gridsync's row reports (OUTDIR/<name>.twin.rK.jsonl, one JSON line per launch
#    shape). Benchmark → kernel → sizes:
#      reduce       partial_reduce, reduce_atomic, reduce_warp, reduce_last_block_sum_f32,
#                   reduce_vec_sum_f32                   --len 100000000,1000000000
#      count-above  gt_thr_cnt_vec4, _block, _warp, _atomic
#                                                        --len 10000000,1000000000
#      dot          dot_vec4, dot_atomic, dot_partial    --len 10000000,1000000000
#      histogram    histogram_pipeline, _vec16, _warp, _lane, _shared, _global
#                                                        --bytes 1073741824 --bins 128 (the
#                   uniform random input, `large_random`; histogram_shared_rows, which
#                   `bench histogram` does not time, has a twin but no row here)
#    every one with --repeats 20 (the default trials; 3 warm-ups). OUTDIR/summary.tsv: each
#    kernel, size and round, both medians (ms) and the twin's time over gridsync's.
# 3. The SASS: the twins' from their binaries (cuobjdump -sass); gridsync's from its PTX,
#    assembled with ptxas -arch=sm_90 into OUTDIR/gridsync.cubin. The PTX is embedded in the
#    binary and GRIDSYNC cannot write it out: pass it as PTX (the build writes
#    target/<profile>/build/gridsync-*/out/gpu_sm_90.ptx; carry it to the GPU machine), or the
#    newest such file under this repository's target/ is used. Each kernel's function goes to
#    OUTDIR/<kernel>.rust.sass and OUTDIR/<kernel>.nvcc.sass, and OUTDIR/sass.txt (also
#    printed) lists per kernel and side: instructions (NOPs left out), registers
#    (cuobjdump -res-usage), and the count of each memory, atomic, barrier and shuffle opcode
#    (LDG.E.128, STG.E, LDL/STL (spills), ATOMS.POPC.INC.32, REDG…, BAR.SYNC…, SHFL.DOWN,
#    SYNCS…, UBLKCP…).
#
#   scripts/twins/run.sh GRIDSYNC OUTDIR [PTX]
#   BENCHES="reduce dot" ROUNDS=1 scripts/twins/run.sh …   # a part (BENCHES="": the SASS only)
#
# Not run here: mutex.cu, the twins of the locks (`lock_mutex` with one thread per warp,
# `lock_mutex_with`, `lock_warp_leader`, `lock_ticket`; against `gridsync bench locks`' rates,
# not bandwidth rows), barrier.cu, the twin of `grid_barrier_bare` (against `bench barrier`'s
# microseconds), cell_count.cu, cell_bin_scatter.cu and cell_fill_scan.cu, the twins of the cell
# list's count, binning, scatter, fill and scan (kernels alone, under ncu), reduce_pipeline.cu
# (the pipeline reductions, at the grid of `bench reduce`'s rows), histogram_u16.cu (`bench
# histogram-u16`), cluster.cu (`bench cluster`'s rows) and normalize.cu (`gridsync streams`'
# pipelines); each header says how to run it beside gridsync.
#
# Needs nvcc, ptxas and cuobjdump on PATH (or under $CUDA_HOME/bin) and python3.
set -u
if [ $# -lt 2 ]; then
    echo "usage: $0 GRIDSYNC OUTDIR [PTX]" >&2
    exit 2
fi
gridsync=$1
out=$2
ptx=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
mkdir -p "$out/bin"
[ -n "${CUDA_HOME:-}" ] && PATH=$CUDA_HOME/bin:$PATH
for tool in nvcc ptxas cuobjdump python3; do
    command -v "$tool" > /dev/null || echo "warning: $tool not found" >&2
done
ROUNDS=${ROUNDS:-3}
BENCHES=${BENCHES-reduce count-above dot histogram}
TRIALS=20

# ---- 1. build -----------------------------------------------------------------------------------
: > "$out/build.log"
for twin in reduce count_above dot histogram; do
    nvcc -O3 -arch=sm_90 -lineinfo -o "$out/bin/$twin" "$here/$twin.cu" >> "$out/build.log" 2>&1
    echo "build $twin: rc=$?"
done

# The blocks of KERNEL's row at size LEN in gridsync's JSON FILE (empty if it has none).
blocks_of() {
    python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
path, size, kernel = sys.argv[1], int(sys.argv[2]), sys.argv[3]
try:
    doc = json.load(open(path))
except Exception:
    sys.exit(0)
rows = []
for s in doc.get("sizes", []):  # count-above, dot, reduce
    if s.get("len") == size:
        rows += s.get("kernels") or []
for i in doc.get("inputs", []):  # histogram: the random bytes
    if i.get("input") == "large_random" and i.get("bytes") == size:
        rows += i.get("kernels") or []
for r in rows:
    if r.get("name") == kernel:
        print(r["blocks"])
        break
EOF
}

# ---- 2. time ------------------------------------------------------------------------------------
# bench NAME TWIN FLAGS SIZES KERNELS: ROUNDS rounds of gridsync's bench, then the twin at each
# size and kernel. Each twin takes its kernel's short name first (below).
bench() {
    local name=$1 twin=$2 flags=$3 sizes=$4 kernels=$5
    for round in $(seq 1 $ROUNDS); do
        local gj="$out/$name.gridsync.r$round.json" tj="$out/$name.twin.r$round.jsonl"
        # shellcheck disable=SC2086
        timeout 600 "$gridsync" --json bench "$name" $flags --repeats $TRIALS > "$gj" 2> "$gj.err"
        echo "gridsync bench $name $flags (round $round): rc=$?"
        : > "$tj"
        for size in ${sizes//,/ }; do
            for kernel in $kernels; do
                local blocks
                blocks=$(blocks_of "$gj" "$size" "$kernel")
                if [ -z "$blocks" ]; then
                    echo "  $kernel at $size: no gridsync row, the twin picks its own grid"
                    blocks=0
                fi
                # The twin takes its kernel's short name first (vec, warp, partial, atomic,
                # last_block; vec4, atomic, …).
                local short=${kernel#histogram_}
                short=${short#gt_thr_cnt_}
                short=${short#dot_}
                short=${short#reduce_}
                case $short in
                    vec_sum_f32) short=vec ;;
                    last_block_sum_f32) short=last_block ;;
                    partial_reduce) short=partial ;;
                esac
                local args=("$short" "$size" "$TRIALS" "$blocks")
                timeout 600 "$out/bin/$twin" "${args[@]}" >> "$tj" 2>> "$tj.err"
                echo "  twin $twin ${args[*]}: rc=$?"
            done
        done
    done
}

for name in $BENCHES; do
    case $name in
        reduce) bench reduce reduce "--len 100000000,1000000000" 100000000,1000000000 \
            "partial_reduce reduce_atomic reduce_warp reduce_last_block_sum_f32 reduce_vec_sum_f32" ;;
        count-above) bench count-above count_above "--len 10000000,1000000000" \
            10000000,1000000000 "gt_thr_cnt_vec4 gt_thr_cnt_block gt_thr_cnt_warp gt_thr_cnt_atomic" ;;
        dot) bench dot dot "--len 10000000,1000000000" 10000000,1000000000 \
            "dot_vec4 dot_atomic dot_partial" ;;
        histogram) bench histogram histogram "--bytes 1073741824 --bins 128" 1073741824 \
            "histogram_pipeline histogram_vec16 histogram_warp histogram_lane histogram_shared \
            histogram_global" ;;
        *) echo "unknown benchmark $name (reduce, count-above, dot, histogram)" >&2 ;;
    esac
done

python3 - "$out" $ROUNDS <<'EOF' > "$out/summary.tsv"
import glob, json, os, sys
out, rounds = sys.argv[1], int(sys.argv[2])
print("bench\tkernel\tlen\tround\tgridsync_ms\ttwin_ms\ttwin/gridsync\tgridsync_blocks\ttwin_blocks\tgridsync_gb_per_s\ttwin_gb_per_s")
for name in ["reduce", "count-above", "dot", "histogram"]:
    for r in range(1, rounds + 1):
        try:
            g = json.load(open(f"{out}/{name}.gridsync.r{r}.json"))
        except Exception:
            g = {}
        rows = {}
        for s in g.get("sizes", []):
            for k in s.get("kernels") or []:
                rows[(k["name"], s["len"])] = k
        for i in g.get("inputs", []):
            if i.get("input") == "large_random":
                for k in i.get("kernels") or []:
                    rows[(k["name"], i["bytes"])] = k
        try:
            lines = open(f"{out}/{name}.twin.r{r}.jsonl").read().splitlines()
        except OSError:
            lines = []
        for line in lines:
            try:
                t = json.loads(line)
            except ValueError:
                continue
            k = rows.get((t["kernel"], t["len"]))
            gms = k["ms"]["median"] if k else float("nan")
            print(f"{name}\t{t['kernel']}\t{t['len']}\t{r}\t{gms:.6f}\t{t['median_ms']:.6f}\t"
                  f"{t['median_ms'] / gms if k else float('nan'):.3f}\t"
                  f"{k['blocks'] if k else '-'}\t{t['blocks']}\t"
                  f"{k['gb_per_s'] if k else float('nan'):.1f}\t{t['gb_per_s']:.1f}")
EOF
echo "summary: $out/summary.tsv"
cat "$out/summary.tsv"

# ---- 3. SASS ------------------------------------------------------------------------------------
if [ -z "$ptx" ]; then
    ptx=$(ls -t "$repo"/target/*/build/gridsync-*/out/gpu_sm_90.ptx 2>/dev/null | head -1)
fi
if [ -n "$ptx" ] && [ -f "$ptx" ]; then
    ptxas -arch=sm_90 -o "$out/gridsync.cubin" "$ptx" 2> "$out/ptxas.log"
    echo "ptxas $ptx: rc=$?"
else
    echo "no gridsync PTX (pass it as the third argument): the Rust side's SASS is skipped"
fi
for side in gridsync reduce count_above dot histogram; do
    if [ "$side" = gridsync ]; then obj="$out/gridsync.cubin"; else obj="$out/bin/$side"; fi
    [ -f "$obj" ] || continue
    cuobjdump -sass "$obj" > "$out/$side.all.sass" 2> /dev/null
    cuobjdump -res-usage "$obj" > "$out/$side.res-usage.txt" 2> /dev/null
done

python3 - "$out" <<'EOF' | tee "$out/sass.txt"
import re, sys
from collections import Counter
out = sys.argv[1]
pairs = [("partial_reduce", "reduce"), ("reduce_atomic", "reduce"), ("reduce_warp", "reduce"),
         ("reduce_last_block_sum_f32", "reduce"), ("reduce_vec_sum_f32", "reduce"),
         ("gt_thr_cnt_vec4", "count_above"), ("gt_thr_cnt_block", "count_above"),
         ("gt_thr_cnt_warp", "count_above"), ("gt_thr_cnt_atomic", "count_above"),
         ("dot_vec4", "dot"), ("dot_atomic", "dot"), ("dot_partial", "dot"),
         ("histogram_pipeline", "histogram"), ("histogram_vec16", "histogram"),
         ("histogram_warp", "histogram"), ("histogram_lane", "histogram"),
         ("histogram_shared", "histogram"), ("histogram_global", "histogram")]
FAMILIES = ("LDG", "STG", "LDS", "STS", "LDL", "STL", "ATOM", "RED", "BAR", "SHFL", "MEMBAR",
            "FENCE", "SYNCS", "UBLKCP", "VOTE")
INSN = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)")

def read(path):
    try:
        return open(path).read().splitlines()
    except OSError:
        return []

def is_it(name, kernel):  # the entry itself (Rust) or its C++ mangling (nvcc)
    return name == kernel or name.startswith(f"_Z{len(kernel)}{kernel}")

def function(lines, kernel):
    body, inside = [], False
    for line in lines:
        m = re.match(r"^\s*Function : (\S+)", line)
        if m:
            inside = is_it(m.group(1), kernel)
            if inside:
                body = [line]
            continue
        if inside:
            if re.match(r"^\s*\.{6,}", line):
                break
            body.append(line)
    return body

def registers(lines, kernel):
    for i, line in enumerate(lines):
        m = re.match(r"^\s*Function (\S+):", line)
        if m and is_it(m.group(1), kernel) and i + 1 < len(lines):
            r = re.search(r"REG:(\d+)", lines[i + 1])
            return r.group(1) if r else "?"
    return "?"

for kernel, twin in pairs:
    print(f"== {kernel}")
    for side, src, tag in (("rust", "gridsync", "gridsync"), ("nvcc", twin, twin)):
        body = function(read(f"{out}/{src}.all.sass"), kernel)
        if not body:
            print(f"  {side}: no SASS")
            continue
        with open(f"{out}/{kernel}.{side}.sass", "w") as f:
            f.write("\n".join(body) + "\n")
        ops = [m.group(2) for m in map(INSN.match, body) if m]
        real = [o for o in ops if o != "NOP"]
        count = Counter(o for o in real if o.split(".")[0].startswith(FAMILIES))
        listed = ", ".join(f"{o} {n}" for o, n in sorted(count.items()))
        regs = registers(read(f"{out}/{tag}.res-usage.txt"), kernel)
        print(f"  {side}: {len(real)} instructions, {regs} registers; {listed}")
EOF
