"""Chapter 11's claims: tiled_attention equals softmax attention within the bound its text states (random
shapes, masks by valid_lens, n not a multiple of the block), the online softmax's trace by hand, and the
peak-memory figures the text quotes equal those counted with chapter 10's counter."""

import math
import re

import pytest
import torch

from course.common import pages_index
from course.common.i18n import LANGS, t
from course.lessons import ch10, ch11
from solutions.ex03_scoring import DotProductAttention

NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def stated_bound(lang):
    """The bound on |tiled - reference| that the page's text states, read back from the text as shown."""
    text = t("ch11.tiled.after", lang, tolerance=ch11.TOLERANCE)
    found = [float(x) for x in re.findall(r"\d+e-\d+", text)]
    assert len(found) == 1, text  # the one bound the text promises
    return found[0]


def softmax_attention(queries, keys, values, valid_lens=None):
    """Masked softmax attention written out in float64: scores, -inf past each length, softmax, rows without a
    valid key all 0 -> (B, n_q, v)."""
    q, k, v = (x.double() for x in (queries, keys, values))
    scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])  # (B, n_q, n_k)
    if valid_lens is not None:
        lens = valid_lens if valid_lens.dim() == 2 else valid_lens[:, None].expand(-1, q.shape[1])  # (B, n_q)
        scores = scores.masked_fill(torch.arange(k.shape[1])[None, None, :] >= lens[:, :, None], float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)  # an all -inf row: 0/0 -> 0
    return weights @ v  # (B, n_q, v)


def random_case(seed):
    """Seeded shapes (B, n_q, n_k, d, v), a block size (often not dividing n_k) and valid_lens of one of
    three kinds (none, (B,), (B, n_q), zeros included)."""
    gen = torch.Generator().manual_seed(seed)
    draw = lambda low, high: int(torch.randint(low, high + 1, (1,), generator=gen))  # noqa: E731
    B, n_q, n_k, d, v, block = draw(1, 3), draw(1, 40), draw(1, 70), draw(1, 24), draw(1, 12), draw(1, 32)
    queries = 3 * torch.randn(B, n_q, d, generator=gen)  # (B, n_q, d): large scores, so the max matters
    keys = torch.randn(B, n_k, d, generator=gen)  # (B, n_k, d)
    values = torch.randn(B, n_k, v, generator=gen)  # (B, n_k, v)
    kind = seed % 3
    lens = (None, torch.randint(0, n_k + 1, (B,), generator=gen), torch.randint(0, n_k + 1, (B, n_q), generator=gen))
    return queries, keys, values, block, lens[kind]


@pytest.mark.parametrize("lang", LANGS)
def test_the_stated_bound_is_the_one_checked(lang):
    assert stated_bound(lang) == ch11.TOLERANCE


@pytest.mark.parametrize("seed", range(60))
def test_tiled_attention_equals_softmax_attention_within_the_stated_bound(seed):
    queries, keys, values, block, lens = random_case(seed)
    with torch.no_grad():
        tiled = ch11.tiled_attention(queries, keys, values, block, lens)  # (B, n_q, v)
        reference = DotProductAttention(dropout=0.0)(queries, keys, values, lens)
    assert tiled.shape == reference.shape == (queries.shape[0], queries.shape[1], values.shape[-1])
    bound = stated_bound("en")
    assert (tiled.double() - softmax_attention(queries, keys, values, lens)).abs().max() <= bound
    assert (tiled - reference).abs().max() <= bound
    assert ch11.max_difference(queries, keys, values, block, lens) == float((tiled - reference).abs().max())


@pytest.mark.slow  # 64 block sizes
def test_every_block_size_of_the_pages_slider_agrees_and_float64_is_exact_to_rounding():
    queries, keys, values = ch11.seeded_inputs(2, 37, 16)
    lens = torch.tensor([37, 5])
    for block in range(1, 65):  # the slider's range; 37 keys: most blocks leave a shorter last one
        assert ch11.max_difference(queries, keys, values, block, lens) <= ch11.TOLERANCE
    q, k, v = (x.double() for x in (queries, keys, values))
    assert (ch11.tiled_attention(q, k, v, 7, lens) - softmax_attention(q, k, v, lens)).abs().max() < 1e-12


