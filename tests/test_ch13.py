"""Chapter 13's sink-and-window experiment: the Window masks against hand-written ones, the masked key/value-cache
forward against a cache that really evicts keys and against the model's own forward, the weight on <bos> against
chapter 7's head study, and every figure the text states recomputed from the shipped sweep (and, slow, one
setting of the sweep recomputed from the checkpoint and the data)."""

import json
import math

import pytest
import torch

from course.common.i18n import LANGS, t
from course.translation import demos, head_study, sinks, sinks_views
from course.translation.decoding import greedy_decode
from course.translation.sinks import Window
from course.translation.transformer import causal_mask

DATA = demos.checkpoint_dir().parent.parent / "shared" / "data" / "tatoeba-cmn-eng.tsv"


def grid(rows):
    """A bool mask from rows of '1'/'.' characters."""
    return torch.tensor([[c == "1" for c in row] for row in rows])


# ---- the masks, by hand ---------------------------------------------------------------------------------------


def test_a_window_of_3_sees_itself_and_the_two_before():
    expected = grid(["1....",
                     "11...",
                     "111..",
                     ".111.",
                     "..111"])
    assert torch.equal(Window(3).mask(0, 5), expected)


def test_a_window_of_2_with_the_sink_also_sees_bos():
    expected = grid(["1.....",
                     "11....",
                     "111...",
                     "1.11..",
                     "1..11.",
                     "1...11"])
    assert torch.equal(Window(2, sinks=1).mask(0, 6), expected)


def test_two_sinks_and_a_window_of_1():
    expected = grid(["1....",
                     "11...",
                     "111..",
                     "11.1.",
                     "11..1"])
    assert torch.equal(Window(1, sinks=2).mask(0, 5), expected)


def test_hiding_bos_leaves_position_0_itself_and_every_other_key():
    expected = grid(["1...",
                     ".1..",
                     ".11.",
                     ".111"])
    assert torch.equal(Window(evict_first=True).mask(0, 4), expected)


def test_new_positions_after_a_cache_get_the_rows_of_the_whole_mask():
    """Decoding step by step asks for rows t0.. only: they are those rows of the mask of the whole sequence."""
    expected = grid(["1..11.",
                     "1...11"])  # rows 4 and 5 of the W = 2 + sink mask above
    assert torch.equal(Window(2, sinks=1).mask(4, 2), expected)
    for window in (Window(), Window(1), Window(3, sinks=1), Window(evict_first=True)):
        whole = window.mask(0, 7)
        assert all(torch.equal(window.mask(t0, 1), whole[t0 : t0 + 1, : t0 + 1]) for t0 in range(7))


def test_no_window_is_the_causal_mask_and_a_window_as_long_as_the_sequence_too():
    causal = torch.tril(torch.ones(6, 6, dtype=torch.bool))
    assert torch.equal(causal_mask(0, 6), causal) and torch.equal(Window().mask(0, 6), causal)
    assert torch.equal(Window(6).mask(0, 6), causal) and torch.equal(Window(6, sinks=1).mask(0, 6), causal)
    assert not torch.equal(Window(5).mask(0, 6), causal)


@pytest.mark.parametrize("bad, message", [
    (dict(size=0), "size"), (dict(size=2.5), "size"), (dict(sinks=-1), "sink"),
    (dict(size=3, sinks=1, evict_first=True), "cannot both"),
])
def test_a_window_that_makes_no_sense_is_refused_with_a_reason(bad, message):
    with pytest.raises(ValueError, match=message):
        Window(**bad)


def test_setting_keys_name_each_setting_once():
    keys = [w.key for w in sinks.settings()]
    assert len(keys) == len(set(keys)) == 2 + 2 * len(sinks.SIZES)
    assert keys[:4] == ["full", "no_bos", "w1", "w1_sink1"]


# ---- the masked forward on the shipped model -----------------------------------------------------------------


@pytest.fixture(scope="module")
def shipped():
    """(the shipped Transformer loaded, a teacher-forcing batch of the test sentences its BLEU report ships)."""
    from course.translation.checkpoint import load_checkpoint

    path = demos.checkpoint_path("transformer")
    report = demos.read_bleu_report("transformer")
    if not path.is_file() or report is None:
        pytest.skip("the shipped Transformer is not here")
    loaded = load_checkpoint(path)
    return loaded, head_study.make_batch(head_study.report_pairs(report), loaded.src_vocab, loaded.tgt_vocab)


