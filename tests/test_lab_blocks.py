"""The training lab's blocks are exercise 7's own, rewired by swapping sub-modules (course.lessons.lab_blocks):
each wiring against a hand-written formula on one block, a learner's AddNorm reaching the lab's output, the
attention-only block drawing nothing for its removed FFN, and the lab's dropout leaving values and draws alone."""

import copy
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from torch.nn.functional import layer_norm

from course.lessons import lab_blocks, training_lab as tl
from solutions.ex05_multihead import MultiHeadAttention
from solutions.ex07_transformer import PositionWiseFFN, TransformerDecoderBlock, TransformerEncoderBlock

ROOT = Path(__file__).resolve().parent.parent
TINY = tl.LabConfig(num_hiddens=8, num_heads=2, ffn_num_hiddens=16, num_layers=2, seq_len=5)


def seeded(build, seed=0):
    torch.manual_seed(seed)
    return build()


def plain_copies(block, names):
    """Hook-free reference copies of block's sub-layers: {name: module with the same weights}."""
    d, f, h = TINY.num_hiddens, TINY.ffn_num_hiddens, TINY.num_heads
    out = {}
    for name in names:
        fresh = PositionWiseFFN(d, f, d) if name == "ffn" else MultiHeadAttention(d, d, d, d, h, 0.0)
        fresh.load_state_dict(getattr(block, name).state_dict())
        out[name] = fresh.eval()
    return out


def ln_of(slot):
    """x -> layer_norm(x) with the slot's LayerNorm parameters."""
    return lambda x: layer_norm(x, (x.shape[-1],), slot.ln.weight, slot.ln.bias)


def test_every_variants_blocks_are_the_reference_exercise_7_blocks():
    for variant in tl.VARIANTS:
        model = seeded(lambda: tl.LabTransformer(tl.variant_config(variant, TINY)))
        assert all(type(b) is TransformerEncoderBlock for b in model.encoder), variant
        assert all(type(b) is TransformerDecoderBlock for b in model.decoder), variant
        assert [b.i for b in model.decoder] == list(range(TINY.num_layers))
    lm = seeded(lambda: tl.LabTransformer(replace(TINY, decoder_only=True, attention_only=True)))
    assert all(type(b) is TransformerEncoderBlock for b in lm.encoder)


@torch.no_grad()
def test_post_norm_blocks_compute_ln_of_x_plus_f_x_and_the_switches_drop_one_part():
    X, lens = torch.randn(2, 5, 8), torch.tensor([5, 3])  # (B, T, d), (B,)
    for change, wiring in (({}, lambda x, y, ln: ln(x + y)), ({"residual": False}, lambda x, y, ln: ln(y)),
                           ({"layernorm": False}, lambda x, y, ln: x + y)):
        block = seeded(lambda: lab_blocks.encoder_block(replace(TINY, **change))).eval()
        ref = plain_copies(block, ("attention", "ffn"))
        has_ln = change.get("layernorm", True)
        ln1, ln2 = (ln_of(block.addnorm1), ln_of(block.addnorm2)) if has_ln else (lambda x: x, lambda x: x)
        Y = wiring(X, ref["attention"](X, X, X, lens), ln1)  # (B, T, d)
        expected = wiring(Y, ref["ffn"](Y), ln2)  # (B, T, d)
        torch.testing.assert_close(block(X, lens), expected, rtol=0, atol=1e-6, msg=str(change))


@torch.no_grad()
def test_pre_norm_hooks_normalise_each_sub_layers_input_and_leave_the_stream_and_the_memory_alone():
    config = replace(TINY, pre_norm=True)
    X, lens = torch.randn(2, 5, 8), torch.tensor([5, 3])  # (B, T, d), (B,)
    block = seeded(lambda: lab_blocks.encoder_block(config)).eval()
    ref = plain_copies(block, ("attention", "ffn"))
    n1, n2 = ln_of(block.addnorm1), ln_of(block.addnorm2)
    Y = X + ref["attention"](n1(X), n1(X), n1(X), lens)  # (B, T, d): x + f(ln(x))
    torch.testing.assert_close(block(X, lens), Y + ref["ffn"](n2(Y)), rtol=0, atol=1e-6)

    dec = seeded(lambda: lab_blocks.decoder_block(config, 0), seed=1).eval()
    ref = plain_copies(dec, ("attention1", "attention2", "ffn"))
    memory, T = torch.randn(2, 4, 8), torch.randn(2, 5, 8)  # (B, S, d), (B, T, d)
    causal = tl.causal_lens(2, 5)  # (B, T)
    d1, d2, d3 = ln_of(dec.addnorm1), ln_of(dec.addnorm2), ln_of(dec.addnorm3)
    Y = T + ref["attention1"](d1(T), d1(T), d1(T), causal)  # (B, T, d)
    Z = Y + ref["attention2"](d2(Y), memory, memory, lens)  # (B, T, d): the memory is not normalised
    out, _ = dec(T, lab_blocks.fresh_state(memory, lens, 1))
    torch.testing.assert_close(out, Z + ref["ffn"](d3(Z)), rtol=0, atol=1e-6)


