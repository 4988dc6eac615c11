"""Chapter 3 experiments: masked softmax, softmax as allocation, scoring functions, sqrt(d_k).

Streamlit-free. The attention maths comes from the reference solutions
(solutions.ex01_softmax, solutions.ex03_scoring), never from exercises/.
"""

import functools
import math
import statistics
import time

import altair as alt
import pandas as pd
import torch
from torch import nn

from course.common import charts
from course.common.arrow import arrow_table
from course.common.i18n import t
from solutions.ex01_softmax import masked_softmax, softmax
from solutions.ex03_scoring import AdditiveAttention, DotProductAttention


def random_scores(batch, n_q, n_k, seed=0):
    """Seeded standard-normal score matrix (batch, n_q, n_k)."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(batch, n_q, n_k, generator=gen)  # (B, n_q, n_k)


def masked_weights(scores, valid_lens):
    """Masked softmax weights (B, n_q, n_k) for a list of lengths per example or per query."""
    lens = torch.tensor(valid_lens)  # (B,) or (B, n_q)
    return masked_softmax(scores, lens)  # (B, n_q, n_k)


def expected_zero_count(valid_lens, n_q, n_k):
    """How many (query, key) cells the mask must zero: sum over rows of n_k - length."""
    lens = torch.tensor(valid_lens)  # (B,) or (B, n_q)
    if lens.dim() == 1:
        lens = lens[:, None].expand(-1, n_q)  # (B, n_q)
    return int((n_k - lens.clamp(0, n_k)).sum())


def naive_softmax(x):
    """exp(x) / sum exp(x) without the max shift: overflows for large x (for comparison only)."""
    e = torch.exp(x)  # (n,)
    return e / e.sum()


def shift_table(scores, shift):
    """Softmax of x + shift computed naively and stably, next to softmax(x - max x)."""
    x = torch.as_tensor(scores, dtype=torch.float32)  # (n,)
    shifted = x + shift  # (n,)
    return pd.DataFrame({
        "x": x.numpy(),
        "x + c": shifted.numpy(),
        "naive": naive_softmax(shifted).numpy(),
        "stable": softmax(shifted).numpy(),
        "softmax(x - max x)": naive_softmax(x - x.max()).numpy(),
    })


def shift_display(table):
    """shift_table as text for a page: 6 significant digits, and NaN written "NaN" (a table widget shows None)."""
    return table.map(lambda v: "NaN" if math.isnan(v) else f"{v:.6g}")


def shift_names(lang):
    """{shift_table column: its header in `lang`} (the maths columns stay as written)."""
    return {"naive": t("ui.shift.naive", lang), "stable": t("ui.shift.stable", lang)}


def shift_view(scores, shift, lang):
    """The page's shift table: (shift_display's text with headers in `lang`, as an Arrow table; the largest gap
    between the stable softmax and softmax(x - max x))."""
    table = shift_table(scores, shift)
    diff = float((table["stable"] - table["softmax(x - max x)"]).abs().max())
    return arrow_table(shift_display(table).rename(columns=shift_names(lang))), diff


def tempered(scores, temperature):
    """Softmax of scores / temperature (n,)."""
    if temperature <= 0:
        raise ValueError(f"temperature must be positive; got {temperature}")
    return softmax(torch.as_tensor(scores, dtype=torch.float32) / temperature)  # (n,)


def entropy(weights, dim=-1):
    """Entropy in nats of probability vectors along `dim` (0 log 0 counts as 0)."""
    p = torch.as_tensor(weights)
    return -(p * torch.log(p.clamp_min(1e-30))).sum(dim=dim)


def softmax_jacobian(alpha):
    """d alpha_i / d z_j = alpha_i (delta_ij - alpha_j) for alpha = softmax(z), (n, n)."""
    alpha = torch.as_tensor(alpha)  # (n,)
    return torch.diag(alpha) - torch.outer(alpha, alpha)  # (n, n)


def parameter_counts(d_q, d_k, num_hiddens):
    """Learnable parameters of each scoring function, counted on real modules."""
    additive = AdditiveAttention(d_k, d_q, num_hiddens, dropout=0.0)
    general = nn.Linear(d_k, d_q, bias=False)  # W in q^T W k
    scaled = DotProductAttention(dropout=0.0)
    count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    return {"additive": count(additive), "dot": 0, "scaled": count(scaled), "general": count(general)}


SCORERS = ("additive", "dot", "scaled", "general")


def comparison_table(lang, d_q, d_k, num_hiddens):
    """The four scoring functions side by side (text from the catalogs, counts computed)."""
    counts = parameter_counts(d_q, d_k, num_hiddens)
    rows = []
    for name in SCORERS:
        rows.append({
            t("ch03.col_scorer", lang): t(f"ch03.scorer_{name}", lang),
            t("ch03.col_formula", lang): t(f"ch03.formula_{name}", lang),
            t("ch03.col_params", lang): counts[name],
            t("ch03.col_dims", lang): t(f"ch03.dims_{name}", lang),
            t("ch03.col_cost", lang): t(f"ch03.cost_{name}", lang),
        })
    return pd.DataFrame(rows)


def comparison_view(lang, d_q, d_k, num_hiddens):
    """comparison_table as an Arrow table (the page caches it: the counts build real modules)."""
    return arrow_table(comparison_table(lang, d_q, d_k, num_hiddens))


def timings_view(timings, lang):
    """((scorer, ms), ...) as the page's table, headers and names in `lang`, as an Arrow table."""
    return arrow_table(pd.DataFrame({t("ch03.col_scorer", lang): [t(f"ch03.scorer_{n}", lang) for n, _ in timings],
                                     t("ch03.col_ms", lang): [round(v, 3) for _, v in timings]}))


