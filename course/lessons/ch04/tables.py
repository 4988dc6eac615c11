"""Chapter 4 tables: the full alignment heatmap, the context as a convex combination and the shapes
of additive scoring with three different sizes (the fixed-context vs Bahdanau decoder comparison is in
course.translation.decoder_compare, next to the fixed-context decoder).

Streamlit-free. Numbers come from the reference modules in solutions/.
"""

import altair as alt
import pandas as pd
import torch

from course.common import charts
from course.lessons.ch04 import SOURCE, TARGETS, alignment_table
from solutions.ex03_scoring import AdditiveAttention


def alignment_matrix(scores_by_target, targets=TARGETS, source=SOURCE):
    """Weights alpha (one row per target word, one column per source word) from each row's scores."""
    rows = [alignment_table(scores_by_target[t], source)["alpha"].to_numpy() for t in targets]
    columns = [f"{j + 1}. {w}" for j, w in enumerate(source)]  # the two "the"s stay distinct
    return pd.DataFrame(rows, index=list(targets), columns=columns)


def alignment_heatmap_spec(matrix, x_title, y_title, value_title="α"):
    """Heatmap dict of an alignment matrix, rows = target words, columns = source words."""
    chart = charts.heatmap(matrix, x_title=x_title, y_title=y_title, value_title=value_title,
                           show_values=True, domain=[0, 1], cell_size=56)
    return chart.to_dict()


def convex_view(alpha, values):
    """How c = sum_i alpha_i v_i sits among the values: per coordinate, min, c, max and the top value."""
    alpha = torch.as_tensor(alpha, dtype=torch.float64)  # (n,)
    values = torch.as_tensor(values, dtype=torch.float64)  # (n, d)
    c = alpha @ values  # (d,)
    top = values[int(alpha.argmax())]  # (d,): the value with the largest weight
    table = pd.DataFrame({
        "min_i v_i": values.min(dim=0).values.numpy(), "c": c.numpy(),
        "max_i v_i": values.max(dim=0).values.numpy(), "v_top": top.numpy(),
    }, index=[str(k + 1) for k in range(values.shape[1])])
    return {
        "table": table,
        "weight_sum": float(alpha.sum()), "min_weight": float(alpha.min()),
        "inside": bool(((values.min(dim=0).values - 1e-12 <= c) & (c <= values.max(dim=0).values + 1e-12)).all()),
        "distance_to_top": float(torch.linalg.vector_norm(c - top)),
    }


def convex_points(alpha, values, labels):
    """Points of a 2-D example for a scatter chart: the values (kind 'value') and c (kind 'context')."""
    values = torch.as_tensor(values, dtype=torch.float64)  # (n, 2)
    c = torch.as_tensor(alpha, dtype=torch.float64) @ values  # (2,)
    rows = [{"x": float(v[0]), "y": float(v[1]), "kind": "value", "label": name} for v, name in zip(values, labels)]
    return pd.DataFrame(rows + [{"x": float(c[0]), "y": float(c[1]), "kind": "context", "label": "c"}])


def additive_shapes(d_s, d_h, d_a, batch=2, num_queries=1, src_len=7, seed=0):
    """Shapes of every tensor of the reference AdditiveAttention with query size d_s, key/value size d_h
    and d_a hidden units: [(tensor, shape)], read from the real tensors by hooks."""
    torch.manual_seed(seed)
    attention = AdditiveAttention(key_size=d_h, query_size=d_s, num_hiddens=d_a, dropout=0.0).eval()
    seen = {}
    hooks = [
        attention.W_q.register_forward_hook(lambda m, i, o: seen.update(proj_q=o)),
        attention.W_k.register_forward_hook(lambda m, i, o: seen.update(proj_k=o)),
        attention.w_v.register_forward_hook(lambda m, i, o: seen.update(features=i[0], e=o.squeeze(-1))),
    ]
    s = torch.randn(batch, num_queries, d_s)  # (B, 1, d_s): decoder state as the query
    h = torch.randn(batch, src_len, d_h)  # (B, T, d_h): encoder states as keys and values
    try:
        with torch.no_grad():
            c = attention(s, h, h)  # (B, 1, d_h)
    finally:
        for hook in hooks:
            hook.remove()
    return [
        ("s (query)", tuple(s.shape)), ("h (keys = values)", tuple(h.shape)),
        ("W_q", tuple(attention.W_q.weight.shape)), ("W_k", tuple(attention.W_k.weight.shape)),
        ("w_v", tuple(attention.w_v.weight.shape)),
        ("W_q s", tuple(seen["proj_q"].shape)), ("W_k h", tuple(seen["proj_k"].shape)),
        ("tanh(W_q s + W_k h)", tuple(seen["features"].shape)), ("e", tuple(seen["e"].shape)),
        ("α", tuple(attention.attention_weights.shape)), ("c = α h", tuple(c.shape)),
    ]


def convex_spec(points, title):
    """Scatter dict of the values and the context, with the segment joining the values."""
    base = alt.Chart(points).encode(x=alt.X("x:Q", title=None), y=alt.Y("y:Q", title=None))
    segment = base.transform_filter(alt.datum.label != "c").mark_line(color="#999999")
    dots = base.mark_point(filled=True, size=120).encode(color=alt.Color(
        "kind:N", title=None, scale=alt.Scale(domain=list(dict.fromkeys(points["kind"])))),  # same colours in en/zh
        tooltip=["label", "x", "y"])
    labels = base.mark_text(dx=12, dy=-10).encode(text="label:N")
    return (segment + dots + labels).properties(title=title, height=260).to_dict()
