"""Reference figures for host<->device copies and for the Numba tutorial's "streams and events"
experiment, measured with CuPy and PyTorch on the same GPU in the same session as the project's own.

1. Copy bandwidth (GB/s, 1e9 bytes) for 40 MB and 400 MB of float32: PyTorch `copy_(non_blocking=
   True)` from/to pinned and pageable host tensors, plus an H2D and a D2H on two streams at once;
   CuPy `ndarray.set` / `ndarray.get(out=...)` on a non-blocking stream, from/to pinned
   (`cupyx.empty_pinned`) and pageable (numpy) memory.
2. The tutorial's a <- a / sum(a) on 10 arrays of 1e7 float32 (array i filled with i + 1), each on
   its stream between two events: H2D, `partial_reduce`, `single_thread_sum`, `divide_by`, D2H;
   total = first begin event to latest end event. Host pinning and device allocation inside the
   loop (as the tutorial) or once before timing, on 10 streams or 1. The kernels are the
   tutorial's, in CUDA C through `cupy.RawModule`; numba-cuda is only tried (its failure, if any,
   recorded), so that the measured version is the same on every machine.
3. The device name and the device-to-device copy rate of 1 GiB through PyTorch (the roofline).

Events are recorded on the stream that runs the copy; medians of 20 trials after 3 warm-ups. Every
section is guarded: a failure becomes {"error": "..."} in the JSON. Progress goes to stderr, one
JSON object to stdout: `python3 scripts/reference_streams.py > streams.json`."""
import importlib
import json
import statistics
import sys

IMPORT_ERRORS = {}


def _try_import(name):
    """The module, or None with the reason in IMPORT_ERRORS (reported in the JSON)."""
    try:
        return importlib.import_module(name)
    except Exception as e:  # noqa: BLE001 - any failure means "unavailable"
        IMPORT_ERRORS[name] = f"{type(e).__name__}: {e}"
        return None


np, torch, cupy, cupyx = (_try_import(m) for m in ("numpy", "torch", "cupy", "cupyx"))

SIZES = (("40MB", 10**7), ("400MB", 10**8))  # float32 elements
TRIALS, WARMUP = 20, 3
N_ARRAYS, N = 10, 10**7  # the tutorial's 10 arrays of 1e7 float32
BLOCKS, THREADS = 32 * 40, 256  # the tutorial's launch: [32 * 40, 256]
REPEATS = 5  # timed runs of each normalize variant, after one warm-up run

