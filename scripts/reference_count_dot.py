"""Reference figures for `gridsync bench count-above` and `bench dot`, with the libraries people
compare against, on the same GPU in the same session: `cupy.count_nonzero(x > t)` (CUB) and
`torch.dot` (cuBLAS) on 1e7 and 1e9 float32, and the PyTorch device-to-device copy as the
roofline. Event-timed medians after warm-up. Prints one JSON object."""
import json

import cupy
import torch

from reference_timing import timed


def main():
    out = {"device": torch.cuda.get_device_name(0)}
    src = torch.rand(1 << 28, device="cuda")
    dst = torch.empty_like(src)
    ms = timed(lambda: dst.copy_(src))
    out["copy_gb_per_s"] = 2 * src.numel() * 4 / (ms * 1e-3) / 1e9
    del src, dst
    for n in (10**7, 10**9):
        x = torch.rand(n, device="cuda")
        y = torch.rand(n, device="cuda")
        cx = cupy.asarray(x)
        count_ms = timed(lambda: cupy.count_nonzero(cx > 0.5))
        dot_ms = timed(lambda: torch.dot(x, y))
        out[f"n={n}"] = {
            "cupy_count_nonzero_ms": count_ms,
            "cupy_count_gb_per_s": 4 * n / (count_ms * 1e-3) / 1e9,
            "torch_dot_ms": dot_ms,
            "torch_dot_gb_per_s": 8 * n / (dot_ms * 1e-3) / 1e9,
        }
        del x, y, cx
        torch.cuda.empty_cache()
        cupy.get_default_memory_pool().free_all_blocks()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
