"""Chapter 11: FlashAttention's tiling and the online softmax, checked against the reference and measured."""

import pandas as pd
import streamlit as st

from course.app.chart_view import show_chart
from course.app.ui import chapter_footer, current_lang, next_chapter, page_cache, prose, tr
from course.lessons import ch11

KEEP = "session"  # persist_state: widget values survive page switches
MAX_N = 200  # the n slider's top: a trace of one row per key stays readable
MAX_BLOCK = 64
MEASURED = "ch11_measured"  # session key of the learner's timing: (n, {computation: ms})

# Everything computed here is cached on plain values: the page reruns on every slider move.
difference_rows = page_cache(ch11.difference_rows, max_entries=256)
trace_scores = page_cache(ch11.trace_scores, max_entries=256)
memory_table = page_cache(ch11.memory_table)  # counted once per server process
memory_spec = page_cache(ch11.memory_spec, max_entries=8)


def number(value):
    """A float for a table cell, as text (a table widget shows None for a missing value): 4 decimals, or '–'."""
    return "–" if value is None else f"{value:.4f}"


def listed(items):
    """Block sizes as one phrase in the learner's language: '4, 16 and 64' / '4、16 和 64'."""
    words = [str(item) for item in items]
    if len(words) == 1:
        return words[0]
    if current_lang() == "zh":
        return "、".join(words[:-1]) + " 和 " + words[-1]
    return ", ".join(words[:-1]) + " and " + words[-1]


def sliders():
    """The experiment's heading and its two sliders -> (n, block); n need not be a multiple of the block."""
    prose("ch11.trace.heading", "ch11.trace.body")
    left, right = st.columns(2)
    n = left.slider(tr("ch11.trace.n"), 1, MAX_N, 100, key="ch11_n", persist_state=KEEP)
    block = right.slider(tr("ch11.trace.block"), 1, MAX_BLOCK, 16, key="ch11_block", persist_state=KEEP)
    return n, block


def trace_section(n, block):
    """One query row through the blocks: block max, running max m, the rescale factor and running sum l."""
    query, scores = trace_scores(n, block)
    rows, m, l = ch11.row_trace(scores, block)  # noqa: E741
    st.caption(tr("ch11.trace.query", query=query, grown=sum(row["rescale"] is not None and row["rescale"] < 1
                                                            for row in rows)))
    st.dataframe(pd.DataFrame({
        tr("ch11.trace.col_block"): [row["block"] for row in rows],
        tr("ch11.trace.col_keys"): [f"{row['first']}–{row['last']}" for row in rows],
        tr("ch11.trace.col_block_max"): [number(row["block_max"]) for row in rows],
        tr("ch11.trace.col_m"): [number(row["m"]) for row in rows],
        tr("ch11.trace.col_rescale"): [number(row["rescale"]) for row in rows],
        tr("ch11.trace.col_l"): [number(row["l"]) for row in rows],
    }), hide_index=True)
    whole_max = float(scores.max())
    whole_sum = float((scores - whole_max).exp().sum())  # chapter 3's denominator, the whole row at once
    cols = st.columns(4)
    cols[0].metric(tr("ch11.trace.m_final"), f"{m:.6f}")
    cols[1].metric(tr("ch11.trace.max_row"), f"{whole_max:.6f}")
    cols[2].metric(tr("ch11.trace.l_final"), f"{l:.6f}")
    cols[3].metric(tr("ch11.trace.sum_row"), f"{whole_sum:.6f}")


def tiled_section(n, block):
    """tiled_attention against the reference DotProductAttention for three masks: the difference table."""
    prose("ch11.tiled.heading", "ch11.tiled.body")
    rows = difference_rows(n, block)
    st.dataframe(pd.DataFrame({
        tr("ch11.tiled.col_case"): [tr(f"ch11.tiled.case_{row['case']}") for row in rows],
        tr("ch11.tiled.col_blocks"): [row["blocks"] for row in rows],
        tr("ch11.tiled.col_last"): [row["last"] for row in rows],
        tr("ch11.tiled.col_diff"): [f"{row['diff']:.1e}" for row in rows],
    }), hide_index=True)
    st.metric(tr("ch11.tiled.largest"), f"{max(row['diff'] for row in rows):.1e}")
    st.markdown(tr("ch11.tiled.after", tolerance=ch11.TOLERANCE))


def memory_section():
    """Peak tensor memory of the reference and the tiled version against n, counted with chapter 10's counter."""
    st.header(tr("ch11.memory.heading"))
    st.markdown(tr("ch11.memory.body", d=ch11.MEMORY_D, block=ch11.MEMORY_BLOCK))
    table = memory_table()
    texts = {v: tr(f"ch11.memory.{v}") for v in ch11.VARIANTS}
    texts.update(title=tr("ch11.memory.title"), x=tr("ch11.memory.x"), y=tr("ch11.memory.y"),
                 variant=tr("ch11.memory.variant"))
    rows = tuple(zip(table["n"].tolist(), table["variant"].tolist(), table["mib"].round(4).tolist()))
    show_chart(st, memory_spec(rows, texts), width="stretch")
    st.markdown(tr("ch11.memory.after", **ch11.memory_claims(table)))


def speed_section():
    """On the button: the time of the reference and of the tiled loop at several block sizes, and what it means."""
    st.header(tr("ch11.speed.heading"))
    st.markdown(tr("ch11.speed.body", n=ch11.TIME_N, d=ch11.MEMORY_D, repeats=ch11.TIME_REPEATS))
    if st.button(tr("ch11.speed.button"), key="ch11_measure"):
        with st.spinner(tr("ch11.speed.running")):
            st.session_state[MEASURED] = (ch11.TIME_N, ch11.time_calls())
    if MEASURED not in st.session_state:
        st.caption(tr("ch11.speed.not_yet"))
        return
    n, ms = st.session_state[MEASURED]
    blocks = [key for key in ms if key != "full"]
    names = [tr("ch11.speed.reference")] + [tr("ch11.speed.tiled_block", block=b) for b in blocks]
    figures = [round(ms[key], 1) for key in ("full", *blocks)]
    st.dataframe(pd.DataFrame({tr("ch11.speed.col_version"): names, tr("ch11.speed.col_ms"): figures}), hide_index=True)
    st.caption(tr("ch11.speed.measured", n=n))
    verdict, slower, faster = ch11.speed_verdict(ms)
    st.markdown(tr(f"ch11.speed.{verdict}", slower=listed(slower), faster=listed(faster),
                   smallest=min(blocks), matrix_mib=ch11.matrix_mib(n), n=n))


st.title(tr("ch11.title"))
st.markdown(tr("ch11.intro"))
prose("ch11.online.heading", "ch11.online.body", "ch11.online.formula_step", "ch11.online.after")
n, block = sliders()
trace_section(n, block)
tiled_section(n, block)
memory_section()
speed_section()
chapter_footer("ex10", "ex01", "ex03")
next_chapter("ch11", "ch12")
