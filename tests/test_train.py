"""Checkpoints, BLEU evaluation and the training command on tiny data."""

import json
import math
import random
import shutil
import sys
import uuid
from pathlib import Path

import pytest
import sacrebleu
import torch
from torch.testing import assert_close

from course.translation import data as D
from course.translation import evaluate as E
from course.translation import train as T
from course.translation import training as TR
from course.translation.checkpoint import load_checkpoint, read_checkpoint, save_checkpoint, software_versions
from course.translation.evaluate import bucket_of, corpus_bleu, evaluate, report_path
from course.translation.models import MODEL_NAMES, build_model, config_class, family
from course.translation.vocab import BOS_ID, EOS_ID, Vocab, tokenize_en

pytestmark = pytest.mark.slow  # trains models

ROOT = Path(__file__).resolve().parent.parent
WORDS = {"i": "我", "you": "你", "he": "他", "like": "喜欢", "see": "看", "tea": "茶", "cats": "猫",
         "books": "书", "big": "大", "small": "小", "red": "红", "old": "老"}


def tiny_tsv(path, n=300, seed=0):
    """A toy English-Chinese file: each word has a fixed Chinese rendering."""
    rng = random.Random(seed)
    words, lines, seen = list(WORDS), [], set()
    while len(lines) < n:
        sent = [rng.choice(words) for _ in range(rng.randint(1, 6))]
        en = " ".join(sent).capitalize() + "."
        if en in seen:
            continue
        seen.add(en)
        lines.append(f"{en}\t{''.join(WORDS[w] for w in sent)}。\tCC-BY 2.0 (France) toy #{len(lines)}")
    path.write_text("\ufeff" + "\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def learner_pkg(tmp_path_factory):
    """A correct learner package: a copy of solutions/*.py under a fresh name."""
    name = f"learner_{uuid.uuid4().hex[:8]}"
    root = tmp_path_factory.mktemp("staged")
    shutil.copytree(ROOT / "solutions", root / name, ignore=shutil.ignore_patterns("__pycache__"))
    sys.path.insert(0, str(root))
    yield name
    sys.path.remove(str(root))
    for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[mod]


def small_model(name, src_v=30, tgt_v=25, seed=0):
    torch.manual_seed(seed)
    if name == "transformer":
        cfg = config_class(name)(src_v, tgt_v, num_hiddens=32, ffn_num_hiddens=64, num_heads=4, num_layers=2,
                                 dropout=0.0)
    else:
        cfg = config_class(name)(src_v, tgt_v, embed_size=16, num_hiddens=32, num_layers=2, dropout=0.0)
    return build_model(name, cfg).eval()


# ---------------------------------------------------------------- checkpoints

@pytest.mark.parametrize("name", MODEL_NAMES)
def test_checkpoint_round_trip_in_half_precision(name, tmp_path, learner_pkg):
    model = small_model(name)
    src_vocab, tgt_vocab = Vocab([f"w{i}" for i in range(26)]), Vocab([chr(0x4E00 + i) for i in range(21)])
    path = save_checkpoint(tmp_path / f"{name}.pt", model, name, src_vocab, tgt_vocab, seed=7,
                           metrics={"valid_loss": 1.5}, train={"minutes": 0.1})
    payload = read_checkpoint(path)
    assert payload["weights_dtype"] == "float16" and payload["seed"] == 7
    assert all(v.dtype == torch.float16 for v in payload["state_dict"].values() if v.is_floating_point())
    assert payload["versions"] == software_versions() and payload["versions"]["torch"] == str(torch.__version__)
    src = torch.tensor([[4, 5, 6, 7], [8, 9, 0, 0]])
    lens, tgt_in = torch.tensor([4, 2]), torch.tensor([[BOS_ID, 4, 5], [BOS_ID, 6, 0]])
    expected = model(src, lens, tgt_in)
    for impl in ("solutions", learner_pkg):
        loaded = load_checkpoint(path, impl=impl)
        assert loaded.src_vocab.itos == src_vocab.itos and loaded.tgt_vocab.itos == tgt_vocab.itos
        assert loaded.meta["metrics"] == {"valid_loss": 1.5} and loaded.meta["config"]["num_hiddens"] == 32
        assert not loaded.model.training
        assert_close(loaded.model(src, lens, tgt_in), expected, atol=2e-2, rtol=2e-2)  # fp16 weights


def test_default_transformer_checkpoint_fits_in_15_mb(tmp_path):
    """Default shape with the vocabulary sizes of the development data (4,410 en, 2,404 zh)."""
    name = "transformer"
    cfg = config_class(name)(4500, 2500, **{k: v for k, v in family(name).train_defaults.items()
                                            if k in config_class(name).__dataclass_fields__})
    model = build_model(name, cfg)
    path = save_checkpoint(tmp_path / "t.pt", model, name, Vocab([f"e{i}" for i in range(4496)]),
                           Vocab([f"z{i}" for i in range(2496)]), seed=0)
    assert path.stat().st_size <= 15_000_000


def test_tied_embeddings_are_saved_once_and_stay_tied_after_loading(tmp_path, learner_pkg):
    vocabs = Vocab([f"w{i}" for i in range(26)]), Vocab([chr(0x4E00 + i) for i in range(21)])
    sizes = {}
    for tie in (False, True):
        torch.manual_seed(0)
        cfg = config_class("transformer")(30, 25, num_hiddens=32, ffn_num_hiddens=64, num_heads=4, num_layers=1,
                                          dropout=0.0, tie_embeddings=tie)
        model = build_model("transformer", cfg).eval()
        assert (model.decoder.dense.weight is model.decoder.embedding.weight) is tie
        path = save_checkpoint(tmp_path / f"tie{tie}.pt", model, "transformer", *vocabs, seed=0)
        sizes[tie] = path.stat().st_size
        src, lens, tgt_in = torch.tensor([[4, 5, 6]]), torch.tensor([3]), torch.tensor([[BOS_ID, 4, 5]])
        for impl in ("solutions", learner_pkg):
            loaded = load_checkpoint(path, impl=impl).model
            assert (loaded.decoder.dense.weight is loaded.decoder.embedding.weight) is tie
            assert_close(loaded(src, lens, tgt_in), model(src, lens, tgt_in), atol=2e-2, rtol=2e-2)
    assert sizes[False] - sizes[True] >= 25 * 32 * 2  # one (V, d) float16 matrix fewer


def test_loading_a_bad_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="course.translation.train"):
        load_checkpoint(tmp_path / "missing.pt")
    torch.save({"hello": 1}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="not an Attention Lab"):
        load_checkpoint(tmp_path / "other.pt")


