"""Tiny, untrained (seeded) translator checkpoints for the demo tests.

Untrained weights translate into nonsense, but deterministically: enough to test
that a model rebuilt from other modules translates identically, and that the
pages show what the model computed. Written to a temporary folder only.
"""

import json
from pathlib import Path

import torch

from course.translation import demos
from course.translation.checkpoint import save_checkpoint
from course.translation.data import Pair
from course.translation.evaluate import evaluate
from course.translation.models import MODEL_NAMES, build_model, config_class
from course.translation.subword import SubwordVocab
from course.translation.vocab import Vocab, tokenize_en

TINY = {
    "seq2seq": dict(embed_size=12, num_hiddens=16, num_layers=2, dropout=0.0),
    "bahdanau": dict(embed_size=12, num_hiddens=16, num_layers=2, dropout=0.0),
    "transformer": dict(num_hiddens=16, ffn_num_hiddens=32, num_heads=2, num_layers=2, dropout=0.0, max_len=64),
}
TGT_CHARS = "我你他是很好的书老师车站在哪里今天冷喜欢看不去学校昨天妈妈会游泳。？！"
EVAL_PAIRS = (
    ("i am happy.", "我很高兴。"), ("tom is a teacher.", "汤姆是老师。"),
    ("where is the station?", "车站在哪里？"), ("it is cold today.", "今天很冷。"),
    ("we like to read books and we read them every day.", "我们喜欢读书，我们每天都读。"),
)


SUBWORD_MODELS = ("transformer",)  # these get a BPE source vocabulary, as shipped; the others whole words
SUBWORD_SIZE = 60  # small enough that most probe words are split into pieces


def vocabs(name="seq2seq"):
    """Source vocabulary covering every probe word (BPE for SUBWORD_MODELS); a small character vocabulary."""
    sentences = [tokenize_en(s) for s in demos.PROBE_SENTENCES + tuple(en for en, _ in EVAL_PAIRS)]
    if name in SUBWORD_MODELS:
        src_vocab = SubwordVocab.train(sentences, SUBWORD_SIZE, min_frequency=1)
    else:
        src_vocab = Vocab(sorted({tok for words in sentences for tok in words}))
    return src_vocab, Vocab(list(dict.fromkeys(TGT_CHARS)))


def write_tiny_checkpoints(out_dir, names=MODEL_NAMES, reports=True, seed=0):
    """Seeded untrained checkpoints <out_dir>/<name>.pt (and .bleu.json from a real evaluate run)."""
    out_dir = Path(out_dir)
    pairs = [Pair(en, zh, "test", i + 1) for i, (en, zh) in enumerate(EVAL_PAIRS)]
    for i, name in enumerate(names):
        src_vocab, tgt_vocab = vocabs(name)
        config = config_class(name)(len(src_vocab), len(tgt_vocab), **TINY[name])
        torch.manual_seed(seed + i)
        model = build_model(name, config).eval()
        with torch.no_grad():  # spread the weights a little so that outputs differ between steps
            for p in model.parameters():
                p.add_(0.3 * torch.randn_like(p))
        save_checkpoint(out_dir / f"{name}.pt", model, name, src_vocab, tgt_vocab, seed, half=False)
        if reports:
            result = evaluate(model, pairs, src_vocab, tgt_vocab, beam_size=2, num_examples=2)
            (out_dir / f"{name}.bleu.json").write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")
    return out_dir