SCALE_MEASURES = ("variance", "max_weight", "entropy", "grad_norm")


def scale_table(d_k, lang):
    """scale_stats(d_k) as the page's table (each measure unscaled and scaled), as an Arrow table."""
    stats = scale_stats(d_k)
    return arrow_table(pd.DataFrame({
        t("ch03.col_measure", lang): [t(f"ch03.measure_{m}", lang) for m in SCALE_MEASURES],
        t("ch03.col_unscaled", lang): [f"{stats['unscaled'][m]:.4f}" for m in SCALE_MEASURES],
        t("ch03.col_scaled", lang): [f"{stats['scaled'][m]:.4f}" for m in SCALE_MEASURES]}))


def attention_fns(d, num_hiddens, seed=0):
    """The four attention computations as callables (queries, keys, values) -> output."""
    torch.manual_seed(seed)
    additive = AdditiveAttention(d, d, num_hiddens, dropout=0.0).eval()
    scaled = DotProductAttention(dropout=0.0).eval()
    general = nn.Linear(d, d, bias=False)

    def dot(q, k, v):
        return torch.bmm(softmax(torch.bmm(q, k.transpose(1, 2))), v)  # (B, n_q, v)

    def luong(q, k, v):
        return torch.bmm(softmax(torch.bmm(q, general(k).transpose(1, 2))), v)  # (B, n_q, v)

    return {"additive": additive, "dot": dot, "scaled": scaled, "general": luong}


def time_scorers(batch=4, n_q=16, n_k=32, d=64, num_hiddens=64, repeats=31, warmup=3, seed=0):
    """Median wall time in milliseconds of one forward pass of each attention variant.

    After `warmup` untimed passes each, the variants take turns pass by pass, so a burst of load
    on the machine slows all of them alike instead of the one being timed at that moment.
    """
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(batch, n_q, d, generator=gen)  # (B, n_q, d)
    k = torch.randn(batch, n_k, d, generator=gen)  # (B, n_k, d)
    v = torch.randn(batch, n_k, d, generator=gen)  # (B, n_k, d)
    fns = attention_fns(d, num_hiddens, seed)
    samples = {name: [] for name in fns}
    with torch.no_grad():
        for _ in range(warmup):
            for fn in fns.values():
                fn(q, k, v)
        for _ in range(repeats):
            for name, fn in fns.items():
                start = time.perf_counter()
                fn(q, k, v)
                samples[name].append((time.perf_counter() - start) * 1000)
    return {name: statistics.median(times) for name, times in samples.items()}


def scale_stats(d_k, n_queries=500, n_keys=8, seed=0):
    """Measured effect of 1/sqrt(d_k) on scores, softmax weights and their gradients."""
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(n_queries, 1, d_k, generator=gen)  # (N, 1, d)
    k = torch.randn(n_queries, n_keys, d_k, generator=gen)  # (N, m, d)
    upstream = torch.randn(n_queries, n_keys, generator=gen)  # (N, m): dL/dalpha
    raw = torch.bmm(q, k.transpose(1, 2)).squeeze(1)  # (N, m)
    stats = {}
    for name, scores in (("unscaled", raw), ("scaled", raw / math.sqrt(d_k))):
        logits = scores.clone().requires_grad_(True)  # (N, m)
        alpha = softmax(logits)  # (N, m)
        (alpha * upstream).sum().backward()
        stats[name] = {
            "variance": float(scores.var()),
            "max_weight": float(alpha.detach().amax(dim=-1).mean()),
            "entropy": float(entropy(alpha.detach()).mean()),
            "grad_norm": float(logits.grad.norm(dim=-1).mean()),
        }
    return stats


