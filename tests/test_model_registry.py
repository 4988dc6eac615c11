"""A model family added by one registry entry: trained, saved, loaded, decoded and offered by the usual code."""

import math
from dataclasses import dataclass

import numpy as np
import pytest
import torch
from torch import nn

from course.translation import demos, models
from course.translation import train as T
from course.translation import training as TR
from course.translation.checkpoint import load_checkpoint
from course.translation.decoding import translate
from course.translation.model_base import Translator, import_impl
from grader.checks.demo import demo_check
from grader.text import render

NAME = "lookup"
PAIRS = (("i am happy.", "我很高兴。"), ("tom is a teacher.", "汤姆是老师。"),
         ("it is cold today.", "今天很冷。"), ("we read books.", "我们读书。"),
         ("he is my friend.", "他是我的朋友。"), ("my mother can swim.", "我妈妈会游泳。"))


@dataclass
class LookupConfig:
    src_vocab_size: int
    tgt_vocab_size: int
    num_hiddens: int = 16


class LookupTranslator(Translator):
    """No recurrence: each output step attends (the reference DotProductAttention) over the source embeddings."""

    def __init__(self, config, impl="solutions"):
        super().__init__()
        self.config, d = config, config.num_hiddens
        self.src_embedding = nn.Embedding(config.src_vocab_size, d)
        self.tgt_embedding = nn.Embedding(config.tgt_vocab_size, d)
        self.attention = import_impl(impl, "ex03_scoring").DotProductAttention(0.0)
        self.output = nn.Linear(2 * d, config.tgt_vocab_size)

    def _step_logits(self, tokens, state):
        keys, valid_lens = state
        queries = self.tgt_embedding(tokens)  # (B, T, d)
        context = self.attention(queries, keys, keys, valid_lens)  # (B, T, d)
        return self.output(torch.cat([queries, context], dim=-1))  # (B, T, V)

    def forward(self, src, src_valid_lens, tgt_in):
        return self._step_logits(tgt_in, self.encode(src, src_valid_lens))

    def encode(self, src, src_valid_lens):
        return self.src_embedding(src), src_valid_lens

    def decode_step(self, tokens, state):
        logits = self._step_logits(tokens, state)
        return logits[:, -1], state, {"cross": self.attention.attention_weights[:, -1]}  # (B, V), (B, T_src)

    def reorder_state(self, state, index):
        keys, valid_lens = state
        return keys[index], valid_lens[index]

    def encoder_attention(self):
        return None


LOOKUP = models.Family(NAME, "Lookup", "lookup", LookupConfig, LookupTranslator,
                       impl_modules=("ex01_softmax", "ex03_scoring"), exercises=("ex03",), attention_maps=("cross",),
                       train_defaults=dict(num_hiddens=16, batch_size=8, lr=1e-2, warmup=5, label_smoothing=0.0))


@pytest.fixture
def registered(monkeypatch, tmp_path):
    """The lookup family in the registry (removed afterwards); checkpoints and progress in tmp_path."""
    monkeypatch.setitem(models.FAMILIES, NAME, LOOKUP)
    monkeypatch.setenv("ATTENTION_LAB_CHECKPOINTS", str(tmp_path / "checkpoints"))
    monkeypatch.setenv("ATTENTION_LAB_HOME", str(tmp_path / "home"))
    return tmp_path


def toy_tsv(path, copies=8):
    """The pairs, each repeated with a numbered variant, as a Tatoeba-style TSV."""
    lines = [f"{en[:-1]} {i}.\t{zh}\tCC-BY 2.0 (France) toy #{i}" for i in range(copies) for en, zh in PAIRS]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_registered_family_trains_saves_loads_and_decodes_through_the_usual_code(registered):
    out = registered / "checkpoints"
    args = T.parse_args(["--model", NAME, "--data", str(toy_tsv(registered / "toy.tsv")), "--out", str(out),
                         "--resume-dir", str(registered / "resume"), "--device", "cpu", "--minutes", "1",
                         "--max-epochs", "2", "--test-size", "6", "--valid-size", "6", "--min-freq", "1",
                         "--src-subword", "0", "--log-every", "1000", "--threads", "1", "--no-eval"])
    assert args.num_hiddens == 16 and args.batch_size == 8  # the entry's train_defaults
    path = TR.train(args)
    assert path == demos.checkpoint_path(NAME) and demos.available_models() == [NAME]
    loaded = load_checkpoint(path)
    assert isinstance(loaded.model, LookupTranslator) and loaded.name == NAME
    assert loaded.model.config == LookupConfig(len(loaded.src_vocab), len(loaded.tgt_vocab), 16)
    assert loaded.meta["metrics"]["valid_loss"] < math.log(len(loaded.tgt_vocab))  # better than uniform guessing
    result = translate(loaded.model, "i am happy.", loaded.src_vocab, loaded.tgt_vocab, max_len=6)
    steps = len(result.tokens) + 1  # each output character, then <eos> (or the last step at max_len)
    assert result.cross_attention.shape[0] in (steps, steps - 1)
    assert np.allclose(np.asarray(result.cross_attention).sum(-1), 1.0, atol=1e-5)
    beam = translate(loaded.model, "i am happy.", loaded.src_vocab, loaded.tgt_vocab, max_len=6, beam_size=2)
    assert beam.decoding["method"] == "beam"


def test_the_demos_and_the_grader_read_the_entry(registered):
    assert NAME in demos.learner_models() and models.families_with("heads") == ("transformer",)
    assert models.source_modules() == ("model_base", "rnn", "transformer", "lookup", "models")
    skipped = demo_check("ex03", NAME)  # no checkpoint yet: the note names the family and how to train it
    message = render(skipped.spec["skip"])
    assert "Lookup" in message and f"--model {NAME}" in message


def test_a_name_can_be_registered_once_and_attention_maps_are_checked():
    with pytest.raises(ValueError, match="already registered"):
        models.register(models.FAMILIES["bahdanau"])
    with pytest.raises(ValueError, match="unknown attention maps"):
        models.register(models.Family("x", "X", "x", LookupConfig, LookupTranslator, attention_maps=("all",)))
    with pytest.raises(ValueError, match="unknown model 'x'"):
        models.build_model("x", {})