def masked_logits(model, batch, window):
    """Teacher-forced logits (B, T, V) through forward_cached with the window's mask."""
    state = model.decoder.start_cache(model.encoder(batch.src, batch.src_valid_lens), batch.src_valid_lens)
    return model.decoder.forward_cached(batch.tgt_in, state, window.mask)[0]


@torch.no_grad()
def evicting_logits(model, batch, size, sinks_kept):
    """A reference written the other way round: decode the reference one position at a time with a cache that
    really drops keys and values, keeping the first `sinks_kept` and the last size - 1 before each new one, and
    letting the new position see everything left. Logits (B, T, V)."""
    state = model.decoder.start_cache(model.encoder(batch.src, batch.src_valid_lens), batch.src_valid_lens)
    out, held = [], []  # held: the positions whose keys and values the cache holds
    for step in range(batch.tgt_in.shape[1]):
        kept = len(held)
        logits, state = model.decoder.forward_cached(batch.tgt_in[:, step : step + 1], state,
                                   lambda t0, T, device: torch.ones(T, kept + T, dtype=torch.bool, device=device))
        out.append(logits[:, 0])
        held.append(step)
        # the next position, step + 1, sees the sinks and positions step + 2 - size .. step + 1 (itself)
        keep = [i for i, p in enumerate(held) if p < sinks_kept or p >= step + 2 - size]
        state.self_kv = [(k[:, :, keep], v[:, :, keep]) for k, v in state.self_kv]
        held = [held[i] for i in keep]
    return torch.stack(out, dim=1)


@pytest.mark.slow
@pytest.mark.parametrize("size, sinks_kept", [(1, 0), (2, 1), (3, 0), (3, 1)])
def test_the_masked_forward_is_a_cache_that_evicts(shipped, size, sinks_kept):
    loaded, batch = shipped
    model = loaded.model.eval()
    with torch.no_grad():
        masked = masked_logits(model, batch, Window(size, sinks=sinks_kept))
    evicted = evicting_logits(model, batch, size, sinks_kept)
    real = batch.tgt_out != 0  # (B, T): padding rows differ (they see pads), and are never scored
    torch.testing.assert_close(masked[real], evicted[real], rtol=1e-4, atol=1e-4)


@pytest.mark.slow
def test_a_window_as_long_as_every_sentence_is_the_unrestricted_model_exactly(shipped):
    loaded, batch = shipped
    model = loaded.model.eval()
    T = batch.tgt_in.shape[1]
    with torch.no_grad():
        full = masked_logits(model, batch, Window())
        through_blocks = model(batch.src, batch.src_valid_lens, batch.tgt_in)  # the model's own forward
        assert torch.equal(masked_logits(model, batch, Window(T)), full)
        assert torch.equal(masked_logits(model, batch, Window(T, sinks=1)), full)
        assert not torch.allclose(masked_logits(model, batch, Window(T - 1)), full)  # the longest sentence feels it
    real = batch.tgt_out != 0
    torch.testing.assert_close(full[real], through_blocks[real], rtol=1e-4, atol=1e-4)
    src, lens = batch.src, batch.src_valid_lens
    plain = greedy_decode(model, src, lens)[0]
    long_window = greedy_decode(sinks.WindowedTranslator(model, Window(200)), src, lens)[0]
    assert long_window == plain and max(map(len, plain)) < 200


@pytest.mark.slow
def test_the_loss_and_the_weight_on_bos_agree_with_chapter_7s_study(shipped):
    """No window: the loss is head_study's plain loss and the weight on <bos> its bos_share, both computed
    through the blocks (the d2l modules), not through the cache."""
    loaded, batch = shipped
    model = loaded.model.eval()
    loss, count, sink, rows = sinks.teacher_forced(model, batch, Window())
    acc, plain = head_study.token_scores(model, batch)
    assert count == head_study.num_characters(batch) and loss / count == pytest.approx(plain, rel=1e-5)
    shares = head_study.bos_share(model, batch)["bos"].tolist()
    assert [s / rows for s in sink] == pytest.approx(shares, rel=1e-5)
    # a window of 1 without the sink: only position 0 sees <bos>, and it is never counted: no weight at all
    _, _, none, _ = sinks.teacher_forced(model, batch, Window(1))
    assert none == [0.0] * len(sink)


# ---- the shipped sweep and the text's figures -----------------------------------------------------------------


@pytest.fixture(scope="module")
def sweep():
    """The shipped sweep, or a skip."""
    found = sinks.load_shipped()
    if found is None:
        pytest.skip("no checkpoints/transformer.sinks.json")
    return found


