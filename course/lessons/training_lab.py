"""The training lab: a small Transformer learns copy, reverse or sort, and six ablations of it.

The model is an encoder-decoder whose blocks are exercise 7's own
TransformerEncoderBlock and TransformerDecoderBlock (the reference's, or a
learner's staged copy), over exercise 6's positional encoding. Each sub-layer's
wiring (residual, LayerNorm, post- or pre-norm) is switched by the config, by
swapping sub-modules of those blocks (course.lessons.lab_blocks), so every
ablation is the same model with one switch flipped, trained with the same seed
(same initial draws, same batches) and the same number of steps. While it trains, the attention maps of every layer and
head on one fixed probe sequence are kept every `snapshot_every` steps.

Streamlit-free; `python -m course.lessons.training_lab --out FILE` trains every
(task, variant, seed) and writes the results file the lab page shows;
`--live CONFIG_JSON` trains one run with a progress file and a stop file (the
page starts it in a child process).
"""

import argparse
import importlib
import json
import math
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import torch
from torch import nn

from course.model.train_loop import train_steps

from . import lab_blocks
from .lab_tasks import PAIRS_TASK, TASKS, probe_source, scored, target_of, task_data  # noqa: F401 (the lab's API)
from .torch_threads import cpu_threads
from .shipped_check import requirement

RESULTS = Path(__file__).with_name("training_lab.json")
# Each ablation is the baseline with these config fields changed.
ABLATIONS = {
    "no_pe": {"positional": False},
    "no_scale": {"scaled": False},
    "one_head": {"num_heads": 1},
    "no_residual": {"residual": False},
    "no_layernorm": {"layernorm": False},
    "pre_norm": {"pre_norm": True},
    "no_warmup": {"warmup": 0},  # the full learning rate from the first step
    "label_smoothing": {"label_smoothing": 0.1},  # the checkpoints' smoothing; the baseline trains on plain targets
}
VARIANTS = ("baseline", *ABLATIONS)
SEEDS = (0, 1)
ATTENTION_KINDS = ("encoder", "decoder", "cross")  # encoder self, decoder (causal) self, decoder-to-encoder


@dataclass
class LabConfig:
    task: str = "reverse"  # one of TASKS: the output is the input, the input reversed, or the input sorted
    vocab_size: int = 10  # input symbols 0 .. vocab_size - 1; id vocab_size is the decoder's start token
    seq_len: int = 8  # every sequence has this many symbols
    num_hiddens: int = 32  # model width d (embeddings, attention, residual stream)
    num_heads: int = 4  # attention heads per layer (d / heads dimensions each)
    ffn_num_hiddens: int = 64  # hidden width of the position-wise FFN
    num_layers: int = 2  # encoder blocks and, separately, decoder blocks
    batch_size: int = 64  # fresh random sequences per step
    steps: int = 300  # Adam steps: the budget, the same for every variant
    lr: float = 2e-3  # peak Adam learning rate
    warmup: int = 60  # steps of linear learning-rate warmup
    clip: float = 1.0  # gradient-norm clipping
    log_every: int = 10  # loss and training accuracy: the mean over each this many steps
    snapshot_every: int = 25  # attention maps and a greedy test every this many steps (and at step 0)
    eval_size: int = 256  # test sequences for greedy accuracy (seeded apart from training)
    seed: int = 0  # seeds initialisation and batches; the same seed gives the same numbers
    threads: int = 1  # torch CPU threads while training (the machine is shared)
    positional: bool = True  # add the sinusoidal positional encoding to both embeddings
    scaled: bool = True  # divide attention scores by sqrt(d_head)
    residual: bool = True  # residual connection around every sub-layer
    layernorm: bool = True  # layer normalisation in every sub-layer
    pre_norm: bool = False  # x + f(ln(x)) instead of the original post-norm ln(x + f(x))
    label_smoothing: float = 0.0  # share of each target's probability spread evenly over all symbols
    decoder_only: bool = False  # one stack of self-attention blocks predicting each next symbol (a language model)
    causal: bool = True  # decoder-only: position t attends to 0..t (False: to every position, the future too)
    attention_only: bool = False  # blocks without the FFN sub-layer (attention and residual stream only)


