"""Chapter 7's added sections (the shipped Transformer's training recipe, and what its attention relies on), and the
page's tables as cached views (Arrow tables, converted once per setting).

Streamlit widgets and layout only; the numbers come from course.translation.recipe_views
(the recipe read from the checkpoint, the head study shipped beside it).
"""

import pandas as pd
import pyarrow as pa
import streamlit as st

from course.app.chart_view import show_chart
from course.app.trained_ui import demo_links
from course.app.ui import current_lang, prose, tr
from course.common import pages_index
from course.common.arrow import arrow_table
from course.common.i18n import t
from course.lessons import ch07
from course.translation import demos, recipe_views

KEEP = "session"  # persist_state: widget values survive page switches
WARMUPS = (0, 60, 200, 400, 1000)  # the lab's 60 and the checkpoint's 400 among them


@st.cache_data(max_entries=4, show_spinner=False)
def recipe_of(stamp):
    """The checkpoint's recipe (cached per checkpoint file)."""
    return recipe_views.shipped_recipe(stamp[0])


schedule_spec = st.cache_data(max_entries=32, show_spinner=False)(recipe_views.schedule_spec)


@st.cache_data(max_entries=8, show_spinner=False)
def smoothing_view(epsilon, lang):
    """recipe_views.smoothing_view as an Arrow table (converted once, not on every rerun)."""
    return arrow_table(recipe_views.smoothing_view(epsilon, lang))


@st.cache_data(max_entries=4, show_spinner=False)
def study_views(stamp, lang):
    """(the study's figures the text names, gradient table, <bos> table (both Arrow), ablation heatmap) of the
    shipped head study, or None. stamp: the checkpoint's and the study file's versions (a new file is read again).
    Only what the page shows is kept: a cached value is unpickled on every rerun."""
    found = recipe_views.shipped_study()
    if found is None:
        return None
    figures = {k: found[k] for k in ("pairs", "characters", "accuracy", "loss")}
    return (figures, arrow_table(recipe_views.gradient_view(found, lang)),
            arrow_table(recipe_views.bos_view(found, lang)), recipe_views.ablation_spec(found, lang))


@st.cache_data(max_entries=256, show_spinner=False)
def norm_views(batch, scale, lang):
    """ch07.norm_tables for display: each table as ch07.margins_view's Arrow table (None stays None), converted
    once per setting, its row labels in the pandas metadata; keyed by plain values, as hashing the tables
    themselves cost more than showing them."""
    tables = ch07.norm_tables(batch, scale)
    views = {name: None if tables[name] is None else pa.Table.from_pandas(ch07.margins_view(tables[name], lang))
             for name in ("input", "layer", "batch")}
    return {**views, "moved": tables["moved"]}


@st.cache_data(max_entries=4, show_spinner=False)
def masks_table(lang):
    """Where Q, K and V come from in the three uses, and their masks, as an Arrow table in `lang`."""
    return arrow_table(pd.DataFrame({t(f"ch07.masks.col_{c}", lang): [t(f"ch07.masks.{u}_{c}", lang)
                                                                     for u in ch07.MASK_USES]
                                     for c in ("use", "q", "kv", "mask", "lens")}))


@st.cache_data(max_entries=64, show_spinner=False)
def decoding_view(steps, seed, lang):
    """ch07.incremental_check's table with headers in `lang`, as an Arrow table; its largest |Δ| and that column's
    header (converted once per setting, as on every rerun st.dataframe would convert a DataFrame)."""
    table = ch07.incremental_check(steps, seed=seed)
    names = ch07.decode_names(lang)
    return arrow_table(table.rename(columns=names)), names["max |Δ|"], \
        float(table["max |Δ|"].max())


def recipe_section():
    """The learning-rate schedule, label smoothing on a small example, the weight average, the lab's ablations."""
    prose("ch07.recipe.heading", "ch07.recipe.intro")
    if "transformer" not in demos.available_models():
        st.info(tr("ch07.recipe.missing"))
        return
    found = recipe_of(demos.checkpoint_stamp("transformer"))
    if found is None:
        st.info(tr("ch07.recipe.unrecorded"))
        return
    warmup = st.select_slider(tr("ch07.recipe.warmup_label"), WARMUPS, found["warmup"] if found["warmup"] in WARMUPS
                              else WARMUPS[-2], key="ch07_warmup", persist_state=KEEP)
    show_chart(st, schedule_spec(found["lr"], warmup, found["steps"], current_lang()), key="ch07_schedule")
    prose("ch07.recipe.schedule_after", "ch07.recipe.smoothing_intro", "ch07.recipe.smoothing_formula")
    st.dataframe(smoothing_view(found["label_smoothing"], current_lang()), hide_index=True, key="ch07_smoothing")
    prose("ch07.recipe.smoothing_after", "ch07.recipe.ema", "ch07.recipe.lab")
    st.page_link(pages_index.get("lab").path, label=tr("ch07.recipe.lab_link"), icon=":material/arrow_forward:")


def inside_section():
    """Where the decoder looks first, the one-hot layer 1 and its gradients, one head masked at a time."""
    prose("ch07.inside.heading")
    shipped = recipe_views.head_study.shipped_path()
    views = study_views((demos.checkpoint_stamp("transformer"), shipped.stat().st_mtime_ns), current_lang()) \
        if "transformer" in demos.available_models() and shipped.is_file() else None
    if views is None:
        st.info(tr("ch07.inside.missing"))
        return
    found, gradients, bos, ablation = views
    st.markdown(tr("ch07.inside.intro", pairs=found["pairs"], chars=found["characters"]))
    prose("ch07.inside.bos")
    st.dataframe(bos, hide_index=True, key="ch07_bos")
    prose("ch07.inside.saturated")
    st.dataframe(gradients, hide_index=True, key="ch07_gradients")
    st.caption(tr("ch07.inside.gradients_caption"))
    prose("ch07.inside.heads")
    show_chart(st, ablation, key="ch07_ablation")
    st.markdown(tr("ch07.inside.heads_after", accuracy=f"{100 * found['accuracy']:.1f}%", loss=f"{found['loss']:.3f}"))
    demo_links("demo_inside")