# ---------------------------------------------------------------- BLEU

class LookupModel(torch.nn.Module):
    """Outputs a fixed target id sequence per source (first source id picks it)."""

    def __init__(self, outputs, vocab_size):
        super().__init__()
        self.dummy = torch.nn.Parameter(torch.zeros(1))
        self.outputs, self.V = outputs, vocab_size

    def encode(self, src, src_valid_lens):
        return (src[:, 0], 0)

    def decode_step(self, tokens, state):
        first, t = state
        logits = torch.zeros(first.shape[0], self.V)
        for b, key in enumerate(first.tolist()):
            seq = self.outputs[key] + [EOS_ID]
            logits[b, seq[min(t, len(seq) - 1)]] = 10.0
        return logits, (first, t + 1), {}

    def reorder_state(self, state, index):
        return (state[0][index], state[1])


def test_evaluate_matches_sacrebleu_and_buckets():
    pairs = [D.Pair("Cats.", "猫。", "", 1), D.Pair("I like tea.", "我喜欢茶。", "", 2),
             D.Pair("He sees big red old books and small cats today.", "他今天看大红旧书和小猫。", "", 3)]
    src_vocab = Vocab(["cats", "i", "he"] + sorted({t for p in pairs for t in tokenize_en(p.en)} - {"cats", "i", "he"}))
    tgt_vocab = Vocab(sorted(set("猫。我喜欢爱茶他今天看大红旧书和小")))
    hyps = ["猫。", "我爱茶。", "他看大红书和小猫。"]
    outputs = {src_vocab.stoi[w]: tgt_vocab.encode(list(h)) for w, h in zip(["cats", "i", "he"], hyps)}
    model = LookupModel(outputs, len(tgt_vocab))
    result = evaluate(model, pairs, src_vocab, tgt_vocab, beam_size=2, batch_size=2)
    refs = [p.zh for p in pairs]
    expected = sacrebleu.corpus_bleu(hyps, [refs], tokenize="zh").score
    assert 0 < expected < 100
    assert result["bleu"]["greedy"] == pytest.approx(expected)
    assert result["bleu"]["beam"] == pytest.approx(expected)
    assert corpus_bleu(hyps, refs) == pytest.approx(expected)
    assert bucket_of(1) == "1-4" and bucket_of(5) == "5-6" and bucket_of(10) == "9-10" and bucket_of(40) == "13+"
    short = result["buckets"]["1-4"]
    assert short["count"] == 2
    assert short["greedy"] == pytest.approx(sacrebleu.corpus_bleu(hyps[:2], [refs[:2]], tokenize="zh").score)
    assert result["buckets"]["9-10"]["count"] == 1 and result["buckets"]["13+"]["count"] == 0
    assert result["examples"]["1-4"][1] == {"en": "I like tea.", "reference": "我喜欢茶。",
                                            "greedy": "我爱茶。", "beam": "我爱茶。"}
    assert result["long"]["count"] == 0 and result["long"]["greedy"] is None


