"""Chapter 13: attention sinks and sliding windows, measured on the shipped Transformer's decoder."""

import streamlit as st

from course.app.chart_view import show_chart
from course.app.ui import chapter_footer, current_lang, next_chapter, page_cache, prose, tr
from course.translation import demos, sinks, sinks_views

KEEP = "session"  # persist_state: widget values survive page switches

sink_view = page_cache(sinks_views.sink_view, max_entries=64)
mask_spec = page_cache(sinks_views.mask_spec, max_entries=64)
sweep_spec = page_cache(sinks_views.sweep_spec, max_entries=8)


@st.cache_data(max_entries=2)
def shipped(mtime_ns):
    """The shipped sweep (checkpoints/transformer.sinks.json), read again when the file changes."""
    return sinks.load_shipped()


def signed(value, digits):
    """A change as text with its sign: '+0.123' / '-1.2'."""
    return f"{value:+.{digits}f}"


@st.fragment
def chosen_section(found):
    """The slider and the toggle, the mask they make, and what the shipped model does with it."""
    prose("ch13.try.heading", "ch13.try.body")
    sizes = sinks_views.slider_sizes(found)
    left, right = st.columns(2)
    size = left.slider(tr("ch13.try.size"), sizes[0], sizes[-1], min(4, sizes[-1]), key="ch13_size",
                       persist_state=KEEP)
    keep_sink = right.toggle(tr("ch13.try.keep_sink"), value=True, key="ch13_keep_sink", persist_state=KEEP)
    lang = current_lang()
    show_chart(st, mask_spec(size, keep_sink, lang), key="ch13_mask")
    row, full = sinks_views.readout(found, size, keep_sink)
    cols = st.columns(4)
    cols[0].metric(tr("ch13.try.loss"), f"{row['loss']:.3f}", signed(row["loss"] - full["loss"], 3),
                   delta_color="inverse")
    cols[1].metric(tr("ch13.try.perplexity"), f"{row['perplexity']:.2f}",
                   signed(row["perplexity"] - full["perplexity"], 2), delta_color="inverse")
    cols[2].metric(tr("ch13.try.bleu"), f"{row['bleu']:.1f}", signed(row["bleu"] - full["bleu"], 1))
    cols[3].metric(tr("ch13.try.sink"), f"{sinks_views.sink_mean(row):.3f}",
                   signed(sinks_views.sink_mean(row) - sinks_views.sink_mean(full), 3), delta_color="off")
    st.caption(tr("ch13.try.caption", full_loss=f"{full['loss']:.3f}", full_bleu=f"{full['bleu']:.1f}"))
    st.dataframe(sink_view(found, size, keep_sink, lang), hide_index=True, key="ch13_sink_table")


def sweep_section(found, figures):
    """Loss and BLEU against the window size, without and with the sink, and what the numbers show."""
    prose("ch13.sweep.heading")
    lang = current_lang()
    st.markdown(tr("ch13.sweep.body", **figures))
    left, right = st.columns(2)
    show_chart(left, sweep_spec(found, "loss", lang), key="ch13_loss_chart")
    show_chart(right, sweep_spec(found, "bleu", lang), key="ch13_bleu_chart")
    st.markdown(tr("ch13.sweep.evicted", **figures))
    st.markdown(tr("ch13.sweep.window", **figures))
    st.markdown(tr("ch13.sweep.control", **figures))
    st.markdown(tr("ch13.sweep.bleu", **figures))
    st.markdown(tr("ch13.sweep.mass", **figures))
    st.markdown(tr("ch13.limits.body", **figures))


st.title(tr("ch13.title"))
st.markdown(tr("ch13.intro"))
path = sinks.shipped_path()
found = shipped(path.stat().st_mtime_ns) if path.is_file() and "transformer" in demos.available_models() else None
if found is None:
    st.info(tr("ch13.missing"))
else:
    figures = sinks_views.claims(found, current_lang())
    st.header(tr("ch13.setup.heading"))
    st.markdown(tr("ch13.setup.body", **figures))
    chosen_section(found)
    sweep_section(found, figures)
chapter_footer("ex07")
next_chapter("ch13", "ch14")