def test_masked_keys_are_ignored_whatever_they_hold_and_an_empty_row_is_zero():
    queries, keys, values = ch11.seeded_inputs(1, 9, 4)
    lens = torch.tensor([[0, 3, 9, 1, 2, 4, 5, 6, 8]])  # (B, n_q): the first query sees no key
    out = ch11.tiled_attention(queries, keys, values, 2, lens)
    keys2, values2 = keys.clone(), values.clone()
    keys2[:, 3:] = 10 * queries[:, 2:3]  # scores past the lengths that would dominate a row not masking them
    values2[:, 3:] = 1e4
    out2 = ch11.tiled_attention(queries, keys2, values2, 2, lens)
    assert torch.equal(out[0, 0], torch.zeros(4)) and torch.isfinite(out2).all()
    torch.testing.assert_close(out2[0, 1], out[0, 1])  # query 1 sees keys 0..2 only
    assert (out2[0, 2] - out[0, 2]).abs().max() > 1  # query 2 sees them all: the change shows


def test_a_block_without_the_rescale_would_be_wrong():
    """The check can fail: summing each block against its own max (no rescale) is off by far more than the bound."""
    queries, keys, values = ch11.seeded_inputs(1, 20, 8)
    scores = queries[0] @ keys[0].T / math.sqrt(8)  # (20, 20)
    wrong = sum(torch.softmax(scores[:, j:j + 5], -1) @ values[0, j:j + 5] for j in range(0, 20, 5)) / 4
    right = ch11.tiled_attention(queries, keys, values, 5)[0]
    assert (wrong - right).abs().max() > 100 * ch11.TOLERANCE
    assert (right - ch11.reference_attention(queries, keys, values)[0]).abs().max() <= ch11.TOLERANCE


def test_bad_block_sizes_and_lengths_get_a_clear_message():
    queries, keys, values = ch11.seeded_inputs(2, 4, 3)
    with pytest.raises(ValueError, match="block_size must be at least 1"):
        ch11.tiled_attention(queries, keys, values, 0)
    with pytest.raises(ValueError, match=r"valid_lens must have shape \(B,\) = \(2,\)"):
        ch11.tiled_attention(queries, keys, values, 2, torch.tensor([1, 2, 3]))


def test_row_trace_by_hand():
    rows, m, l = ch11.row_trace([3.0, 1.0, 5.0], 1)  # noqa: E741
    assert [r["m"] for r in rows] == [3.0, 3.0, 5.0] and [r["block_max"] for r in rows] == [3.0, 1.0, 5.0]
    assert rows[0]["rescale"] is None and rows[1]["rescale"] == 1.0
    assert rows[2]["rescale"] == pytest.approx(math.exp(-2))
    assert rows[1]["l"] == pytest.approx(1 + math.exp(-2))
    assert l == pytest.approx((1 + math.exp(-2)) * math.exp(-2) + 1) and m == 5.0
    assert l == pytest.approx(math.exp(-2) + math.exp(-4) + 1)  # sum exp(s - max s) of the whole row
    rows, m, l = ch11.row_trace([1.0, 3.0, 2.0], 2)  # noqa: E741
    assert [(r["first"], r["last"]) for r in rows] == [(0, 1), (2, 2)]
    assert l == pytest.approx(math.exp(-2) + 1 + math.exp(-1)) and m == 3.0


def test_difference_rows_count_blocks_and_the_last_block():
    rows = ch11.difference_rows(37, 5)
    assert [r["case"] for r in rows] == list(ch11.CASES)
    assert {(r["blocks"], r["last"]) for r in rows} == {(8, 2)}  # 7 blocks of 5 and one of 2
    assert all(0 <= r["diff"] <= ch11.TOLERANCE for r in rows)
    assert ch11.difference_rows(64, 16)[0]["last"] == 16


