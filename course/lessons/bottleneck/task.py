"""The bottleneck measured where it lives: copying random sequences of 5 to 60 tokens.

Two GRU encoder-decoders learn the same synthetic task with the same steps and
(nearly) the same number of parameters. Both decoders are the reference
Bahdanau decoder (solutions.ex04_bahdanau); in the fixed-context model its
attention module is swapped for `FinalState`, which always hands back the
encoder's last output, so the two models differ only in where the context
comes from: one vector for the whole sequence, or attention at every step.
The fixed model gets a wider GRU to make up for the attention parameters it
lacks. Accuracy is measured on free-running (greedy) decoding.

Streamlit-free; `python -m course.lessons.bottleneck.task --out FILE` trains
both models and writes the results file the Bottleneck page shows.
"""

import argparse
import json
import platform
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import nn

from course.lessons.shipped_check import requirement
from course.lessons.torch_threads import cpu_threads
from course.model.train_loop import train_steps
from solutions.ex04_bahdanau import Seq2SeqAttentionDecoder

TASKS = ("copy", "reverse")
MODELS = ("fixed", "attention")
RESULTS = Path(__file__).with_name("results.json")


@dataclass
class BottleneckConfig:
    task: str = "copy"  # "copy": output = input; "reverse": output = input reversed
    vocab_size: int = 10  # random symbols; token id vocab_size is the decoder's start token
    embed_size: int = 32  # token embedding width (encoder and decoder)
    num_hiddens: int = 64  # GRU width of the attention model (also its attention width)
    min_len: int = 5  # shortest sequence, training and test
    max_len: int = 60  # longest sequence, training and test
    batch_size: int = 64  # sequences per training step (all of one length)
    steps: int = 400  # training steps, the same for both models
    lr: float = 1e-2  # Adam learning rate
    clip: float = 1.0  # gradient-norm clipping
    eval_per_length: int = 8  # test sequences per length (fresh, seeded apart from training)
    bucket_edges: tuple = (5, 10, 20, 30, 40, 50, 61)  # length buckets [a, b) of the results
    seed: int = 0  # seeds data and initialisation; the same seed gives the same numbers
    threads: int = 1  # torch CPU threads while training (the machine is shared)


class Encoder(nn.Module):
    """Embedding + one-layer GRU: outputs (B, T, H) and final state (1, B, H)."""

    def __init__(self, vocab_size, embed_size, num_hiddens):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size, num_hiddens, batch_first=True)

    def forward(self, X):
        """X (B, T) -> (outputs (B, T, H), hidden (1, B, H))."""
        return self.rnn(self.embedding(X))  # (B, T, H), (1, B, H)


class FinalState(nn.Module):
    """Stand-in for attention that ignores the query: the context is always the last encoder output."""

    def forward(self, queries, keys, values, valid_lens=None):
        """queries (B, n_q, q), values (B, n_k, v) -> (B, n_q, v), every row the last valid value."""
        B, n_q, n_k = queries.shape[0], queries.shape[1], values.shape[1]
        last = torch.full((B,), n_k - 1, dtype=torch.long) if valid_lens is None else valid_lens.long() - 1  # (B,)
        weights = nn.functional.one_hot(last, n_k).to(values.dtype)[:, None, :].expand(B, n_q, n_k)  # (B, n_q, n_k)
        self.attention_weights = weights
        return torch.bmm(weights, values)  # (B, n_q, v)


class CopyModel(nn.Module):
    """GRU encoder + the reference Bahdanau decoder, attending or with a fixed context."""

    def __init__(self, vocab_size, embed_size, num_hiddens, attention):
        super().__init__()
        self.attention = attention
        self.encoder = Encoder(vocab_size + 1, embed_size, num_hiddens)
        self.decoder = Seq2SeqAttentionDecoder(vocab_size + 1, embed_size, num_hiddens, num_layers=1)
        if not attention:
            self.decoder.attention = FinalState()
        self.bos = vocab_size

    def forward(self, src, tgt_in):
        """Teacher-forced logits (B, T_tgt, V + 1)."""
        state = self.decoder.init_state(self.encoder(src), None)
        logits, _ = self.decoder(tgt_in, state)
        return logits

    @torch.no_grad()
    def greedy(self, src, length):
        """Free-running decoding of `length` tokens: (B, length) predicted ids."""
        state = self.decoder.init_state(self.encoder(src), None)
        token = torch.full((src.shape[0], 1), self.bos, dtype=torch.long)  # (B, 1)
        out = []
        for _ in range(length):
            logits, state = self.decoder(token, state)  # (B, 1, V + 1)
            token = logits[:, :, : self.bos].argmax(-1)  # (B, 1): never predict the start token
            out.append(token)
        return torch.cat(out, dim=1)  # (B, length)