def test_evaluate_pools_long_pairs_into_buckets_but_not_into_overall_bleu():
    pairs = [D.Pair("Cats.", "猫。", "", 1), D.Pair("I like tea.", "我喜欢茶。", "", 2)]
    long_pairs = [D.Pair("He sees big red old books and small cats today with us.", "他今天和我们看大红旧书和小猫。",
                         "", 3)]
    words = sorted({t for p in pairs + long_pairs for t in tokenize_en(p.en)} - {"cats", "i", "he"})
    src_vocab = Vocab(["cats", "i", "he"] + words)
    tgt_vocab = Vocab(sorted(set("猫。我喜欢爱茶他今天看大红旧书和小们")))
    hyps = ["猫。", "我爱茶。", "他看大红书和小猫。"]
    outputs = {src_vocab.stoi[w]: tgt_vocab.encode(list(h)) for w, h in zip(["cats", "i", "he"], hyps)}
    result = evaluate(LookupModel(outputs, len(tgt_vocab)), pairs, src_vocab, tgt_vocab, beam_size=2,
                      long_pairs=long_pairs)
    refs = [p.zh for p in pairs + long_pairs]
    assert result["num_sentences"] == 2 and result["num_long_extra"] == 1
    assert result["bleu"]["greedy"] == pytest.approx(corpus_bleu(hyps[:2], refs[:2]))
    assert result["buckets"]["11-12"]["count"] == 1
    assert result["long"]["count"] == 1
    assert result["long"]["beam"] == pytest.approx(corpus_bleu(hyps[2:], refs[2:]))


def test_choose_alpha_takes_the_best_validation_bleu_and_the_first_of_a_tie(monkeypatch):
    pairs = [D.Pair("Cats.", "猫。", "", 1), D.Pair("I like tea.", "我喜欢茶。", "", 2)]
    src_vocab = Vocab(sorted({t for p in pairs for t in tokenize_en(p.en)}))
    tgt_vocab = Vocab(sorted(set("猫。我喜欢爱茶")))
    by_alpha = {0.6: ["猫。", "我爱。"], 1.0: ["猫。", "我喜欢茶。"], 1.4: ["猫。", "我喜欢茶。"]}
    seen = []

    def fake_decode_all(model, src_ids, method, beam_size, batch_size, alpha, no_repeat_ngram=0):
        seen.append((method, alpha))
        return [tgt_vocab.encode(list(h)) for h in by_alpha[alpha]]

    monkeypatch.setattr(E, "decode_all", fake_decode_all)
    alphas = tuple(by_alpha)
    alpha, scores = E.choose_alpha(None, pairs, src_vocab, tgt_vocab, alphas=alphas)
    assert seen == [("beam", a) for a in alphas]
    refs = [p.zh for p in pairs]
    assert [s["bleu"] for s in scores] == pytest.approx([corpus_bleu(by_alpha[a], refs) for a in alphas])
    assert scores[0]["bleu"] < scores[1]["bleu"] == scores[2]["bleu"]
    assert alpha == 1.0  # 1.0 and 1.4 tie: the first listed wins


