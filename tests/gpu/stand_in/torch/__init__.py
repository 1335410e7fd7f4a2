"""A stand-in for torch, just enough of it for tests/gpu/workloads.py's gemm workload on a machine
without torch or a GPU (tests/gpu/test_workloads.sh puts this folder first on PYTHONPATH). A tensor
holds one number for all its elements; matmul multiplies them and sleeps 1 ms; the NVTX calls are
reported on stderr so the test can see the range. With TORCH_STAND_IN_FAIL=PATH, the first process
to create PATH fails in randn (before the workers' barrier): one worker dies."""
import contextlib
import os
import sys
import time
import types

__version__ = "0+stand-in"
float32, float16, bfloat16, float64 = "float32", "float16", "bfloat16", "float64"


class Generator:
    def __init__(self, device=None):
        self.state = 0

    def manual_seed(self, seed):
        self.state = seed
        return self

    def next(self):
        self.state = (self.state * 1103515245 + 12345) % 2**31
        return self.state / 2**31


class Tensor:
    def __init__(self, shape, value, dtype=float32):
        self.shape, self.value, self.dtype = tuple(shape), value, dtype

    def to(self, device=None, dtype=None):
        return Tensor(self.shape, self.value, dtype or self.dtype)

    def double(self):
        return Tensor(self.shape, self.value, float64)

    def abs(self):
        return Tensor(self.shape, abs(self.value), self.dtype)

    def sum(self):
        n = 1
        for d in self.shape:
            n *= d
        return Tensor((), self.value * n, self.dtype)

    def item(self):
        return float(self.value)


def manual_seed(seed):
    return Generator().manual_seed(seed)


def randn(*shape, generator=None, device=None, dtype=float32):
    fail = os.environ.get("TORCH_STAND_IN_FAIL")
    if fail:
        try:
            os.close(os.open(fail, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            raise RuntimeError("torch stand-in: this worker fails, as asked")
        except FileExistsError:
            pass
    return Tensor(shape, (generator or Generator().manual_seed(0)).next(), dtype)


def empty(*shape, device=None, dtype=float32):
    return Tensor(shape, 0.0, dtype)


def matmul(a, b, out=None):
    time.sleep(0.001)
    out = out or Tensor((a.shape[0], b.shape[1]), 0.0, a.dtype)
    out.value = a.value * b.value * a.shape[1]
    return out


def inference_mode():
    return contextlib.nullcontext()


def _nvtx(what):
    def call(*args):
        print(f"torch stand-in: nvtx {what} {' '.join(args)}".rstrip(), file=sys.stderr,
              flush=True)
    return call


cuda = types.SimpleNamespace(
    synchronize=lambda: None,
    nvtx=types.SimpleNamespace(range_push=_nvtx("push"), range_pop=_nvtx("pop")))
