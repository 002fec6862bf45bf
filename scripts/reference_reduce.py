"""Reference figures for `gridsync bench reduce`, on the same GPU in the same session: the sum of
1e8 and 1e9 float32, all 1.23 (the CUDA book's input), with `cupy.sum` (CUB's DeviceReduce) and
`torch.sum`, the PyTorch device-to-device copy as the roofline, and the book's own kernel — a tree
per block of 128 and one atomicAdd per block, the result zeroed first — written in Numba, if
numba imports (else the reason it does not). Event-timed medians after warm-up, every library on
the legacy default stream the events are recorded on. Prints one JSON object."""
import json

import cupy
import torch

from reference_timing import timed

VALUE = 1.23
BLOCK_SIZE = 128  # the book's BLOCK_SIZE


def book_kernel():
    """The CUDA book's `reduce` (section 9.1) in Numba, or the reason Numba is unavailable."""
    try:
        import numba
        from numba import cuda
    except Exception as e:  # noqa: BLE001 - any import failure means "unavailable"
        return None, f"numba does not import: {type(e).__name__}: {e}"

    try:
        return _define_book_kernel(numba, cuda), None
    except Exception as e:  # noqa: BLE001 - numba-cuda can fail at definition time too
        return None, f"numba-cuda fails: {type(e).__name__}: {e}"


def _define_book_kernel(numba, cuda):
    @cuda.jit
    def reduce(d_x, d_y, n_total):
        tid = cuda.threadIdx.x
        bid = cuda.blockIdx.x
        n = bid * cuda.blockDim.x + tid
        s_y = cuda.shared.array(BLOCK_SIZE, numba.float32)
        s_y[tid] = d_x[n] if n < n_total else numba.float32(0.0)
        cuda.syncthreads()
        offset = cuda.blockDim.x >> 1
        while offset > 0:
            if tid < offset:
                s_y[tid] += s_y[tid + offset]
            cuda.syncthreads()
            offset >>= 1
        if tid == 0:
            cuda.atomic.add(d_y, 0, s_y[0])

    return reduce


def main():
    out = {"device": torch.cuda.get_device_name(0), "value": VALUE}
    src = torch.rand(1 << 28, device="cuda")
    dst = torch.empty_like(src)
    ms = timed(lambda: dst.copy_(src))
    out["copy_gb_per_s"] = 2 * src.numel() * 4 / (ms * 1e-3) / 1e9
    del src, dst
    torch.cuda.empty_cache()
    kernel, why = book_kernel()
    if why is not None:
        out["numba_book_reduce"] = f"unavailable: {why}"
    for n in (10**8, 10**9):
        exact = float(torch.tensor(VALUE, dtype=torch.float32).item()) * n
        x = torch.full((n,), VALUE, dtype=torch.float32, device="cuda")
        cx = cupy.asarray(x)
        res = {}
        for name, fn in (("cupy_sum", lambda: cupy.sum(cx)), ("torch_sum", lambda: torch.sum(x))):
            ms = timed(fn)
            value = float(fn())
            res[name] = {
                "ms": ms,
                "gb_per_s": 4 * n / (ms * 1e-3) / 1e9,
                "result": value,
                "rel_error": abs(value - exact) / exact,
            }
        if kernel is not None:
            try:
                res["numba_book_reduce"] = run_book(kernel, x, n, exact)
            except Exception as e:  # noqa: BLE001 - report, do not fail the other figures
                res["numba_book_reduce"] = f"unavailable: {type(e).__name__}: {e}"
        out[f"n={n}"] = res
        del x, cx
        torch.cuda.empty_cache()
        cupy.get_default_memory_pool().free_all_blocks()
    print(json.dumps(out, indent=1))


def run_book(kernel, x, n, exact):
    """Times the book's kernel in Numba on `x`; returns its figures."""
    from numba import cuda

    d_x = cuda.as_cuda_array(x)
    d_y = cuda.device_array(1, dtype="float32")
    grid = (n + BLOCK_SIZE - 1) // BLOCK_SIZE

    def book():
        d_y[0] = 0.0  # the book's wrapper zeroes the result before the launch
        kernel[grid, BLOCK_SIZE](d_x, d_y, n)

    ms = timed(book)
    book()
    value = float(d_y.copy_to_host()[0])
    return {
        "ms": ms,
        "note": "timed: zeroing d_y and the launch",
        "result": value,
        "rel_error": abs(value - exact) / exact,
    }


if __name__ == "__main__":
    main()
