"""Decoding: the Transformer's key/value cache, n-gram blocking, and the settings a checkpoint records."""

import itertools
import shutil
import sys
from pathlib import Path

import pytest
import torch
from torch.testing import assert_close

from course.translation import decoding
from course.translation.checkpoint import load_checkpoint, save_checkpoint
from course.translation.decoding import (DecodingSettings, beam_search, block_repeats, greedy_decode,
                                         settings_of, translate)
from course.translation.models import build_model, config_class
from course.translation.transformer import KVState
from course.translation.vocab import BOS_ID, EOS_ID, PAD_ID, Vocab

SRC_V, TGT_V = 23, 19
ROOT = Path(__file__).resolve().parent.parent


def transformer(seed=0, layers=2):
    """A small random Transformer (dropout 0.1, eval mode): the cache must match in eval."""
    cfg = config_class("transformer")(SRC_V, TGT_V, num_hiddens=16, ffn_num_hiddens=32, num_heads=4,
                                      num_layers=layers, dropout=0.1, max_len=64)
    torch.manual_seed(seed)
    model = build_model("transformer", cfg).eval()
    with torch.no_grad():  # sharper logits than at initialisation, so argmax choices are not near-ties
        model.decoder.dense.weight.mul_(4.0)
    return model


def padded_batch():
    src = torch.tensor([[4, 5, 6, 7, 8, 9], [10, 11, 12, PAD_ID, PAD_ID, PAD_ID], [13, 14, 15, 16, PAD_ID, PAD_ID]])
    return src, torch.tensor([6, 3, 4])


def step_logits(model, src, lens, tokens):
    """Feed tokens (B, T) one step at a time -> logits (B, T, V) and the final state."""
    state, out = model.encode(src, lens), []
    for t in range(tokens.shape[1]):
        logits, state, _ = model.decode_step(tokens[:, t : t + 1], state)  # (B, V)
        out.append(logits)
    return torch.stack(out, dim=1), state


# ---------------------------------------------------------------- key/value cache

@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.slow
def test_kv_cache_gives_the_logits_of_the_blocks_and_of_full_recomputation(seed):
    model = transformer(seed)
    src, lens = padded_batch()
    gen = torch.Generator().manual_seed(seed)
    tokens = torch.randint(3, TGT_V, (3, 9), generator=gen)
    tokens[:, 0] = BOS_ID
    blocks, state = step_logits(model.use_kv_cache(False), src, lens, tokens)
    assert not isinstance(state, KVState)
    cached, state = step_logits(model.use_kv_cache(True), src, lens, tokens)
    assert isinstance(state, KVState) and state.offset == 9
    full = model(src, lens, tokens)  # (B, T, V): teacher-forced, the whole prefix recomputed
    assert_close(cached, blocks, atol=1e-5, rtol=1e-5)
    assert_close(cached, full, atol=1e-5, rtol=1e-5)


def test_kv_cache_is_never_used_in_training_or_by_forward():
    model = transformer().use_kv_cache(True)
    src, lens = padded_batch()
    model.train()
    assert not isinstance(model.encode(src, lens), KVState)
    model.eval()
    assert isinstance(model.encode(src, lens), KVState)


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.slow
def test_kv_cache_decodes_the_same_ids_greedy_and_beam(seed):
    model = transformer(seed)
    src, lens = padded_batch()
    results = {}
    for kv in (False, True):
        model.use_kv_cache(kv)
        results[kv] = (greedy_decode(model, src, lens, max_len=12)[0],
                       beam_search(model, src, lens, beam_size=4, max_len=12, alpha=1.0))
    assert results[True] == results[False]
    assert any(len(ids) > 2 for ids in results[True][0])  # not trivially empty outputs


def test_kv_cache_gives_the_same_attention_maps_in_translate():
    model = transformer(4)
    src_vocab = Vocab([f"w{i}" for i in range(SRC_V - 4)])
    tgt_vocab = Vocab([chr(0x4E00 + i) for i in range(TGT_V - 4)])
    sentence = "w1 w2 w3 w4 w5"
    a = translate(model.use_kv_cache(False), sentence, src_vocab, tgt_vocab, max_len=10)
    b = translate(model.use_kv_cache(True), sentence, src_vocab, tgt_vocab, max_len=10)
    assert a.tokens == b.tokens and len(a.top_next) > 2
    for name in ("cross_attention_heads", "decoder_self_attention", "encoder_self_attention"):
        assert_close(torch.tensor(getattr(b, name)), torch.tensor(getattr(a, name)), atol=1e-5, rtol=1e-5)


# ---------------------------------------------------------------- n-gram blocking

def ngrams(ids, n):
    return [tuple(ids[i : i + n]) for i in range(len(ids) - n + 1)]


def banned(logits, seqs, n):
    """Per row, the token ids block_repeats rules out (<pad> aside: it is never emitted anyway)."""
    out = torch.isinf(block_repeats(logits, seqs, n))
    return [[i for i in row.nonzero().flatten().tolist() if i != PAD_ID] for row in out]


