"""Chapter 6, first half: self- vs cross-attention, and what a layer of each kind costs.

Streamlit-free. Path lengths come from solutions.ex00_paths and attention from
solutions.ex03_scoring; the second half of the chapter is in positions.py beside this file.
"""

import math

import altair as alt
import numpy as np
import pandas as pd
import torch

from course.common import charts
from course.common.arrow import arrow_spec, arrow_table
from course.common.i18n import t
from course.lessons.ch05 import embed
from solutions.ex00_paths import max_path_length
from solutions.ex03_scoring import DotProductAttention

SOURCE = ("I", "love", "green", "tea")  # the worked example: encoder side
TARGET = ("我", "爱", "绿茶")  # decoder side, for cross-attention
EXAMPLE_DIM = 4


# --- self-attention versus cross-attention ---------------------------------------------------

def example_vectors(tokens, d=EXAMPLE_DIM):
    """Small readable embeddings (T, d): the seeded word vectors rounded to one decimal."""
    return torch.round(embed(list(tokens), d) * 10) / 10  # (T, d)


def attend(mode):
    """The worked example: {'queries', 'keys', 'scores', 'weights', 'output'} as DataFrames.

    mode 'self': queries, keys and values are all the source sentence;
    mode 'cross': queries come from the target sentence, keys and values from the source.
    """
    if mode not in ("self", "cross"):
        raise ValueError(f"unknown mode {mode!r}; use 'self' or 'cross'")
    q_tokens = SOURCE if mode == "self" else TARGET
    X = example_vectors(SOURCE).unsqueeze(0)  # (1, n, d): keys = values
    Q = example_vectors(q_tokens).unsqueeze(0)  # (1, m, d)
    attention = DotProductAttention(dropout=0.0).eval()
    with torch.no_grad():
        output = attention(Q, X, X)  # (1, m, d)
    scores = torch.bmm(Q, X.transpose(1, 2)) / math.sqrt(EXAMPLE_DIM)  # (1, m, n)
    dims = [f"x{i}" for i in range(EXAMPLE_DIM)]
    frame = lambda a, rows, cols: pd.DataFrame(a[0].numpy().round(3), index=list(rows), columns=cols)  # noqa: E731
    return {
        "queries": frame(Q, q_tokens, dims), "keys": frame(X, SOURCE, dims),
        "scores": frame(scores, q_tokens, list(SOURCE)),
        "weights": frame(attention.attention_weights, q_tokens, list(SOURCE)),
        "output": frame(output, q_tokens, dims),
    }


ROLES = (("self", "sequence", "sequence", "n × n"), ("cross", "decoder", "encoder", "m × n"),
         ("bahdanau", "state", "encoder", "1 × n"))


def roles_table(lang):
    """Where queries, keys and values come from in each kind of attention (text from the catalog)."""
    return pd.DataFrame([{t("ch06.col_attention", lang): t(f"ch06.role_{r}", lang),
                          t("ch06.col_q", lang): t(f"ch06.from_{q}", lang),
                          t("ch06.col_kv", lang): t(f"ch06.from_{kv}", lang), t("ch06.col_weights", lang): w}
                         for r, q, kv, w in ROLES])


def roles_view(lang, mode):
    """The roles table, the worked example's matrices (Arrow, row labels first) and its weights heatmap."""
    ex = attend(mode)
    chart = charts.heatmap(ex["weights"], title=t("ch06.weights_title", lang), x_title=t("ch06.axis_key", lang),
                           y_title=t("ch06.axis_query", lang), show_values=True, domain=[0, 1], cell_size=56)
    view = {name: arrow_table(ex[name], "") for name in ("queries", "keys", "scores", "output")}
    return {**view, "roles": arrow_table(roles_table(lang)), "spec": arrow_spec(chart), "shape": ex["weights"].shape,
            "tops": top_keys(ex["weights"])}


def top_keys(weights):
    """'query → key (weight)' for each row of a weights frame: where each query reads most."""
    return ", ".join(f"{q} → {row.idxmax()} ({row.max():.2f})" for q, row in weights.iterrows())


# --- CNN vs RNN vs self-attention -------------------------------------------------------------

def layer_costs(n, d, k):
    """{arch: (operations, sequential steps, maximum path length)} for n positions of width d."""
    if min(n, d) < 1 or k < 2:
        raise ValueError(f"need n >= 1, d >= 1 and kernel k >= 2; got n={n}, d={d}, k={k}")
    return {
        "self-attention": (n * n * d, 1, max_path_length("self-attention", n)),
        "rnn": (n * d * d, n, max_path_length("rnn", n)),
        "cnn": (k * n * d * d, 1, max_path_length("cnn", n, kernel_size=k)),
        "cnn-dilated": (k * n * d * d, 1, max_path_length("cnn", n, kernel_size=k, dilated=True)),
    }


def cost_table(lang, n, d, k):
    """The comparison table: formulas from the catalog, numbers computed for n, d, k."""
    rows = []
    for arch, (ops, seq, path) in layer_costs(n, d, k).items():
        rows.append({
            t("ch06.col_layer", lang): t(f"ch06.arch_{arch}", lang),
            t("ch06.col_ops", lang): t(f"ch06.ops_{arch}", lang), t("ch06.col_ops_n", lang): f"{ops:,}",
            t("ch06.col_seq", lang): t(f"ch06.seq_{arch}", lang), t("ch06.col_seq_n", lang): seq,
            t("ch06.col_path", lang): t(f"ch06.path_{arch}", lang), t("ch06.col_path_n", lang): path,
        })
    return pd.DataFrame(rows)


def cost_curve(d, k, n_max=4096):
    """Long table (n, arch, ops) on a geometric grid of n, including n = d where n^2 d = n d^2."""
    grid = np.unique(np.concatenate([np.geomspace(1, n_max, 60).round().astype(int), [d]]))
    rows = [{"n": int(n), "arch": arch, "ops": float(costs[0])}
            for n in grid for arch, costs in layer_costs(int(n), d, k).items() if arch != "cnn-dilated"]
    return pd.DataFrame(rows)


def cost_view(lang, n, d, k):
    """(cost table as Arrow, log-log chart dict of operations against n with rules at n = d and the chosen n)."""
    frame = cost_curve(d, k)
    frame["arch"] = frame["arch"].map(lambda arch: t(f"ch06.arch_{arch}", lang))
    x_title, y_title, title = (t(f"ch06.{key}", lang) for key in ("axis_n", "axis_ops", "cost_title"))
    lines = alt.Chart(frame).mark_line().encode(
        x=alt.X("n:Q", title=x_title, scale=alt.Scale(type="log")),
        y=alt.Y("ops:Q", title=y_title, scale=alt.Scale(type="log")),
        color=alt.Color("arch:N", title=None, scale=alt.Scale(domain=list(dict.fromkeys(frame["arch"])))),
        tooltip=["n", alt.Tooltip("arch:N", title=" "), alt.Tooltip("ops:Q", title=y_title, format=",.0f")],
    )
    marks = pd.DataFrame({"n": [d, n], "what": ["n = d", "n"]})
    rules = alt.Chart(marks).mark_rule().encode(
        x="n:Q", strokeDash=alt.StrokeDash("what:N", title=None), tooltip=["what", "n"])
    chart = (lines + rules).properties(title=title, height=320)
    return arrow_table(cost_table(lang, n, d, k)), arrow_spec(chart)