def scale_curve(d_values, **kwargs):
    """Long table (d_k, version, measure, value) of scale_stats over many d_k."""
    rows = []
    for d in d_values:
        for version, measures in scale_stats(d, **kwargs).items():
            rows += [{"d_k": d, "version": version, "measure": m, "value": v} for m, v in measures.items()]
    return pd.DataFrame(rows)


def scale_chart(curve, measure, d_k, title, labels=None):
    """Log-x line chart of one measure for both versions, with a rule at the chosen d_k.

    The measure's name is the title only (no long rotated y title) and the legend
    sits below: at 200 px, with both, Vega's fit left the plots ~60 px tall and,
    after a slider move, squeezed the gradient chart's plot to nothing (no y
    axis, the two lines on top of each other). The rule reads the lines' data.
    """
    frame = curve[curve["measure"] == measure].copy()
    frame["version"] = frame["version"].map(lambda v: (labels or {}).get(v, v))
    base = alt.Chart(frame)
    lines = base.mark_line(point=True).encode(
        x=alt.X("d_k:Q", scale=alt.Scale(type="log", base=2)), y=alt.Y("value:Q", title=None),
        color=alt.Color("version:N", title=None, legend=alt.Legend(orient="bottom")),
        tooltip=["d_k:Q", "version:N", alt.Tooltip("value:Q", format=".4f")],
    )
    rule = base.transform_filter(alt.datum.d_k == d_k).mark_rule(strokeDash=[4, 4], color="gray").encode(x="d_k:Q")
    return (lines + rule).properties(height=SCALE_CHART_HEIGHT, title=alt.TitleParams(title, anchor="start"))


SCALE_CHART_HEIGHT = 300  # Streamlit fits title, axes and legend into this height too


# Vega-Lite dicts for plain inputs: the page caches them, since building an Altair chart is slow.
READING = (3.0, 1.0, 0.2, -0.5, -2.0)  # scores of five items in the allocation demo
D_VALUES = tuple(2**i for i in range(11))  # the d_k slider: 1 .. 1024


def mask_spec(seed, valid_lens, b, n_q, n_k, title, x_title, y_title):
    """Heatmap dict of example b's masked weights for a seeded (B, n_q, n_k) score matrix."""
    weights = masked_weights(random_scores(len(valid_lens), n_q, n_k, seed), valid_lens)  # (B, n_q, n_k)
    return charts.heatmap(
        weights[b].numpy(), [f"q{i}" for i in range(n_q)], [f"k{j}" for j in range(n_k)], title,
        x_title=x_title, y_title=y_title, show_values=True, domain=[0, 1], cell_size=44,
    ).to_dict()


def temperature_specs(temperature, x_title, jacobian_title):
    """Bar chart dict of the tempered weights of READING and heatmap dict of their Jacobian."""
    alpha = tempered(READING, temperature)  # (n,)
    bars = pd.DataFrame({"item": [f"{x:+.1f}" for x in READING], "alpha": alpha.double().numpy().round(3)})  # no float32 noise
    jac = softmax_jacobian(alpha).numpy()  # (n, n)
    span = max(float(abs(jac).max()), 1e-6)
    return (
        charts.bar_chart(bars, "item", "alpha", x_title=x_title, y_title="α").to_dict(),
        charts.heatmap(jac, title=jacobian_title, x_title="j", y_title="i", scheme="redblue",
                       domain=[-span, span], show_values=True, value_format=".3f", cell_size=52).to_dict(),
    )


@functools.lru_cache(maxsize=4)
def default_scale_curve(d_values=D_VALUES):
    """scale_curve over the slider's d_k values (computed once per process)."""
    return scale_curve(d_values)


def scale_spec(measure, d_k, title, labels):
    """Line chart dict of one measure against d_k, marking the chosen d_k."""
    return scale_chart(default_scale_curve(), measure, d_k, title, dict(labels)).to_dict()