def variant_config(variant, base=None):
    """The config of one variant: the baseline, or the baseline with one ablation's switch flipped."""
    base = base or LabConfig()
    if variant == "baseline":
        return base
    if variant not in ABLATIONS:
        raise ValueError(f"unknown variant {variant!r}; use one of {', '.join(VARIANTS)}")
    return replace(base, **ABLATIONS[variant])


def causal_lens(B, T):
    """(B, T) valid_lens of the causal mask: query t sees keys 0..t."""
    return torch.arange(1, T + 1).repeat(B, 1)  # (B, T)


def positional_encoding(config, impl):
    """impl's exercise-6 PositionalEncoding for the lab's sequences (no dropout), or None without positions."""
    if not config.positional:
        return None
    module = importlib.import_module(f"{impl}.ex06_positional_encoding")
    return module.PositionalEncoding(config.num_hiddens, lab_blocks.DROPOUT, max_len=4 * config.seq_len + 8)


class LabTransformer(nn.Module):
    """Encoder-decoder Transformer over symbol sequences; the config's switches are the ablations.

    With config.decoder_only it is a decoder-only language model instead (GPT's shape): one embedding, a stack
    of self-attention blocks under the causal mask (config.causal), and logits of each position's next symbol;
    its `encoder` is that stack and there is no decoder or cross-attention.

    Its blocks are exercise 7's TransformerEncoderBlock and TransformerDecoderBlock of package `impl` (the
    reference `solutions`, or a learner's staged copy), with the config's wiring swapped in (course.lessons.lab_blocks);
    the positional encoding is impl's exercise 6's.
    vocab_size: the symbols (default config.vocab_size); pad: the source's padding id, or None (no padding).
    """

    def __init__(self, config, impl="solutions", vocab_size=None, pad=None):
        super().__init__()
        c = config
        vocab_size = vocab_size or c.vocab_size
        self.bos, self.pad = vocab_size, pad
        self.decoder_only, self.causal = c.decoder_only, c.causal
        final = c.pre_norm and c.layernorm  # pre-norm leaves the stream unnormalised: one last LayerNorm
        if c.decoder_only:
            self.embedding = nn.Embedding(vocab_size, c.num_hiddens)
            self.positions = positional_encoding(c, impl)
            self.encoder = nn.ModuleList(lab_blocks.encoder_block(c, impl) for _ in range(c.num_layers))
            self.encoder_norm = nn.LayerNorm(c.num_hiddens) if final else nn.Identity()
            self.output = nn.Linear(c.num_hiddens, vocab_size)
            return
        self.src_embedding = nn.Embedding(vocab_size, c.num_hiddens)
        self.tgt_embedding = nn.Embedding(vocab_size + 1, c.num_hiddens)
        self.positions = positional_encoding(c, impl)
        self.encoder = nn.ModuleList(lab_blocks.encoder_block(c, impl) for _ in range(c.num_layers))
        self.decoder = nn.ModuleList(lab_blocks.decoder_block(c, i, impl) for i in range(c.num_layers))
        self.encoder_norm = nn.LayerNorm(c.num_hiddens) if final else nn.Identity()
        self.decoder_norm = nn.LayerNorm(c.num_hiddens) if final else nn.Identity()
        self.output = nn.Linear(c.num_hiddens, vocab_size)  # never predicts the start token

    def embed(self, ids, table):
        """ids (B, T) -> (B, T, d), with positions added when the config has them."""
        X = table(ids)  # (B, T, d)
        return self.positions(X) if self.positions is not None else X

    def valid_lens(self, src):
        """(B,) source symbols before the padding, or None when this model's sources are never padded."""
        return None if self.pad is None else (src != self.pad).sum(dim=1)

    def encode(self, src):
        """src (B, S) -> memory (B, S, d)."""
        valid_lens = self.valid_lens(src)  # (B,) or None
        X = self.embed(src, self.src_embedding)  # (B, S, d)
        for block in self.encoder:
            X = block(X, valid_lens)  # (B, S, d)
        return self.encoder_norm(X)

    def decode(self, tgt_in, memory, valid_lens=None):
        """tgt_in (B, T) start token + target so far, memory (B, S, d), source valid_lens -> logits (B, T, V)."""
        X = self.embed(tgt_in, self.tgt_embedding)  # (B, T, d)
        state = lab_blocks.fresh_state(memory, valid_lens, len(self.decoder))  # every position at once
        for block in self.decoder:
            X, state = block(X, state)  # (B, T, d)
        return self.output(self.decoder_norm(X))  # (B, T, V)

    def language_model(self, ids):
        """Decoder-only: ids (B, T) -> logits (B, T, V) of the symbol after each position; under the causal mask
        position t reads ids 0..t only, without it every position reads the whole sequence."""
        valid_lens = causal_lens(*ids.shape) if self.causal else None  # (B, T) or None
        X = self.embed(ids, self.embedding)  # (B, T, d)
        for block in self.encoder:
            X = block(X, valid_lens)  # (B, T, d)
        return self.output(self.encoder_norm(X))  # (B, T, V)

    def forward(self, src, tgt_in=None):
        """Teacher-forced logits (B, T, V); decoder-only: the language model's logits of src (tgt_in unused)."""
        if self.decoder_only:
            return self.language_model(src)
        return self.decode(tgt_in, self.encode(src), self.valid_lens(src))

    @torch.no_grad()
    def greedy(self, src, length):
        """Free-running decoding of `length` symbols: (B, length) predicted ids."""
        memory, valid_lens = self.encode(src), self.valid_lens(src)  # (B, S, d), (B,) or None
        out = torch.full((src.shape[0], 1), self.bos, dtype=torch.long)  # (B, 1)
        for _ in range(length):
            logits = self.decode(out, memory, valid_lens)  # (B, t, V)
            out = torch.cat((out, logits[:, -1:].argmax(-1)), dim=1)  # (B, t + 1)
        return out[:, 1:]  # (B, length)

    def attention_maps(self):
        """{kind: (layers, B, heads, n_q, n_k)} of the last forward pass."""
        def stack(modules):
            return torch.stack([m.attention_weights for m in modules])
        if self.decoder_only:
            return {"self": stack(b.attention for b in self.encoder)}
        return {"encoder": stack(b.attention for b in self.encoder),
                "decoder": stack(b.attention1 for b in self.decoder),
                "cross": stack(b.attention2 for b in self.decoder)}


