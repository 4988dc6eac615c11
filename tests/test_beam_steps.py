"""Beam search step by step (course.translation.beam_steps) on small random Transformers.

Beam size 1 is greedy decoding; the trace is beam_search's own run (same output, hook or not); greedy's
log-probability equals the one a teacher-forced forward pass gives; the beam's choice scores at least
greedy's whenever greedy's output is still in the final beam (beam search drops hypotheses, so that is
all it guarantees; tests/test_claims_decoding.py shows a shipped sentence where greedy scores higher).
"""

import pytest
import torch

from course.lessons.torch_threads import cpu_threads
from course.translation.beam_steps import on_greedy_path, sequence_log_prob, trace_beam
from course.translation.decoding import DecodingSettings, beam_search, greedy_decode, source_tensor
from course.translation.models import build_model, config_class
from course.translation.vocab import BOS_ID, EOS_ID, Vocab

SRC_V, TGT_V = 23, 19
SRC_VOCAB = Vocab([f"w{i}" for i in range(SRC_V - 4)])
TGT_VOCAB = Vocab([chr(0x4E00 + i) for i in range(TGT_V - 4)])
SENTENCES = ["w1 w2 w3 w4 w5", "w7 w3", "w10 w11 w12 w13 w14 w15 w16", "w4"]


@pytest.fixture(autouse=True)
def one_thread():
    """One torch thread: batch-of-1 decoding of tiny models is many small ops (20 times faster on a busy machine)."""
    with cpu_threads(1):
        yield


def transformer(seed, alpha=0.6, n=0):
    """A small random Transformer with sharpened logits and the given decoding settings."""
    cfg = config_class("transformer")(SRC_V, TGT_V, num_hiddens=16, ffn_num_hiddens=32, num_heads=4,
                                      num_layers=2, dropout=0.0, max_len=64)
    torch.manual_seed(seed)
    model = build_model("transformer", cfg).eval()
    with torch.no_grad():
        model.decoder.dense.weight.mul_(4.0)
    model.decoding_settings = DecodingSettings(alpha, n, "validation")
    return model


@pytest.mark.parametrize("seed,n", [(0, 0), (1, 2), (2, 0)])
def test_beam_size_1_is_greedy_decoding(seed, n):
    model = transformer(seed, n=n)
    for sentence in SENTENCES:
        trace = trace_beam(model, sentence, SRC_VOCAB, TGT_VOCAB, beam_size=1)
        assert trace.chosen.ids == trace.greedy.ids
        assert trace.chosen.log_prob == pytest.approx(trace.greedy.log_prob, abs=1e-4)
        assert all(len(beam) == 1 and on_greedy_path(beam[0], trace.greedy) for beam in trace.steps)


@pytest.mark.parametrize("seed", [0, 3])
def test_the_trace_is_beam_searchs_own_run(seed):
    model = transformer(seed, alpha=1.0, n=2)
    for sentence in SENTENCES:
        _, src, lens = source_tensor(sentence, SRC_VOCAB)
        plain = beam_search(model, src, lens, beam_size=4, alpha=1.0, no_repeat_ngram=2)[0]
        trace = trace_beam(model, sentence, SRC_VOCAB, TGT_VOCAB, beam_size=4)
        assert list(trace.chosen.ids) == plain
        assert list(trace.greedy.ids) == greedy_decode(model, src, lens, no_repeat_ngram=2)[0][0]
        assert trace.chosen in trace.steps[-1] and all(len(beam) <= 4 for beam in trace.steps)
        assert trace.final[0].score(1.0) == max(h.score(1.0) for h in trace.steps[-1])


def test_log_probabilities_are_those_of_a_teacher_forced_pass():
    model = transformer(5)
    _, src, lens = source_tensor(SENTENCES[0], SRC_VOCAB)
    ids = greedy_decode(model, src, lens, max_len=30)[0][0]
    tokens = torch.tensor([[BOS_ID] + ids])  # (1, T)
    with torch.no_grad():
        logp = torch.log_softmax(model(src, lens, tokens).float(), dim=-1)[0]  # (T, V)
    logp[:, [0, BOS_ID]] = float("-inf")  # <pad> and <bos> are never emitted: renormalise without them
    logp = torch.log_softmax(logp, dim=-1)
    expected = float(sum(logp[t, i] for t, i in enumerate(ids + [EOS_ID])))
    assert sequence_log_prob(model, src, lens, ids, ended=True) == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize("seed", range(4))
def test_the_beam_scores_at_least_greedy_when_greedys_output_is_in_the_final_beam(seed):
    model = transformer(seed, alpha=1.0)
    checked = 0
    for sentence in SENTENCES:
        trace = trace_beam(model, sentence, SRC_VOCAB, TGT_VOCAB, beam_size=4)
        if any(h.ids == trace.greedy.ids and h.ended for h in trace.steps[-1]):
            checked += 1
            assert trace.chosen.score(1.0) >= trace.greedy.score(1.0) - 1e-5
    if seed == 0:
        assert checked  # the premise holds on at least some sentences, so the test is not empty
