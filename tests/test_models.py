"""The three translators: built from solutions or a learner's copy, decoding, attention maps."""

import shutil
import sys
import uuid
from pathlib import Path

import pytest
import torch
from torch.testing import assert_close

from course.translation.decoding import beam_search, greedy_decode, translate
from course.translation.model_base import import_impl
from course.translation.models import MODEL_NAMES, build_model, config_class
from course.translation.rnn import run_encoder
from course.translation.vocab import BOS_ID, EOS_ID, PAD_ID, Vocab

ROOT = Path(__file__).resolve().parent.parent
SRC_V, TGT_V = 23, 19


def tiny_config(name):
    """A small config with dropout 0 so outputs are deterministic."""
    if name == "transformer":
        return config_class(name)(SRC_V, TGT_V, num_hiddens=16, ffn_num_hiddens=32, num_heads=4,
                                  num_layers=2, dropout=0.0, max_len=64)
    return config_class(name)(SRC_V, TGT_V, embed_size=12, num_hiddens=16, num_layers=2, dropout=0.0)


def build(name, impl="solutions", seed=0):
    torch.manual_seed(seed)
    return build_model(name, tiny_config(name), impl).eval()


def bidirectional(name, bidi=True, seed=0):
    """The tiny RNN model `name` with a bidirectional (or one-way) encoder, eval mode."""
    cfg = tiny_config(name)
    cfg.bidirectional = bidi
    torch.manual_seed(seed)
    return build_model(name, cfg).eval()


def sample_batch():
    """Two sources (lengths 5 and 3) and teacher-forcing inputs (lengths 4 and 6)."""
    src = torch.tensor([[4, 5, 6, 7, 8], [9, 10, 11, PAD_ID, PAD_ID]])  # (2, 5)
    lens = torch.tensor([5, 3])
    tgt_in = torch.tensor([[BOS_ID, 4, 5, 6, PAD_ID, PAD_ID], [BOS_ID, 7, 8, 9, 10, 11]])  # (2, 6)
    return src, lens, tgt_in


@pytest.fixture(scope="module")
def learner_pkg(tmp_path_factory):
    """A correct learner package: a copy of solutions/*.py under a fresh name on sys.path."""
    name = f"learner_{uuid.uuid4().hex[:8]}"
    root = tmp_path_factory.mktemp("staged")
    (root / name).mkdir()
    for f in (ROOT / "solutions").glob("*.py"):
        shutil.copy(f, root / name / f.name)
    sys.path.insert(0, str(root))
    yield name
    sys.path.remove(str(root))
    for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[mod]


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_same_keys_and_outputs_from_solutions_and_a_copy(name, learner_pkg):
    ref, copy = build(name, "solutions"), build(name, learner_pkg, seed=1)
    assert list(ref.state_dict()) == list(copy.state_dict())
    copy.load_state_dict(ref.state_dict())
    src, lens, tgt_in = sample_batch()
    logits = ref(src, lens, tgt_in)
    assert logits.shape == (2, 6, TGT_V)
    assert_close(copy(src, lens, tgt_in), logits)
    if name != "seq2seq":  # the attention modules really come from the copy
        mods = {type(m).__module__ for m in copy.modules()}
        assert any(m.startswith(learner_pkg + ".") for m in mods)
        assert not any(m.startswith("solutions.") for m in mods)


@pytest.mark.parametrize("name,bidi", [(name, False) for name in MODEL_NAMES] + [("seq2seq", True), ("bahdanau", True)])
def test_padding_does_not_change_a_sentence(name, bidi):
    model = bidirectional(name) if bidi else build(name)  # bidirectional: padding must not reach the backward pass
    src, lens, tgt_in = sample_batch()
    batched = model(src, lens, tgt_in)  # (2, 6, V)
    alone = model(src[1:, :3], lens[1:], tgt_in[1:])  # the short source without padding
    assert_close(batched[1:], alone, atol=1e-5, rtol=1e-5)