def decoder_input(tgt, bos):
    """Teacher forcing: start token, then the target shifted right by one (B, T)."""
    return torch.cat((torch.full((tgt.shape[0], 1), bos, dtype=tgt.dtype), tgt[:, :-1]), dim=1)  # (B, T)


def count_parameters(model):
    """Number of learnable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


@torch.no_grad()
def greedy_accuracy(model, config, data):
    """(token accuracy, sequence accuracy) of greedy decoding on the task's fixed test set (scored positions);
    decoder-only: of each next symbol's argmax given the true symbols before it."""
    src, tgt = data.test_set()  # (N, T), (N, T)
    mask = scored(data, tgt)  # (N, T)
    was_training = model.training
    model.eval()
    predicted = model(src).argmax(-1) if config.decoder_only else model.greedy(src, config.seq_len)  # (N, T)
    right = predicted == tgt  # (N, T)
    model.train(was_training)
    return float(right[mask].float().mean()), float((right | ~mask).all(dim=1).float().mean())


@torch.no_grad()
def position_loss(model, data):
    """Decoder-only: the cross-entropy (nats) of each test sequence at each position, (N, T)."""
    src, tgt = data.test_set()  # (N, T), (N, T)
    was_training = model.training
    model.eval()
    logits = model(src)  # (N, T, V)
    model.train(was_training)
    return nn.functional.cross_entropy(logits.transpose(1, 2), tgt, reduction="none")  # (N, T)


@torch.no_grad()
def snapshot(model, config, step, data):
    """Attention maps (every layer and head) on the probe, teacher-forced, and the greedy output at `step`."""
    src, tgt = data.probe()  # (1, T), (1, T)
    was_training = model.training
    model.eval()
    logits = model(src, decoder_input(tgt, model.bos))  # (1, T, V)
    maps = {kind: [[[[round(float(w), 3) for w in row] for row in head] for head in layer[0]]
                   for layer in weights] for kind, weights in model.attention_maps().items()}
    prediction = (logits.argmax(-1) if config.decoder_only else model.greedy(src, config.seq_len))[0].tolist()  # (T,)
    model.train(was_training)
    return {"step": step, "maps": maps, "prediction": prediction}


def learning_rate(config, step):
    """Linear warmup to lr over `warmup` steps, then constant (warmup 0: lr from the first step)."""
    return config.lr * min(1.0, (step + 1) / max(config.warmup, 1))


