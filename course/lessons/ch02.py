"""Chapter 2 experiments: Nadaraya-Watson kernel regression as attention pooling.

Streamlit-free: the page calls these and draws the results. The maths comes
from the reference solution (solutions.ex02_nadaraya_watson), never from the
learner's exercises/.
"""

import functools
from dataclasses import dataclass

import altair as alt
import pandas as pd
import torch

from course.common import charts
from course.model.train_loop import train_steps
from solutions.ex02_nadaraya_watson import (
    NWKernelRegression,
    gaussian_kernel_weights,
    nadaraya_watson,
)


def true_fn(x):
    """The function the data comes from: 2 sin x + x^0.8."""
    return 2 * torch.sin(x) + x**0.8


@dataclass(frozen=True)
class Data:
    """Sorted training pairs and an evenly spaced test grid."""

    x_train: torch.Tensor  # (n_train,)
    y_train: torch.Tensor  # (n_train,)
    x_test: torch.Tensor  # (n_test,)
    y_truth: torch.Tensor  # (n_test,)


def make_data(n_train=50, noise=0.5, seed=0, x_max=5.0, step=0.1):
    """Seeded noisy samples of true_fn on [0, x_max), training inputs sorted."""
    if n_train < 2:
        raise ValueError(f"n_train must be at least 2 (leave-one-out needs two points); got {n_train}")
    gen = torch.Generator().manual_seed(seed)
    x_train = torch.sort(torch.rand(n_train, generator=gen) * x_max).values  # (n_train,)
    y_train = true_fn(x_train) + noise * torch.randn(n_train, generator=gen)  # (n_train,)
    x_test = torch.arange(0, x_max, step)  # (n_test,)
    return Data(x_train, y_train, x_test, true_fn(x_test))


def average_pooling(data):
    """The baseline that ignores the query: every prediction is mean(y_train)."""
    return data.y_train.mean().expand(len(data.x_test)).clone()  # (n_test,)


def nw_predict(data, w):
    """Nadaraya-Watson predictions on the test grid and their weights (n_test, n_train)."""
    weights = gaussian_kernel_weights(data.x_test, data.x_train, w)  # (n_test, n_train)
    y_hat = nadaraya_watson(data.x_test, data.x_train, data.y_train, w)  # (n_test,)
    return y_hat, weights


def leave_one_out(x_train, y_train):
    """Keys and values for training: each point sees all points but itself, (n, n-1) each."""
    n = len(x_train)
    keep = ~torch.eye(n, dtype=torch.bool)  # (n, n), False on the diagonal
    keys = x_train.expand(n, n)[keep].reshape(n, n - 1)  # (n, n-1)
    values = y_train.expand(n, n)[keep].reshape(n, n - 1)  # (n, n-1)
    return keys, values


# The page's default run: long and fast enough for w to settle near the leave-one-out optimum (w ≈ 4).
# 10 epochs at 0.5 stop at w = 1.70, still climbing (ch02.train_body says so; tests/test_course_claims.py checks it).
DEFAULT_EPOCHS, DEFAULT_LR = 50, 2.0


def train_w_steps(data, epochs=10, lr=0.5, seed=0):
    """Fit w by full-batch SGD on the leave-one-out pairs; yields (epoch, w, loss) per step."""
    if epochs < 1 or lr <= 0:
        raise ValueError(f"need epochs >= 1 and lr > 0; got epochs={epochs}, lr={lr}")
    torch.manual_seed(seed)  # the module draws its initial w from torch.rand
    model = NWKernelRegression()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    keys, values = leave_one_out(data.x_train, data.y_train)  # (n, n-1) each

    def loss_of(_):
        y_hat = model(data.x_train, keys, values)  # (n,)
        return ((y_hat - data.y_train) ** 2).mean() / 2

    for done in train_steps(model, optimizer, range(epochs), loss_of):  # full batch: the same data every epoch
        yield done.index + 1, float(model.w.detach()), float(done.loss.detach())


def bmm_shapes(data, w=1.0):
    """Shapes of the real tensors in the parametric model's torch.bmm, step by step."""
    keys, values = leave_one_out(data.x_train, data.y_train)  # (n, n-1)
    weights = gaussian_kernel_weights(data.x_train, keys, w)  # (n, n-1)
    left = weights.unsqueeze(1)  # (n, 1, n-1)
    right = values.unsqueeze(-1)  # (n, n-1, 1)
    out = torch.bmm(left, right)  # (n, 1, 1)
    rows = [
        ("queries", data.x_train), ("keys", keys), ("values", values),
        ("weights", weights), ("weights.unsqueeze(1)", left),
        ("values.unsqueeze(-1)", right), ("torch.bmm(...)", out), ("reshape(-1)", out.reshape(-1)),
    ]
    return [(name, tuple(tensor.shape)) for name, tensor in rows]


