"""Chapter 7: the Transformer: layout, add & norm, the three attention uses, incremental decoding."""

import streamlit as st

from course.app.chart_view import show_chart
from course.app.ch07_sections import decoding_view, inside_section, masks_table, norm_views, recipe_section
from course.app.trained_ui import attention_kinds
from course.app.ui import chapter_footer, current_lang, page_cache, prose, tr
from course.lessons import ch07

KEEP = "session"  # persist_state: widget values survive page switches
DIAGRAM_NODES = ("src", "tgt", "out", "src_emb", "tgt_emb", "enc_attn", "dec_self", "dec_cross", "linear",
                 "enc_ffn", "dec_ffn", "add_norm", "encoder", "decoder", "stack")

block_parameters = page_cache(ch07.block_parameters, max_entries=64)
ffn_gap = page_cache(ch07.ffn_positionwise_gap)
mask_spec = page_cache(ch07.mask_spec, max_entries=512)


def architecture_section():
    """The diagram with the stack depth, and parameter counts of the blocks."""
    prose("ch07.arch.heading", "ch07.arch.intro")
    cols = st.columns(4)
    layers = cols[0].slider(tr("ch07.arch.layers"), 1, 12, 6, key="ch07_layers", persist_state=KEEP)
    d = cols[1].select_slider("num_hiddens", (32, 64, 128, 256, 512), 512, key="ch07_d", persist_state=KEEP)
    ffn = cols[2].select_slider("ffn_num_hiddens", (64, 128, 256, 512, 1024, 2048), 2048,
                                key="ch07_ffn", persist_state=KEEP)
    heads = cols[3].select_slider("num_heads", (1, 2, 4, 8), 8, key="ch07_heads", persist_state=KEEP)
    # The figure names the depth N, as the paper's does: drawn again for each N, Graphviz's layout in the browser
    # took 0.4 s a move; the counts below take the slider's N.
    st.graphviz_chart(ch07.transformer_dot({n: tr(f"ch07.arch.node_{n}") for n in DIAGRAM_NODES}, "N"))
    st.caption(tr("ch07.arch.caption"))
    counts = block_parameters(d, ffn, heads)
    m = st.columns(4)
    for col, name in zip(m, ("encoder", "decoder", "ffn", "add_norm")):
        col.metric(tr(f"ch07.arch.count_{name}"), f"{counts[name]:,}")
    st.metric(tr("ch07.arch.count_stacks", n=layers), f"{layers * (counts['encoder'] + counts['decoder']):,}")
    prose("ch07.arch.count_after", "ch07.arch.ffn_text", "ch07.arch.ffn_formula")
    st.metric(tr("ch07.arch.ffn_gap"), f"{ffn_gap():.1e}")


def show_margins(container, view):
    """A norm_views table: labels in the learner's language, numbers right-aligned, corners blank."""
    container.dataframe(view, column_config={c: st.column_config.TextColumn(alignment="right")
                                             for c in view.column_names if not c.startswith("__index")})


def norm_section():
    """LayerNorm vs BatchNorm on a small batch, with per-row and per-column statistics."""
    prose("ch07.norm.heading", "ch07.norm.intro", "ch07.norm.formula")
    left, right = st.columns(2)
    batch = left.slider(tr("ch07.norm.batch"), 1, 8, 4, key="ch07_batch", persist_state=KEEP)
    scale = right.slider(tr("ch07.norm.scale"), 0.1, 100.0, 1.0, key="ch07_scale", persist_state=KEEP)
    tables = norm_views(batch, scale, current_lang())
    st.markdown(tr("ch07.norm.input"))
    show_margins(st.columns(2)[0], tables["input"])
    for col, name, label in zip(st.columns(2), ("layer", "batch"), ("layer", "batch_out")):
        col.markdown(tr(f"ch07.norm.{label}"))
        if tables[name] is None:
            col.warning(tr("ch07.norm.batch_one"))
        else:
            show_margins(col, tables[name])
    moved = tables["moved"]
    m = st.columns(2)
    m[0].metric(tr("ch07.norm.moved_layer"), f"{moved['layer']:.3g}")
    m[1].metric(tr("ch07.norm.moved_batch"), f"{moved['batch']:.3g}" if "batch" in moved else "—")
    st.markdown(tr("ch07.norm.after"))


def masks_section():
    """Where Q, K, V come from in the three uses, and their masks drawn from the reference rule."""
    prose("ch07.masks.heading", "ch07.masks.intro")
    st.table(masks_table(current_lang()), hide_index=True)
    cols = st.columns(3)
    src_len = cols[0].slider(tr("ch07.masks.src_len"), 2, 10, 6, key="ch07_src_len", persist_state=KEEP)
    src_valid = cols[1].slider(tr("ch07.masks.src_valid"), 1, 10, 4, key="ch07_src_valid", persist_state=KEEP)
    tgt_len = cols[2].slider(tr("ch07.masks.tgt_len"), 1, 10, 5, key="ch07_tgt_len", persist_state=KEEP)
    src_valid = min(src_valid, src_len)
    per_row = ch07.masks_per_row(max(src_len, tgt_len))  # side by side only while the cells keep their size
    slots = [col for _ in range(0, len(ch07.MASK_USES), per_row) for col in st.columns(per_row)]
    for col, use in zip(slots, ch07.MASK_USES):
        show_chart(col, mask_spec(use, src_len, src_valid, tgt_len, tr(f"ch07.masks.{use}_use"),
                                  tr("ch07.masks.axis_key"), tr("ch07.masks.axis_query")))
    st.markdown(tr("ch07.masks.after", valid=src_valid, pad=src_len - src_valid))


def decoding_section():
    """Teacher forcing in parallel vs one token at a time with the cache."""
    prose("ch07.decode.heading", "ch07.decode.intro")
    left, right = st.columns(2)
    steps = left.slider(tr("ch07.decode.steps"), 1, 12, 6, key="ch07_steps", persist_state=KEEP)
    seed = right.number_input(tr("ch07.decode.seed"), 0, 999, 0, key="ch07_seed", persist_state=KEEP)
    table, diff_column, max_diff = decoding_view(steps, seed, current_lang())
    st.dataframe(table, hide_index=True, column_config={diff_column: st.column_config.NumberColumn(format="%.1e")})
    st.metric(tr("ch07.decode.max_diff"), f"{max_diff:.1e}")
    st.markdown(tr("ch07.decode.after"))


def pitfalls_section():
    """A checklist of the usual mistakes, each with its reason."""
    prose("ch07.pitfalls.heading", "ch07.pitfalls.intro")
    done = 0
    for name in ch07.PITFALLS:
        done += st.checkbox(tr(f"ch07.pitfalls.{name}"), key=f"ch07_pitfall_{name}", persist_state=KEEP)
        with st.expander(tr("ch07.pitfalls.why")):
            st.markdown(tr(f"ch07.pitfalls.{name}_why"))
    st.progress(done / len(ch07.PITFALLS), text=tr("ch07.pitfalls.done", done=done, total=len(ch07.PITFALLS)))


st.title(tr("ch07.title"))
st.markdown(tr("ch07.intro"))
# Each experiment is a fragment: moving a widget reruns its own section, not the whole long page.
for section in (architecture_section, norm_section, masks_section, decoding_section):
    st.fragment(section)()
st.fragment(attention_kinds)("ch07_trained")
st.fragment(recipe_section)()
st.fragment(inside_section)()
pitfalls_section()
chapter_footer("ex07")