def test_block_repeats_bans_exactly_the_tokens_that_would_repeat_an_ngram():
    seqs = torch.tensor([[4, 5, 4, 6, 4], [7, 7, 8, 9, 7]])  # (2, 5)
    logits = torch.zeros(2, 12)
    assert banned(logits, seqs, 2) == [[5, 6], [7, 8]]  # last 4: 4 5 and 4 6 seen; last 7: 7 7 and 7 8 seen
    assert banned(logits, seqs, 3) == [[], []]
    assert banned(torch.zeros(1, 12), torch.tensor([[4, 5, 6, 4, 5]]), 3) == [[6]]
    assert banned(torch.zeros(1, 12), torch.tensor([[4, 5, 6]]), 1) == [[4, 5, 6]]
    assert torch.equal(block_repeats(logits, seqs, 0), logits)
    assert banned(logits, seqs[:, :1], 2) == [[], []]  # no complete bigram yet
    assert torch.equal(logits, torch.zeros(2, 12))  # the input is left as it was


def test_block_repeats_also_bans_a_third_token_in_a_row_whatever_n():
    seqs = torch.tensor([[4, 6, 6], [6, 6, 4], [5, 7, 5]])  # (3, 3)
    logits = torch.zeros(3, 12)
    assert banned(logits, seqs, 4) == [[6], [], []]  # no complete 4-gram yet: only 6 6 -> not a third 6
    assert banned(logits, seqs, 2) == [[6], [], [7]]  # 6 6 was seen (bigram) and stands twice; 5 7 was seen
    assert torch.equal(block_repeats(logits, seqs, 0), logits)  # off means off
    assert banned(logits, seqs[:, :1], 4) == [[], [], []]


class LoopModel(torch.nn.Module):
    """A decoder that loves to repeat: next token = a fixed favourite per previous token, <eos> unlikely."""

    def __init__(self, V=9):
        super().__init__()
        self.dummy = torch.nn.Parameter(torch.zeros(1))
        gen = torch.Generator().manual_seed(0)
        self.table = torch.randn(V, V, generator=gen)  # (V, V) logits by previous token
        self.table[:, EOS_ID] = -3.0
        self.table[BOS_ID, 4] = 5.0
        self.table[4, 5], self.table[5, 4] = 6.0, 6.0  # 4 5 4 5 4 5 ... without a guard

    def encode(self, src, src_valid_lens):
        return torch.zeros(src.shape[0])

    def decode_step(self, tokens, state):
        return self.table[tokens[:, 0]], state, {}

    def reorder_state(self, state, index):
        return state[index]


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_no_repeated_ngram_is_ever_emitted(n):
    model = LoopModel()
    src, lens = torch.zeros(2, 3, dtype=torch.long), torch.tensor([3, 3])
    plain = greedy_decode(model, src, lens, max_len=16)[0][0]
    assert len(set(ngrams(plain, n))) < len(ngrams(plain, n))  # it loops without the guard
    for ids in (greedy_decode(model, src, lens, max_len=16, no_repeat_ngram=n)[0][0],
                beam_search(model, src, lens, beam_size=3, max_len=16, no_repeat_ngram=n)[0]):
        grams = ngrams(ids, n)
        assert len(grams) == len(set(grams)), ids


class StutterModel(LoopModel):
    """A decoder that repeats its last token: 4 4 4 4 ... without a guard."""

    def __init__(self, V=9):
        super().__init__(V)
        self.table = torch.zeros(V, V)  # (V, V) logits by previous token
        self.table[BOS_ID, 4] = 5.0
        self.table[4, 4], self.table[4, 5], self.table[5, 5] = 6.0, 3.0, 6.0


def test_no_token_stands_three_times_in_a_row_with_the_guard_on():
    model = StutterModel()
    src, lens = torch.zeros(1, 3, dtype=torch.long), torch.tensor([3])
    assert greedy_decode(model, src, lens, max_len=6)[0][0][:3] == [4, 4, 4]  # it stutters without the guard
    for ids in (greedy_decode(model, src, lens, max_len=12, no_repeat_ngram=4)[0][0],
                beam_search(model, src, lens, beam_size=3, max_len=12, no_repeat_ngram=4)[0]):
        assert ids[:2] == [4, 4] and all(not (a == b == c) for a, b, c in zip(ids, ids[1:], ids[2:])), ids


@pytest.mark.slow
def test_blocking_on_a_random_transformer_in_beam_and_greedy():
    model = transformer(6).use_kv_cache(True)
    src, lens = padded_batch()
    for ids in itertools.chain(greedy_decode(model, src, lens, max_len=20, no_repeat_ngram=2)[0],
                               beam_search(model, src, lens, beam_size=4, max_len=20, no_repeat_ngram=2)):
        assert len(ngrams(ids, 2)) == len(set(ngrams(ids, 2)))


# ---------------------------------------------------------------- settings from the checkpoint