def fit_frame(data, curves):
    """Long table (x, y, curve) of the truth and the named prediction curves."""
    frames = [pd.DataFrame({"x": data.x_test.numpy(), "y": data.y_truth.numpy(), "curve": "truth"})]
    for name, y in curves.items():
        frames.append(pd.DataFrame({"x": data.x_test.numpy(), "y": y.detach().numpy(), "curve": name}))
    return pd.concat(frames, ignore_index=True)


def fit_chart(data, curves, labels):
    """Line chart of truth and predictions over the training points (circles)."""
    lines = fit_frame(data, curves)
    lines["curve"] = lines["curve"].map(lambda c: labels.get(c, c))
    points = pd.DataFrame({"x": data.x_train.numpy(), "y": data.y_train.numpy()})
    line = alt.Chart(lines).mark_line().encode(x="x:Q", y="y:Q", color=alt.Color(
        "curve:N", title=None, scale=alt.Scale(domain=list(dict.fromkeys(lines["curve"]))),  # same colours in en/zh
        legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=0)))  # whole names, below the plot
    dots = alt.Chart(points).mark_circle(color="gray", opacity=0.5).encode(x="x:Q", y="y:Q")
    return (dots + line).properties(height=300)


WEIGHTS_HEIGHT_PX = 300  # the weights heatmap's plot height; its width is the page's


def weights_chart(weights, row_values, col_values, row_title, col_title):
    """Heatmap of an attention-weight matrix: rows are queries, columns keys (each named by its x in the table).
    Its 50 x 50 cells are too small for their values: the chart says its table holds them."""
    n_q, n_k = weights.shape
    frame = pd.DataFrame({
        "query": [round(float(row_values[i]), 2) for i in range(n_q) for _ in range(n_k)],
        "key": [round(float(col_values[j]), 2) for _ in range(n_q) for j in range(n_k)],
        "row": [i for i in range(n_q) for _ in range(n_k)],
        "col": [j for _ in range(n_q) for j in range(n_k)],
        "row_label": [f"x = {float(row_values[i]):.2f}" for i in range(n_q) for _ in range(n_k)],
        "col_label": [f"x = {float(col_values[j]):.2f}" for _ in range(n_q) for j in range(n_k)],
        "weight": weights.detach().reshape(-1).numpy(),
    })
    chart = alt.Chart(frame).mark_rect().encode(
        x=alt.X("col:O", title=col_title, axis=alt.Axis(labels=False, ticks=False)),
        y=alt.Y("row:O", title=row_title, axis=alt.Axis(labels=False, ticks=False)),
        color=alt.Color("weight:Q", title="α", scale=alt.Scale(scheme=charts.DEFAULT_SCHEME)),
        tooltip=[alt.Tooltip("query:Q", title=row_title), alt.Tooltip("key:Q", title=col_title),
                 alt.Tooltip("weight:Q", title="α", format=".3f")],
    ).properties(height=WEIGHTS_HEIGHT_PX)
    if charts.labels_fit(frame["weight"], ".2f", charts.MAIN_WIDTH_PX / n_k, WEIGHTS_HEIGHT_PX / n_q):
        return chart  # not at 50 x 50 (cells about 6 px high)
    return chart.properties(usermeta={charts.CELL_VALUES: "table"})


def loss_chart(history, epoch_title, loss_title):
    """Line chart of the training loss per epoch from [(epoch, w, loss), ...]."""
    frame = pd.DataFrame(history, columns=["epoch", "w", "loss"])
    return alt.Chart(frame).mark_line(point=True).encode(
        x=alt.X("epoch:Q", title=epoch_title), y=alt.Y("loss:Q", title=loss_title),
        tooltip=["epoch", alt.Tooltip("w:Q", format=".3f"), alt.Tooltip("loss:Q", format=".4f")],
    ).properties(height=220)


def mse(y_hat, y):
    """Mean squared error between two curves, as a float."""
    return float(((y_hat - y) ** 2).mean())


@functools.lru_cache(maxsize=1)
def default_data():
    """The chapter's seeded data set (computed once per process)."""
    return make_data(n_train=50, noise=0.5, seed=0)


def fit_spec(w, trained_w, labels):
    """Vega-Lite dict of the fit chart for plain inputs (cacheable): slider w, trained w or None."""
    data = default_data()
    curves = {"average": average_pooling(data), "nw": nw_predict(data, w)[0]}
    if trained_w is not None:
        curves["trained"] = nw_predict(data, trained_w)[0]
    return fit_chart(data, curves, dict(labels)).to_dict()


def weights_spec(w, row_title, col_title):
    """Vega-Lite dict of the test-by-train weight heatmap for one w (cacheable)."""
    data = default_data()
    return weights_chart(nw_predict(data, w)[1], data.x_test, data.x_train, row_title, col_title).to_dict()


def loss_spec(history, epoch_title, loss_title):
    """Vega-Lite dict of the loss curve for a tuple of (epoch, w, loss) steps (cacheable)."""
    return loss_chart(list(history), epoch_title, loss_title).to_dict()
