"""Chapter 3's added section: the d2l masked-softmax examples as presets (widgets and layout only)."""

import streamlit as st

from course.app.ui import labeler, tr
from course.lessons import ch03_masks

KEEP = "session"  # persist_state: widget values survive page switches
preset_text = st.cache_data(max_entries=64)(ch03_masks.preset_text)


def mask_presets_section(seed):
    """Pick one of the two d2l examples; show the call, the scores and the masked weights."""
    st.subheader(tr("ch03.presets.header"))
    st.markdown(tr("ch03.presets.body"))
    name = st.radio(tr("ch03.presets.label"), tuple(ch03_masks.PRESETS), key="ch03_mask_preset", horizontal=True,
                    format_func=labeler("ch03.presets.{}"), persist_state=KEEP)
    st.code(ch03_masks.preset_call(name), language="python")
    st.code(preset_text(name, int(seed)), language=None)
    st.markdown(tr(f"ch03.presets.{name}_after"))
