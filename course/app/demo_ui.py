"""Streamlit helpers shared by the demo pages: cached models, cached translations, messages.

Models are loaded once per checkpoint file (st.cache_resource, keyed on its path,
modification time and size) and never changed per session; translations are
cached as data (st.cache_data), so every session gets its own copy of the
attention maps. Decoding itself is serialised by course.translation.decoding's lock.
"""

import time

import streamlit as st

from course.app.ui import tr
from course.common import charts
from course.translation import demos
from course.translation.models import MODEL_NAMES
from course.translation.checkpoint import load_checkpoint
from course.translation.decoding import translate
from course.translation.vocab import UNK, tokenize_en


_LOADED = set()  # checkpoint stamps whose model this process has loaded (st.cache_resource holds them)


@st.cache_resource(max_entries=6, show_spinner=False)
def _load(path, mtime_ns, size):
    """The reference model of one checkpoint file (shared by every session; read-only)."""
    loaded = load_checkpoint(path)
    _LOADED.add((path, mtime_ns, size))
    return loaded


def loaded_model(name):
    """The reference LoadedModel for `name` (the checkpoint must exist)."""
    return _load(*demos.checkpoint_stamp(name))


def load_models(names):
    """{name: LoadedModel}; when some still have to be loaded, a status line says so, then how long it took."""
    stamps = {name: demos.checkpoint_stamp(name) for name in names}
    if all(stamp in _LOADED for stamp in stamps.values()):
        return {name: _load(*stamp) for name, stamp in stamps.items()}
    start = time.perf_counter()
    with st.status(tr("demos.common.loading", count=len(names)), expanded=False) as status:
        models = {name: _load(*stamp) for name, stamp in stamps.items()}
        status.update(label=tr("demos.common.loaded", count=len(names), seconds=f"{time.perf_counter() - start:.1f}"),
                      state="complete")
    return models


@st.cache_data(max_entries=256, show_spinner=False)
def _translate(path, mtime_ns, size, sentence, top_k, beam_size=1):
    """Translation of one sentence by one checkpoint (a per-session copy)."""
    loaded = _load(path, mtime_ns, size)
    return translate(loaded.model, sentence, loaded.src_vocab, loaded.tgt_vocab, top_k=top_k, beam_size=beam_size)


def translation(name, sentence, top_k=5, beam_size=1):
    """The reference model `name`'s translation of `sentence` (with attention), greedy or by beam search
    with the decoding settings its checkpoint records."""
    return _translate(*demos.checkpoint_stamp(name), sentence, top_k, beam_size)


def model_label(name):
    """The model's display name in the current language."""
    return tr(f"demos.models.{name}")


def show_missing(names):
    """A clear note and the exact training command for each missing checkpoint (not an error)."""
    for name in names:
        st.info(tr("demos.common.missing", model=model_label(name), path=demos.checkpoint_path(name),
                   minutes=demos.shipped_minutes(name)))
        st.code(demos.shipped_command(name), language="bash")


def available_or_stop():
    """The names of the models whose checkpoints exist; with none, the page says how to train each and stops."""
    names = demos.available_models()
    if not names:
        st.info(tr("demos.common.missing_all", dir=demos.checkpoint_dir()))
        show_missing(MODEL_NAMES)
        st.stop()
    return names


def sentence_input(key, examples=()):
    """The English text box; returns the sentence, or None (with a message) if it has no words.

    With `examples`, a picker above it (key `<key>_example`) copies the chosen one into the box.
    """
    if examples:
        def use_example():
            st.session_state[key] = st.session_state[f"{key}_example"]

        st.session_state.setdefault(key, tr("demos.common.default_sentence"))
        st.selectbox(tr("demos.common.examples_label"), examples, index=None, key=f"{key}_example",
                     placeholder=tr("demos.common.examples_placeholder"), on_change=use_example)
        sentence = st.text_input(tr("demos.common.sentence_label"), key=key, max_chars=300, persist_state="session")
    else:  # the typed sentence survives a visit to another page (persist_state)
        sentence = st.text_input(tr("demos.common.sentence_label"), tr("demos.common.default_sentence"), key=key,
                                 max_chars=300, persist_state="session")
    if not tokenize_en(sentence):
        st.warning(tr("demos.common.bad_sentence"))
        return None
    return english_only_note(sentence)


def english_only_note(sentence):
    """Say that the translators read English only when the sentence has other characters (Chinese, emoji);
    -> the sentence, or None when it has no English word to translate at all."""
    foreign = demos.non_english_characters(sentence)
    if not foreign:
        return sentence
    english = demos.has_english_word(sentence)
    st.warning(tr("demos.common.english_only_mixed" if english else "demos.common.english_only",
                  chars=" ".join(foreign[:12])))
    return sentence if english else None


def note_unknown(sentence, translation_):
    """Say which source words the model cannot read (whole or in part: <unk>) and mark them in the source;
    show the word pieces when the model reads some word in pieces; say what an <unk> in the output means."""
    words = translation_.unknown_words
    if words:
        st.warning(tr("demos.common.unk_note", words=", ".join(f"`{w}`" for w in words)))
        st.markdown(tr("demos.common.unk_source", tokens=demos.marked_source(translation_)))
    elif demos.reads_pieces(translation_):
        st.caption(tr("demos.common.pieces_note", tokens=demos.marked_source(translation_)))
    if UNK in translation_.tokens:
        st.caption(tr("demos.common.unk_output"))


def decoding_note(result):
    """How a translation was decoded, in a sentence: the beam, its alpha and where alpha came from, the guard."""
    d = result.decoding
    guard = (tr("demos.common.guard_on", n=d["no_repeat_ngram"]) if d.get("no_repeat_ngram")
             else tr("demos.common.guard_off"))
    if d.get("method") != "beam":
        return tr("demos.common.decoding_greedy", guard=guard)
    return tr("demos.common.decoding_beam", size=d["beam_size"], alpha=f"{d['alpha']:g}",
              source=tr(f"demos.common.alpha_source.{d['alpha_source']}"), guard=guard)


MAX_LABELLED = 12  # rows or columns up to which each cell shows its weight (wider grids would squeeze them)


def attention_heatmap(frame, title, x_title, y_title):
    """An attention matrix (rows: queries, columns: keys) as a heatmap's Vega-Lite dict."""
    return _heatmap_spec(frame, title, x_title, y_title, tr("demos.translate.value_title"))


@st.cache_data(max_entries=64, show_spinner=False)
def _heatmap_spec(frame, title, x_title, y_title, value_title):
    """attention_heatmap's dict, built once per matrix and texts: a page reruns on every widget move, and building
    an Altair chart costs tens of ms."""
    return charts.heatmap(frame, title=title, x_title=x_title, y_title=y_title, value_title=value_title,
                          domain=[0, 1], show_values=max(frame.shape) <= MAX_LABELLED).to_dict()
