"""Reference figures for `gridsync bench launch` and `bench copy`, measured with the libraries
people compare against, on the same GPU in the same session: the device-to-device copy through
PyTorch (read + written bytes / event-timed median) and the host cost of launching an empty
kernel through CuPy and Numba. Prints one JSON object."""
import json
import statistics
import time

import cupy
import torch


def torch_copy_gbps(nbytes=1 << 30, trials=20):
    src = torch.randint(0, 2**31 - 1, (nbytes // 4,), dtype=torch.int32, device="cuda")
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    torch.cuda.synchronize()
    times = []
    for _ in range(trials):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        dst.copy_(src)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    ms = statistics.median(times)
    return {"bytes": nbytes, "median_ms": ms, "gb_per_s": 2 * nbytes / (ms * 1e-3) / 1e9}


def cupy_launch_us(launches=2000, trials=50):
    k = cupy.RawKernel(r'extern "C" __global__ void empty() {}', "empty")
    for _ in range(launches):
        k((1,), (32,), ())
    cupy.cuda.runtime.deviceSynchronize()
    per = []
    for _ in range(trials):
        t = time.perf_counter()
        for _ in range(launches):
            k((1,), (32,), ())
        per.append((time.perf_counter() - t) * 1e6 / launches)
        cupy.cuda.runtime.deviceSynchronize()
    return statistics.median(per)


def numba_launch_us(launches=2000, trials=20):
    try:
        return _numba_launch_us(launches, trials)
    except Exception as e:  # numba-cuda missing or broken on this machine: report, do not fail
        return f"unavailable: {type(e).__name__}: {e}"


def _numba_launch_us(launches, trials):
    from numba import cuda

    @cuda.jit
    def empty():
        pass

    for _ in range(launches // 10):
        empty[1, 32]()
    cuda.synchronize()
    per = []
    for _ in range(trials):
        t = time.perf_counter()
        for _ in range(launches // 10):
            empty[1, 32]()
        per.append((time.perf_counter() - t) * 1e6 / (launches // 10))
        cuda.synchronize()
    return statistics.median(per)


print(json.dumps({
    "device": torch.cuda.get_device_name(),
    "torch_copy": torch_copy_gbps(),
    "cupy_launch_us": cupy_launch_us(),
    "numba_launch_us": numba_launch_us(),
}, indent=1))
