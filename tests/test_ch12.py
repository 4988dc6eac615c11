"""Chapter 12's functions: the cache arithmetic, what a timing shows, the three decoding strategies, and the
key/value heads pooled into groups, each against expectations worked out by hand or computed another way."""

import copy
import json

import pytest
import torch
from torch.testing import assert_close

from course.lessons import ch12
from course.lessons.torch_threads import cpu_threads
from course.translation import demos, kv_study
from course.translation.checkpoint import load_checkpoint
from course.translation.models import build_model, config_class
from course.translation.vocab import BOS_ID, PAD_ID

SRC_V, TGT_V = 23, 19


def transformer(seed=0, layers=2, heads=4):
    """A small random Transformer in eval mode (num_hiddens 16: d_head 4 with 4 heads)."""
    cfg = config_class("transformer")(SRC_V, TGT_V, num_hiddens=16, ffn_num_hiddens=32, num_heads=heads,
                                      num_layers=layers, dropout=0.1, max_len=64)
    torch.manual_seed(seed)
    return build_model("transformer", cfg).eval()


def padded_batch():
    src = torch.tensor([[4, 5, 6, 7, 8, 9], [10, 11, 12, PAD_ID, PAD_ID, PAD_ID]])
    return src, torch.tensor([6, 3])


def target_tokens(seed=0, batch=2, steps=7):
    gen = torch.Generator().manual_seed(seed)
    tokens = torch.randint(3, TGT_V, (batch, steps), generator=gen)
    tokens[:, 0] = BOS_ID
    return tokens


# ---------------------------------------------------------------- the cache arithmetic

def test_cache_bytes_is_two_times_layers_heads_width_positions_bytes_and_batch():
    assert ch12.cache_bytes(3, 4, 64, 10) == 61_440  # 2*3*4*64*10 numbers of 4 bytes, worked out by hand
    assert ch12.cache_bytes(3, 4, 64, 10, bytes_per=2, batch=5) == 153_600
    assert ch12.cache_bytes(3, 4, 64, 0) == 0


def test_a_sliding_window_caps_the_cache():
    mistral = next(size for size in ch12.PUBLISHED if size.name == "Mistral 7B")
    assert ch12.model_bytes(mistral, 4096) == 512 * 2**20  # 2 x 32 x 8 x 128 x 4096 x 2 bytes
    assert ch12.model_bytes(mistral, 8192) == 512 * 2**20  # capped at the window
    assert ch12.model_bytes(mistral, 1) == 128 * 2**10


def test_shipped_size_reads_the_config():
    size = ch12.shipped_size({"num_layers": 3, "num_heads": 4, "num_hiddens": 256, "max_len": 512}, "m")
    assert (size.layers, size.heads, size.kv_heads, size.d_head, size.bytes_per, size.context) == (3, 4, 4, 64, 4, 512)
    assert ch12.shipped_size({"num_layers": 2, "num_heads": 8, "num_hiddens": 64, "max_len": 9}, "m", kv_heads=2).kv_heads == 2


def test_positions_grid_doubles_and_ends_at_the_context():
    assert ch12.positions_grid(512) == [16, 32, 64, 128, 256, 512]
    assert ch12.positions_grid(100) == [16, 32, 64, 100]
    assert ch12.positions_grid(16) == [16]


def test_readable_bytes():
    assert ch12.readable_bytes(6144) == "6 KiB"
    assert ch12.readable_bytes(1023) == "1023 B"
    assert ch12.readable_bytes(4_718_592) == "4.5 MiB"
    assert ch12.readable_bytes(9 * 2**30) == "9 GiB"


def test_memory_rows_and_chart_cover_every_model_up_to_its_context():
    small = ch12.ModelSize("tiny", 1, 2, 2, 8, 4, 32)
    rows = ch12.memory_rows((small,))
    assert rows == [("tiny", 16, 16 * 128 / 2**20), ("tiny", 32, 32 * 128 / 2**20)]  # 2*1*2*8*4 = 128 B a position
    spec = ch12.memory_spec(tuple(rows), {"title": "T", "x": "x", "y": "y", "model": "m"})
    assert spec["encoding"]["x"]["scale"]["type"] == "log"


# ---------------------------------------------------------------- what a timing shows

def test_timing_claims_on_made_up_times():
    steps = 16
    times = {"recompute": [0.001 * (t + 1) for t in range(steps)],  # grows linearly: 1..16 ms
             "inputs": [0.002] * steps, "kv": [0.001] * steps}
    claims = ch12.timing_claims(times, tail=4)
    assert claims["T"] == 16
    assert claims["recompute_ms"] == pytest.approx(14.5)  # mean of 13, 14, 15, 16 ms
    assert claims["recompute_first_ms"] == pytest.approx(2.5)
    assert claims["recompute_ratio"] == pytest.approx(14.5) and claims["inputs_ratio"] == pytest.approx(2.0)
    assert claims["verdict"] == "ordered"
    times["inputs"] = [0.0011] * steps  # re-projecting barely slower than the cache: not clearly ordered
    assert ch12.timing_claims(times, tail=4)["verdict"] == "mixed"
    times["inputs"], times["kv"] = [0.002] * steps, [0.0001 * (t + 1) for t in range(steps)]  # cache grows as fast
    assert ch12.timing_claims(times, tail=4)["verdict"] == "mixed"


