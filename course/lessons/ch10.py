"""Chapter 10: variants of attention, and the measured cost of full versus linear attention.

Streamlit-free. Full attention is the reference DotProductAttention of exercise 3 (it builds the
n x n score matrix); linear attention is the kernel form of Katharopoulos et al. (2020) with the
feature map phi(x) = elu(x) + 1, which never builds it. `measure` times both on this machine and
counts the peak bytes of the tensors each one creates; `bench/attention_cost.py` writes the shipped
figures (course/lessons/data/attention_cost.json) with the same function.
"""

import json
import statistics
import time
import weakref
from pathlib import Path

import altair as alt
import pandas as pd
import torch
import torch.nn.functional as F
from torch.utils import _pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

from course.common import charts
from solutions.ex03_scoring import DotProductAttention

N_VALUES = (256, 512, 1024, 2048, 4096)  # sequence lengths measured
NUM_HIDDENS = 64  # d: width of queries, keys and values
VARIANTS = ("full", "linear")
SHIPPED = Path(__file__).resolve().parent / "data" / "attention_cost.json"
MIB = 2**20


def full_attention(queries, keys, values):
    """softmax(Q K^T / sqrt(d)) V with the reference module: (B, n, d) -> (B, n, d), O(n^2 d)."""
    return DotProductAttention(dropout=0.0)(queries, keys, values)


def feature_map(x):
    """phi(x) = elu(x) + 1: positive features, so the weights below are positive."""
    return F.elu(x) + 1


def linear_attention(queries, keys, values):
    """phi(Q) (phi(K)^T V) / (phi(Q) phi(K)^T 1), computed right to left: (B, n, d) -> (B, n, d), O(n d^2)."""
    phi_q, phi_k = feature_map(queries), feature_map(keys)  # (B, n, d)
    kv = phi_k.transpose(1, 2) @ values  # (B, d, d_v): the n axis is summed away
    normaliser = phi_q @ phi_k.sum(dim=1).unsqueeze(-1)  # (B, n, 1)
    return (phi_q @ kv) / normaliser  # (B, n, d_v)


FUNCTIONS = {"full": full_attention, "linear": linear_attention}


class _LiveBytes(TorchDispatchMode):
    """Counts the bytes of tensors created by PyTorch operations while active, and their peak."""

    def __init__(self, external):
        super().__init__()
        self.external = {t.untyped_storage().data_ptr() for t in external}  # inputs: not counted
        self.live = {}  # storage address -> bytes
        self.peak = 0

    def _free(self, address):
        self.live.pop(address, None)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for tensor in pytree.tree_leaves(out):
            if not isinstance(tensor, torch.Tensor):
                continue
            storage = tensor.untyped_storage()
            address = storage.data_ptr()
            if address in self.live or address in self.external or storage.nbytes() == 0:
                continue  # a view of something already counted, or an input
            self.live[address] = storage.nbytes()
            weakref.finalize(tensor, self._free, address)
        self.peak = max(self.peak, sum(self.live.values()))
        return out


def peak_bytes(fn, *inputs):
    """Peak bytes of the tensors alive at once among those `fn(*inputs)` creates (output included)."""
    with torch.no_grad():
        mode = _LiveBytes(inputs)
        with mode:
            out = fn(*inputs)
        del out
    return mode.peak


def median_seconds(fn, *inputs, repeats=3):
    """Median wall time of `repeats` calls of fn(*inputs) (call it once before, to warm up)."""
    times = []
    with torch.no_grad():
        for _ in range(repeats):
            start = time.perf_counter()
            fn(*inputs)
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def random_inputs(n, d=NUM_HIDDENS, seed=0):
    """Seeded queries, keys and values of shape (1, n, d)."""
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(1, n, d, generator=gen) for _ in range(3))  # (1, n, d) each


def measure(n_values=None, d=NUM_HIDDENS, repeats=3, seed=0, on_step=None, threads=1):
    """Long table (n, variant, ms, mib) of measured time and peak tensor memory; on_step(done, total).

    n_values defaults to N_VALUES as it is when called. Timed on `threads` torch threads (one by
    default: steadier on a shared machine, and it leaves the other cores to everyone else).
    """
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return _measure(N_VALUES if n_values is None else n_values, d, repeats, seed, on_step)
    finally:
        torch.set_num_threads(previous)


def _measure(n_values, d, repeats, seed, on_step):
    """The measurement loop of `measure`."""
    rows, total = [], len(n_values) * len(VARIANTS)
    for n in n_values:
        inputs = random_inputs(n, d, seed)
        for variant in VARIANTS:
            fn = FUNCTIONS[variant]
            mib = peak_bytes(fn, *inputs) / MIB  # also the warm-up call of the timing
            rows.append({"n": n, "variant": variant, "ms": 1000 * median_seconds(fn, *inputs, repeats=repeats),
                         "mib": mib})
            if on_step:
                on_step(len(rows), total)
    return pd.DataFrame(rows)


def load_shipped(path=SHIPPED):
    """(table, machine) of the shipped measurement; machine has cores, torch, threads and load."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return pd.DataFrame(data["rows"]), data["machine"]


def ratio(frame, n, column):
    """full / linear of `column` at sequence length n."""
    at_n = frame[frame["n"] == n].set_index("variant")[column]
    return float(at_n["full"] / at_n["linear"])


def cost_spec(rows, column, texts):
    """Log-log line chart dict of `column` (ms or mib) against n, one line per variant.

    rows: tuple of (n, variant, value) so the page can cache it; texts: title, x, y, variant and
    the display name of each variant.
    """
    frame = pd.DataFrame(rows, columns=["n", "variant", column])
    frame["variant"] = frame["variant"].map(lambda v: texts[v])
    chart = charts.line_chart(frame, "n", column, color="variant", title=texts["title"], x_title=texts["x"],
                              y_title=texts["y"], color_title=texts["variant"], log_y=True, points=True,
                              height=320)
    chart.encoding.x.scale = alt.Scale(type="log", base=2)  # n doubles from point to point
    return chart.configure_legend(orient="top", direction="horizontal", title=None).to_dict()
