"""sqrt(d_k) and learning: one attention layer learns a key-value lookup, with and without the scale.

Each example holds `num_pairs` (key, value) symbol pairs and a query symbol equal
to one of the keys; the answer is the value paired with it. One attention layer
solves it: the query and key projections must learn to make q . k_i largest for
the matching key. Queries and keys start with unit-variance components, the
premise of the 1/sqrt(d_k) argument (q . k then has variance d_k). The
attention is the reference solutions.ex03_scoring.DotProductAttention; the
unscaled version feeds it sqrt(d) * q, so its softmax reads q . k itself.

Streamlit-free; `python -m course.lessons.ch03.scaling_task --out FILE` trains every
(d, scaled) pair and writes the results file chapter 3 shows.
"""

import argparse
import json
import math
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
from solutions.ex03_scoring import DotProductAttention

RESULTS = Path(__file__).with_name("scaling_results.json")
D_VALUES = (16, 32, 64, 128, 256)
VERSIONS = ("scaled", "unscaled")


@dataclass
class ScalingConfig:
    num_keys: int = 64  # key symbols (each example uses num_pairs distinct ones)
    num_values: int = 16  # value symbols, the classes the model predicts
    num_pairs: int = 8  # (key, value) pairs per example: the keys the query chooses among
    batch_size: int = 128  # examples per step
    steps: int = 300  # Adam steps per run
    lr: float = 3e-3  # Adam learning rate
    log_every: int = 10  # record the loss every this many steps (mean since the last record)
    grad_batches: int = 8  # batches averaged when measuring gradient sizes at initialisation
    d_values: tuple = D_VALUES  # widths d = d_k tried
    seed: int = 0  # seeds data and initialisation
    threads: int = 1  # torch CPU threads while training (the machine is shared)


class LookupModel(nn.Module):
    """Embed query, keys and values; one dot-product attention; classify the attended value."""

    def __init__(self, config, d, scaled):
        super().__init__()
        c = config
        self.d, self.scaled = d, scaled
        self.key_embedding = nn.Embedding(c.num_keys, d)  # N(0, 1) entries
        self.value_embedding = nn.Embedding(c.num_values, d)
        self.W_q = nn.Linear(d, d, bias=False)
        self.W_k = nn.Linear(d, d, bias=False)
        for W in (self.W_q, self.W_k):
            nn.init.normal_(W.weight, std=1 / math.sqrt(d))  # keeps unit-variance components
        self.attention = DotProductAttention(dropout=0.0)
        self.output = nn.Linear(d, c.num_values)

    def forward(self, keys, values, query):
        """keys, values (B, m) ids, query (B,) id -> logits (B, num_values), q (B, 1, d)."""
        q = self.W_q(self.key_embedding(query)).unsqueeze(1)  # (B, 1, d)
        k = self.W_k(self.key_embedding(keys))  # (B, m, d)
        v = self.value_embedding(values)  # (B, m, d)
        fed = q if self.scaled else q * math.sqrt(self.d)  # the module divides by sqrt(d) itself
        context = self.attention(fed, k, v).squeeze(1)  # (B, d)
        return self.output(context), q  # (B, num_values), (B, 1, d)


def make_batch(gen, config):
    """keys (B, m) distinct per row, values (B, m), query (B,) one of the keys, answer (B,)."""
    c = config
    keys = torch.rand(c.batch_size, c.num_keys, generator=gen).argsort(dim=1)[:, : c.num_pairs]  # (B, m)
    values = torch.randint(0, c.num_values, (c.batch_size, c.num_pairs), generator=gen)  # (B, m)
    pick = torch.randint(0, c.num_pairs, (c.batch_size,), generator=gen)  # (B,)
    rows = torch.arange(c.batch_size)
    return keys, values, keys[rows, pick], values[rows, pick]


def score_gradient(weights, weight_grad):
    """dL/dscores from dL/dweights through softmax: alpha * (g - sum_j alpha_j g_j)."""
    return weights * (weight_grad - (weights * weight_grad).sum(dim=-1, keepdim=True))


def gradient_sizes(model, batch):
    """Mean per-example norm of dL/d(scores) and dL/dq, and the norm of dL/dW_q, on one batch."""
    keys, values, query, answer = batch
    model.zero_grad()
    logits, q = model(keys, values, query)
    q.retain_grad()
    weights = model.attention.attention_weights  # (B, 1, m), the softmax of the scores
    weights.retain_grad()
    loss = nn.functional.cross_entropy(logits, answer, reduction="sum")  # per-example gradients
    loss.backward()
    scores_grad = score_gradient(weights.detach(), weights.grad)  # (B, 1, m)
    sizes = {
        "scores": float(scores_grad.norm(dim=-1).mean()),
        "query": float(q.grad.norm(dim=-1).mean()),
        "W_q": float(model.W_q.weight.grad.norm()) / len(query),
        "max_weight": float(weights.detach().amax(dim=-1).mean()),
    }
    model.zero_grad()
    return sizes


def measure_gradients(config, d, scaled):
    """gradient_sizes at initialisation, averaged over grad_batches seeded batches."""
    c = config
    torch.manual_seed(c.seed)
    model = LookupModel(c, d, scaled)
    gen = torch.Generator().manual_seed(c.seed + 7919)
    runs = [gradient_sizes(model, make_batch(gen, c)) for _ in range(c.grad_batches)]
    return {k: sum(r[k] for r in runs) / len(runs) for k in runs[0]}


