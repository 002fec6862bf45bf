"""Reference figures for `gridsync bench histogram`, with the libraries people compare against,
on the same GPU in the same session: `torch.bincount` and `cupy.bincount` over the same bytes —
the English-like text the CLI generates, read from the files it writes, and 1 GiB of uniform
random bytes made on the device — and the PyTorch device-to-device copy as the roofline.
Event-timed medians after warm-up; every library's histogram is checked against NumPy's (the
files) or the other library's (the random bytes). Prints one JSON object.

    gridsync histogram --write-text /tmp/text-source.txt                      # 5 638 519 bytes
    gridsync histogram --write-text /tmp/text-1g.txt --bytes 1073741824
    python3 scripts/reference_histogram.py /tmp/text-source.txt /tmp/text-1g.txt

The 128-bin histogram (the issue's targets) is the first 128 bins of a 256-bin count: the
libraries have no "skip bytes >= 128" mode, and counting them costs no more.
"""
import argparse
import json
import os

import cupy
import numpy
import torch

from reference_timing import timed


def bench(name, x, want, bins, trials, copy_gb_per_s):
    """Times both libraries on the uint8 tensor `x`; `want` is the expected 256-bin count or
    None (then the two libraries must agree)."""
    cx = cupy.asarray(x)
    got_torch = torch.bincount(x, minlength=256).cpu().numpy()
    got_cupy = cupy.asnumpy(cupy.bincount(cx, minlength=256))
    if want is None:
        want = got_cupy
    assert (got_torch == want).all(), f"{name}: torch.bincount differs"
    assert (got_cupy == want).all(), f"{name}: cupy.bincount differs"
    n = x.numel()
    out = {"bytes": n, "bins": bins}
    for lib, fn in (
        ("torch_bincount", lambda: torch.bincount(x, minlength=256)[:bins]),
        ("cupy_bincount", lambda: cupy.bincount(cx, minlength=256)[:bins]),
    ):
        ms = timed(fn, trials)
        gb = n / (ms * 1e-3) / 1e9
        out[lib] = {"ms": ms, "gb_per_s": gb, "fraction_of_copy": gb / copy_gb_per_s}
    del cx
    cupy.get_default_memory_pool().free_all_blocks()
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("texts", nargs="*", help="files written by `gridsync histogram --write-text`")
    p.add_argument("--random-bytes", type=int, default=1 << 30, help="0 to skip")
    p.add_argument("--bins", type=int, choices=(128, 256), default=128)
    p.add_argument("--trials", type=int, default=20)
    args = p.parse_args()

    out = {"device": torch.cuda.get_device_name(0), "trials": args.trials}
    src = torch.randint(0, 1 << 30, (1 << 28,), dtype=torch.int32, device="cuda")
    dst = torch.empty_like(src)
    ms = timed(lambda: dst.copy_(src), args.trials)
    copy_gb = 2 * src.numel() * 4 / (ms * 1e-3) / 1e9
    out["copy_gb_per_s"] = copy_gb
    del src, dst
    torch.cuda.empty_cache()

    for path in args.texts:
        data = numpy.fromfile(path, dtype=numpy.uint8)
        want = numpy.bincount(data, minlength=256)
        x = torch.from_numpy(data).cuda()
        out[os.path.basename(path)] = bench(path, x, want, args.bins, args.trials, copy_gb)
        del x
        torch.cuda.empty_cache()
    if args.random_bytes > 0:
        x = torch.randint(0, 256, (args.random_bytes,), dtype=torch.uint8, device="cuda")
        out["random"] = bench("random", x, None, args.bins, args.trials, copy_gb)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
