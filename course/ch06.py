"""Chapter 6 experiments: self- vs cross-attention, layer costs, sinusoidal positions, order blindness.

Streamlit-free. Path lengths come from solutions.ex00_paths, the positional table
from solutions.ex06_positional_encoding and attention from solutions.ex03/ex05.
"""

import math

import altair as alt
import numpy as np
import pandas as pd
import pyarrow as pa
import torch

from course import charts
from course.ch05 import arrow_spec, arrow_table, build_layer, embed
from course.i18n import t
from solutions.ex00_paths import max_path_length
from solutions.ex03_scoring import DotProductAttention
from solutions.ex06_positional_encoding import PositionalEncoding

SOURCE = ("I", "love", "green", "tea")  # the worked example: encoder side
TARGET = ("我", "爱", "绿茶")  # decoder side, for cross-attention
EXAMPLE_DIM = 4
ARCHS = ("self-attention", "rnn", "cnn", "cnn-dilated")
BASE = 10000.0
DEFAULT_COLUMNS = (0, 1, 8, 20)  # columns of P drawn as curves until the learner picks others


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
    return {**view, "roles": arrow_table(roles_table(lang)), "spec": arrow_spec(chart), "shape": ex["weights"].shape}


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
        color=alt.Color("arch:N", title=None), tooltip=["n", "arch", alt.Tooltip("ops:Q", format=",.0f")],
    )
    marks = pd.DataFrame({"n": [d, n], "what": ["n = d", "n"]})
    rules = alt.Chart(marks).mark_rule().encode(
        x="n:Q", strokeDash=alt.StrokeDash("what:N", title=None), tooltip=["what", "n"])
    chart = (lines + rules).properties(title=title, height=320)
    return arrow_table(cost_table(lang, n, d, k)), arrow_spec(chart)


# --- sinusoidal positional encoding -----------------------------------------------------------

def frequencies(num_hiddens):
    """omega_j = 1 / 10000^(2j / d) for each column pair j, float64 (ceil(d/2),)."""
    return 1.0 / BASE ** (np.arange(0, num_hiddens, 2, dtype=np.float64) / num_hiddens)