def row(sweep, key):
    """The measured row named `key`, looked up here without the module's find()."""
    matches = [r for r in sweep["settings"] if r["key"] == key]
    assert len(matches) == 1, key
    return matches[0]


def joined(items, lang):
    """A list as the text writes it, written out here again."""
    items = [str(i) for i in items]
    if len(items) == 1:
        return items[0]
    return ("、".join(items[:-1]) + " 和 " if lang == "zh" else ", ".join(items[:-1]) + " and ") + items[-1]


def page_text(sweep, key, lang):
    """A findings text as the page renders it."""
    return t(key, lang, **sinks_views.claims(sweep, lang))


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"settings": 3}', "\udcff"])
def test_a_broken_sweep_file_says_how_to_write_it_again(tmp_path, monkeypatch, content):
    (tmp_path / "transformer.sinks.json").write_text(content, encoding="utf-8", errors="surrogateescape")
    monkeypatch.setenv("ATTENTION_LAB_CHECKPOINTS", str(tmp_path))
    with pytest.raises(ValueError, match="is not a sink sweep .*python -m course.translation.sinks --data PATH"):
        sinks.load_shipped()
    (tmp_path / "transformer.sinks.json").unlink()
    assert sinks.load_shipped() is None


def test_the_sweep_measured_every_setting_and_the_unrestricted_bleu_is_the_courses(sweep):
    assert [r["key"] for r in sweep["settings"]] == [w.key for w in sinks.settings()]
    report = demos.read_bleu_report("transformer")
    if report is None:
        pytest.skip("no BLEU report")
    # the course's own report, computed by evaluate.py without any window: the same greedy BLEU
    assert row(sweep, "full")["bleu"] == pytest.approx(report["bleu"]["greedy"], abs=1e-9)
    assert sweep["sentences"] == report["num_sentences"] and sweep["no_repeat_ngram"] == report["no_repeat_ngram"]
    for r in sweep["settings"]:
        assert r["perplexity"] == pytest.approx(math.exp(r["loss"]))
        assert len(r["sink"]) == 3 and all(0 <= s <= 1 for s in r["sink"])


@pytest.mark.parametrize("lang", LANGS)
def test_the_setup_and_the_summary_state_the_sweeps_figures(sweep, lang):
    full = row(sweep, "full")
    setup = page_text(sweep, "ch13.setup.body", lang)
    for figure in (f"{sweep['sentences']:,}", f"{sweep['mean_length']:.1f}", str(sweep["max_length"]),
                   str(sweep["max_length"] + 1)):
        assert figure in setup, figure
    # a window of max_length + 1 positions (the longest target and its <bos>) is every position of every sentence
    T = sweep["max_length"] + 1
    assert torch.equal(Window(T).mask(0, T), torch.tril(torch.ones(T, T, dtype=torch.bool)))
    body = page_text(sweep, "ch13.sweep.body", lang)
    for figure in (f"{full['loss']:.3f}", f"{full['perplexity']:.2f}", f"{full['bleu']:.1f}",
                   joined([f"{s:.2f}" for s in full["sink"]], lang)):
        assert figure in body, figure


@pytest.mark.parametrize("lang", LANGS)
def test_hiding_bos_alone_hurts_as_the_text_says(sweep, lang):
    full, no_bos = row(sweep, "full"), row(sweep, "no_bos")
    assert no_bos["loss"] > full["loss"] + 0.1 and no_bos["bleu"] < full["bleu"] - 5  # "hurts"
    assert no_bos["sink"] == [0.0, 0.0, 0.0]
    text = page_text(sweep, "ch13.sweep.evicted", lang)
    for figure in (f"{no_bos['loss']:.3f}", f"{no_bos['perplexity']:.2f}", f"{no_bos['bleu']:.1f}"):
        assert figure in text, figure


