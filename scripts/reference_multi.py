#!/usr/bin/env python3
"""The same-session reference for `gridsync bench multi`: PyTorch on one GPU and on every GPU.

For each operation — the f64-accumulated sum of 10^9 floats, the count above 0.5, and the
256-bin histogram of 4 GiB of bytes — PyTorch's own kernel (`sum(dtype=float64)`, `(x > 0.5).sum()`,
`bincount`) runs on each GPU's contiguous slice of the data, already on the device, and the
partials are combined with a `torch.distributed` all-reduce over NCCL (one process per GPU, as
PyTorch runs multi-GPU work). One GPU runs the whole input with no all-reduce. Times are wall
medians of the whole call, from the moment every rank is ready (a barrier and a device
synchronize, not timed) to the result on the host of rank 0, as gridsync's are; the all-reduce
of the partials is also timed alone. The inputs have gridsync's sizes and split but are drawn
by PyTorch's generator on each GPU: the timings compare, the values are not checked here
(gridsync checks its own against the CPU).

    python3 scripts/reference_multi.py [--floats N] [--bytes N] [--trials N] [--json]
"""

import argparse
import json
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def slice_len(total, parts, k):
    return total * (k + 1) // parts - total * k // parts


def ops(x, b):
    return {
        "sum": lambda: x.sum(dtype=torch.float64),
        "count_above": lambda: (x > 0.5).sum(),
        "histogram": lambda: torch.bincount(b, minlength=256),
    }


def make_inputs(n_floats, n_bytes, device, seed):
    g = torch.Generator(device=device)
    g.manual_seed(seed)
    x = torch.rand(n_floats, device=device, generator=g) * 2 - 1
    b = torch.randint(0, 256, (n_bytes,), device=device, generator=g, dtype=torch.uint8)
    return x, b


def timed(fn, trials, ready=lambda: None):
    """Median wall ms of `fn()`, each trial started once `ready()` returns (not timed)."""
    for _ in range(2):
        ready()
        fn()
    out = []
    for _ in range(trials):
        ready()
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1e3)
    return statistics.median(out)


def one_gpu(args):
    torch.cuda.set_device(0)
    x, b = make_inputs(args.floats, args.bytes, "cuda:0", 1)
    rows = []
    for name, fn in ops(x, b).items():
        ms = timed(lambda: fn().cpu(), args.trials)
        nbytes = args.bytes if name == "histogram" else 4 * args.floats
        rows.append({"op": name, "gpus": 1, "ms": ms, "gb_per_s": nbytes / ms / 1e6})
    return rows


def worker(rank, world, args, port, queue):
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    torch.cuda.set_device(rank)
    dist.init_process_group(
        "nccl",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=world,
        device_id=torch.device("cuda", rank),
    )
    x, b = make_inputs(
        slice_len(args.floats, world, rank), slice_len(args.bytes, world, rank), f"cuda:{rank}", rank + 1
    )
    rows = []
    for name, fn in ops(x, b).items():
        part = fn()

        def whole():
            p = fn()
            dist.all_reduce(p)
            return p.cpu()

        def combine_only():
            dist.all_reduce(part)
            part.cpu()

        def ready():
            torch.cuda.synchronize()
            dist.barrier()
            torch.cuda.synchronize()

        ms = timed(whole, args.trials, ready)
        combine_ms = timed(combine_only, args.trials, ready)
        nbytes = args.bytes if name == "histogram" else 4 * args.floats
        rows.append(
            {
                "op": name,
                "gpus": world,
                "ms": ms,
                "gb_per_s": nbytes / ms / 1e6,
                "all_reduce_ms": combine_ms,
            }
        )
    if rank == 0:
        queue.put(rows)
    dist.barrier()
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--floats", type=int, default=1_000_000_000)
    ap.add_argument("--bytes", type=int, default=4 << 30)
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--port", type=int, default=int(os.environ.get("MASTER_PORT", "29531")))
    args = ap.parse_args()
    if args.trials < 1 or args.floats < 1 or args.bytes < 1:
        ap.error("sizes and --trials must be positive")
    world = torch.cuda.device_count()
    rows = one_gpu(args)
    torch.cuda.empty_cache()
    if world > 1:
        ctx = mp.get_context("spawn")
        queue = ctx.Queue()
        procs = [ctx.Process(target=worker, args=(r, world, args, args.port, queue)) for r in range(world)]
        for p in procs:
            p.start()
        try:
            # Generous, but bounded: a rank that died (port taken, NCCL failed) must not hang us.
            rows += queue.get(timeout=600)
        except Exception as e:
            codes = [p.exitcode for p in procs]
            for p in procs:
                p.terminate()
            raise SystemExit(f"the multi-GPU ranks did not report ({e!r}); exit codes {codes}")
        for p in procs:
            # The result is in; a rank that does not exit (stuck in its shutdown) is stopped.
            p.join(timeout=60)
            if p.is_alive():
                p.terminate()
    base = {r["op"]: r["ms"] for r in rows if r["gpus"] == 1}
    for r in rows:
        r["efficiency"] = base[r["op"]] / (r["gpus"] * r["ms"])
    result = {"torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())), "rows": rows}
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(f"PyTorch {result['torch']}, NCCL {result['nccl']}; wall medians, input on the devices")
    for r in rows:
        extra = f", all-reduce alone {r['all_reduce_ms']:.4f} ms" if "all_reduce_ms" in r else ""
        print(
            f"  {r['op']:<12} {r['gpus']} GPU(s): {r['ms']:.3f} ms, {r['gb_per_s']:.0f} GB/s, "
            f"efficiency {r['efficiency']:.3f}{extra}"
        )


if __name__ == "__main__":
    main()