def test_evaluate_passes_the_length_penalty_to_beam_search(monkeypatch):
    pairs = [D.Pair("Cats.", "猫。", "", 1)]
    src_vocab, tgt_vocab = Vocab(["cats", "."]), Vocab(["猫", "。"])
    alphas = []

    def fake_beam(model, src, lens, beam_size, alpha, no_repeat_ngram):
        alphas.append((alpha, no_repeat_ngram))
        return [tgt_vocab.encode(["猫", "。"]) for _ in range(src.shape[0])]

    monkeypatch.setattr(E, "beam_search", fake_beam)
    result = evaluate(LookupModel({}, len(tgt_vocab)), pairs, src_vocab, tgt_vocab, methods=("beam",), alpha=1.4,
                      no_repeat_ngram=3)
    assert alphas == [(1.4, 3)] and result["beam_alpha"] == 1.4 and result["no_repeat_ngram"] == 3
    assert result["examples"]["1-4"][0]["beam"] == "猫。"


def test_choose_ngram_takes_the_best_mean_of_greedy_and_beam_and_the_larger_n_of_a_tie(monkeypatch):
    pairs = [D.Pair("Cats.", "猫。", "", 1), D.Pair("I like tea.", "我喜欢茶。", "", 2)]
    src_vocab = Vocab(sorted({t for p in pairs for t in tokenize_en(p.en)}))
    tgt_vocab = Vocab(sorted(set("猫。我喜欢爱茶")))
    outputs = {  # (method, n) -> hypotheses: n=2 is best for beam, n=3 best in the sum, n=4 ties n=3
        ("greedy", 0): ["猫猫猫。", "我爱。"], ("beam", 0): ["猫。", "我爱。"],
        ("greedy", 2): ["猫。", "我爱。"], ("beam", 2): ["猫。", "我喜欢茶。"],
        ("greedy", 3): ["猫。", "我喜欢茶。"], ("beam", 3): ["猫。", "我喜欢茶。"],
        ("greedy", 4): ["猫。", "我喜欢茶。"], ("beam", 4): ["猫。", "我喜欢茶。"],
    }
    seen = []

    def fake_decode_all(model, src_ids, method, beam_size, batch_size, alpha, no_repeat_ngram=0):
        seen.append((method, alpha, no_repeat_ngram))
        return [tgt_vocab.encode(list(h)) for h in outputs[method, no_repeat_ngram]]

    monkeypatch.setattr(E, "decode_all", fake_decode_all)
    n, scores = E.choose_ngram(None, pairs, src_vocab, tgt_vocab, alpha=1.8, ngrams=(0, 2, 3, 4))
    assert seen == [(m, 1.8, k) for k in (0, 2, 3, 4) for m in ("greedy", "beam")]
    refs = [p.zh for p in pairs]
    assert [s["greedy"] for s in scores] == pytest.approx(
        [corpus_bleu(outputs["greedy", k], refs) for k in (0, 2, 3, 4)])
    assert n == 4  # 3 and 4 tie: the larger n (the looser guard) wins


@pytest.mark.parametrize("scores,expected", [
    ([(0, 34.60, 37.99), (2, 34.14, 37.88), (3, 34.54, 37.87), (4, 34.58, 38.00)], 4),  # 0 ahead by 0.005
    ([(0, 34.60, 38.30), (2, 34.14, 37.88), (4, 34.58, 38.00)], 0),  # 0 ahead by 0.16: no guard
    ([(0, 30.00, 33.00), (2, 31.00, 34.00), (3, 30.00, 33.00)], 2),  # a clear winner
    ([(0, 30.00, 33.00)], 0),
])
def test_pick_ngram_counts_gaps_under_a_tenth_of_a_point_as_ties_and_prefers_the_guard(scores, expected):
    assert E.NGRAM_TIE == 0.1
    assert E.pick_ngram([{"n": n, "greedy": g, "beam": b} for n, g, b in scores]) == expected


# ---------------------------------------------------------------- training

def test_lr_schedule_warms_up_then_decays():
    assert TR.lr_factor(0, 10, 0.0) == pytest.approx(0.1)
    assert TR.lr_factor(9, 10, 0.0) == pytest.approx(1.0)
    assert TR.lr_factor(100, 10, 0.5) == pytest.approx(0.02 + 0.98 * 0.5)
    assert TR.lr_factor(100, 10, 1.0) == pytest.approx(0.02)


