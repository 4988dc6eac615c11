"""Chapter 10: variants of attention, and the measured cost of full versus linear attention.

Streamlit-free. Full attention is the reference DotProductAttention of exercise 3 (it builds the
n x n score matrix); linear attention is the kernel form of Katharopoulos et al. (2020) with the
feature map phi(x) = elu(x) + 1, which never builds it. `measure` times both on this machine and
counts the peak bytes of the tensors each one creates; `bench/attention_cost.py` writes the shipped
figures (course/lessons/data/attention_cost.json) with the same function. The positions experiment
compares absolute sinusoids, rotary embeddings (built with chapter 6's rotation matrices, checked against
solutions.ex09) and a distance bias inside one score.
"""

import json
import math
import statistics
import time
import weakref
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch.utils import _pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

from course.common import charts
from course.common.i18n import t
from course.lessons.ch06 import positions
from solutions.ex03_scoring import DotProductAttention
from solutions.ex09_rotary import RotaryEmbedding

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


# --- positions inside the score: absolute, rotary (RoPE, solutions.ex09) and a relative bias ----------

POSITION_SCHEMES = ("absolute", "rotary", "alibi")
SCORE_LEN = 12  # positions 0..11 for queries and keys
SCORE_CELL_PX = 36  # a score heatmap's cell: wide enough for a label such as "-7.31" at 11 px
ALIBI_SLOPE = 0.5  # the first of ALiBi's eight head slopes, 2^-1


def rope_by_rotation(X, offset=0):
    """RoPE with chapter 6's matrices: pair j of the row at position m times R_j(m). X (T, d) -> (T, d) float64."""
    X = np.asarray(X, dtype=np.float64)
    out = np.empty_like(X)
    for m in range(X.shape[0]):
        for j in range(X.shape[1] // 2):
            pair = X[m, 2 * j : 2 * j + 2]  # (2,)
            out[m, 2 * j : 2 * j + 2] = pair @ positions.rotation(offset + m, j, X.shape[1])  # (2,) @ (2, 2)
    return out


def rotation_agreement(d, length=SCORE_LEN, seed=0):
    """max |rope_by_rotation - the reference RotaryEmbedding| on seeded vectors (float32 tables: ~1e-6)."""
    X = torch.randn(length, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)  # (T, d)
    reference = RotaryEmbedding(d).double()(X[None])[0].numpy()  # (T, d)
    return float(np.abs(rope_by_rotation(X.numpy()) - reference).max())


def query_and_key(d, seed=0):
    """One seeded query and one seeded key, float64 (d,) each."""
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(d, generator=gen, dtype=torch.float64).numpy() for _ in range(2))


def position_scores(scheme, d, start=0, length=SCORE_LEN, seed=0):
    """(length, length) float64: score of the same q at position start + m and k at start + n, one scheme."""
    q, k = query_and_key(d, seed)
    pos = np.arange(start, start + length)
    if scheme == "absolute":  # chapter 6: add P to both vectors (projections left out)
        P = positions.sinusoid_table(start + length, d)[start:]  # (T, d)
        return (q + P) @ (k + P).T / math.sqrt(d)  # (T, T)
    if scheme == "rotary":
        Q, K = np.tile(q, (length, 1)), np.tile(k, (length, 1))  # (T, d): the same vector at every position
        return rope_by_rotation(Q, start) @ rope_by_rotation(K, start).T / math.sqrt(d)  # (T, T)
    if scheme == "alibi":  # a bias by distance added to the content score
        return q @ k / math.sqrt(d) - ALIBI_SLOPE * np.abs(pos[None, :] - pos[:, None])  # (T, T)
    raise ValueError(f"scheme must be one of {POSITION_SCHEMES}; got {scheme!r}")


def diagonal_spread(S):
    """Largest max - min of the scores along one diagonal (one offset n - m, different positions)."""
    return float(max(np.ptp(np.diagonal(S, offset)) for offset in range(-S.shape[0] + 1, S.shape[0])))


def shift_change(scheme, d, shift, seed=0):
    """Largest change of a score when the query and the key both move `shift` positions later."""
    return float(np.abs(position_scores(scheme, d, shift, seed=seed) - position_scores(scheme, d, 0, seed=seed)).max())


def positions_claims(d=16):
    """The numbers the chapter's text quotes, at width d."""
    spread = {s: diagonal_spread(position_scores(s, d)) for s in POSITION_SCHEMES}
    return {"d": d, "absolute": spread["absolute"], "rotary": spread["rotary"], "alibi": spread["alibi"],
            "agreement": rotation_agreement(d)}


def positions_view(lang, scheme, d, shift):
    """{'spec': heatmap dict of the scores at positions shift.., 'spread': diagonal_spread, 'change': shift_change}."""
    scores = position_scores(scheme, d, shift)  # (T, T)
    labels = [str(shift + i) for i in range(SCORE_LEN)]
    reach = float(np.abs(scores).max()) or 1.0  # a symmetric scale: a score of 0 is the scheme's pale middle
    chart = charts.heatmap(scores, labels, labels, t(f"ch10.rope.title_{scheme}", lang),
                           x_title=t("ch10.rope.x", lang), y_title=t("ch10.rope.y", lang), scheme="redblue",
                           domain=[-reach, reach], show_values=True, value_format=".2f", cell_size=SCORE_CELL_PX)
    return {"spec": chart.to_dict(), "spread": diagonal_spread(scores), "change": shift_change(scheme, d, shift)}
