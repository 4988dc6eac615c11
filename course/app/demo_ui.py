"""Streamlit helpers shared by the demo pages: cached models, cached translations, messages.

Models are loaded once per checkpoint file (st.cache_resource, keyed on its path,
modification time and size) and never changed per session; translations are
cached as data (st.cache_data), so every session gets its own copy of the
attention maps. Decoding itself is serialised by course.translation.decoding's lock.
"""

import streamlit as st

from course.app.ui import tr
from course.common import charts
from course.translation import demos
from course.translation.checkpoint import load_checkpoint
from course.translation.decoding import translate
from course.translation.vocab import UNK, tokenize_en


@st.cache_resource(max_entries=6, show_spinner=False)
def _load(path, mtime_ns, size):
    """The reference model of one checkpoint file (shared by every session; read-only)."""
    return load_checkpoint(path)


def loaded_model(name):
    """The reference LoadedModel for `name` (the checkpoint must exist)."""
    return _load(*demos.checkpoint_stamp(name))


@st.cache_data(max_entries=256, show_spinner=False)
def _translate(path, mtime_ns, size, sentence, top_k):
    """Translation of one sentence by one checkpoint (a per-session copy)."""
    loaded = _load(path, mtime_ns, size)
    return translate(loaded.model, sentence, loaded.src_vocab, loaded.tgt_vocab, top_k=top_k)


def translation(name, sentence, top_k=5):
    """The reference model `name`'s translation of `sentence` (with attention)."""
    return _translate(*demos.checkpoint_stamp(name), sentence, top_k)


def model_label(name):
    """The model's display name in the current language."""
    return tr(f"demos.models.{name}")


def show_missing(names):
    """A clear note and the exact training command for each missing checkpoint (not an error)."""
    for name in names:
        st.info(tr("demos.common.missing", model=model_label(name), path=demos.checkpoint_path(name)))
        st.code(demos.train_command(name), language="bash")


def sentence_input(key):
    """The English text box; returns the sentence, or None (with a message) if it has no words."""
    sentence = st.text_input(tr("demos.common.sentence_label"), tr("demos.common.default_sentence"), key=key,
                             max_chars=300)
    if not tokenize_en(sentence):
        st.warning(tr("demos.common.bad_sentence"))
        return None
    return sentence


def note_unknown(sentence, translation_):
    """Say which words the model does not know (shown as <unk>)."""
    words = [w for w, shown in zip(tokenize_en(sentence), translation_.source_tokens) if shown == UNK]
    if words:
        st.caption(tr("demos.common.unk_note", words=", ".join(f"`{w}`" for w in words)))


def attention_heatmap(frame, title, x_title, y_title):
    """An attention matrix (rows: queries, columns: keys) as a heatmap chart."""
    return charts.heatmap(frame, title=title, x_title=x_title, y_title=y_title,
                          value_title=tr("demos.translate.value_title"), domain=[0, 1], show_values=False)