def test_fused_attention_matches_and_keeps_keys():
    model = small_model("transformer").train()  # dropout 0: training mode is deterministic
    src = torch.tensor([[4, 5, 6, 7], [8, 9, 0, 0]])
    lens, tgt_in = torch.tensor([4, 2]), torch.tensor([[BOS_ID, 4, 5], [BOS_ID, 6, 0]])
    expected, keys = model(src, lens, tgt_in), list(model.state_dict())
    assert TR.enable_fused_attention(model) == 3 * 2  # encoder: 1 per block, decoder: 2 per block
    assert list(model.state_dict()) == keys
    assert_close(model(src, lens, tgt_in), expected, atol=1e-5, rtol=1e-5)
    model.eval()
    assert_close(model(src, lens, tgt_in), expected, atol=1e-5, rtol=1e-5)


def test_shape_options_default_per_model_and_can_be_switched_off():
    base = ["--data", "x.tsv"]
    for name in MODEL_NAMES:
        args = T.parse_args(["--model", name, *base])
        for key, value in family(name).train_defaults.items():
            assert getattr(args, key) == value
    assert T.parse_args(["--model", "bahdanau", *base, "--no-bidirectional"]).bidirectional is False
    assert T.parse_args(["--model", "seq2seq", *base, "--bidirectional"]).bidirectional is True


@pytest.mark.parametrize("model_name,flag", [("transformer", "--bidirectional"), ("bahdanau", "--tie-embeddings"),
                                             ("seq2seq", "--ffn-num-hiddens=512")])
def test_a_shape_option_of_another_model_is_a_clear_error(model_name, flag, capsys):
    with pytest.raises(SystemExit):
        T.parse_args(["--model", model_name, "--data", "x.tsv", flag])
    assert f"{flag.split('=')[0]} does not apply to --model {model_name}" in capsys.readouterr().err


def test_cuda_without_a_gpu_is_a_clear_error():
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(SystemExit, match="no CUDA GPU"):
        TR.pick_device("cuda")
    assert TR.pick_device("auto").type == "cpu"


def tiny_args(data, out, model, *extra):
    shape = ["--num-hiddens", "32", "--num-layers", "1", "--dropout", "0.0"]
    shape += ["--ffn-num-hiddens", "64", "--num-heads", "4"] if model == "transformer" else ["--embed-size", "16"]
    return ["--model", model, "--data", str(data), "--out", str(out), "--resume-dir", str(out / "resume"),
            "--device", "cpu", "--minutes", "3",
            "--test-size", "30", "--valid-size", "20", "--batch-size", "16", "--min-freq", "1",
            "--log-every", "1000", "--threads", "2", *shape, *extra]


@pytest.mark.parametrize("model_name,epochs", [("bahdanau", 8), ("transformer", 8)])
def test_tiny_training_reduces_loss_and_writes_everything(model_name, epochs, tmp_path):
    data, out = tiny_tsv(tmp_path / "toy.tsv", n=200), tmp_path / "ckpt"
    args = T.parse_args(tiny_args(data, out, model_name, "--max-epochs", str(epochs), "--lr", "3e-3",
                                  "--warmup", "10", "--beam-size", "2"))
    ckpt = TR.train(args)
    loaded = load_checkpoint(ckpt)
    splits, train_tok, _, _, _ = TR.build_data(args)
    examples = D.encode_pairs(train_tok, loaded.src_vocab, loaded.tgt_vocab)
    torch.manual_seed(0)
    fresh = build_model(model_name, config_class(model_name)(**loaded.meta["config"]))
    before, after = TR.mean_loss(fresh, examples, 64, "cpu"), TR.mean_loss(loaded.model, examples, 64, "cpu")
    # Uniform guessing costs ln(V); knowing only character frequencies about 0.9 of that.
    assert before > 0.8 * math.log(len(loaded.tgt_vocab)) and after < 0.7 * before
    metrics = loaded.meta["metrics"]
    assert metrics["epochs"] == pytest.approx(epochs) and metrics["tokens_per_s"] > 0
    assert set(metrics["test_bleu"]) == {"greedy", "beam"}
    report = json.loads(report_path(ckpt).read_text(encoding="utf-8"))
    assert report["num_sentences"] == len(splits.test) == 30
    assert report["bleu"] == metrics["test_bleu"]
    assert sum(b["count"] for b in report["buckets"].values()) == 30 + report["num_long_extra"]
    assert (out / "resume" / f"{model_name}.resume.pt").is_file()
    # The length penalty is the one that scored best on the validation set.
    tried = report["valid_beam_bleu_by_alpha"]
    assert [t["alpha"] for t in tried] == list(E.ALPHAS)
    assert report["beam_alpha"] == max(tried, key=lambda t: t["bleu"])["alpha"] == metrics["beam_alpha"]


