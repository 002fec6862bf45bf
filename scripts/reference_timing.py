"""What the Python references share: `timed`, the median of event-timed runs after warm-ups."""

import statistics

import torch


def timed(fn, trials=20, warmup=3):
    """The median milliseconds of `trials` runs of `fn`, each between two CUDA events on the
    current stream, after `warmup` untimed runs."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(trials):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)