def count_parameters(model):
    """Number of learnable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def build_model(config, attention, num_hiddens=None):
    """A CopyModel of the config's sizes (num_hiddens overrides the GRU width)."""
    c = config
    return CopyModel(c.vocab_size, c.embed_size, num_hiddens or c.num_hiddens, attention)


def matched_hiddens(config):
    """Fixed-context GRU width whose parameter count is closest to the attention model's."""
    target = count_parameters(build_model(config, True))
    widths = range(config.num_hiddens, 2 * config.num_hiddens + 1)
    return min(widths, key=lambda h: abs(count_parameters(build_model(config, False, h)) - target))


def target_of(src, task):
    """The sequence the model must output: src itself (copy) or src reversed."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, not {task!r}")
    return src if task == "copy" else src.flip(1)


def make_batch(gen, batch_size, length, vocab_size):
    """Random tokens (batch_size, length) drawn uniformly from 0 .. vocab_size - 1."""
    return torch.randint(0, vocab_size, (batch_size, length), generator=gen)  # (B, T)


def decoder_input(tgt, bos):
    """Teacher forcing: start token, then the target shifted right by one (B, T)."""
    start = torch.full((tgt.shape[0], 1), bos, dtype=tgt.dtype)  # (B, 1)
    return torch.cat((start, tgt[:, :-1]), dim=1)  # (B, T)


def token_accuracy(pred, tgt):
    """Fraction of positions where the prediction equals the target."""
    return float((pred == tgt).float().mean())


def sequence_accuracy(pred, tgt):
    """Fraction of sequences whose every token is right."""
    return float((pred == tgt).all(dim=1).float().mean())


def bucket_of(length, edges):
    """Label 'a-b' of the bucket [edges[i], edges[i+1]) holding length."""
    for lo, hi in zip(edges[:-1], edges[1:]):
        if lo <= length < hi:
            return f"{lo}-{hi - 1}"
    raise ValueError(f"length {length} is outside the buckets {edges}")


def train(model, config, progress=None):
    """Train on lengths drawn uniformly from min_len..max_len; returns the loss per step."""
    c = config
    gen = torch.Generator().manual_seed(c.seed)
    opt = torch.optim.Adam(model.parameters(), lr=c.lr)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    model.train()

    def batches():
        for _ in range(c.steps):
            length = int(torch.randint(c.min_len, c.max_len + 1, (1,), generator=gen))
            yield make_batch(gen, c.batch_size, length, c.vocab_size)  # (B, T)

    def loss_of(src):
        tgt = target_of(src, c.task)  # (B, T)
        logits = model(src, decoder_input(tgt, model.bos))  # (B, T, V + 1)
        return loss_fn(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1))

    for done in train_steps(model, opt, batches(), loss_of, c.clip):
        losses.append(done.loss.item())
        if progress:
            progress(done.index + 1, c.steps)
    return losses


def evaluate(model, config):
    """Greedy-decoding accuracy per length bucket on fresh seeded sequences."""
    c = config
    gen = torch.Generator().manual_seed(c.seed + 1_000_003)  # never the training stream
    model.eval()
    sums = {}
    for length in range(c.min_len, c.max_len + 1):
        src = make_batch(gen, c.eval_per_length, length, c.vocab_size)  # (N, T)
        tgt = target_of(src, c.task)  # (N, T)
        pred = model.greedy(src, length)  # (N, T)
        s = sums.setdefault(bucket_of(length, c.bucket_edges), [0.0, 0.0, 0])
        s[0] += token_accuracy(pred, tgt) * len(src)
        s[1] += sequence_accuracy(pred, tgt) * len(src)
        s[2] += len(src)
    return [{"bucket": b, "token_acc": round(tok / n, 4), "seq_acc": round(seq / n, 4), "n": n}
            for b, (tok, seq, n) in sums.items()]


def run(config=None, progress=None):
    """Train and test both models; the results dict the page and the JSON file hold."""
    c = config or BottleneckConfig()
    with cpu_threads(c.threads):
        widths = {"attention": c.num_hiddens, "fixed": matched_hiddens(c)}
        out = {"models": {}}
        for i, name in enumerate(MODELS):
            torch.manual_seed(c.seed)
            model = build_model(c, name == "attention", widths[name])
            start = time.perf_counter()
            report = None if progress is None else (lambda s, n, i=i: progress((i * n + s) / (2 * n)))
            losses = train(model, c, report)
            out["models"][name] = {
                "num_hiddens": widths[name],
                "parameters": count_parameters(model),
                "train_seconds": round(time.perf_counter() - start, 1),
                "final_loss": round(sum(losses[-20:]) / len(losses[-20:]), 4),
                "by_length": evaluate(model, c),
            }
    out["chance"] = round(1 / c.vocab_size, 4)  # token accuracy of guessing
    out["config"] = asdict(c)
    out["versions"] = {"python": platform.python_version(), "torch": torch.__version__}
    return out


def check_results(data):
    """Raise ValueError naming the first part of a results dict that the page could not read."""
    need = requirement("bottleneck", "course.lessons.bottleneck.task")
    need(isinstance(data, dict), "the file", "must hold a JSON object")
    for key in ("models", "chance", "config", "versions"):
        need(key in data, key, "is missing")
    need(sorted(data["models"]) == sorted(MODELS), "models", f"must be exactly {MODELS}")
    buckets = None
    for name, m in data["models"].items():
        for key in ("num_hiddens", "parameters", "final_loss", "by_length"):
            need(key in m, f"models.{name}.{key}", "is missing")
        need(isinstance(m["parameters"], int) and m["parameters"] > 0, f"models.{name}.parameters",
             "must be a positive integer")
        rows = m["by_length"]
        need(isinstance(rows, list) and rows, f"models.{name}.by_length", "must be a non-empty list")
        for i, row in enumerate(rows):
            for key in ("token_acc", "seq_acc"):
                v = row.get(key)
                need(isinstance(v, (int, float)) and 0 <= v <= 1, f"models.{name}.by_length[{i}].{key}",
                     "must be a number in [0, 1]")
            need(isinstance(row.get("bucket"), str), f"models.{name}.by_length[{i}].bucket", "must be a string")
        labels = [row["bucket"] for row in rows]
        need(buckets is None or labels == buckets, f"models.{name}.by_length", "must have the other model's buckets")
        buckets = labels
    return data


def load_results(path=RESULTS):
    """The shipped (or a given) results file, checked."""
    return check_results(json.loads(Path(path).read_text(encoding="utf-8")))


def main(argv=None):
    """Command line: train both models and write the results JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS, help=f"results file (default {RESULTS})")
    for name in ("steps", "seed", "batch_size", "lr", "vocab_size", "num_hiddens"):
        default = getattr(BottleneckConfig, name)
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(default), default=default,
                            help=f"default {default}")
    parser.add_argument("--task", choices=TASKS, default=BottleneckConfig.task)
    args = parser.parse_args(argv)
    results = run(BottleneckConfig(task=args.task, steps=args.steps, seed=args.seed, batch_size=args.batch_size,
                                   lr=args.lr, vocab_size=args.vocab_size, num_hiddens=args.num_hiddens))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    for name, m in results["models"].items():
        print(name, m["parameters"], "params", m["train_seconds"], "s", file=sys.stderr)
        for row in m["by_length"]:
            print(f"  {row['bucket']:>6} token {row['token_acc']:.3f} seq {row['seq_acc']:.3f}", file=sys.stderr)


if __name__ == "__main__":
    main()