def test_evaluate_command_reevaluates_a_checkpoint_and_keeps_its_training_record(tmp_path):
    data, out = tiny_tsv(tmp_path / "toy.tsv", n=150), tmp_path / "ckpt"
    T.main(tiny_args(data, out, "seq2seq", "--max-epochs", "1", "--no-eval", "--src-subword", "0"))
    before = read_checkpoint(out / "seq2seq.pt")
    assert before["src_subword"] is None and type(load_checkpoint(out / "seq2seq.pt").src_vocab) is Vocab  # words
    E.main([str(out / "seq2seq.pt"), "--data", str(data), "--beam-alpha", "1.4", "--beam-size", "2"])
    report = json.loads(report_path(out / "seq2seq.pt").read_text(encoding="utf-8"))
    after = read_checkpoint(out / "seq2seq.pt")
    assert report["beam_alpha"] == after["metrics"]["beam_alpha"] == 1.4
    assert report["valid_beam_bleu_by_alpha"] is None  # given, not chosen
    assert report["model"] == "seq2seq" and report["config"] == before["config"]
    assert report["train_metrics"]["steps"] == before["metrics"]["steps"]
    assert after["metrics"]["test_bleu"] == report["bleu"] and after["metrics"]["steps"] == before["metrics"]["steps"]


def test_resume_continues_where_it_stopped(tmp_path):
    data, out = tiny_tsv(tmp_path / "toy.tsv", n=120), tmp_path / "ckpt"
    T.main(tiny_args(data, out, "seq2seq", "--max-epochs", "2", "--no-eval"))
    first_payload = read_checkpoint(out / "seq2seq.pt")
    first = first_payload["metrics"]
    T.main(tiny_args(data, out, "seq2seq", "--max-epochs", "4", "--no-eval", "--resume"))
    second_payload = read_checkpoint(out / "seq2seq.pt")
    second = second_payload["metrics"]
    # The English BPE vocabulary (the default) travels in the resume file: the same pieces after resuming.
    assert first_payload["src_subword"] and second_payload["src_subword"] == first_payload["src_subword"]
    assert second_payload["src_vocab"] == first_payload["src_vocab"]
    assert second["steps"] == 2 * first["steps"] and second["epochs"] == pytest.approx(4)
    assert second["train_minutes"] >= first["train_minutes"]


def test_validation_curve_is_logged_and_survives_resume(tmp_path):
    data, out = tiny_tsv(tmp_path / "toy.tsv", n=120), tmp_path / "ckpt"
    T.main(tiny_args(data, out, "seq2seq", "--max-epochs", "1", "--no-eval", "--valid-every", "1e-9"))
    first = read_checkpoint(out / "seq2seq.pt")["metrics"]
    curve = first["valid_curve"]
    # One check after every step (the interval is tiny), plus the final one.
    assert len(curve) == first["steps"] + 1
    assert [p["step"] for p in curve] == list(range(1, first["steps"] + 1)) + [first["steps"]]
    assert curve[-1]["valid_loss"] == first["valid_loss"]
    assert all(p["valid_loss"] > 0 and p["minutes"] >= 0 for p in curve)
    # The training loss is recorded at each check too (the running average then), and at the end it is the run's.
    assert all(p["train_loss"] > 0 for p in curve) and curve[-1]["train_loss"] == first["train_loss"]
    assert len({p["train_loss"] for p in curve}) > 1
    T.main(tiny_args(data, out, "seq2seq", "--max-epochs", "2", "--no-eval", "--resume", "--valid-every", "0"))
    second = read_checkpoint(out / "seq2seq.pt")["metrics"]["valid_curve"]
    # Resumed: the earlier checks are kept (not the first run's final point), no new periodic ones.
    assert second[:-1] == curve[:-1] and second[-1]["step"] == 2 * first["steps"]


