"""Beam search shown step by step, beside greedy decoding, for one sentence.

Greedy decoding keeps one hypothesis and always writes the most probable next
character. Beam search keeps the `beam_size` best partial hypotheses by
log-probability (the sum of log P of their characters), extends each by every
character, and keeps the best `beam_size` of those; a hypothesis that wrote
`<eos>` has ended and keeps its place for as long as its log-probability stays
among the best. At the end the hypotheses are ranked by log P divided by GNMT's
length penalty ((5 + length) / 6) ** alpha, since a raw log-probability only falls
with every character and would favour short outputs.

`trace_beam` runs course.translation.decoding.beam_search itself (its `on_step`
hook records the beam after every step), so what it shows is what the demos and
the BLEU evaluation decode; greedy's output is scored by the same rule.
"""

from dataclasses import dataclass

import torch

from .decoding import (BOS_ID, EOS_ID, _never_emit, beam_search, block_repeats, default_max_len,
                       greedy_decode, length_penalty, settings_of, source_tensor)
from .vocab import PAD_ID, detokenize_zh


@dataclass(frozen=True)
class Hypothesis:
    """One (partial) output: its ids, characters, log-probability, and whether it has ended."""

    ids: tuple  # output ids without <eos> and <pad>
    text: str  # the characters joined
    log_prob: float  # sum of log P of its characters (and of <eos> once it ended)
    length: int  # characters counted by the length penalty, <eos> included
    ended: bool

    def score(self, alpha):
        """log P / ((5 + length) / 6) ** alpha: the rank beam search gives a finished hypothesis."""
        return self.log_prob / length_penalty(self.length, alpha)


@dataclass(frozen=True)
class BeamTrace:
    """The search for one sentence: the beam after every step, the final ranking, greedy's output."""

    source: tuple  # the English units the model read
    beam_size: int
    alpha: float
    no_repeat_ngram: int
    steps: tuple  # per step: Hypothesis tuple, best log P first
    chosen: Hypothesis  # beam search's output (highest score at the end)
    greedy: Hypothesis  # greedy decoding's output, scored the same way

    @property
    def final(self):
        """The last step's hypotheses, best score first."""
        return tuple(sorted(self.steps[-1], key=lambda h: -h.score(self.alpha)))


def _hypothesis(row, log_prob, length, ended, tgt_vocab):
    """A Hypothesis from one beam row of ids (possibly padded after <eos>)."""
    ids = tuple(i for i in row if i not in (EOS_ID, PAD_ID))
    return Hypothesis(ids, detokenize_zh(tgt_vocab.decode(list(ids))), float(log_prob), int(length), bool(ended))


@torch.no_grad()
def sequence_log_prob(model, src, src_valid_lens, ids, ended, no_repeat_ngram=0):
    """log P of an output (ids, then <eos> when it ended) under the scores beam search uses (batch of 1)."""
    state = model.encode(src, src_valid_lens)
    tokens = torch.tensor([[BOS_ID]], device=src.device)  # (1, 1)
    targets = list(ids) + ([EOS_ID] if ended else [])
    total = 0.0
    for t, target in enumerate(targets):
        logits, state, _ = model.decode_step(tokens, state)  # (1, V)
        logp = torch.log_softmax(_never_emit(logits.float()), dim=-1)  # (1, V)
        logp = block_repeats(logp, torch.tensor([targets[:t]], device=src.device), no_repeat_ngram)  # (1, V)
        total += float(logp[0, target])
        tokens = torch.tensor([[target]], device=src.device)
    return total


def _greedy(model, src, lens, max_len, n, tgt_vocab):
    """Greedy decoding's output as a Hypothesis (ended unless it ran to max_len)."""
    ids = greedy_decode(model, src, lens, max_len=max_len, no_repeat_ngram=n)[0][0]
    ended = len(ids) < max_len
    log_prob = sequence_log_prob(model, src, lens, ids, ended, n)
    return _hypothesis(ids, log_prob, len(ids) + int(ended), ended, tgt_vocab)


@torch.no_grad()
def trace_beam(model, sentence, src_vocab, tgt_vocab, beam_size=4, alpha=None, no_repeat_ngram=None):
    """BeamTrace of one English sentence; alpha and n default to the model's settings (settings_of)."""
    settings = settings_of(model)
    alpha = settings.beam_alpha if alpha is None else float(alpha)
    n = settings.no_repeat_ngram if no_repeat_ngram is None else int(no_repeat_ngram)
    was_training = model.training
    model.eval()
    try:
        return _trace(model, sentence, src_vocab, tgt_vocab, beam_size, alpha, n)
    finally:
        model.train(was_training)


def _trace(model, sentence, src_vocab, tgt_vocab, beam_size, alpha, n):
    """trace_beam's work, with the model in eval mode."""
    device = next(model.parameters()).device
    shown, src, lens = source_tensor(sentence, src_vocab, device)
    max_len = default_max_len(lens)
    steps = []

    def record(seqs, scores, finished, lengths):
        """Keep the beam after one step (batch of 1), best log P first, leaving out empty slots."""
        rows = [_hypothesis(seqs[k].tolist(), scores[0, k], lengths[0, k], finished[0, k], tgt_vocab)
                for k in range(scores.shape[1]) if torch.isfinite(scores[0, k])]
        steps.append(tuple(sorted(rows, key=lambda h: -h.log_prob)))

    best_ids = beam_search(model, src, lens, beam_size, max_len, alpha=alpha, no_repeat_ngram=n, on_step=record)[0]
    finals = sorted(steps[-1], key=lambda h: -h.score(alpha))
    chosen = next(h for h in finals if list(h.ids) == best_ids)
    return BeamTrace(tuple(shown), beam_size, alpha, n, tuple(steps), chosen,
                     _greedy(model, src, lens, max_len, n, tgt_vocab))


def on_greedy_path(hypothesis, greedy):
    """True when the hypothesis is greedy's output so far (same characters, ended only where greedy ends)."""
    prefix = greedy.ids[: len(hypothesis.ids)]
    return hypothesis.ids == prefix and (not hypothesis.ended or hypothesis.ids == greedy.ids)
