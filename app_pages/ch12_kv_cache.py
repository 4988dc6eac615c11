"""Chapter 12: the key/value cache timed on the shipped Transformer, its size, and grouped-query attention."""

import os
import platform

import pandas as pd
import streamlit as st

from course.app import demo_ui
from course.app.chart_view import show_chart
from course.app.ui import chapter_footer, next_chapter, page_cache, prose, tr
from course.lessons import ch12
from course.lessons.torch_threads import cpu_threads
from course.translation import demos, kv_study

KEEP = "session"  # persist_state: widget values survive page switches
MEASURED = "ch12_measured"  # session key of the learner's timing (kv_study.measure's result)
THREADS = 1  # torch threads of the timing: the page's machine is shared
SENTENCE = "Tom asked Mary why she had left the party so early."  # the source sentence the timing decodes

memory_spec = page_cache(ch12.memory_spec, max_entries=8)
timing_spec = page_cache(ch12.timing_spec, max_entries=8)


@st.cache_data(max_entries=4)
def _results(path, stamp):
    """kv_study.read_results of one version (stamp: mtime and size, None when missing) of the file."""
    return kv_study.read_results(path)  # a ValueError (missing, damaged) is not cached


def read_results():
    """The shipped grouped-head results, read again when the file changes; ValueError when missing or damaged."""
    path = kv_study.shipped_path()
    return _results(str(path), (path.stat().st_mtime_ns, path.stat().st_size) if path.is_file() else None)


def decode_section(loaded):
    """On the button: greedy decoding timed step by step three ways, the chart, and what it shows."""
    config = loaded.meta["config"]
    prose("ch12.decode.heading")
    st.markdown(tr("ch12.decode.body", steps=ch12.TIME_STEPS, repeats=ch12.TIME_REPEATS, sentence=SENTENCE))
    if st.button(tr("ch12.decode.button"), key="ch12_measure"):
        with st.spinner(tr("ch12.decode.running")), cpu_threads(THREADS):
            src, lens = kv_study.source_batch(SENTENCE, loaded.src_vocab)
            st.session_state[MEASURED] = kv_study.measure(loaded.model, src, lens, ch12.TIME_STEPS,
                                                          ch12.TIME_REPEATS)
    found = st.session_state.get(MEASURED)
    if found is None:
        st.caption(tr("ch12.decode.not_yet"))
        return
    rows = ch12.timing_rows(found["seconds"])
    texts = {s: tr(f"ch12.decode.{s}") for s in ch12.STRATEGIES}
    texts.update({k: tr(f"ch12.decode.chart.{k}") for k in ("title", "x", "y", "strategy")})
    show_chart(st, timing_spec(rows, texts), width="stretch")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    st.caption(tr("ch12.decode.measured", threads=THREADS, cores=cores, machine=platform.machine()))
    claims = ch12.timing_claims(found["seconds"])
    figures = {k: f"{v:.2f}" for k, v in claims.items() if k.endswith("_ms")}
    st.markdown(tr(f"ch12.decode.{claims['verdict']}", T=claims["T"], tail=claims["tail"], **figures,
                   recompute_ratio=f"{claims['recompute_ratio']:.1f}", inputs_ratio=f"{claims['inputs_ratio']:.1f}",
                   vocab=config["tgt_vocab_size"], clear=ch12.CLEAR_RATIO))
    same = "same" if found["same_tokens"] else "different"
    st.markdown(tr(f"ch12.decode.{same}", T=claims["T"], diff=f"{found['max_diff']:.1e}",
                   tolerance=f"{kv_study.AGREEMENT_TOLERANCE:.0e}"))


def memory_section(shipped):
    """The cache size against T for the shipped model (from its config) and published models."""
    prose("ch12.memory.heading", "ch12.memory.body", "ch12.memory.formula")
    st.markdown(tr("ch12.memory.sizes", published=len(ch12.PUBLISHED)))
    sizes = (shipped, *ch12.PUBLISHED)
    texts = {k: tr(f"ch12.memory.{k}") for k in ("title", "x", "y", "model")}
    show_chart(st, memory_spec(tuple(ch12.memory_rows(sizes)), texts), width="stretch")
    for row in ch12.memory_claims(sizes):
        if isinstance(row["source"], tuple):  # a paper: (first author, year, table)
            row["source"] = tr("ch12.memory.cite", **dict(zip(("author", "year", "table"), row["source"])))
        st.markdown(tr("ch12.memory.row_window" if row["window"] else "ch12.memory.row", **row))
    st.markdown(tr("ch12.memory.after"))


@st.fragment
def gqa_section(shipped):
    """The key/value head count on a select-slider: the cache it keeps and the shipped BLEU of each scope."""
    prose("ch12.gqa.heading", "ch12.gqa.body")
    try:
        results = read_results()
    except ValueError as err:  # missing or damaged: say which file and the command that writes it
        st.warning(str(err))
        return
    heads = results["num_heads"]
    if heads != shipped.heads:  # the checkpoint was replaced after the results were computed
        st.warning(tr("ch12.gqa.stale", heads=heads, checkpoint=shipped.heads))
        return
    kv_heads = st.select_slider(tr("ch12.gqa.slider"), options=kv_study.divisors(heads), value=heads,
                                key="ch12_kv_heads", persist_state=KEEP)
    figures = ch12.gqa_figures(shipped, results, kv_heads)
    cols = st.columns(3)
    cols[0].metric(tr("ch12.gqa.cache"), figures["cache"])
    cols[1].metric(tr("ch12.gqa.bleu_self"), f"{figures['bleu_self']:.1f}")
    cols[2].metric(tr("ch12.gqa.bleu_both"), f"{figures['bleu_both']:.1f}")
    after = "after_full" if kv_heads == heads else "after"
    st.markdown(tr(f"ch12.gqa.{after}", **{k: (f"{v:.1f}" if isinstance(v, float) else v) for k, v in figures.items()},
                   sentences=results["num_sentences"]))
    st.dataframe(pd.DataFrame(ch12.gqa_table(shipped, results), columns=[
        tr("ch12.gqa.col_heads"), tr("ch12.gqa.col_group"), tr("ch12.gqa.col_cache"), tr("ch12.gqa.col_self"),
        tr("ch12.gqa.col_both")]), hide_index=True)
    st.markdown(tr("ch12.gqa.limits", sentences=results["num_sentences"]))


st.title(tr("ch12.title"))
st.markdown(tr("ch12.intro"))
if "transformer" not in demos.available_models():
    st.info(tr("ch12.no_model"))
    st.stop()
loaded = demo_ui.loaded_model("transformer")
shipped = ch12.shipped_size(loaded.meta["config"], tr("ch12.memory.shipped"), source=tr("ch12.memory.shipped_source"))
decode_section(loaded)
memory_section(shipped)
gqa_section(shipped)
chapter_footer("ex11", "ex05", "ex07")
next_chapter("ch12", "ch13")
