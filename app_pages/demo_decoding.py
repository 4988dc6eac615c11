"""Demo: what the trained translators rely on: BPE word pieces, greedy vs beam search, BLEU step by step."""

import sacrebleu
import streamlit as st

from course.app import decoding_ui as ui
from course.app.demo_ui import available_or_stop
from course.app.ui import labeler, tr
from course.translation import bleu_steps, decoding_views, demos

KEEP = "session"  # persist_state: widget values survive page switches
SIZES = (1, 2, 4, 8)  # beam sizes offered; 4 is what the evaluation and the Translate page use


def pieces_section(name):
    """Type English, see each word's pieces; follow one word's merges."""
    st.header(tr("decoding.pieces.header"))
    if not ui.reads_pieces(name):
        st.info(tr("decoding.pieces.whole_words"))
        return
    st.markdown(tr("decoding.pieces.body", merges=f"{ui.merge_count(name):,}"))
    st.markdown(tr("decoding.pieces.ai"))
    sentence = st.text_input(tr("decoding.pieces.input_label"), "I love AI.", key="demo_decoding_words",
                             max_chars=300, persist_state=KEEP)
    words = ui.word_pieces(name, sentence)
    if not words:
        st.warning(tr("demos.common.bad_sentence"))
        return
    ui.show_table(st, decoding_views.pieces_frame(words), "decoding.pieces", "demo_decoding_pieces_table")
    options = list(dict.fromkeys(w.word for w in words))
    split = [w.word for w in words if len(w.pieces) > 1]  # open on the first word read in several pieces
    word = st.selectbox(tr("decoding.pieces.word_label"), options, index=options.index(split[0]) if split else 0,
                        key="demo_decoding_word")
    chosen = next(w for w in words if w.word == word)
    ui.show_table(st, decoding_views.merges_frame(chosen), "decoding.pieces", "demo_decoding_merges_table")
    st.caption(tr("decoding.pieces.merges_caption"))


def beam_section(name, examples):
    """One shipped test sentence: the beam after every step, the final ranking, greedy beside it."""
    st.header(tr("decoding.beam.header"))
    settings = ui.settings(name)
    st.markdown(tr("decoding.beam.body", alpha=settings.beam_alpha,
                   source=tr(f"demos.common.alpha_source.{settings.source}")))
    left, right = st.columns([3, 1])
    english = [ex["en"] for ex in examples]
    default = english.index(decoding_views.DEFAULT_SENTENCE) if decoding_views.DEFAULT_SENTENCE in english else 0
    sentence = left.selectbox(tr("decoding.beam.sentence_label"), english, index=default,
                              key="demo_decoding_sentence")
    size = right.select_slider(tr("decoding.beam.size_label"), SIZES, 4, key="demo_decoding_beam",
                               persist_state=KEEP)
    trace = ui.beam_trace(name, sentence, size)
    for col, method, hyp in zip(st.columns(2), ("greedy", "beam"), (trace.greedy, trace.chosen)):
        col.markdown(tr(f"decoding.beam.{method}_line", k=size, text=hyp.text, log_prob=ui.signed(hyp.log_prob),
                        length=hyp.length, score=ui.signed(hyp.score(trace.alpha))))
    ui.show_table(st, decoding_views.beam_frame(trace), "decoding.beam", "demo_decoding_beam_table", height=320)
    st.caption(tr("decoding.beam.steps_caption"))
    st.subheader(tr("decoding.beam.final_header"))
    ui.show_table(st, decoding_views.final_frame(trace), "decoding.beam", "demo_decoding_final_table")
    st.markdown(tr("decoding.beam.after"))
    return next(ex for ex in examples if ex["en"] == sentence), trace


def bleu_section(example, trace):
    """BLEU of greedy's or the beam's output against the reference, each number shown, sacrebleu beside."""
    st.header(tr("decoding.bleu.header"))
    st.markdown(tr("decoding.bleu.body"))
    left, right = st.columns(2)
    method = left.radio(tr("decoding.bleu.output_label"), ("greedy", "beam"), horizontal=True,
                        format_func=labeler("decoding.bleu.outputs.{}"), key="demo_decoding_output",
                        persist_state=KEEP)
    n = right.radio(tr("decoding.bleu.n_label"), (1, 2, 3, 4), horizontal=True, key="demo_decoding_n",
                    persist_state=KEEP)
    output, reference = (trace.greedy if method == "greedy" else trace.chosen).text, example["reference"]
    steps = bleu_steps.sentence_steps(output, reference)
    st.markdown(tr("decoding.bleu.tokens", c=steps.hyp_len, r=steps.ref_len,
                   output=" ".join(bleu_steps.tokens_zh(output)), reference=" ".join(bleu_steps.tokens_zh(reference))))
    ui.show_table(left, decoding_views.ngram_frame(bleu_steps.ngram_table(output, reference, n)), "decoding.bleu",
                  "demo_decoding_ngram_table")
    ui.show_table(right, decoding_views.orders_frame(steps), "decoding.bleu", "demo_decoding_orders_table")
    short = steps.hyp_len < steps.ref_len
    st.markdown(tr("decoding.bleu.bp_short" if short else "decoding.bleu.bp_long", c=steps.hyp_len,
                   r=steps.ref_len, bp=f"{steps.brevity_penalty:.3f}"))
    ours, theirs = st.columns(2)
    ours.metric(tr("decoding.bleu.ours"), f"{steps.score:.2f}")
    theirs.metric(tr("decoding.bleu.sacrebleu"), f"{sacrebleu.sentence_bleu(output, [reference], tokenize='zh').score:.2f}")


def corpus_section(name, examples):
    """Corpus BLEU of the shipped examples step by step, beside sacrebleu.corpus_bleu and the reported test BLEU."""
    st.subheader(tr("decoding.corpus.header"))
    report = demos.read_bleu_report(name)
    hyps, refs = [ex["greedy"] for ex in examples], [ex["reference"] for ex in examples]
    steps = bleu_steps.corpus_steps(hyps, refs)
    st.markdown(tr("decoding.corpus.body", count=len(examples), test=report["num_sentences"],
                   greedy=f"{report['bleu']['greedy']:.1f}", beam=f"{report['bleu'].get('beam') or 0:.1f}"))
    ui.show_table(st, decoding_views.orders_frame(steps), "decoding.bleu", "demo_decoding_corpus_table")
    ours, theirs = st.columns(2)
    ours.metric(tr("decoding.corpus.ours", bp=f"{steps.brevity_penalty:.3f}"), f"{steps.score:.2f}")
    theirs.metric(tr("decoding.corpus.sacrebleu"), f"{sacrebleu.corpus_bleu(hyps, [refs], tokenize='zh').score:.2f}")


def beam_and_bleu(name, examples):
    """The beam on one sentence and the BLEU of its output: a fragment, so that the sentence, the beam size and
    the BLEU choices rerun these two sections only (the tokenizer's pieces and the corpus BLEU stay)."""
    bleu_section(*beam_section(name, examples))


st.title(tr("demos.nav.decoding"))
st.markdown(tr("decoding.intro"))
names = available_or_stop()
name = st.radio(tr("decoding.model_label"), names, index=len(names) - 1, format_func=labeler("demos.models.{}"),
                horizontal=True, key="demo_decoding_model", persist_state=KEEP)
pieces_section(name)
examples = decoding_views.report_examples(demos.read_bleu_report(name))
if not examples:
    st.info(tr("decoding.no_report", path=demos.bleu_path(name)))
    st.stop()
st.fragment(beam_and_bleu)(name, examples)
corpus_section(name, examples)