def test_case_lens_mask_what_the_table_says():
    assert ch11.case_lens("none", 9) is None
    assert ch11.case_lens("per_example", 9).tolist() == [9, 5]
    assert ch11.case_lens("per_query", 4).tolist() == [[1, 2, 3, 4], [0, 1, 2, 3]]


@pytest.mark.slow  # counts the peak of n x n tensors up to n = 1024 twice
def test_memory_figures_in_the_text_are_the_counted_ones():
    counted = {}
    for n in ch11.MEMORY_N[-2:]:
        q, k, v = ch11.seeded_inputs(1, n, ch11.MEMORY_D)
        counted[n] = (ch10.peak_bytes(lambda a, b, c: DotProductAttention(dropout=0.0)(a, b, c), q, k, v) / 2**20,
                      ch10.peak_bytes(lambda a, b, c: ch11.tiled_attention(a, b, c, ch11.MEMORY_BLOCK), q, k, v) / 2**20)
    n, below = ch11.MEMORY_N[-1], ch11.MEMORY_N[-2]
    (full, tiled), (full_below, tiled_below) = counted[n], counted[below]
    claims = ch11.memory_claims()
    for lang in LANGS:
        text = t("ch11.memory.after", lang, **claims)
        shown = [float(x) for x in NUMBER.findall(text)]
        for value, digits in ((full, 1), (tiled, 2), (full / tiled, 1), (full / full_below, 2), (tiled / tiled_below, 2)):
            assert round(value, digits) in shown, (value, text)
        assert n in shown and ch11.MEMORY_BLOCK in shown and ch11.MEMORY_D in shown
    # what the text explains: several n x n float32 matrices for the reference, a few n x block ones tiled
    assert 3 * 4 * n * n <= full * 2**20 < 5 * 4 * n * n
    assert tiled * 2**20 <= 8 * 4 * n * (ch11.MEMORY_BLOCK + ch11.MEMORY_D)
    assert full / full_below == pytest.approx(4, rel=0.05) and tiled / tiled_below == pytest.approx(2, rel=0.05)


def test_speed_verdict_names_the_slower_and_faster_blocks():
    assert ch11.speed_verdict({"full": 10.0, 4: 30.0, 64: 5.0}) == ("mixed", [4], [64])
    assert ch11.speed_verdict({"full": 10.0, 4: 30.0, 64: 11.0}) == ("all_slower", [4, 64], [])
    assert ch11.speed_verdict({"full": 10.0, 4: 3.0, 64: 5.0}) == ("all_faster", [], [4, 64])


def test_time_calls_times_the_reference_and_each_block():
    ms = ch11.time_calls(n=64, blocks=(8, 64), repeats=1)
    assert set(ms) == {"full", 8, 64} and all(value > 0 for value in ms.values())


def test_page_is_registered_after_chapter_10_with_a_title_in_both_languages():
    chapters = [p.key for p in pages_index.chapters()]
    assert chapters.index("ch11") == chapters.index("ch10") + 1 and pages_index.get("ch11").file.is_file()
    for lang in LANGS:
        assert t("nav.ch11", lang).startswith("11 · ") and t("ch11.title", lang) == t("nav.ch11", lang)


@pytest.mark.parametrize(("n", "block"), [(100, 16), (37, 5), (20, 1), (9, 64)])
def test_the_traced_query_is_the_first_whose_max_grows_most_often(n, block):
    row, scores = ch11.trace_scores(n, block)
    queries, keys, _ = ch11.seeded_inputs(ch11.BATCH, n, ch11.D_DIFF)
    every = (queries[0].double() @ keys[0].double().T) / math.sqrt(ch11.D_DIFF)  # (n, n)
    grown = [sum(r["rescale"] is not None and r["rescale"] < 1 for r in ch11.row_trace(every[i], block)[0])
             for i in range(n)]
    assert row == grown.index(max(grown)) and torch.equal(scores, every[row])
