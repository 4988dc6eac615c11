"""BLEU worked out step by step: the same figure as sacrebleu's, with every intermediate number kept.

The course scores its translators with sacrebleu (course.translation.evaluate.corpus_bleu).
This module recomputes that score from its parts so a page can show them:

1. Tokens. Chinese is written without spaces, so sacrebleu's "zh" tokenizer makes
   every Chinese character a token (runs of Latin letters or digits stay one token);
   the score then depends on no word segmenter.
2. Clipped n-gram matches, n = 1..4. Each n-gram of the hypothesis counts as a
   match at most as often as it occurs in the reference: repeating a correct
   character does not earn credit twice.
3. Precisions p_n = matches / total. An order with no match at all gets sacrebleu's
   default "exp" smoothing: the k-th such order counts 1 / 2^k of a match instead of 0.
4. Brevity penalty BP = exp(1 - r / c) when the hypothesis length c is shorter than
   the reference length r, else 1: precision alone would reward saying little.
5. BLEU = 100 * BP * exp(mean of log p_n).

Sentence BLEU uses the orders the hypothesis is long enough to have ("effective
order", sacrebleu.sentence_bleu's default); corpus BLEU sums each order's matches
and totals over all sentences first, then computes the precisions once.
"""

import math
from collections import Counter
from dataclasses import dataclass

from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

MAX_ORDER = 4  # BLEU-4
_TOKENIZER = TokenizerZh()


@dataclass(frozen=True)
class OrderCounts:
    """One n-gram order: clipped matches, hypothesis n-grams, the precision used (percent)."""

    n: int
    matches: int
    total: int
    precision: float  # percent; for a smoothed order the smoothed value
    smoothed: bool  # True when no n-gram matched and exp smoothing stood in


@dataclass(frozen=True)
class BleuSteps:
    """Every number behind one BLEU score."""

    orders: tuple  # OrderCounts for n = 1..MAX_ORDER (an order the hypothesis is too short for: total 0)
    used_orders: int  # how many orders enter the mean (fewer for a very short sentence)
    hyp_len: int  # c: hypothesis tokens (Chinese characters)
    ref_len: int  # r: reference tokens
    brevity_penalty: float
    score: float  # 0..100, as sacrebleu prints it


def tokens_zh(text):
    """The tokens sacrebleu's "zh" tokenizer makes: one per Chinese character, Latin words and numbers whole."""
    return _TOKENIZER(text.strip()).split()


def ngrams(tokens, n):
    """Counter of the n-grams (tuples) in a token list."""
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def ngram_table(hypothesis, reference, n):
    """[(n-gram text, count in hypothesis, count in reference, clipped matches)] in hypothesis order."""
    hyp, ref = ngrams(tokens_zh(hypothesis), n), ngrams(tokens_zh(reference), n)
    return [("".join(gram) if n == 1 else " ".join(gram), count, ref[gram], min(count, ref[gram]))
            for gram, count in hyp.items()]


def clipped_counts(hyp_tokens, ref_tokens, max_order=MAX_ORDER):
    """([clipped matches], [hypothesis n-grams]) for n = 1..max_order."""
    matches, totals = [], []
    for n in range(1, max_order + 1):
        hyp, ref = ngrams(hyp_tokens, n), ngrams(ref_tokens, n)
        matches.append(sum(min(count, ref[gram]) for gram, count in hyp.items()))
        totals.append(sum(hyp.values()))
    return matches, totals


def brevity_penalty(hyp_len, ref_len):
    """exp(1 - r / c) for a hypothesis shorter than its reference, else 1 (0 for an empty hypothesis)."""
    if hyp_len >= ref_len:
        return 1.0
    return math.exp(1 - ref_len / hyp_len) if hyp_len > 0 else 0.0


def bleu_from_counts(matches, totals, hyp_len, ref_len, effective_order):
    """BleuSteps from summed counts: precisions with exp smoothing, the brevity penalty, the score."""
    orders, halvings, used = [], 0, len(matches)
    if not any(matches):  # nothing matched: score 0, no precision computed (as sacrebleu)
        orders = [OrderCounts(n, 0, total, 0.0, False) for n, total in enumerate(totals, start=1)]
        return BleuSteps(tuple(orders), used, hyp_len, ref_len, brevity_penalty(hyp_len, ref_len), 0.0)
    for n, (m, total) in enumerate(zip(matches, totals), start=1):
        if total == 0:  # the hypothesis has no n-gram this long
            orders.append(OrderCounts(n, m, total, 0.0, False))
            used = min(used, n - 1) if effective_order else used
            continue
        if m == 0:
            halvings += 1
            orders.append(OrderCounts(n, m, total, 100.0 / (2 ** halvings * total), True))
        else:
            orders.append(OrderCounts(n, m, total, 100.0 * m / total, False))
    bp = brevity_penalty(hyp_len, ref_len)
    kept = orders[:used]
    if used == 0 or any(o.precision == 0 for o in kept):
        score = 0.0
    else:
        score = bp * math.exp(sum(math.log(o.precision) for o in kept) / used)
    return BleuSteps(tuple(orders), used, hyp_len, ref_len, bp, score)


def sentence_steps(hypothesis, reference):
    """Sentence BLEU of one Chinese hypothesis against one reference, step by step (= sacrebleu.sentence_bleu)."""
    hyp, ref = tokens_zh(hypothesis), tokens_zh(reference)
    matches, totals = clipped_counts(hyp, ref)
    return bleu_from_counts(matches, totals, len(hyp), len(ref), effective_order=True)


def corpus_steps(hypotheses, references):
    """Corpus BLEU (one reference each), step by step (= sacrebleu.corpus_bleu, the figure evaluate reports)."""
    hypotheses, references = list(hypotheses), list(references)
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references; give one reference each")
    matches, totals, hyp_len, ref_len = [0] * MAX_ORDER, [0] * MAX_ORDER, 0, 0
    for hypothesis, reference in zip(hypotheses, references):
        hyp, ref = tokens_zh(hypothesis), tokens_zh(reference)
        m, t = clipped_counts(hyp, ref)
        matches = [a + b for a, b in zip(matches, m)]
        totals = [a + b for a, b in zip(totals, t)]
        hyp_len, ref_len = hyp_len + len(hyp), ref_len + len(ref)
    return bleu_from_counts(matches, totals, hyp_len, ref_len, effective_order=False)
