"""Chapter 3: masked softmax, softmax as allocation, scoring functions, the sqrt(d_k) scale."""

import streamlit as st

from course.app.chart_view import show_chart
from course.app.experiment_ui import live_run, shipped
from course.app.ui import chapter_footer, current_lang, labeler, page_cache, remembered_tabs, tr
from course.lessons import ch03
from course.lessons.ch03 import masks, scaling_task, scaling_views

B, N_Q, N_K = 2, 3, 6  # the masked-softmax demo: examples, queries, keys
KEEP = "session"  # persist_state: widget values survive page switches

# Measurements and Vega-Lite dicts, cached on plain values (Altair charts are slow to build).
timings = page_cache(ch03.time_scorers)  # measured once per server process, again on the button
mask_spec = page_cache(ch03.mask_spec, max_entries=512)
temperature_specs = page_cache(ch03.temperature_specs, max_entries=128)
scale_spec = page_cache(ch03.scale_spec, max_entries=128)
preset_text = page_cache(masks.preset_text, max_entries=64)
shift_view = page_cache(ch03.shift_view, max_entries=64)
comparison_view = page_cache(ch03.comparison_view, max_entries=256)
timings_view = page_cache(ch03.timings_view, max_entries=8)
scale_table = page_cache(ch03.scale_table, max_entries=16)


@st.cache_data(max_entries=64, show_spinner=False)
def learning_view(token, d, lang, _results):
    """The section's view at width d (d=None: widths and body), cached on plain values: token, d, language."""
    if d is None:
        return scaling_views.learning_intro(_results, lang)
    return scaling_views.learning_view(_results, d, lang)


def mask_presets_section(seed):
    """Pick one of the two d2l examples; show the call, the scores and the masked weights."""
    st.subheader(tr("ch03.presets.header"))
    st.markdown(tr("ch03.presets.body"))
    name = st.radio(tr("ch03.presets.label"), tuple(masks.PRESETS), key="ch03_mask_preset", horizontal=True,
                    format_func=labeler("ch03.presets.{}"), persist_state=KEEP)
    st.code(masks.preset_call(name), language="python")
    st.code(preset_text(name, int(seed)), language=None)
    st.markdown(tr(f"ch03.presets.{name}_after"))


def masking_section():
    """Random scores, valid-length sliders and the masked weights per example."""
    st.header(tr("ch03.mask_header"))
    st.markdown(tr("ch03.mask_body"))
    seed = st.number_input(tr("ch03.seed_label"), 0, 9999, 0, key="ch03_seed", persist_state=KEEP)
    modes = {m: tr(f"ch03.mode_{m}") for m in ("example", "query")}
    mode = st.radio(tr("ch03.mode_label"), list(modes), key="ch03_len_mode", horizontal=True,
                    format_func=modes.get, persist_state=KEEP)
    cols = st.columns(B)
    if mode == "example":
        lens = [cols[b].slider(tr("ch03.len_example", b=b), 0, N_K, N_K - 2 * b, key=f"ch03_len_{b}",
                               persist_state=KEEP) for b in range(B)]
    else:
        lens = [[cols[b].slider(tr("ch03.len_query", b=b, i=i), 0, N_K, N_K - i - b, key=f"ch03_len_{b}_{i}",
                                persist_state=KEEP) for i in range(N_Q)] for b in range(B)]
    for b in range(B):
        show_chart(cols[b], mask_spec(seed, lens, b, N_Q, N_K, tr("ch03.example", b=b),
                                      tr("ch03.axis_key"), tr("ch03.axis_query")))
    weights = ch03.masked_weights(ch03.random_scores(B, N_Q, N_K, seed), lens)  # (B, n_q, n_k)
    st.metric(tr("ch03.zero_cells"), int((weights == 0).sum()))
    st.markdown(tr("ch03.zero_expected", n=ch03.expected_zero_count(lens, N_Q, N_K), k=N_K))
    mask_presets_section(seed)  # the d2l examples, with the same seed