def test_timing_rows_count_positions_from_one():
    rows = ch12.timing_rows({"recompute": [0.003], "inputs": [0.002], "kv": [0.001]})
    assert rows == (("recompute", 1, 3.0), ("inputs", 1, 2.0), ("kv", 1, 1.0))


# ---------------------------------------------------------------- three ways to decode

def test_the_three_strategies_choose_the_same_tokens_with_the_same_logits():
    model = transformer()
    src, lens = padded_batch()
    runs = {s: kv_study.decode_steps(model, src, lens, 9, s) for s in kv_study.STRATEGIES}
    for ids, logits, seconds in runs.values():
        assert ids.shape == (2, 9) and logits.shape == (2, 9, TGT_V) and len(seconds) == 9
        assert all(s > 0 for s in seconds)
    same, diff = kv_study.agreement({s: run[:2] for s, run in runs.items()})
    assert same and diff < 1e-5
    # and the tokens are greedy ones of the full teacher-forced forward pass (no cache of any kind)
    ids = runs["kv"][0]
    prefix = torch.cat((torch.full((2, 1), BOS_ID), ids[:, :-1]), dim=1)  # (B, 9)
    full = model(src, lens, prefix)  # (B, 9, V)
    assert_close(runs["kv"][1], full, atol=1e-5, rtol=1e-5)


def test_agreement_sees_a_different_token_and_a_logit_difference():
    ids, logits = torch.tensor([[5, 6]]), torch.zeros(1, 2, 3)
    other = logits.clone()
    other[0, 1, 2] = 0.5
    same, diff = kv_study.agreement({"kv": (ids, logits), "inputs": (ids, other),
                                     "recompute": (torch.tensor([[5, 7]]), logits)})
    assert not same and diff == 0.5


def test_measure_times_every_step_of_every_strategy():
    model = transformer()
    src, lens = padded_batch()
    found = kv_study.measure(model, src, lens, 5, repeats=2)
    assert set(found["seconds"]) == set(kv_study.STRATEGIES)
    assert all(len(v) == 5 and min(v) > 0 for v in found["seconds"].values())
    assert found["same_tokens"] and found["max_diff"] < 1e-5


def test_an_unknown_strategy_or_no_steps_is_refused():
    model = transformer()
    src, lens = padded_batch()
    with pytest.raises(ValueError, match="strategy"):
        kv_study.decode_steps(model, src, lens, 2, "guess")
    with pytest.raises(ValueError, match="at least 1"):
        kv_study.decode_steps(model, src, lens, 0, "kv")


# ---------------------------------------------------------------- shared key/value heads

def test_pool_heads_averages_each_groups_rows_worked_by_hand():
    linear = torch.nn.Linear(2, 4, bias=True)  # 4 heads of width 1
    with torch.no_grad():
        linear.weight.copy_(torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 10.0]]))
        linear.bias.copy_(torch.tensor([1.0, 3.0, 0.0, 4.0]))
    weight, bias = kv_study.pool_heads(linear, 4, 2)
    assert weight.tolist() == [[2.0, 3.0], [6.0, 8.0]] and bias.tolist() == [2.0, 2.0]
    weight, bias = kv_study.pool_heads(linear, 4, 1)
    assert weight.tolist() == [[4.0, 5.5]] and bias.tolist() == [2.0]
    weight, bias = kv_study.pool_heads(linear, 2, 1)  # 2 heads of width 2: rows (0, 1) and (2, 3) averaged
    assert weight.tolist() == [[3.0, 4.0], [5.0, 7.0]] and bias.tolist() == [0.5, 3.5]
    weight, bias = kv_study.pool_heads(linear, 4, 4)
    assert torch.equal(weight, linear.weight) and torch.equal(bias, linear.bias)
    with pytest.raises(ValueError, match="divide"):
        kv_study.pool_heads(linear, 4, 3)


def test_divisors():
    assert kv_study.divisors(4) == [1, 2, 4]
    assert kv_study.divisors(6) == [1, 2, 3, 6]
    assert kv_study.divisors(1) == [1]


@pytest.mark.parametrize("scope", kv_study.SCOPES)
def test_every_head_kept_decodes_exactly_as_forward_cached(scope):
    model = transformer()
    src, lens = padded_batch()
    tokens = target_tokens()
    grouped = kv_study.GroupedKVTranslator(model, 4, scope)
    with torch.no_grad():
        ours, _ = grouped.forward_tokens(tokens, grouped.encode(src, lens))
        state = model.decoder.start_cache(model.encoder(src, lens), lens)
        theirs, _ = model.decoder.forward_cached(tokens, state)
    assert torch.equal(ours, theirs)