@pytest.mark.parametrize("model_name", ["bahdanau", "transformer"])
def test_moving_average_starts_midway_in_models_that_keep_attention_weights(model_name, tmp_path):
    # The live model holds the last forward's attention weights (not copyable); the average must not mind.
    data, out = tiny_tsv(tmp_path / "toy.tsv", n=120), tmp_path / "ckpt"
    T.main(tiny_args(data, out, model_name, "--max-epochs", "2", "--no-eval", "--ema", "0.9", "--ema-start", "0",
                     "--valid-every", "1e-9"))
    metrics = read_checkpoint(out / f"{model_name}.pt")["metrics"]
    assert metrics["ema"]["updates"] == metrics["steps"]
    assert all("valid_loss_raw" in p for p in metrics["valid_curve"])


def test_moving_average_is_what_gets_saved_and_continues_after_resume(tmp_path):
    data, out = tiny_tsv(tmp_path / "toy.tsv", n=120), tmp_path / "ckpt"
    ema = ["--no-eval", "--ema", "0.5", "--ema-start", "0", "--lr", "1e-2", "--warmup", "1"]
    T.main(tiny_args(data, out, "seq2seq", "--max-epochs", "1", *ema))
    first = read_checkpoint(out / "seq2seq.pt")["metrics"]
    assert first["ema"] == {"decay": 0.5, "start": 0.0, "updates": first["steps"]}
    T.main(tiny_args(data, out, "seq2seq", "--max-epochs", "2", "--resume", *ema))
    saved = read_checkpoint(out / "seq2seq.pt")
    metrics = saved["metrics"]
    # Resumed, the average goes on from where it was instead of starting again.
    assert metrics["ema"]["updates"] == metrics["steps"] == 2 * first["steps"]
    resume = torch.load(out / "resume" / "seq2seq.resume.pt", weights_only=True)
    live = resume["model"]
    average = {k[len("module."):]: v for k, v in resume["ema"].items() if k.startswith("module.")}
    assert set(average) == set(live) == set(saved["state_dict"])
    name = "decoder.dense.weight"
    assert_close(saved["state_dict"][name].float(), average[name], atol=1e-3, rtol=1e-3)  # float16 on disk
    assert (live[name] - average[name]).abs().max() > 2e-3  # lr 1e-2, decay 0.5: they differ
    # The reported losses belong to the weights they name.
    args = T.parse_args(tiny_args(data, out, "seq2seq"))
    _, _, valid_tok, _, _ = TR.build_data(args)
    loaded = load_checkpoint(out / "seq2seq.pt")
    valid_ex = D.encode_pairs(valid_tok, loaded.src_vocab, loaded.tgt_vocab)
    assert TR.mean_loss(loaded.model, valid_ex, 128, "cpu") == pytest.approx(metrics["valid_loss"], rel=1e-2)
    loaded.model.load_state_dict(live)
    assert TR.mean_loss(loaded.model, valid_ex, 128, "cpu") == pytest.approx(metrics["valid_loss_raw"], rel=1e-4)


def test_without_a_moving_average_the_live_weights_are_saved(tmp_path):
    data, out = tiny_tsv(tmp_path / "toy.tsv", n=120), tmp_path / "ckpt"
    T.main(tiny_args(data, out, "seq2seq", "--max-epochs", "1", "--no-eval", "--ema", "0.9", "--ema-start", "1"))
    saved = read_checkpoint(out / "seq2seq.pt")
    live = torch.load(out / "resume" / "seq2seq.resume.pt", weights_only=True)
    assert live["ema"] is None and "ema" not in saved["metrics"] and "valid_loss_raw" not in saved["metrics"]
    assert_close(saved["state_dict"]["decoder.dense.weight"].float(), live["model"]["decoder.dense.weight"],
                 atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("flags,message", [(["--ema", "1.5"], "--ema must be a decay"),
                                           (["--ema-start", "-0.1"], "--ema-start is a fraction")])
def test_bad_moving_average_options_are_clear_errors(flags, message, capsys):
    with pytest.raises(SystemExit):
        T.parse_args(["--model", "seq2seq", "--data", "x.tsv", *flags])
    assert message in capsys.readouterr().err
