"""BLEU step by step (course.translation.bleu_steps) against sacrebleu itself.

Expected scores, counts, precisions and brevity penalties come from sacrebleu's own
sentence_bleu and corpus_bleu (the functions evaluate.py reports with), or are counted by hand here.
"""

import json
import math

import pytest
import sacrebleu

from course.common.paths import PROJECT_ROOT
from course.translation.bleu_steps import corpus_steps, ngram_table, sentence_steps, tokens_zh

REFERENCE = "他的女儿已经成为了一个漂亮的女人。"
HAND_MADE = [  # (hypothesis, reference): short, empty, repeated, Latin inside, no 4-gram match, exact
    ("他的女儿已经成为一个漂亮的女人。", REFERENCE),
    ("", "我很好。"), ("我", "我很好。"), ("我我我我", "我很好。"), ("好", "我很好。"),
    ("Tom很好", "汤姆很好。"), ("你好吗？", "我很好。"), ("我很好", "我很好。"), ("他他", "他他他"),
    ("我有3个iPhone。", "我有三个iPhone。"), ("今天天气很好，我们去公园吧。", "今天天气不错，我们去公园走走吧。"),
    ("好好好好好好好好", "好"),
]


def shipped_examples():
    """(output, reference) of every example the shipped BLEU reports hold, greedy and beam."""
    pairs = []
    for name in ("seq2seq", "bahdanau", "transformer"):
        path = PROJECT_ROOT / "checkpoints" / f"{name}.bleu.json"
        if path.is_file():
            report = json.loads(path.read_text(encoding="utf-8"))
            pairs += [(ex[m], ex["reference"]) for bucket in report["examples"].values() for ex in bucket
                      for m in ("greedy", "beam")]
    return pairs


def agrees(ours, theirs):
    """Every number of a BleuSteps equals sacrebleu's BLEUScore."""
    assert [o.matches for o in ours.orders] == theirs.counts
    assert [o.total for o in ours.orders] == theirs.totals
    assert (ours.hyp_len, ours.ref_len) == (theirs.sys_len, theirs.ref_len)
    assert ours.brevity_penalty == pytest.approx(theirs.bp, abs=1e-12)
    assert [o.precision for o in ours.orders] == pytest.approx(theirs.precisions, abs=1e-9)
    assert ours.score == pytest.approx(theirs.score, abs=1e-9)


@pytest.mark.parametrize("hypothesis,reference", HAND_MADE + shipped_examples())
def test_sentence_bleu_step_by_step_is_sacrebleus(hypothesis, reference):
    agrees(sentence_steps(hypothesis, reference), sacrebleu.sentence_bleu(hypothesis, [reference], tokenize="zh"))


def test_corpus_bleu_step_by_step_is_sacrebleus():
    pairs = HAND_MADE + shipped_examples()
    hyps, refs = [h for h, _ in pairs], [r for _, r in pairs]
    agrees(corpus_steps(hyps, refs), sacrebleu.corpus_bleu(hyps, [refs], tokenize="zh"))
    agrees(corpus_steps(hyps[:3], refs[:3]), sacrebleu.corpus_bleu(hyps[:3], [refs[:3]], tokenize="zh"))


def test_the_shipped_reports_overall_bleu_is_corpus_bleu_not_a_mean_of_sentences():
    pairs = shipped_examples()
    if not pairs:
        pytest.skip("no shipped BLEU reports")
    hyps, refs = [h for h, _ in pairs], [r for _, r in pairs]
    mean = sum(sentence_steps(h, r).score for h, r in pairs) / len(pairs)
    assert abs(corpus_steps(hyps, refs).score - mean) > 1.0


def test_chinese_is_scored_by_characters_and_latin_words_stay_whole():
    assert tokens_zh("他的女儿") == ["他", "的", "女", "儿"]
    assert tokens_zh("我有3个iPhone。") == ["我", "有", "3", "个", "iPhone", "。"]


def test_clipping_and_the_brevity_penalty_by_hand():
    steps = sentence_steps("我我我我", "我很好。")  # 我 occurs once in the reference: 1 match of 4, not 4
    assert (steps.orders[0].matches, steps.orders[0].total) == (1, 4)
    assert [row for row in ngram_table("我我我我", "我很好。", 1)] == [("我", 4, 1, 1)]
    short = sentence_steps("他的女儿已经成为一个漂亮的女人。", REFERENCE)  # 16 characters against 17
    assert short.brevity_penalty == pytest.approx(math.exp(1 - 17 / 16))
    assert [(o.matches, o.total) for o in short.orders] == [(16, 16), (14, 15), (12, 14), (10, 13)]


def test_an_order_without_matches_is_smoothed_and_a_short_sentence_uses_only_its_orders():
    steps = sentence_steps("你好吗？", "我很好。")  # 好 and 。 match; no bigram does
    assert steps.orders[1].smoothed and steps.orders[1].precision == pytest.approx(100 / (2 * 3))
    assert steps.orders[2].precision == pytest.approx(100 / (4 * 2))  # the second empty order: 1/4 of a match
    assert sentence_steps("我很", "我很好。").used_orders == 2  # two characters: unigrams and bigrams only


def test_mismatched_lists_are_refused_with_a_clear_message():
    with pytest.raises(ValueError, match="one reference each"):
        corpus_steps(["我"], [])