@torch.no_grad()
def test_a_copied_pre_norm_model_normalises_with_its_own_layernorms():
    model = seeded(lambda: tl.LabTransformer(replace(TINY, pre_norm=True))).eval()
    twin = copy.deepcopy(model)
    src = torch.randint(0, TINY.vocab_size, (2, TINY.seq_len))  # (B, T)
    before = model.encode(src)  # (B, T, d)
    twin.encoder[0].addnorm1.ln.weight.mul_(3)
    assert torch.equal(model.encode(src), before)
    assert not torch.allclose(twin.encode(src), before)


def test_the_attention_only_block_draws_nothing_for_its_removed_ffn():
    config = replace(TINY, attention_only=True)
    torch.manual_seed(0)
    blocks = [lab_blocks.encoder_block(config) for _ in range(2)]
    after = torch.get_rng_state()
    torch.manual_seed(0)
    d, h = TINY.num_hiddens, TINY.num_heads
    alone = [MultiHeadAttention(d, d, d, d, h, 0.0) for _ in range(2)]  # what the two attentions alone draw
    assert torch.equal(torch.get_rng_state(), after)
    for block, mha in zip(blocks, alone):
        assert all(torch.equal(a, b) for a, b in zip(block.attention.state_dict().values(), mha.state_dict().values()))
        assert isinstance(block.ffn, torch.nn.Identity)
    X = torch.randn(2, 5, d)  # (B, T, d)
    block = blocks[0].eval()
    with torch.no_grad():
        Y = block.addnorm1(X, block.attention(X, X, X, None))  # (B, T, d)
        torch.testing.assert_close(block(X, None), Y, rtol=0, atol=0)  # nothing after the attention's sub-layer


def test_the_labs_dropout_returns_its_input_and_draws_nothing_in_training_mode():
    dropout = torch.nn.Dropout(lab_blocks.DROPOUT).train()
    X = torch.randn(3, 4, requires_grad=True)
    state = torch.get_rng_state()
    assert dropout(X) is X and torch.equal(torch.get_rng_state(), state)


def test_parameter_names_are_exercise_7s():
    names = set(seeded(lambda: tl.LabTransformer(TINY)).state_dict())
    assert {"encoder.0.addnorm1.ln.weight", "decoder.1.attention1.W_q.weight", "decoder.1.attention2.W_o.weight",
            "decoder.0.addnorm3.ln.bias", "decoder.0.ffn.dense2.weight"} <= names
    assert not any(part in name for name in names for part in ("sub1", "self_attention", "cross_attention"))


@pytest.fixture
def learner_package(tmp_path, monkeypatch):
    """make(name, edit): a copy of solutions/ importable as `name`, with edit(ex07 source) -> its ex07 source."""
    made = []

    def make(name, edit=lambda source: source):
        package = tmp_path / name
        shutil.copytree(ROOT / "solutions", package, ignore=shutil.ignore_patterns("__pycache__"))
        ex07 = package / "ex07_transformer.py"
        ex07.write_text(edit(ex07.read_text(encoding="utf-8")), encoding="utf-8")
        made.append(name)
        return name

    monkeypatch.syspath_prepend(str(tmp_path))
    yield make
    for mod in [m for m in sys.modules if m.split(".")[0] in made]:
        del sys.modules[mod]


@torch.no_grad()
def test_a_learners_addnorm_is_the_one_the_lab_runs(learner_package):
    right = "return self.ln(self.dropout(Y) + X)"
    faithful = learner_package("lab_learner_same")
    wrong = learner_package("lab_learner_no_residual", lambda s: s.replace(right, "return self.ln(self.dropout(Y))"))
    src = torch.randint(0, TINY.vocab_size, (2, TINY.seq_len))  # (B, T)
    tgt_in = tl.decoder_input(src, TINY.vocab_size)  # (B, T)

    def logits(impl):
        model = seeded(lambda: tl.LabTransformer(TINY, impl)).eval()
        assert type(model.encoder[0]).__module__ == f"{impl}.ex07_transformer"
        return model(src, tgt_in)  # (B, T, V)
    reference = logits("solutions")
    assert torch.equal(logits(faithful), reference)
    assert not torch.allclose(logits(wrong), reference, atol=1e-3)
