"""Chapter 2: attention cues, queries/keys/values and Nadaraya-Watson regression."""

import pandas as pd
import streamlit as st

from course.app.chart_view import show_chart
from course.app.ui import chapter_footer, page_cache, tr
from course.lessons import ch02

KEEP = "session"  # persist_state: widget values survive page switches


@st.cache_data(max_entries=256)
def predictions(w):
    """Nadaraya-Watson predictions on the test grid for one kernel width."""
    return ch02.nw_predict(ch02.default_data(), w)[0]


def curve_labels():
    """Legend names of the curves in the current language, as a hashable tuple of pairs."""
    return tuple((name, tr(f"ch02.curve_{name}")) for name in ("truth", "average", "nw", "trained"))


# Building an Altair chart costs tens of ms; the Vega-Lite dicts are cached on plain values.
fit_spec = page_cache(ch02.fit_spec, max_entries=256)
weights_spec = page_cache(ch02.weights_spec, max_entries=256)
loss_spec = page_cache(ch02.loss_spec, max_entries=16)


st.title(tr("ch02.title"))
st.markdown(tr("ch02.intro"))
st.header(tr("ch02.cues_header"))
st.markdown(tr("ch02.cues_body"))
st.header(tr("ch02.qkv_header"))
st.markdown(tr("ch02.qkv_body"))
st.latex(r"f(\mathbf{q}) = \sum_{i=1}^{n} \alpha(\mathbf{q}, \mathbf{k}_i)\, \mathbf{v}_i,"
         r"\qquad \alpha(\mathbf{q}, \mathbf{k}_i) \ge 0,\ \sum_i \alpha(\mathbf{q}, \mathbf{k}_i) = 1")
st.markdown(tr("ch02.pooling_body"))
st.markdown(tr("ch02.library_body"))
st.markdown(tr("ch02.heatmap_body"))

st.header(tr("ch02.nw_header"))
st.markdown(tr("ch02.nw_body"))
st.latex(r"f(x) = \sum_{i=1}^{n} \operatorname{softmax}_i\!\left(-\tfrac{1}{2}\big((x - x_i)\,w\big)^2\right) y_i")
d = ch02.default_data()


def nw_section(drawn):
    """The kernel width w, the two errors, the fit and the weights: a fragment, so that a move of w reruns this
    section only; drawn["fit"] is the fit chart's element, which training redraws."""
    w = st.slider(tr("ch02.w_label"), 0.1, 20.0, 1.0, step=0.1, key="ch02_w", help=tr("ch02.w_help"),
                  persist_state=KEEP)
    history = st.session_state.get("ch02_history")
    cols = st.columns(3)
    cols[0].metric(tr("ch02.mse_average"), f"{ch02.mse(ch02.average_pooling(d), d.y_truth):.4f}")
    cols[1].metric(tr("ch02.mse_nw", w=f"{w:.1f}"), f"{ch02.mse(predictions(w), d.y_truth):.4f}")
    if history:
        cols[2].metric(tr("ch02.mse_trained", w=f"{history[-1][1]:.3f}"),
                       f"{ch02.mse(predictions(history[-1][1]), d.y_truth):.4f}")
    # Drawn straight on the page, not in an st.empty slot: a slot is sent empty on every rerun, which makes the
    # browser draw its chart anew; this way a move of w updates the curves in place.
    drawn["fit"] = show_chart(st, fit_spec(w, history[-1][1] if history else None, curve_labels()), width="stretch")
    st.subheader(tr("ch02.weights_header"))
    st.markdown(tr("ch02.weights_body"))
    show_chart(st, weights_spec(w, tr("ch02.axis_queries"), tr("ch02.axis_keys")), width="stretch")


drawn = {}
st.fragment(nw_section)(drawn)
w = st.session_state["ch02_w"]
history = st.session_state.get("ch02_history")

st.header(tr("ch02.train_header"))
st.markdown(tr("ch02.train_body"))
left, right = st.columns(2)
epochs = left.slider(tr("ch02.epochs_label"), 1, 50, ch02.DEFAULT_EPOCHS, key="ch02_epochs", persist_state=KEEP)
lr = right.select_slider(tr("ch02.lr_label"), options=[0.05, 0.1, 0.2, 0.5, 1.0, 2.0], value=ch02.DEFAULT_LR,
                         key="ch02_lr", persist_state=KEEP)
if st.button(tr("ch02.train_button"), key="ch02_train"):
    history, loss_slot = [], st.empty()
    for step in ch02.train_w_steps(d, epochs=epochs, lr=lr, seed=0):
        history.append(step)
        if step[0] % max(1, epochs // 10) == 0 or step[0] == epochs:  # about ten redraws while it trains
            show_chart(loss_slot, ch02.loss_spec(history, tr("ch02.axis_epoch"), tr("ch02.axis_loss")),
                       width="stretch")
            show_chart(drawn["fit"], ch02.fit_spec(w, step[1], curve_labels()), width="stretch", describe=False)
    st.session_state["ch02_history"], st.session_state["ch02_trained_with"] = history, (epochs, lr)
    st.rerun()  # the page again, with the trained curve and its summary
if history:
    show_chart(st, loss_spec(tuple(history), tr("ch02.axis_epoch"), tr("ch02.axis_loss")), width="stretch")
    st.markdown(tr("ch02.train_result", w=f"{history[-1][1]:.3f}", loss=f"{history[-1][2]:.4f}",
                   epochs=len(history)))
    trained_epochs, trained_lr = st.session_state.get("ch02_trained_with", (len(history), lr))
    if (trained_epochs, trained_lr) != (epochs, lr):  # the sliders moved since: the result is not theirs
        st.warning(tr("ch02.train_stale", epochs=trained_epochs, lr=trained_lr, now_epochs=epochs, now_lr=lr))

st.header(tr("ch02.bmm_header"))
st.markdown(tr("ch02.bmm_body"))
shapes = ch02.bmm_shapes(d, w)
st.table(pd.DataFrame({tr("ch02.col_tensor"): [n for n, _ in shapes],
                       tr("ch02.col_shape"): [str(s) for _, s in shapes]}))
st.markdown(tr("ch02.bmm_after", n=len(d.x_train), k=len(d.x_train) - 1))

chapter_footer("ex02")
