"""Chapter 10: variants of attention, and the measured cost of full vs linear attention."""

import time

import pandas as pd
import streamlit as st

from course.app import learner
from course.app.chart_view import show_chart
from course.app.ui import chapter_footer, current_lang, labeler, page_cache, prose, tr
from course.lessons import ch03, ch10

KEEP = "session"  # persist_state: widget values survive page switches
MEASURED = "ch10_measured"  # session key of the learner's own measurement: (table, seconds)

shipped = page_cache(ch10.load_shipped)  # read once
cost_spec = page_cache(ch10.cost_spec, max_entries=32)
positions_view = page_cache(ch10.positions_view, max_entries=128)
positions_claims = page_cache(ch10.positions_claims)


def scarce_section():
    """Raise one score: the weights of the others fall, the total stays 1."""
    prose("ch10.scarce.heading", "ch10.scarce.body")
    boost = st.slider(tr("ch10.scarce.boost"), 0.0, 5.0, 2.0, 0.5, key="ch10_boost", persist_state=KEEP)
    scores = list(ch03.READING)
    raised = [scores[0] + boost] + scores[1:]
    before, after = ch03.tempered(scores, 1.0), ch03.tempered(raised, 1.0)
    st.dataframe(pd.DataFrame({
        tr("ch10.scarce.col_item"): range(1, len(scores) + 1), tr("ch10.scarce.col_score"): raised,
        tr("ch10.scarce.col_before"): before.numpy().round(3), tr("ch10.scarce.col_after"): after.numpy().round(3),
    }), hide_index=True)
    st.metric(tr("ch10.scarce.total"), f"{float(after.sum()):.3f}")
    st.markdown(tr("ch10.scarce.after"))


def positions_section():
    """The same query and key at many positions: absolute sinusoids, RoPE, a distance bias."""
    prose("ch10.positions.heading", "ch10.positions.body", "ch10.rope.heading", "ch10.rope.intro")
    scheme = st.radio(tr("ch10.rope.scheme"), ch10.POSITION_SCHEMES, index=1, key="ch10_rope_scheme", horizontal=True,
                      format_func=labeler("ch10.rope.scheme_{}"), persist_state=KEEP)
    left, right = st.columns(2)
    d = left.select_slider(tr("ch10.rope.d"), (8, 16, 32, 64), 16, key="ch10_rope_d", persist_state=KEEP)
    shift = right.slider(tr("ch10.rope.shift"), 0, 40, 0, key="ch10_rope_shift", persist_state=KEEP)
    view = positions_view(current_lang(), scheme, d, shift)
    m1, m2 = st.columns(2)
    m1.metric(tr("ch10.rope.spread"), f"{view['spread']:.3g}")
    m2.metric(tr("ch10.rope.change", shift=shift), f"{view['change']:.3g}")
    show_chart(st, view["spec"])
    st.markdown(tr("ch10.rope.after", **positions_claims()))


def measure_now():
    """Measure both variants here, with a progress bar; keep the result in the session."""
    bar = st.progress(0.0)
    start = time.perf_counter()
    table = ch10.measure(on_step=lambda done, total: bar.progress(done / total, tr("ch10.long.progress", done=done,
                                                                                    total=total)))
    bar.empty()
    st.session_state[MEASURED] = (table, time.perf_counter() - start)


def cost_section():
    """Shipped figures (or the learner's own) as two log-scale charts and two ratios."""
    prose("ch10.long.heading", "ch10.long.body")
    st.markdown(tr("ch10.long.setup", d=ch10.NUM_HIDDENS))
    if st.button(tr("ch10.long.button"), key="ch10_measure"):
        measure_now()
    if MEASURED in st.session_state:
        table, seconds = st.session_state[MEASURED]
        st.caption(tr("ch10.long.measured", seconds=seconds))
    else:
        table, machine = shipped()
        st.caption(tr("ch10.long.shipped", **machine))
    texts = {v: tr(f"ch10.long.{v}") for v in ch10.VARIANTS}
    texts.update(x=tr("ch10.long.x"), variant=tr("ch10.long.variant"))
    left, right = st.columns(2)
    for col, column, name in ((left, "ms", "time"), (right, "mib", "memory")):
        rows = tuple(zip(table["n"].tolist(), table["variant"].tolist(), table[column].round(4).tolist()))
        show_chart(col, cost_spec(rows, column, dict(texts, title=tr(f"ch10.long.{name}_title"),
                                                     y=tr(f"ch10.long.y_{name}"))), width="stretch")
    n = int(table["n"].max())
    m1, m2 = st.columns(2)
    m1.metric(tr("ch10.long.ratio_time", n=n), f"{ch10.ratio(table, n, 'ms'):.1f}×")
    m2.metric(tr("ch10.long.ratio_memory", n=n), f"{ch10.ratio(table, n, 'mib'):.1f}×")
    st.markdown(tr("ch10.long.after"))


st.title(tr("ch10.title"))
st.markdown(tr("ch10.intro"))
scarce_section()
prose("ch10.kinds.heading", "ch10.kinds.body", "ch10.beyond.heading", "ch10.beyond.body",
      "ch10.stacks.heading", "ch10.stacks.body")
positions_section()
cost_section()
prose("ch10.strengths.heading", "ch10.strengths.body")  # the strengths of chapters 1-7 gathered, and the limits
chapter_footer("ex09")
st.page_link(learner.current().page("ch11").path, label=tr("ch10.next"), icon=":material/arrow_forward:")