def tiny_checkpoint(tmp_path, metrics):
    src_vocab = Vocab([f"w{i}" for i in range(SRC_V - 4)])
    tgt_vocab = Vocab([chr(0x4E00 + i) for i in range(TGT_V - 4)])
    path = save_checkpoint(tmp_path / "transformer.pt", transformer(2), "transformer", src_vocab, tgt_vocab, 0,
                           metrics=metrics)
    return path


@pytest.mark.slow
def test_the_alpha_and_ngram_stored_with_the_checkpoint_are_the_ones_used(tmp_path, monkeypatch):
    path = tiny_checkpoint(tmp_path, {"beam_alpha": 1.8, "no_repeat_ngram": 3})
    loaded = load_checkpoint(path)
    assert settings_of(loaded.model) == DecodingSettings(1.8, 3, "validation")
    assert loaded.model.kv_cache  # built from solutions: the cache is on
    calls = []
    real = decoding.beam_search

    def spy(model, src, lens, beam_size=4, max_len=None, alpha=None, no_repeat_ngram=0):
        calls.append((alpha, no_repeat_ngram))
        return real(model, src, lens, beam_size, max_len, alpha=alpha, no_repeat_ngram=no_repeat_ngram)

    monkeypatch.setattr(decoding, "beam_search", spy)
    result = translate(loaded.model, "w1 w2 w3", loaded.src_vocab, loaded.tgt_vocab, beam_size=4)
    assert calls == [(1.8, 3)]
    assert result.decoding == {"method": "beam", "beam_size": 4, "alpha": 1.8, "alpha_source": "validation",
                               "no_repeat_ngram": 3}
    translate(loaded.model, "w1 w2 w3", loaded.src_vocab, loaded.tgt_vocab, beam_size=4, alpha=0.6,
              no_repeat_ngram=0)
    assert calls[-1] == (0.6, 0)
    greedy = translate(loaded.model, "w1 w2 w3", loaded.src_vocab, loaded.tgt_vocab)
    assert greedy.decoding == {"method": "greedy", "no_repeat_ngram": 3}
    grams = ngrams(greedy.tokens, 3)
    assert len(grams) == len(set(grams))


@pytest.mark.slow
def test_a_checkpoint_without_a_chosen_alpha_says_so(tmp_path):
    loaded = load_checkpoint(tiny_checkpoint(tmp_path, {}))
    result = translate(loaded.model, "w1 w2", loaded.src_vocab, loaded.tgt_vocab, beam_size=2)
    assert result.decoding["alpha_source"] == "default" and result.decoding["alpha"] == decoding.DEFAULT_ALPHA
    assert result.decoding["no_repeat_ngram"] == 0


def test_a_learners_package_decodes_through_the_blocks(tmp_path, monkeypatch):
    path = tiny_checkpoint(tmp_path, {})
    package = tmp_path / "staged" / "learner_copy_kv"
    shutil.copytree(ROOT / "solutions", package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.syspath_prepend(str(package.parent))
    try:
        assert load_checkpoint(path, impl="learner_copy_kv").model.kv_cache is False
        assert load_checkpoint(path, impl="learner_copy_kv", kv_cache=True).model.kv_cache is True
    finally:
        for mod in [m for m in sys.modules if m.split(".")[0] == "learner_copy_kv"]:
            del sys.modules[mod]


def test_translate_names_the_unknown_words():
    model = transformer(1).use_kv_cache(True)
    src_vocab, tgt_vocab = Vocab(["i", "like", "tea", "."] + [f"w{i}" for i in range(SRC_V - 8)]), \
        Vocab([chr(0x4E00 + i) for i in range(TGT_V - 4)])
    result = translate(model, "I like green tea, Zorblax.", src_vocab, tgt_vocab, max_len=5)
    assert result.unknown_words == ["green", ",", "zorblax"]
    assert result.source_tokens == ["i", "like", "<unk>", "tea", "<unk>", "<unk>", "."]


def test_still_rising_only_at_the_largest_alpha_and_above_the_next_smaller():
    grid = [{"alpha": a, "bleu": b} for a, b in ((0.6, 30.0), (1.0, 31.0), (1.4, 31.5))]
    assert decoding.still_rising(grid, 1.4)
    assert not decoding.still_rising(grid, 1.0)  # inside the grid
    assert not decoding.still_rising(grid[:2] + [{"alpha": 1.4, "bleu": 30.5}], 1.4)  # fell at the edge
    assert not decoding.still_rising(list(reversed(grid))[:1], 1.4)  # one score: nothing to compare
    assert decoding.still_rising(list(reversed(grid)), 1.4)  # order does not matter
    for bad in (None, [], [{"alpha": "x", "bleu": 1}], [{"bleu": 1.0}], "2.2"):
        assert not decoding.still_rising(bad, 2.2)
    assert DecodingSettings.from_metrics({"beam_alpha": 1.4, "valid_beam_bleu_by_alpha": grid}).source == \
        "validation_edge"
    assert DecodingSettings.from_metrics({"beam_alpha": 1.4}).source == "validation"