def allocation_section():
    """Shift invariance, temperature and the softmax Jacobian."""
    st.header(tr("ch03.alloc_header"))
    st.markdown(tr("ch03.alloc_body"))
    shift = st.slider(tr("ch03.shift_label"), -200, 200, 0, key="ch03_shift", persist_state=KEEP)
    table, diff = shift_view(ch03.READING, shift, current_lang())
    st.dataframe(table, hide_index=True)
    st.metric(tr("ch03.shift_diff"), f"{diff:.2e}")
    st.markdown(tr("ch03.shift_after"))
    st.subheader(tr("ch03.temp_header"))
    st.markdown(tr("ch03.temp_body"))
    temp = st.slider(tr("ch03.temp_label"), 0.1, 5.0, 1.0, step=0.1, key="ch03_temperature", persist_state=KEEP)
    alpha = ch03.tempered(ch03.READING, temp)
    left, right = st.columns(2)
    left.metric(tr("ch03.max_weight"), f"{float(alpha.max()):.3f}")
    right.metric(tr("ch03.entropy"), f"{float(ch03.entropy(alpha)):.3f}")
    bars, jacobian = temperature_specs(temp, tr("ch03.axis_score"), tr("ch03.jacobian_title"))
    show_chart(left, bars)
    show_chart(right, jacobian)
    st.latex(r"\frac{\partial \alpha_i}{\partial z_j} = \alpha_i(\delta_{ij} - \alpha_j)")
    st.markdown(tr("ch03.jacobian_body"))


def scorers_section():
    """The comparison table with computed parameter counts, and measured timings."""
    st.header(tr("ch03.scorers_header"))
    st.markdown(tr("ch03.scorers_body"))
    cols = st.columns(3)
    d_q = cols[0].slider("d_q", 1, 64, 8, key="ch03_dq", persist_state=KEEP)
    d_k = cols[1].slider("d_k", 1, 64, 8, key="ch03_dk", persist_state=KEEP)
    hidden = cols[2].slider(tr("ch03.hidden_label"), 1, 64, 16, key="ch03_hidden", persist_state=KEEP)
    st.table(comparison_view(current_lang(), d_q, d_k, hidden), hide_index=True)
    st.markdown(tr("ch03.timing_body"))
    if st.button(tr("ch03.retime_button"), key="ch03_retime"):
        timings.clear()
    ms = timings()
    st.dataframe(timings_view(tuple(ms.items()), current_lang()), hide_index=True)
    slowest = max(ms, key=ms.get)  # the text's "usually" is checked against this run's figures
    st.markdown(tr("ch03.timing_slowest" if slowest == "additive" else "ch03.timing_other_slowest",
                   name=tr(f"ch03.scorer_{slowest}")))


def scale_section():
    """Variance, peakedness and gradient size of softmax(q.k) with and without 1/sqrt(d_k)."""
    st.header(tr("ch03.scale_header"))
    st.markdown(tr("ch03.scale_body"))
    d = st.select_slider("d_k", options=ch03.D_VALUES, value=64, key="ch03_d", persist_state=KEEP)
    st.table(scale_table(d, current_lang()), hide_index=True)
    versions = tuple((v, tr(f"ch03.col_{v}")) for v in ("unscaled", "scaled"))
    cols = st.columns(2)
    for i, m in enumerate(ch03.SCALE_MEASURES):
        show_chart(cols[i % 2], scale_spec(m, d, tr(f"ch03.measure_{m}"), versions), width="stretch")
    st.markdown(tr("ch03.scale_after"))


def learning_section():
    """One attention layer learns a lookup with and without 1/sqrt(d): loss curves and which gradient shrinks."""
    st.subheader(tr("ch03.learn.header"))
    token, results = shipped("scaling")
    st.markdown(learning_view(token, None, current_lang(), results)["body"])
    live = live_run("ch03_learn_live", tr("ch03.learn.run_button"), tr("ch03.learn.running"),
                    lambda progress: scaling_task.run(scaling_task.ScalingConfig(), progress))
    token, results = live or (token, results)
    widths = learning_view(token, None, current_lang(), results)["widths"]
    d = st.select_slider("d = d_k", options=widths, value=widths[-1], key="ch03_learn_d", persist_state=KEEP)
    view = learning_view(token, d, current_lang(), results)
    st.caption(tr("ch03.learn.live_caption" if live else "ch03.learn.shipped_caption", seconds=view["seconds"]))
    left, right = st.columns(2)
    show_chart(left, view["curve"], width="stretch")
    show_chart(right, view["by_width"], width="stretch")
    st.markdown(view["summary"])
    st.markdown(view["gradients"])
    st.table(view["table"], hide_index=True)  # ten columns: a table wraps their headers, a dataframe cut the last off


st.title(tr("ch03.title"))
st.markdown(tr("ch03.intro"))
masking_tab, allocation_tab, scorers_tab, scale_tab = remembered_tabs("ch03")  # one idea per screen
# Each experiment is a fragment: moving a widget reruns its own section, not the other tabs' (drawn all the same).
with masking_tab:
    st.fragment(masking_section)()
with allocation_tab:
    st.fragment(allocation_section)()
with scorers_tab:
    st.fragment(scorers_section)()
with scale_tab:  # the sqrt(d) measurements and the learning experiment that shows them matter
    st.fragment(scale_section)()
    st.fragment(learning_section)()
chapter_footer("ex01", "ex03")