def averaged_copy(model, kv_heads, scope):
    """A copy of the model whose decoder key/value projections give every head its group's mean rows: the same
    function as sharing the heads, computed by the untouched blocks (the reference, written differently)."""
    model = copy.deepcopy(model)
    heads = model.config.num_heads
    group = heads // kv_heads
    for blk in model.decoder.blks:
        for mha in (blk.attention1, blk.attention2) if scope == "both" else (blk.attention1,):
            for linear in (mha.W_k, mha.W_v):
                rows = linear.weight.detach().reshape(heads, -1, linear.weight.shape[1])  # (heads, dh, d)
                for g in range(kv_heads):
                    rows[g * group:(g + 1) * group] = rows[g * group:(g + 1) * group].mean(dim=0).clone()
                with torch.no_grad():
                    linear.weight.copy_(rows.reshape(linear.weight.shape))
    return model


@pytest.mark.parametrize("scope", kv_study.SCOPES)
@pytest.mark.parametrize("kv_heads", [1, 2])
def test_shared_heads_give_the_logits_of_a_model_whose_heads_were_averaged(scope, kv_heads):
    model = transformer(seed=3)
    src, lens = padded_batch()
    tokens = target_tokens(seed=3)
    grouped = kv_study.GroupedKVTranslator(model, kv_heads, scope)
    with torch.no_grad():
        state, steps = grouped.encode(src, lens), []
        for t in range(tokens.shape[1]):  # one step at a time, through the grouped cache
            logits, state, _ = grouped.decode_step(tokens[:, t:t + 1], state)
            steps.append(logits)
        reference = averaged_copy(model, kv_heads, scope)(src, lens, tokens)  # (B, T, V), teacher-forced blocks
        untouched = model(src, lens, tokens)
    assert_close(torch.stack(steps, dim=1), reference, atol=1e-5, rtol=1e-5)
    assert (reference - untouched).abs().max() > 1e-3  # the sharing changed the model: the check can fail
    # the cache holds kv_heads heads: 2 x layers x kv_heads x d_head x T x batch numbers
    assert kv_study.cache_floats(state) == 2 * 2 * kv_heads * 4 * tokens.shape[1] * 2
    cross_heads = kv_heads if scope == "both" else 4
    assert all(k.shape[1] == cross_heads and v.shape[1] == cross_heads for k, v in state.cross)


def test_grouped_decoding_leaves_the_shared_model_unchanged():
    model = transformer()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    src, lens = padded_batch()
    from course.translation.decoding import greedy_decode
    greedy_decode(kv_study.GroupedKVTranslator(model, 1, "both"), src, lens, max_len=5)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


def test_a_scope_or_head_count_that_does_not_fit_is_refused():
    model = transformer()
    with pytest.raises(ValueError, match="scope"):
        kv_study.GroupedKVTranslator(model, 2, "encoder")
    with pytest.raises(ValueError, match="divide"):
        kv_study.GroupedKVTranslator(model, 3)


# ---------------------------------------------------------------- the shipped results file

def write(tmp_path, found):
    path = tmp_path / "gqa.json"
    path.write_text(json.dumps(found), encoding="utf-8")
    return path


def good_results():
    return {"version": kv_study.RESULTS_VERSION, "num_heads": 4, "num_sentences": 10, "threads": 1,
            "bleu": {"self": {"1": 1.0, "2": 2.0, "4": 3.0}, "both": {"1": 0.5, "2": 1.5, "4": 3.0}}}


def test_read_results_accepts_a_good_file_and_names_what_is_wrong_in_a_bad_one(tmp_path):
    assert kv_study.read_results(write(tmp_path, good_results()))["num_heads"] == 4
    missing = good_results()
    del missing["bleu"]["both"]["2"]
    out_of_range = good_results()
    out_of_range["bleu"]["self"]["1"] = 140.0
    text = good_results()
    text["bleu"]["self"]["1"] = "high"
    for bad, what in ((missing, "bleu.both"), (out_of_range, "bleu.self"), (text, "bleu.self"),
                      ({**good_results(), "version": 0}, "version")):
        with pytest.raises(ValueError, match=what) as err:
            kv_study.read_results(write(tmp_path, bad))
        assert "course.translation.kv_study" in str(err.value)
    (tmp_path / "gqa.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="cannot be read"):
        kv_study.read_results(tmp_path / "gqa.json")


@pytest.mark.slow
def test_on_the_shipped_model_the_three_strategies_agree_in_float64_within_1e_5_and_in_float32():
    """float64 over 32 steps (the three differ only in rounding: far below 1e-5); float32 over the page's
    TIME_STEPS steps within the tolerance its text states."""
    path = demos.checkpoint_path("transformer")
    sentence = "Tom asked Mary why she had left the party so early."
    with cpu_threads(1):
        for dtype, steps, tolerance in ((torch.float64, 32, 1e-5),
                                        (torch.float32, ch12.TIME_STEPS, kv_study.AGREEMENT_TOLERANCE)):
            loaded = load_checkpoint(path, dtype=dtype)
            src, lens = kv_study.source_batch(sentence, loaded.src_vocab)
            runs = {s: kv_study.decode_steps(loaded.model, src, lens, steps, s)[:2] for s in kv_study.STRATEGIES}
            same, diff = kv_study.agreement(runs)
            assert same and diff < tolerance, (dtype, diff)