def train(config, d, scaled, progress=None):
    """Train one model; returns the mean loss over each log_every steps and the final accuracy."""
    c = config
    torch.manual_seed(c.seed)
    model = LookupModel(c, d, scaled)
    gen = torch.Generator().manual_seed(c.seed)  # the same batches for every (d, scaled)
    opt = torch.optim.Adam(model.parameters(), lr=c.lr)
    curve, window = [], []
    batches = (make_batch(gen, c) for _ in range(c.steps))  # (keys, values, query, answer) each

    def loss_of(batch):
        keys, values, query, answer = batch
        logits, _ = model(keys, values, query)
        return nn.functional.cross_entropy(logits, answer)

    with cpu_threads(c.threads):
        for done in train_steps(model, opt, batches, loss_of):
            window.append(done.loss.item())
            if (done.index + 1) % c.log_every == 0:
                curve.append(round(sum(window) / len(window), 4))
                window = []
            if progress:
                progress(done.index + 1, c.steps)
        return curve, accuracy(model, c)


@torch.no_grad()
def accuracy(model, config, batches=8):
    """Fraction of fresh seeded lookups answered right."""
    gen = torch.Generator().manual_seed(config.seed + 104729)
    right = total = 0
    for _ in range(batches):
        keys, values, query, answer = make_batch(gen, config)
        logits, _ = model(keys, values, query)
        right += int((logits.argmax(-1) == answer).sum())
        total += len(answer)
    return right / total


def run(config=None, progress=None):
    """Train every (d, version); the results dict the page and the JSON file hold."""
    c = config or ScalingConfig()
    runs = []
    jobs = [(d, v) for d in c.d_values for v in VERSIONS]
    for i, (d, version) in enumerate(jobs):
        start = time.perf_counter()
        report = None if progress is None else (lambda s, n, i=i: progress((i * n + s) / (len(jobs) * n)))
        curve, acc = train(c, d, version == "scaled", report)
        seconds = time.perf_counter() - start
        grads = measure_gradients(c, d, version == "scaled")
        runs.append({"d": d, "version": version, "loss": curve, "accuracy": round(acc, 4),
                     "seconds": round(seconds, 2), "gradients_at_init": {k: round(v, 6) for k, v in grads.items()}})
    return {"runs": runs, "config": asdict(c),
            "versions": {"python": platform.python_version(), "torch": torch.__version__}}


GRADIENTS = ("scores", "query", "W_q", "max_weight")


def check_results(data):
    """Raise ValueError naming the first part of a results dict that the page could not read."""
    need = requirement("scaling", "course.lessons.ch03.scaling_task")
    need(isinstance(data, dict), "the file", "must hold a JSON object")
    for key in ("runs", "config", "versions"):
        need(key in data, key, "is missing")
    need(isinstance(data["config"].get("log_every"), int), "config.log_every", "must be an integer")
    seen = set()
    for i, r in enumerate(data["runs"]):
        for key in ("d", "version", "loss", "accuracy", "gradients_at_init"):
            need(key in r, f"runs[{i}].{key}", "is missing")
        need(r["version"] in VERSIONS, f"runs[{i}].version", f"must be one of {VERSIONS}")
        need(isinstance(r["loss"], list) and r["loss"] and all(isinstance(x, (int, float)) for x in r["loss"]),
             f"runs[{i}].loss", "must be a non-empty list of numbers")
        for g in GRADIENTS:
            need(isinstance(r["gradients_at_init"].get(g), (int, float)), f"runs[{i}].gradients_at_init.{g}",
                 "must be a number")
        seen.add((r["d"], r["version"]))
    ds = {d for d, _ in seen}
    need(seen == {(d, v) for d in ds for v in VERSIONS}, "runs", "must hold both versions for every d")
    return data


def load_results(path=RESULTS):
    """The shipped (or a given) results file, checked."""
    return check_results(json.loads(Path(path).read_text(encoding="utf-8")))


def run_of(results, d, version):
    """The run of one (d, version) in a results dict."""
    for r in results["runs"]:
        if r["d"] == d and r["version"] == version:
            return r
    raise KeyError(f"no run for d={d}, version={version!r}")


def loss_after(results, d, version, step):
    """Logged mean loss of the window ending at `step` (a multiple of log_every)."""
    every = results["config"]["log_every"]
    if step % every or step <= 0:
        raise ValueError(f"step must be a positive multiple of log_every={every}; got {step}")
    return run_of(results, d, version)["loss"][step // every - 1]


def main(argv=None):
    """Command line: train every (d, version) and write the results JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS, help=f"results file (default {RESULTS})")
    parser.add_argument("--steps", type=int, default=ScalingConfig.steps)
    parser.add_argument("--seed", type=int, default=ScalingConfig.seed)
    args = parser.parse_args(argv)
    results = run(ScalingConfig(steps=args.steps, seed=args.seed))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    for r in results["runs"]:
        g = r["gradients_at_init"]
        print(f"d={r['d']:>3} {r['version']:>8}: loss {r['loss'][0]:.3f} -> {r['loss'][-1]:.3f}, "
              f"accuracy {r['accuracy']:.3f}, grad scores {g['scores']:.4f} query {g['query']:.4f} "
              f"W_q {g['W_q']:.4f}, {r['seconds']} s", file=sys.stderr)


if __name__ == "__main__":
    main()