def train(config, progress=None, should_stop=None, keep_maps=True, impl="solutions", pairs=None):
    """Train one model; returns its run dict (curves, greedy tests, snapshots, time).

    progress(step, steps, run) is called after every step; should_stop() is asked
    before every step, and a True ends training early (the run says "stopped").
    impl: the package the ex05-ex07 parts come from; pairs: the sentence-pair slice (task "tatoeba"), or the
    character stream (task "chars").
    """
    return fit(config, progress, should_stop, keep_maps, impl, pairs)[1]


def fit(config, progress=None, should_stop=None, keep_maps=True, impl="solutions", pairs=None):
    """train()'s loop: (the trained model, its run dict)."""
    c = config
    data = task_data(c, pairs)
    start = time.perf_counter()
    with cpu_threads(c.threads):
        torch.manual_seed(c.seed)
        model = LabTransformer(c, impl, data.vocab_size, data.pad)
        gen = torch.Generator().manual_seed(c.seed)  # the same batches for every variant
        opt = torch.optim.Adam(model.parameters(), lr=c.lr)
        run = {"task": c.task, "seed": c.seed, "log_every": c.log_every, "parameters": count_parameters(model),
               "loss": [], "train_acc": [], "tests": [], "snapshots": [], "stopped": False, "steps_done": 0}
        window = []

        def checkpoint(step):
            tok, seq = greedy_accuracy(model, c, data)
            run["tests"].append({"step": step, "token_acc": round(tok, 4), "seq_acc": round(seq, 4)})
            if c.decoder_only:
                losses = position_loss(model, data)  # (N, T)
                run["tests"][-1]["position_loss"] = [round(x, 4) for x in losses.mean(dim=0).tolist()]
                if hasattr(data, "test_parts"):  # the repeat task: the new symbols and the repeated ones apart
                    run["tests"][-1]["part_loss"] = {name: round(float(losses[mask].mean()), 4)
                                                     for name, mask in data.test_parts().items()}
            if keep_maps:
                run["snapshots"].append(snapshot(model, c, step, data))

        checkpoint(0)
        model.train()
        batches = (data.batch(gen) for _ in range(c.steps))  # (B, T), (B, T) each

        def loss_of(batch):
            src, tgt = batch
            mask = scored(data, tgt)  # (B, T)
            logits = model(src, decoder_input(tgt, model.bos))  # (B, T, V); decoder-only: model(src)
            return nn.functional.cross_entropy(logits[mask], tgt[mask], label_smoothing=c.label_smoothing), (logits, mask)

        for done in train_steps(model, opt, batches, loss_of, c.clip, lambda step: learning_rate(c, step), should_stop):
            (_, tgt), (logits, mask) = done.batch, done.output
            plain = done.loss if c.label_smoothing == 0 else nn.functional.cross_entropy(logits[mask].detach(), tgt[mask])
            window.append((plain.item(), float((logits.argmax(-1) == tgt)[mask].float().mean())))
            step = done.index
            run["steps_done"] = step + 1
            if (step + 1) % c.log_every == 0:
                run["loss"].append(round(sum(x for x, _ in window) / len(window), 4))
                run["train_acc"].append(round(sum(a for _, a in window) / len(window), 4))
                window = []
            if (step + 1) % c.snapshot_every == 0 or step + 1 == c.steps:
                checkpoint(step + 1)
            if progress:
                progress(step + 1, c.steps, run)
        run["stopped"] = run["steps_done"] < c.steps
        if run["stopped"] and (not run["tests"] or run["tests"][-1]["step"] != run["steps_done"]):
            checkpoint(run["steps_done"])
    final = run["tests"][-1]
    run.update(final_token_acc=final["token_acc"], final_seq_acc=final["seq_acc"],
               final_loss=run["loss"][-1] if run["loss"] else None, seconds=round(time.perf_counter() - start, 1))
    return model.eval(), run


def run_one(task, variant, seed, base=None, keep_maps=True, progress=None, should_stop=None, pairs=None):
    """One (task, variant, seed) run of the shipped set, tagged with its variant."""
    config = replace(variant_config(variant, base), task=task, seed=seed)
    out = train(config, progress, should_stop, keep_maps, pairs=pairs)
    out["variant"] = variant
    return out