def test_an_unfinished_exercise_is_a_clear_error(tmp_path):
    unfinished = Path(tmp_path) / "unfinished_pkg"
    shutil.copytree(ROOT / "solutions", unfinished, ignore=shutil.ignore_patterns("__pycache__"))
    text = (unfinished / "ex06_positional_encoding.py").read_text()
    raising = "super().__init__()\n        raise NotImplementedError('PositionalEncoding.__init__')"
    text = text.replace("super().__init__()", raising, 1)
    (unfinished / "ex06_positional_encoding.py").write_text(text)
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(NotImplementedError, match="PositionalEncoding.__init__ is not implemented yet"):
            build_model("transformer", tiny_config("transformer"), "unfinished_pkg")
    finally:
        sys.path.remove(str(tmp_path))
        for mod in [m for m in sys.modules if m.split(".")[0] == "unfinished_pkg"]:
            del sys.modules[mod]


def test_impl_errors_are_clear():
    with pytest.raises(ImportError, match="importable package"):
        import_impl("no_such_package_xyz", "ex04_bahdanau")
    with pytest.raises(ValueError, match="seq2seq, bahdanau, transformer"):
        build_model("lstm", {})


def test_fixed_context_is_the_encoders_final_state():
    """The baseline's context and initial state are h_n of the unpadded source."""
    model = build("seq2seq")
    src, lens, tgt_in = sample_batch()
    state = model.encode(src, lens)
    context, hidden = state
    _, enc_hidden = model.encoder.rnn(model.encoder.embedding(src[:1]))  # unpadded row 0
    assert_close(context[:1], enc_hidden[-1], atol=1e-6, rtol=1e-6)
    assert_close(hidden[:, :1], enc_hidden, atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_greedy_equals_argmax_of_the_full_sequence(name):
    """Incremental decoding (caches, step by step) agrees with one teacher-forced pass."""
    model = build(name, seed=3)
    src, lens, _ = sample_batch()
    outputs, _ = greedy_decode(model, src, lens, max_len=8)
    for b, ids in enumerate(outputs):
        tgt_in = torch.tensor([[BOS_ID] + ids])  # (1, t+1)
        logits = model(src[b : b + 1, : int(lens[b])], lens[b : b + 1], tgt_in)[0]  # (t+1, V)
        logits[:, [PAD_ID, BOS_ID]] = float("-inf")  # never generated
        full = logits.argmax(-1)  # (t+1,)
        assert full[: len(ids)].tolist() == ids
        if len(ids) < 8:  # stopped early: the next prediction is <eos>
            assert int(full[len(ids)]) == EOS_ID


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_beam_of_one_is_greedy(name):
    model = build(name, seed=5)
    src, lens, _ = sample_batch()
    assert beam_search(model, src, lens, beam_size=1, max_len=7) == greedy_decode(model, src, lens, max_len=7)[0]


class TableModel(torch.nn.Module):
    """Next-token log-probabilities read from a table: tables[first source token][previous token]."""

    def __init__(self, tables):
        super().__init__()
        self.dummy = torch.nn.Parameter(torch.zeros(1))
        self.tables = tables  # (S, V, V) log-probabilities

    def encode(self, src, src_valid_lens):
        return src[:, 0]  # (B,): which table each sentence uses

    def decode_step(self, tokens, state):
        return self.tables[state, tokens[:, 0]], state, {}

    def reorder_state(self, state, index):
        return state[index]


def test_beam_search_finds_what_greedy_misses():
    # ids: 0 pad 1 bos 2 eos 3 unk 4 A 5 B. From <bos>: A 0.6, B 0.4.
    # After A every next token is unlikely (eos 0.2); after B <eos> has 0.9.
    # Greedy: A then A (0.27); beam keeps B and finds B <eos> (0.36).
    eps = 1e-6
    table = [[eps] * 6 for _ in range(6)]
    table[BOS_ID][4], table[BOS_ID][5] = 0.6, 0.4
    table[4][EOS_ID], table[4][4], table[4][5] = 0.2, 0.45, 0.35
    table[5][EOS_ID], table[5][4] = 0.9, 0.1
    for row in table:
        row[PAD_ID] = eps
    model = TableModel(torch.log(torch.tensor([table])))  # one hand-made table
    src, lens = torch.tensor([[0]]), torch.tensor([1])
    assert greedy_decode(model, src, lens, max_len=2)[0] == [[4, 4]]
    assert beam_search(model, src, lens, beam_size=3, max_len=2) == [[5]]


def best_by_enumeration(table, max_len, alpha):
    """Every output up to max_len tokens (ending in <eos>, or cut at max_len), scored as beam search scores them."""
    real = [t for t in range(table.shape[0]) if t not in (PAD_ID, BOS_ID)]
    best, best_score, frontier = None, float("-inf"), [((), BOS_ID, 0.0)]
    for length in range(1, max_len + 1):
        grown = []
        for seq, prev, score in frontier:
            for tok in real:
                s = score + float(table[prev, tok])
                if tok == EOS_ID or length == max_len:
                    normed = s / ((5 + length) / 6) ** alpha  # GNMT's length penalty
                    if normed > best_score:
                        best, best_score = list(seq) + ([] if tok == EOS_ID else [tok]), normed
                else:
                    grown.append((seq + (tok,), tok, s))
        frontier = grown
    return best


@pytest.mark.parametrize("alpha", [0.0, 0.6, 2.0])
def test_wide_beam_search_is_exhaustive(alpha):
    # Vocabulary: pad bos eos unk A B. With max_len 4 a step has at most 121
    # finite candidates (the last: 27 live prefixes x 4 tokens, 13 ended), so
    # a beam of 128 never drops one: for each of 50 random tables it must
    # return the best output of all, as the enumeration scores them.
    V, S, max_len = 6, 50, 4
    gen = torch.Generator().manual_seed(7)
    tables = torch.log_softmax(torch.randn(S, V, V, generator=gen), dim=-1)  # (S, V, V)
    model = TableModel(tables)
    src, lens = torch.arange(S).unsqueeze(1), torch.ones(S, dtype=torch.long)  # sentence b uses table b
    masked = tables.clone()
    masked[:, :, [PAD_ID, BOS_ID]] = float("-inf")  # never generated
    masked = torch.log_softmax(masked, dim=-1)
    expected = [best_by_enumeration(masked[b], max_len, alpha) for b in range(S)]
    assert beam_search(model, src, lens, beam_size=128, max_len=max_len, alpha=alpha) == expected


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_translate_returns_tokens_and_attention_maps(name):
    torch.manual_seed(0)
    src_vocab = Vocab(["i", "like", "tea", "."])
    tgt_vocab = Vocab(list("我喜欢喝茶。"))
    cfg = tiny_config(name)
    cfg.src_vocab_size, cfg.tgt_vocab_size = len(src_vocab), len(tgt_vocab)
    model = build_model(name, cfg)
    result = translate(model, "I like green tea.", src_vocab, tgt_vocab, max_len=6, top_k=3)
    assert result.source_tokens == ["i", "like", "<unk>", "tea", "."]
    assert result.text == "".join(result.tokens) and len(result.tokens) <= 6
    steps = len(result.top_next)
    assert steps == len(result.tokens) + 1 and all(len(row) == 3 for row in result.top_next)
    assert all(row[0][1] >= row[1][1] >= row[2][1] for row in result.top_next)
    if name == "seq2seq":
        assert result.cross_attention is None
        return
    assert result.cross_attention.shape == (steps, 5)
    assert_close(torch.tensor(result.cross_attention).sum(-1), torch.ones(steps), atol=1e-5, rtol=0)
    if name == "transformer":
        assert result.cross_attention_heads.shape == (2, 4, steps, 5)
        assert result.encoder_self_attention.shape == (2, 4, 5, 5)
        dec = torch.tensor(result.decoder_self_attention)  # (L, H, T, T)
        assert dec.shape == (2, 4, steps, steps)
        assert_close(dec.sum(-1), torch.ones(2, 4, steps), atol=1e-5, rtol=0)
        assert float(dec.triu(diagonal=1).abs().max()) == 0.0  # causal
    with pytest.raises(ValueError, match="no words"):
        translate(model, "   ", src_vocab, tgt_vocab)


def test_io_dropout_acts_in_training_only_and_keeps_the_state_dict(learner_pkg):
    cfg = tiny_config("bahdanau")
    cfg.io_dropout = 0.5
    torch.manual_seed(0)
    model = build_model("bahdanau", cfg, learner_pkg)
    src, lens, tgt_in = sample_batch()
    model.train()
    assert not torch.equal(model(src, lens, tgt_in), model(src, lens, tgt_in))
    model.eval()
    plain = build("bahdanau")
    plain.load_state_dict(model.state_dict())
    assert_close(model(src, lens, tgt_in), plain(src, lens, tgt_in), atol=0, rtol=0)


def test_attention_dropout_overrides_the_constructor_value_only_when_set():
    cfg = config_class("bahdanau")(SRC_V, TGT_V, embed_size=12, num_hiddens=16, num_layers=2, dropout=0.3)
    assert build_model("bahdanau", cfg).decoder.attention.dropout.p == 0.3  # default: same as dropout
    cfg.attention_dropout = 0.0
    model = build_model("bahdanau", cfg)
    assert model.decoder.attention.dropout.p == 0.0 and model.decoder.rnn.dropout == 0.3


@pytest.mark.parametrize("impl", ["solutions", "learner"])
def test_zero_decoder_init_leaves_attention_as_the_only_path_from_the_source(impl, learner_pkg):
    cfg = tiny_config("bahdanau")
    cfg.decoder_init = "zeros"
    torch.manual_seed(0)
    model = build_model("bahdanau", cfg, learner_pkg if impl == "learner" else "solutions").eval()
    src, lens, tgt_in = sample_batch()
    outputs, hidden_state, valid_lens = model.encode(src, lens)
    assert not hidden_state.any() and outputs.abs().sum() > 0 and torch.equal(valid_lens, lens)
    # Same weights, decoder started from the encoder: different outputs, same state_dict keys.
    bridged = build("bahdanau")
    bridged.load_state_dict(model.state_dict())
    assert bridged.encode(src, lens)[1].abs().sum() > 0
    assert not torch.allclose(model(src, lens, tgt_in), bridged(src, lens, tgt_in))


def test_unknown_decoder_init_is_a_clear_error():
    cfg = tiny_config("bahdanau")
    cfg.decoder_init = "random"
    with pytest.raises(ValueError, match="decoder_init must be 'encoder' or 'zeros'"):
        build_model("bahdanau", cfg)


@pytest.mark.parametrize("name", ["seq2seq", "bahdanau"])
def test_bidirectional_encoder_keeps_shapes_and_merges_the_final_states_of_both_directions(name):
    model = bidirectional(name)
    src, lens, tgt_in = sample_batch()
    outputs, hidden = run_encoder(model.encoder, src, lens)  # (2, 5, 16), (2 layers, 2, 16)
    assert outputs.shape == (2, 5, 16) and hidden.shape == (2, 2, 16)
    half = 8
    for row, n in enumerate(lens.tolist()):
        # forward half: the state after the last real word; backward half: after reading back to word 0
        assert_close(hidden[-1, row, :half], outputs[row, n - 1, :half])
        assert_close(hidden[-1, row, half:], outputs[row, 0, half:])
    assert model(src, lens, tgt_in).shape == (2, 6, TGT_V)
    plain_outputs, plain_hidden = model.encoder(src[:1])  # the module's own forward merges the same way
    assert_close(plain_hidden, hidden[:, :1])
    assert_close(plain_outputs, outputs[:1])


@pytest.mark.parametrize("bidi", [True, False])
def test_only_a_bidirectional_encoder_sees_later_words_at_the_first_position(bidi):
    model = bidirectional("bahdanau", bidi)
    src, lens, _ = sample_batch()
    changed = src.clone()
    changed[0, 4] = 12  # the last word of sentence 0
    first = run_encoder(model.encoder, src, lens)[0][0, 0]  # (H,)
    first_changed = run_encoder(model.encoder, changed, lens)[0][0, 0]
    assert torch.allclose(first, first_changed) is not bidi


def test_bidirectional_encoder_with_odd_width_is_a_clear_error():
    cfg = tiny_config("bahdanau")
    cfg.bidirectional, cfg.num_hiddens = True, 15
    with pytest.raises(ValueError, match="num_hiddens=15 is odd"):
        build_model("bahdanau", cfg)