KERNELS = r"""
extern "C" __global__ void partial_reduce(const float* array, long long n, float* partial) {
    __shared__ float s_block[256];
    int tid = threadIdx.x;
    double s_thread = 0.0;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + tid; i < n; i += stride)
        s_thread += array[i];
    s_block[tid] = (float)s_thread;
    __syncthreads();
    for (int i = blockDim.x / 2; i > 0; i >>= 1) {
        if (tid < i) s_block[tid] += s_block[tid + i];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = s_block[0];
}
extern "C" __global__ void single_thread_sum(const float* partial, long long n, float* sum) {
    float total = 0.0f;
    for (long long i = 0; i < n; ++i) total += partial[i];
    sum[0] = total;
}
extern "C" __global__ void divide_by(float* array, long long n, const float* val) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        array[i] /= val[0];
}
"""


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def guard(fn, *args):
    """fn(*args), or {"error": ...} if it raises."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - report, do not fail the other figures
        log(f"  failed: {type(e).__name__}: {e}")
        return {"error": f"{type(e).__name__}: {e}"}


def need(*names):
    for name in names:
        if name in IMPORT_ERRORS:
            raise RuntimeError(f"{name} does not import: {IMPORT_ERRORS[name]}")


def free():
    """Gives cached device and pinned memory back between sections."""
    if cupy is not None:
        cupy.cuda.runtime.deviceSynchronize()
        cupy.get_default_memory_pool().free_all_blocks()
        cupy.get_default_pinned_memory_pool().free_all_blocks()
    if torch is not None:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()


def median_ms(trial):
    """Runs `trial` (returns elapsed ms) WARMUP times, then the median of TRIALS runs."""
    for _ in range(WARMUP):
        trial()
    return statistics.median(trial() for _ in range(TRIALS))


def gbps(nbytes, ms):
    return nbytes / (ms * 1e-3) / 1e9


# ---- 3. context: device and D2D roofline -------------------------------------------------------
def copy_d2d_gbps(nbytes=1 << 30):
    need("torch")
    src = torch.ones(nbytes // 4, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    s = torch.cuda.current_stream()
    ms = median_ms(torch_trial(s, lambda: dst.copy_(src)))
    del src, dst
    return gbps(2 * nbytes, ms)  # read + written bytes


# ---- 1. host <-> device copies -------------------------------------------------------------------
def torch_trial(stream, copy):
    """One trial: events on `stream` around `copy()` issued on `stream`; returns ms."""
    def trial():
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(stream):
            a.record(stream)
            copy()
            b.record(stream)
        b.synchronize()
        return a.elapsed_time(b)
    return trial


def torch_bidirectional(n, label):
    """H2D on one stream and D2H on another at once; both start after one event on the first."""
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    h_in = torch.empty(n, dtype=torch.float32, pin_memory=True).fill_(1.0)
    h_out = torch.empty(n, dtype=torch.float32, pin_memory=True)
    d_in, d_out = torch.empty(n, device="cuda"), torch.ones(n, device="cuda")
    torch.cuda.synchronize()

    def trial():
        start, e1, e2 = (torch.cuda.Event(enable_timing=True) for _ in range(3))
        start.record(s1)
        s2.wait_event(start)
        with torch.cuda.stream(s1):
            d_in.copy_(h_in, non_blocking=True)
            e1.record(s1)
        with torch.cuda.stream(s2):
            h_out.copy_(d_out, non_blocking=True)
            e2.record(s2)
        e1.synchronize()
        e2.synchronize()
        return start.elapsed_time(e1), start.elapsed_time(e2)

    for _ in range(WARMUP):
        trial()
    runs = [trial() for _ in range(TRIALS)]
    total = statistics.median(max(r) for r in runs)
    return {f"bidirectional_{label}_gbps": gbps(2 * 4 * n, total),
            f"bidirectional_{label}_total_ms": total,
            f"bidirectional_{label}_h2d_ms": statistics.median(r[0] for r in runs),
            f"bidirectional_{label}_d2h_ms": statistics.median(r[1] for r in runs)}


def torch_transfers():
    need("torch")
    res, s = {}, torch.cuda.Stream()
    for label, n in SIZES:
        dev = torch.ones(n, device="cuda")
        for kind, pin in (("pinned", True), ("pageable", False)):
            log(f"torch {kind} {label}")
            host = torch.empty(n, dtype=torch.float32, pin_memory=pin).fill_(1.0)
            res[f"h2d_{kind}_{label}_gbps"] = guard(lambda: gbps(4 * n, median_ms(
                torch_trial(s, lambda: dev.copy_(host, non_blocking=True)))))
            res[f"d2h_{kind}_{label}_gbps"] = guard(lambda: gbps(4 * n, median_ms(
                torch_trial(s, lambda: host.copy_(dev, non_blocking=True)))))
            del host
        del dev
        free()
        log(f"torch bidirectional {label}")
        bi = guard(torch_bidirectional, n, label)
        res.update(bi if "error" not in bi else {f"bidirectional_{label}_gbps": bi})
        free()
    return res


def cupy_d2h(dev, host, stream):
    """Async D2H into `host`: CuPy >= 13 synchronizes the stream in get() unless blocking=False."""
    try:
        dev.get(stream=stream, out=host, blocking=False)
    except TypeError:  # older CuPy: no `blocking`, a copy with a stream is already async
        dev.get(stream=stream, out=host)


def cupy_trial(stream, copy):
    def trial():
        a, b = cupy.cuda.Event(), cupy.cuda.Event()
        a.record(stream)
        copy()
        b.record(stream)
        b.synchronize()
        return cupy.cuda.get_elapsed_time(a, b)
    return trial


def cupy_transfers():
    need("cupy", "cupyx", "numpy")
    res, s = {}, cupy.cuda.Stream(non_blocking=True)
    for label, n in SIZES:
        dev = cupy.ones(n, dtype=cupy.float32)
        for kind in ("pinned", "pageable"):
            log(f"cupy {kind} {label}")
            make = cupyx.empty_pinned if kind == "pinned" else np.empty
            host = make((n,), dtype=np.float32)
            host.fill(1.0)
            res[f"h2d_{kind}_{label}_gbps"] = guard(lambda: gbps(4 * n, median_ms(
                cupy_trial(s, lambda: dev.set(host, stream=s)))))
            res[f"d2h_{kind}_{label}_gbps"] = guard(lambda: gbps(4 * n, median_ms(
                cupy_trial(s, lambda: cupy_d2h(dev, host, s)))))
            del host
        del dev
        free()
    return res


# ---- 2. the tutorial's normalize experiment ----------------------------------------------------
def numba_status():
    """Whether numba-cuda imports, compiles and launches a kernel here."""
    try:
        from numba import cuda

        @cuda.jit
        def touch(x):
            x[0] = 1.0

        x = cuda.device_array(1, dtype=np.float32)
        touch[1, 1](x)
        cuda.synchronize()
        return {"available": True, "error": None, "used_for_experiment": False}
    except Exception as e:  # noqa: BLE001 - any failure means "unavailable"
        return {"available": False, "error": f"{type(e).__name__}: {e}",
                "used_for_experiment": False}


def pin_in_loop(arr):
    """Pins `arr` as Numba's `cuda.pinned` does (cudaHostRegister), or, if that fails, copies it
    into fresh pinned memory. Returns (array to copy from/to, undo after sync, method)."""
    try:
        cupy.cuda.runtime.hostRegister(arr.ctypes.data, arr.nbytes, 0)
        return arr, lambda: cupy.cuda.runtime.hostUnregister(arr.ctypes.data), "hostRegister"
    except Exception:  # noqa: BLE001 - fall back to a pinned copy
        mem = cupy.cuda.alloc_pinned_memory(arr.nbytes)
        buf = np.frombuffer(mem, dtype=arr.dtype, count=arr.size)
        buf[:] = arr
        return buf, lambda: np.copyto(arr, buf), "alloc_pinned_memory"


def run_variant(kernels, alloc_once, n_streams):
    partial_reduce, single_thread_sum, divide_by = kernels
    f32 = cupy.float32
    streams = [cupy.cuda.Stream(non_blocking=True) for _ in range(n_streams)]
    if alloc_once:
        hosts = [cupyx.empty_pinned((N,), dtype=np.float32) for _ in range(N_ARRAYS)]
        devs = [(cupy.empty(N, f32), cupy.empty(BLOCKS, f32), cupy.empty(1, f32))
                for _ in range(N_ARRAYS)]
    else:
        hosts = [np.empty(N, dtype=np.float32) for _ in range(N_ARRAYS)]
    totals, sums_ok, worst, pinning = [], True, 0.0, set()
    for rep in range(REPEATS + 1):  # rep 0 is a warm-up
        for i, h in enumerate(hosts):
            h.fill(i + 1)
        cupy.cuda.runtime.deviceSynchronize()
        if not alloc_once:  # empty pool: the in-loop cupy.empty really allocates, as Numba does
            cupy.get_default_memory_pool().free_all_blocks()
        begins, ends, keep, undos = [], [], [], []
        for i, h in enumerate(hosts):
            s, begin, end = streams[i % n_streams], cupy.cuda.Event(), cupy.cuda.Event()
            if alloc_once:
                host, (d_a, d_part, d_sum) = h, devs[i]
                begin.record(s)
            else:  # as the tutorial: pin (`with cuda.pinned(arr)`), record, then allocate
                host, undo, how = pin_in_loop(h)
                undos.append(undo)
                pinning.add(how)
                begin.record(s)
                d_a, d_part, d_sum = cupy.empty(N, f32), cupy.empty(BLOCKS, f32), cupy.empty(1, f32)
                keep.append((d_a, d_part, d_sum))  # alive until after the sync
            d_a.set(host, stream=s)
            partial_reduce((BLOCKS,), (THREADS,), (d_a, np.int64(N), d_part), stream=s)
            single_thread_sum((1,), (1,), (d_part, np.int64(BLOCKS), d_sum), stream=s)
            divide_by((BLOCKS,), (THREADS,), (d_a, np.int64(N), d_sum), stream=s)
            cupy_d2h(d_a, host, s)
            end.record(s)
            begins.append(begin)
            ends.append(end)
        cupy.cuda.runtime.deviceSynchronize()
        total = max(cupy.cuda.get_elapsed_time(begins[0], e) for e in ends)  # as the tutorial
        for undo in undos:  # unpinned after the sync (the tutorial unpins inside its loop)
            undo()
        del keep, d_a, d_part, d_sum, host  # the in-loop arrays go back to the pool
        if rep > 0:
            totals.append(total)
        for h in hosts:  # every array must now sum to 1
            err = abs(float(h.sum(dtype=np.float64)) - 1.0)
            worst = max(worst, err)
            sums_ok = sums_ok and err < 1e-3
    out = {"median_ms": statistics.median(totals), "min_ms": min(totals), "all_ms": totals,
           "sums_ok": sums_ok, "max_sum_error": worst}
    if pinning:
        out["pinning"] = sorted(pinning)
    return out


def normalize_experiment():
    need("cupy", "cupyx", "numpy")
    module = cupy.RawModule(code=KERNELS)
    kernels = [module.get_function(k) for k in ("partial_reduce", "single_thread_sum", "divide_by")]
    res = {}
    for name, alloc_once, n_streams in (("alloc_in_loop_10_streams", False, 10),
                                        ("alloc_in_loop_1_stream", False, 1),
                                        ("alloc_once_10_streams", True, 10),
                                        ("alloc_once_1_stream", True, 1)):
        log(f"normalize {name}")
        res[name] = guard(run_variant, kernels, alloc_once, n_streams)
        free()
    return res


def main():
    out = {"import_errors": IMPORT_ERRORS or None,
           "config": {"trials": TRIALS, "warmup": WARMUP, "normalize_repeats": REPEATS,
                      "normalize_arrays": N_ARRAYS, "normalize_n": N}}
    log("device")
    out["device"] = guard(lambda: need("torch") or torch.cuda.get_device_name(0))
    log("d2d copy")
    out["copy_d2d_gbps"] = guard(copy_d2d_gbps)
    guard(free)
    out["transfers"] = {"torch": guard(torch_transfers), "cupy": guard(cupy_transfers)}
    guard(free)
    log("numba")
    out["numba"] = numba_status()
    out["normalize_experiment"] = guard(normalize_experiment)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