def _run_job(job):
    """Worker of the shipped set: (task, variant, seed, base config dict, keep_maps, pairs) -> run dict."""
    task, variant, seed, base, keep_maps, pairs = job
    run = run_one(task, variant, seed, LabConfig(**base), keep_maps, pairs=pairs)
    print(f"{task:>7} {variant:>12} seed {seed}: seq acc {run['final_seq_acc']:.3f} "
          f"token acc {run['final_token_acc']:.3f} loss {run['final_loss']} {run['seconds']} s",
          file=sys.stderr, flush=True)
    return run


def run_all(base=None, tasks=TASKS, variants=VARIANTS, seeds=SEEDS, maps_seeds=SEEDS[:1], jobs=1, out=None,
            pairs=None):
    """Every (task, variant, seed); attention snapshots kept for maps_seeds. The results dict.

    With `out`, the results so far are written there after every finished run, and
    runs already in that file (of the same config) are kept instead of trained again.
    """
    base = base or LabConfig()
    results = {"runs": [], "config": asdict(base), "ablations": ABLATIONS, "seeds": list(seeds),
               "versions": {"python": platform.python_version(), "torch": torch.__version__}}
    if out is not None and Path(out).is_file():
        old = json.loads(Path(out).read_text(encoding="utf-8"))
        if old.get("config") == results["config"]:
            results["runs"] = old["runs"]
    done = {(r["task"], r["variant"], r["seed"]) for r in results["runs"]}
    todo = [(t, v, s, asdict(base), s in maps_seeds, pairs if t == PAIRS_TASK else None)
            for t in tasks for v in variants for s in seeds if (t, v, s) not in done]
    pool = None
    if jobs > 1:
        import multiprocessing

        pool = multiprocessing.get_context("spawn").Pool(jobs)
    try:
        for run in (pool.imap_unordered(_run_job, todo) if pool else map(_run_job, todo)):
            results["runs"].append(run)
            if out is not None:
                write_json(out, results)
    finally:
        if pool:
            pool.terminate()
    order = {(t, v, s): i for i, (t, v, s) in enumerate((t, v, s) for t in TASKS for v in VARIANTS for s in seeds)}
    results["runs"].sort(key=lambda r: order.get((r["task"], r["variant"], r["seed"]), len(order)))
    return results


def merge(paths):
    """One results dict from several files of the same config (parallel commands), in the shipped order."""
    parts = [json.loads(Path(p).read_text(encoding="utf-8")) for p in paths]
    if any(p["config"] != parts[0]["config"] for p in parts):
        raise ValueError("the files were computed with different configs; they cannot be merged")
    runs = {(r["task"], r["variant"], r["seed"]): r for p in parts for r in p["runs"]}
    order = [(t, v, s) for t in TASKS for v in VARIANTS for s in parts[0]["seeds"]]
    return dict(parts[0], runs=[runs[k] for k in order if k in runs])


def check_results(data):
    """Raise ValueError naming the first part of a results dict that the page could not read."""
    need = requirement("training lab", "course.lessons.training_lab")
    need(isinstance(data, dict), "the file", "must hold a JSON object")
    for key in ("runs", "config", "seeds"):
        need(key in data, key, "is missing")
    for i, r in enumerate(data["runs"]):
        for key in ("task", "variant", "seed", "loss", "tests", "snapshots", "final_seq_acc", "seconds"):
            need(key in r, f"runs[{i}].{key}", "is missing")
        need(r["variant"] in VARIANTS, f"runs[{i}].variant", f"must be one of {VARIANTS}")
        need(r["task"] in TASKS, f"runs[{i}].task", f"must be one of {TASKS}")
        need(isinstance(r["loss"], list) and r["loss"], f"runs[{i}].loss", "must be a non-empty list")
    return data