def sinusoid_table(length, num_hiddens):
    """P in float64 (length, d): P[i, 2j] = sin(i omega_j), P[i, 2j+1] = cos(i omega_j)."""
    angles = np.arange(length, dtype=np.float64)[:, None] * frequencies(num_hiddens)[None, :]  # (T, ceil(d/2))
    P = np.zeros((length, num_hiddens))
    P[:, 0::2] = np.sin(angles)
    P[:, 1::2] = np.cos(angles[:, : num_hiddens // 2])
    return P  # (T, d)


def module_table(length, num_hiddens):
    """The reference PositionalEncoding's stored (float32) P[:length] as numpy (length, d)."""
    return PositionalEncoding(num_hiddens, 0.0, max_len=length).P[0].numpy()  # (T, d)


def pe_heatmap(lang, length, num_hiddens):
    """(Arrow table, Vega-Lite spec) of the module's P as a heatmap: positions down, dimensions across.

    The spec is written by hand and the data passed apart as an Arrow table (sent as is, no pandas
    conversion on every rerun), because it has up to length x d cells, more than Altair inlines.
    """
    P = module_table(length, num_hiddens)  # (T, d)
    pos, dim = np.meshgrid(np.arange(length), np.arange(num_hiddens), indexing="ij")  # (T, d) each
    frame = pa.table({"position": pos.ravel(), "dimension": dim.ravel(), "P": P.ravel().round(4)})
    every = lambda count: list(range(0, count, max(1, count // 16)))  # noqa: E731 (axis tick positions)
    title, x_title, y_title = (t(f"ch06.{key}", lang) for key in ("heatmap_title", "axis_dimension", "axis_position"))
    spec = {
        "mark": "rect", "title": title, "height": min(420, 6 * length + 60),
        "encoding": {
            "x": {"field": "dimension", "type": "ordinal", "title": x_title,
                  "axis": {"values": every(num_hiddens), "labelAngle": 0}},
            "y": {"field": "position", "type": "ordinal", "title": y_title, "axis": {"values": every(length)}},
            "color": {"field": "P", "type": "quantitative", "scale": {"scheme": "redblue", "domain": [-1, 1]}},
            "tooltip": [{"field": f, "type": "quantitative"} for f in ("position", "dimension", "P")],
        },
    }
    return frame, spec


def default_columns(num_hiddens):
    """The default curve columns that exist for this width."""
    return [c for c in DEFAULT_COLUMNS if c < num_hiddens]


def columns_spec(length, num_hiddens, columns, x_title):
    """Line chart dict of the chosen columns of P against position (None when no column is chosen)."""
    if not columns:
        return None
    P = module_table(length, num_hiddens)  # (T, d)
    names = [f"col {c}" for c in sorted(columns)]  # the legend lists them in this (numeric) order
    frame = pd.DataFrame([{"position": i, "column": f"col {c}", "P": float(P[i, c])}
                          for c in columns for i in range(length)])
    chart = alt.Chart(frame).mark_line().encode(
        x=alt.X("position:Q", title=x_title), y=alt.Y("P:Q", title="P"),
        color=alt.Color("column:N", title=None, sort=names), tooltip=["position", "column", "P"])
    return arrow_spec(chart.properties(height=260))


def encoding_view(lang, length, num_hiddens, columns):
    """{'curves': columns_spec, 'binary': binary_frame, 'periods': period_frame}, tables as Arrow."""
    return {"curves": columns_spec(length, num_hiddens, columns, t("ch06.axis_position", lang)),
            "binary": arrow_table(binary_frame(lang), ""), "periods": arrow_table(period_frame(lang, num_hiddens))}


def binary_table(num_bits=4):
    """Positions 0..2^bits - 1 in binary (most significant bit first) and each bit's flips per step.

    The flip rate counts the steps i -> i + 1 of one full cycle (the last step wraps to 0).
    """
    count = 2**num_bits
    bits = {f"bit {b}": [(i >> b) & 1 for i in range(count)] for b in reversed(range(num_bits))}
    table = pd.DataFrame(bits, index=range(count))
    following = table.shift(-1, fill_value=0)  # (count, bits): the next position, wrapping to 0
    flips = (table != following).mean()  # changes per step
    return table, flips


def binary_frame(lang, num_bits=4):
    """binary_table for display: the bits (as text) with a last row of flip rates."""
    bits, flips = binary_table(num_bits)
    rates = flips.map(lambda v: f"{v:g}").to_frame(t("ch06.flip_rate", lang)).T  # (1, bits)
    table = pd.concat([bits.astype(str).rename(index=str), rates])
    table.columns = [t("ch06.bit_name", lang).format(c.split()[-1]) for c in table.columns]
    return table


def period_frame(lang, num_hiddens):
    """period_table with translated column names."""
    names = {c: t(f"ch06.col_{c}", lang) for c in ("columns", "omega", "period")}
    return period_table(num_hiddens).rename(columns={**names, "j": t("ch06.col_pair", lang)})


def period_table(num_hiddens, pairs=None):
    """For chosen column pairs j: omega_j and the period 2 pi / omega_j in positions."""
    omega = frequencies(num_hiddens)
    pairs = pairs if pairs is not None else sorted({0, 1, 2, 3, len(omega) // 2, len(omega) - 1})
    return pd.DataFrame({"j": pairs, "columns": [f"{2 * j}, {2 * j + 1}" for j in pairs],
                         "omega": [float(omega[j]) for j in pairs],
                         "period": [float(2 * math.pi / omega[j]) for j in pairs]})


def rotation(delta, j, num_hiddens):
    """The 2x2 matrix that moves column pair j of P by delta positions: (2, 2) float64."""
    w = frequencies(num_hiddens)[j]
    c, s = math.cos(delta * w), math.sin(delta * w)
    return np.array([[c, s], [-s, c]])


def rotation_error(length, num_hiddens, delta, table=None):
    """max over pos and j of |R_j(delta) (P[pos,2j], P[pos,2j+1]) - (P[pos+delta,2j], P[pos+delta,2j+1])|."""
    P = sinusoid_table(length, num_hiddens) if table is None else np.asarray(table, dtype=np.float64)
    if not 0 < delta < length:
        raise ValueError(f"delta must be between 1 and length - 1 = {length - 1}; got {delta}")
    worst = 0.0
    for j in range(num_hiddens // 2):
        pairs = P[:, 2 * j : 2 * j + 2]  # (T, 2): (sin, cos) of i omega_j
        moved = pairs[:-delta] @ rotation(delta, j, num_hiddens).T  # (T - delta, 2)
        worst = max(worst, float(np.abs(moved - pairs[delta:]).max()))
    return worst


def rotation_view(length, num_hiddens, delta, j):
    """(R_j(delta) as an Arrow table, error of the float64 table, error of the module's float32 table)."""
    matrix = pd.DataFrame(rotation(delta, j, num_hiddens).round(6), columns=["0", "1"])
    return (arrow_table(matrix), rotation_error(length, num_hiddens, delta),
            rotation_error(length, num_hiddens, delta, module_table(length, num_hiddens)))


def latex_sci(x, digits=2):
    """x in scientific notation for LaTeX: 1.44 \\times 10^{-7}."""
    mantissa, exponent = f"{x:.{digits}e}".split("e")
    return f"{mantissa} \\times 10^{{{int(exponent)}}}"


FLOAT32_BOUND = (1 + math.sqrt(2)) * 2.0**-24  # rounding of 2 stored entries (mixed by |c|+|s| <= sqrt 2) and 1 target


# --- why scale, and why positions at all ------------------------------------------------------

def scale_norms(num_hiddens, num_tokens=200, seed=0):
    """Measured sizes: embeddings ~ N(0, 1/d) with and without the sqrt(d) scale, against P's rows."""
    gen = torch.Generator().manual_seed(seed)
    E = torch.randn(num_tokens, num_hiddens, generator=gen, dtype=torch.float64) / math.sqrt(num_hiddens)  # (N, d)
    P = torch.from_numpy(sinusoid_table(num_tokens, num_hiddens))  # (N, d)
    scaled = E * math.sqrt(num_hiddens)  # (N, d)

    def same_position_cosine(X):
        """Mean cosine between two different words' inputs (word + P) at the same position."""
        a, b = X[0::2] + P[0::2], X[1::2] + P[0::2]  # (N/2, d) each: two words, same positions
        return float(torch.nn.functional.cosine_similarity(a, b, dim=-1).mean())

    return {
        "embedding": float(E.norm(dim=-1).mean()), "scaled": float(scaled.norm(dim=-1).mean()),
        "position": float(P.norm(dim=-1).mean()),
        "cosine_unscaled": same_position_cosine(E), "cosine_scaled": same_position_cosine(scaled),
    }


def scale_view(lang, num_hiddens):
    """scale_norms as an Arrow (measure, value) table with translated names."""
    norms = scale_norms(num_hiddens)
    return arrow_table(pd.DataFrame({t("ch06.col_measure", lang): [t(f"ch06.measure_{m}", lang) for m in norms],
                                     t("ch06.col_value", lang): [round(v, 4) for v in norms.values()]}))


def permutation(num_tokens, seed):
    """A seeded shuffle of range(num_tokens) as a list."""
    return torch.randperm(num_tokens, generator=torch.Generator().manual_seed(seed)).tolist()


def shuffle_errors(tokens, perm, num_hiddens=32, num_heads=4, seed=0):
    """Self-attention of the sentence and of its shuffle: max |f(X[perm]) - f(X)[perm]| without and with P."""
    layer, perm = build_layer(num_hiddens, num_heads, seed), list(perm)
    X = embed(list(tokens), num_hiddens).unsqueeze(0)  # (1, T, d)
    P = torch.from_numpy(sinusoid_table(len(tokens), num_hiddens)).float().unsqueeze(0)  # (1, T, d)
    errors = {}
    with torch.no_grad():
        for name, add in (("without", 0 * P), ("with", P)):
            out = layer(X + add, X + add, X + add)  # (1, T, d)
            shuffled = X[:, perm] + add  # (1, T, d): the words move, the positions stay
            out_shuffled = layer(shuffled, shuffled, shuffled)  # (1, T, d)
            errors[name] = float((out_shuffled - out[:, perm]).abs().max())
    return errors