@pytest.mark.parametrize("lang", LANGS)
def test_the_sink_lowers_the_loss_at_every_window_and_without_it_the_loss_grows_ever_faster(sweep, lang):
    sizes = list(range(1, 9))
    plain = [row(sweep, f"w{s}")["loss"] for s in sizes]
    kept = [row(sweep, f"w{s}_sink1")["loss"] for s in sizes]
    assert all(k < p for k, p in zip(kept, plain))  # "at every window"
    rises = [a - b for a, b in zip(plain, plain[1:])]  # from W to W - 1... read backwards: W = 1 -> 2 first
    assert all(r > 0 for r in rises) and rises == sorted(rises, reverse=True)  # grows at every step, more each step
    full = row(sweep, "full")["loss"]
    taken_back = [(p - k) / (p - full) for p, k in zip(plain, kept)]
    assert all(0 < share < 1 for share in taken_back)  # "helps, but at no W here does it take back all of it"
    text = page_text(sweep, "ch13.sweep.window", lang)
    for figure in ("W = 1", "W = 8", f"{plain[0]:.3f}", f"{kept[0]:.3f}", f"{plain[-1]:.3f}", f"{kept[-1]:.3f}",
                   f"{100 * min(taken_back):.0f}%", f"{100 * max(taken_back):.0f}%"):
        assert figure in text, figure


@pytest.mark.parametrize("lang", LANGS)
def test_the_control_compares_the_sink_with_one_more_recent_key(sweep, lang):
    key_wins, sink_wins = [], []
    for s in range(1, 9):
        (sink_wins if row(sweep, f"w{s}_sink1")["loss"] < row(sweep, f"w{s + 1}")["loss"] else key_wins).append(s)
    assert key_wins and sink_wins and max(key_wins) < min(sink_wins)  # "with very small windows ... matter more"
    text = page_text(sweep, "ch13.sweep.control", lang)
    assert f"W = {joined(key_wins, lang)}" in text and f"W = {joined(sink_wins, lang)}" in text


@pytest.mark.parametrize("lang", LANGS)
def test_the_bleu_text_names_the_windows_where_the_sink_lowers_bleu(sweep, lang):
    worse = [s for s in range(1, 9) if row(sweep, f"w{s}_sink1")["bleu"] < row(sweep, f"w{s}")["bleu"]]
    assert worse
    first = worse[0]
    text = page_text(sweep, "ch13.sweep.bleu", lang)
    assert f"W = {joined(worse, lang)}" in text
    for figure in (f"W = {first}", f"{row(sweep, f'w{first}_sink1')['bleu']:.1f}", f"{row(sweep, f'w{first}')['bleu']:.1f}"):
        assert figure in text, figure


@pytest.mark.parametrize("lang", LANGS)
def test_with_the_sink_kept_smaller_windows_put_more_weight_on_it_in_every_layer(sweep, lang):
    for layer in range(3):
        weights = [row(sweep, f"w{s}_sink1")["sink"][layer] for s in range(1, 10)] + [row(sweep, "full")["sink"][layer]]
        assert weights == sorted(weights, reverse=True), layer
    at_1 = row(sweep, "w1_sink1")["sink"]
    assert at_1[0] < 0.5 < min(at_1[1:])  # "the later layers put most of their weight on the sink"
    # without the sink and W = 1 no later position sees <bos>
    assert row(sweep, "w1")["sink"] == [0.0, 0.0, 0.0]
    text = page_text(sweep, "ch13.sweep.mass", lang)
    assert joined([f"{s:.2f}" for s in row(sweep, "w1_sink1")["sink"]], lang) in text
    assert joined([f"{s:.2f}" for s in row(sweep, "full")["sink"]], lang) in text
    assert f"{sweep['mean_length']:.1f}" in page_text(sweep, "ch13.limits.body", lang)


@pytest.mark.slow
def test_the_shipped_sweep_is_what_the_checkpoint_gives(sweep):
    """One setting (the page's default, W = 4 with the sink) and the test set's lengths recomputed from the
    checkpoint and the data file, one thread as the command runs (about 20 s at load 4)."""
    from course.translation.checkpoint import load_checkpoint

    if not DATA.is_file():
        pytest.skip(f"the data file {DATA} is not here")
    loaded = load_checkpoint(demos.checkpoint_path("transformer"))
    pairs = sinks.test_pairs(loaded, DATA)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        fresh = sinks.measure(loaded, pairs, Window(4, sinks=1))
    finally:
        torch.set_num_threads(threads)
    lengths = sinks.target_lengths(loaded, pairs)
    assert (len(pairs), max(lengths), sum(lengths) / len(lengths)) == \
        (sweep["sentences"], sweep["max_length"], pytest.approx(sweep["mean_length"]))
    shipped = row(sweep, "w4_sink1")
    assert fresh["loss"] == pytest.approx(shipped["loss"], rel=1e-5)
    assert fresh["sink"] == pytest.approx(shipped["sink"], rel=1e-4)
    assert fresh["bleu"] == pytest.approx(shipped["bleu"], abs=1e-6)
    assert json.loads(json.dumps(fresh))["key"] == "w4_sink1"
