"""Streamlit side of the Pieces, beams and BLEU page: cached word pieces and beam traces, tables in the
learner's language. The numbers come from course.translation (subword_steps, beam_steps, bleu_steps)."""

import streamlit as st

from course.app.demo_ui import loaded_model
from course.app.ui import tr
from course.lessons.torch_threads import cpu_threads
from course.translation import demos, subword_steps
from course.translation.beam_steps import trace_beam
from course.translation.decoding import settings_of
from course.translation.subword import SubwordVocab


@st.cache_resource(max_entries=6, show_spinner=False)
def _ranks(path, mtime_ns, size, name):
    """The learned BPE merges of one checkpoint's source vocabulary (shared, read-only)."""
    return subword_steps.merge_ranks(loaded_model(name).src_vocab)


def reads_pieces(name):
    """True when the model reads English in BPE pieces (a model trained with --src-subword 0 reads words)."""
    return isinstance(loaded_model(name).src_vocab, SubwordVocab)


def settings(name):
    """The decoding settings the model's checkpoint records (alpha, repetition guard)."""
    return settings_of(loaded_model(name).model)


def merge_count(name):
    """How many merges the model's tokenizer learned."""
    return len(_ranks(*demos.checkpoint_stamp(name), name))


@st.cache_data(max_entries=64, show_spinner=False)
def _pieces(stamp, name, sentence):
    """[WordPieces] of a sentence under one checkpoint's tokenizer."""
    return subword_steps.sentence_pieces(sentence, loaded_model(name).src_vocab, _ranks(*stamp, name))


def word_pieces(name, sentence):
    """The sentence's words as `name` reads them, with their merges."""
    return _pieces(demos.checkpoint_stamp(name), name, sentence)


@st.cache_data(max_entries=64, show_spinner=False)
def _trace(stamp, name, sentence, beam_size):
    """The BeamTrace of one sentence by one checkpoint (its own alpha and repetition guard)."""
    loaded = loaded_model(name)
    with cpu_threads(1):  # batch of 1: many small ops, faster on one thread (and it leaves a core free)
        return trace_beam(loaded.model, sentence, loaded.src_vocab, loaded.tgt_vocab, beam_size=beam_size)


def beam_trace(name, sentence, beam_size):
    """Beam search of `sentence` by `name`, step by step, with greedy's output beside it."""
    return _trace(demos.checkpoint_stamp(name), name, sentence, beam_size)


def show_table(container, frame, prefix, key, **kwargs):
    """A table whose column `c` is headed by the catalog text `<prefix>.col_<c>`."""
    container.dataframe(frame.rename(columns={c: tr(f"{prefix}.col_{c}") for c in frame.columns}),
                        hide_index=True, key=key, **kwargs)


def signed(value, digits=3):
    """A number with a real minus sign (−1.234), as the text writes it."""
    return f"{value:.{digits}f}".replace("-", "−")
