#!/usr/bin/env python3
"""torch_profiler_app: an application that runs PyTorch's own profiler (CUDA activities).

It launches 301 kernels (one fill_, 100 mul_, 200 add_) and prints how many GPU events its
profiler saw and the result. By default the first 101 run before the profiler starts (CUDA, and so
the collector, is up before the profiler); with --profile-first the profiler starts before any CUDA
call and sees them all. Run bare and under libcollect, its stdout and exit code must be the same:
the collector has to step aside, not break the app or its profiler.
"""
import contextlib
import sys

import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile


def main():
    first = "--profile-first" in sys.argv[1:]
    prof = profile(activities=[ProfilerActivity.CUDA])
    with prof if first else contextlib.nullcontext():
        x = torch.empty(1 << 16, device="cuda")
        x.fill_(1.0)
        for _ in range(100):
            x.mul_(1.0)
        torch.cuda.synchronize()
        with contextlib.nullcontext() if first else prof:
            for _ in range(200):
                x.add_(1.0)
            torch.cuda.synchronize()
    kernels = sum(1 for e in prof.events() if e.device_type == DeviceType.CUDA)
    print(f"torch_profiler_app: the profiler saw {kernels} GPU events")
    print(f"torch_profiler_app: result {x[0].item()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