def is_number(x, low=-math.inf, high=math.inf):
    """True when x is a finite int or float in [low, high] (not a bool)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and low <= x <= high


def check_run(run, steps):
    """Raise ValueError naming the first field of a live run dict (from a child process) that is not as
    train() writes it: a run that learner code could have touched is checked before the page reads it."""
    def need(cond, where, what):
        if not cond:
            raise ValueError(f"the training process returned a malformed run: {where} {what}")
    need(isinstance(run, dict), "the run", "is not a JSON object")
    need(is_number(run.get("steps_done"), 0, steps) and isinstance(run["steps_done"], int), "steps_done",
         f"must be a whole number from 0 to {steps}")
    need(is_number(run.get("seconds"), 0), "seconds", "must be a number >= 0")
    need(isinstance(run.get("stopped"), bool), "stopped", "must be true or false")
    loss = run.get("loss")
    need(isinstance(loss, list) and len(loss) <= steps and all(is_number(x, 0) for x in loss), "loss",
         f"must be a list of at most {steps} finite numbers >= 0")
    tests = run.get("tests")
    need(isinstance(tests, list) and tests and len(tests) <= steps + 2, "tests", "must be a non-empty list")
    for i, x in enumerate(tests):
        need(isinstance(x, dict) and is_number(x.get("step"), 0, steps)
             and all(is_number(x.get(k), 0, 1) for k in ("token_acc", "seq_acc")), f"tests[{i}]",
             "must have a step and accuracies between 0 and 1")
    for key in ("final_seq_acc", "final_token_acc"):
        need(is_number(run.get(key), 0, 1), key, "must be between 0 and 1")
    need(run.get("snapshots") == [], "snapshots", "must be empty (a learner's run keeps no maps)")
    return run


def load_results(path=RESULTS):
    """The shipped (or a given) results file, checked."""
    return check_results(json.loads(Path(path).read_text(encoding="utf-8")))


def find_run(results, task, variant, seed):
    """The run of (task, variant, seed) in a results dict, or None."""
    return next((r for r in results["runs"] if (r["task"], r["variant"], r["seed"]) == (task, variant, seed)), None)


def write_json(path, data):
    """Write data as compact JSON atomically (a reader never sees half a file)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def live(config_json, out, progress_file, stop_file, variant="baseline", impl="solutions", pairs=None,
         keep_maps=True, weights=None):
    """Child-process entry: train one run, report progress to a file, stop when stop_file appears; with
    `weights`, the trained model's state_dict is saved there too (before the run file, which says it ended)."""
    config = LabConfig(**{k: v for k, v in json.loads(config_json).items() if k in {f.name for f in fields(LabConfig)}})
    last = [0.0]

    def progress(step, steps, run):
        now = time.monotonic()
        if now - last[0] > 0.25 or step == steps:
            last[0] = now
            write_json(progress_file, {"step": step, "steps": steps, "loss": run["loss"][-1:],
                                       "tests": run["tests"][-1:]})

    model, run = fit(config, progress, lambda: Path(stop_file).exists(), keep_maps, impl, pairs)
    run["variant"] = variant
    if weights is not None:
        torch.save(model.state_dict(), weights)
    write_json(out, run)


def main(argv=None):
    """Command line: the shipped results (default), or one live run (--live)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS, help=f"results file (default {RESULTS})")
    parser.add_argument("--jobs", type=int, default=1, help="runs trained in parallel processes (default 1)")
    parser.add_argument("--tasks", default=",".join(TASKS), help="comma-separated tasks, trained in this order")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated variants, in this order")
    parser.add_argument("--steps", type=int, default=LabConfig.steps)
    parser.add_argument("--merge", nargs="+", type=Path, help="merge these results files into --out instead")
    parser.add_argument("--live", metavar="CONFIG_JSON", help="train one run of this config (the page's child)")
    parser.add_argument("--variant", default="baseline", help="with --live: the variant's name for the run")
    parser.add_argument("--progress", help="with --live: progress file")
    parser.add_argument("--stop", help="with --live: training stops when this file exists")
    parser.add_argument("--weights", help="with --live: save the trained model's state_dict to this file")
    parser.add_argument("--pairs", type=Path, help="the sentence-pair slice for the tatoeba task: a JSON file made by "
                        "`python -m course.translation.lab_pairs --out FILE` (never shipped)")
    args = parser.parse_args(argv)
    pairs = json.loads(args.pairs.read_text(encoding="utf-8")) if args.pairs else None
    if PAIRS_TASK in args.tasks.split(",") and pairs is None and not (args.merge or args.live):
        parser.error(f"the {PAIRS_TASK} task needs --pairs FILE (python -m course.translation.lab_pairs --out FILE)")
    if args.live:
        live(args.live, args.out, args.progress, args.stop, args.variant, pairs=pairs, weights=args.weights)
        return
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.merge:
        write_json(args.out, merge(args.merge))
        return
    results = run_all(LabConfig(steps=args.steps), tasks=tuple(args.tasks.split(",")),
                      variants=tuple(args.variants.split(",")), jobs=args.jobs, out=args.out, pairs=pairs)
    write_json(args.out, results)


if __name__ == "__main__":
    main()
