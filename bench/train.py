"""Benchmark: training tokens/s of our Transformer against torch.nn.Transformer, and translation latency.

    python bench/train.py                 # defaults: 20 timed steps x 3 runs, CPU or CUDA (auto)
    python bench/train.py --steps 10 --runs 3 --device cpu
    python bench/train.py --latency-only --threads 1   # latency only: greedy and beam 4, cache on and off

Both models have the course.translation.train default shape (d=256, 3+3 layers, 4 heads,
FFN 768, dropout 0.1), the same vocabularies, embeddings, sinusoidal positions
and output layer, and train on the same seeded batches with the same loss
(label smoothing 0.1), Adam and gradient clipping. The two models step in turn
on each batch (the order alternating), and the ratio is the median over those
back-to-back pairs, so a slow spell of a shared machine falls on both alike. On CUDA both get bf16
autocast and ours gets the fused attention course.translation.train uses. Tokens/s counts
target tokens (not padding). Goals: ratio >= 0.9; latency of one translation
(course.translation.decoding.translate with attention maps, the checkpoint's
decoding settings) < 50 ms greedy and < 100 ms with beam 4. Latency is
measured with the key/value cache (how the app decodes) and without it
(through the exercise-7 blocks), alternating. Figures are medians over --runs
(latency: over --latency-runs); on a shared machine they are noisy.
"""

import argparse
import contextlib
import math
import os
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from course.translation import demos
from course.translation.checkpoint import load_checkpoint
from course.translation.decoding import greedy_decode, source_tensor, translate
from course.translation.models import TransformerConfig, build_model, family
from course.translation.training import enable_fused_attention
from course.translation.vocab import BOS_ID, PAD_ID, Vocab, tokenize_en

SENTENCE = "tom is a teacher."


class TorchTranslator(nn.Module):
    """torch.nn.Transformer with the same embeddings, positions and output layer as ours."""

    def __init__(self, c):
        super().__init__()
        self.d = c.num_hiddens
        self.src_embedding = nn.Embedding(c.src_vocab_size, c.num_hiddens)
        self.tgt_embedding = nn.Embedding(c.tgt_vocab_size, c.num_hiddens)
        self.transformer = nn.Transformer(c.num_hiddens, c.num_heads, c.num_layers, c.num_layers,
                                          c.ffn_num_hiddens, c.dropout, batch_first=True)
        self.dropout = nn.Dropout(c.dropout)
        self.dense = nn.Linear(c.num_hiddens, c.tgt_vocab_size)
        freqs = torch.pow(10000.0, torch.arange(0, c.num_hiddens, 2) / c.num_hiddens)  # (d/2,)
        pos = torch.arange(c.max_len).unsqueeze(1) / freqs  # (max_len, d/2)
        table = torch.zeros(c.max_len, c.num_hiddens)
        table[:, 0::2], table[:, 1::2] = torch.sin(pos), torch.cos(pos)
        self.register_buffer("P", table, persistent=False)  # (max_len, d)

    def embed(self, embedding, X):
        """Scaled embedding plus positions, then dropout: (B, T) -> (B, T, d)."""
        return self.dropout(embedding(X) * math.sqrt(self.d) + self.P[: X.shape[1]])

    def forward(self, src, src_valid_lens, tgt_in):
        """Teacher-forced logits (B, T_tgt, V)."""
        src_pad = torch.arange(src.shape[1], device=src.device)[None] >= src_valid_lens[:, None]  # (B, T_src)
        causal = self.transformer.generate_square_subsequent_mask(tgt_in.shape[1], device=src.device)
        out = self.transformer(self.embed(self.src_embedding, src), self.embed(self.tgt_embedding, tgt_in),
                               tgt_mask=causal, src_key_padding_mask=src_pad, memory_key_padding_mask=src_pad,
                               tgt_is_causal=True)  # (B, T_tgt, d)
        return self.dense(out)


def make_batches(n, batch_size, src_vocab, tgt_vocab, max_src, max_tgt, seed=0):
    """Seeded random padded batches (src, src_valid_lens, tgt_in, tgt_out) with varied lengths."""
    g = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(n):
        src_lens = torch.randint(max_src // 3, max_src + 1, (batch_size,), generator=g)  # (B,)
        tgt_lens = torch.randint(max_tgt // 3, max_tgt + 1, (batch_size,), generator=g)  # (B,)
        src = torch.randint(4, src_vocab, (batch_size, max_src), generator=g)  # (B, T_src)
        src[torch.arange(max_src)[None] >= src_lens[:, None]] = PAD_ID
        tgt = torch.randint(4, tgt_vocab, (batch_size, max_tgt + 1), generator=g)  # (B, T_tgt + 1)
        tgt[:, 0] = BOS_ID
        tgt[torch.arange(max_tgt + 1)[None] > tgt_lens[:, None]] = PAD_ID
        batches.append((src, src_lens, tgt[:, :-1].contiguous(), tgt[:, 1:].contiguous()))
    return batches


def training_step(model, optimizer, batch, device, amp):
    """One Adam step on one batch -> (wall seconds, CPU seconds of this process, target tokens)."""
    if device.type == "cuda":
        torch.cuda.synchronize()
    start, cpu = time.perf_counter(), time.process_time()
    src, lens, tgt_in, tgt_out = (t.to(device) for t in batch)
    with amp():
        logits = model(src, lens, tgt_in)  # (B, T, V)
        loss = F.cross_entropy(logits.flatten(0, 1).float(), tgt_out.flatten(), ignore_index=PAD_ID,
                               label_smoothing=0.1)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start, time.process_time() - cpu, int((tgt_out != PAD_ID).sum())


def time_training_interleaved(models, batches, device, amp, warmup=2):
    """{name: [(wall s, CPU s, tokens) per timed step]} with the models stepping in turn on each batch.

    Each batch is trained by every model back to back (the order alternating from batch to batch), so a
    slow spell of the machine falls on both models of a pair alike: the ratio is taken per pair.
    """
    optimizers = {name: torch.optim.Adam(m.parameters(), lr=1e-4, betas=(0.9, 0.98)) for name, m in models.items()}
    for model in models.values():
        model.train()
    steps = {name: [] for name in models}
    names = list(models)
    for i, batch in enumerate(batches):
        for name in (names if i % 2 == 0 else names[::-1]):
            step = training_step(models[name], optimizers[name], batch, device, amp)
            if i >= warmup:
                steps[name].append(step)
    return steps


def latency_model(device):
    """(model, src vocab, tgt vocab, what it is): the trained Transformer if present, else an untrained one."""
    path = demos.checkpoint_path("transformer")
    if path.is_file():
        loaded = load_checkpoint(path, device=device)
        return loaded.model, loaded.src_vocab, loaded.tgt_vocab, f"trained checkpoint {path}"
    src_vocab = Vocab(tokenize_en(SENTENCE) + [f"w{i}" for i in range(6000)])
    tgt_vocab = Vocab([chr(0x4E00 + i) for i in range(3500)])
    torch.manual_seed(0)
    config = TransformerConfig(len(src_vocab), len(tgt_vocab), **shape_of(family("transformer").train_defaults))
    model = build_model("transformer", config).to(device).eval()
    return model, src_vocab, tgt_vocab, "untrained model (no checkpoint): decodes to the length cap, a worst case"


def shape_of(defaults):
    """The TransformerConfig fields among course.translation.train's defaults."""
    return {k: v for k, v in defaults.items() if k in TransformerConfig.__dataclass_fields__}


def _ms(fn):
    """(wall-clock ms, CPU ms of this process) of one call of fn.

    On a busy shared machine the wall clock counts the time other processes
    hold the cores; with one thread, the process's CPU time is close to what
    the wall clock would show on an idle core.
    """
    start, cpu = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - start) * 1000, (time.process_time() - cpu) * 1000


def time_latency(model, src_vocab, tgt_vocab, device, runs, sentence=SENTENCE):
    """{(cache on?, what): (median wall ms, median CPU ms)} of translate() greedy and beam 4 (with attention
    maps) and greedy decoding alone, with the key/value cache on and off in alternation; and the output length."""
    _, src, lens = source_tensor(sentence, src_vocab, device)
    jobs = {"translate greedy": lambda: translate(model, sentence, src_vocab, tgt_vocab),
            "translate beam 4": lambda: translate(model, sentence, src_vocab, tgt_vocab, beam_size=4),
            "greedy decoding alone": lambda: greedy_decode(model, src, lens)}
    modes = (True, False) if hasattr(model, "use_kv_cache") else (False,)
    times = {(kv, name): [] for kv in modes for name in jobs}
    for kv in modes:  # warm-up
        model.use_kv_cache(kv) if hasattr(model, "use_kv_cache") else None
        for job in jobs.values():
            job()
    for _ in range(runs):
        for kv in modes:
            if hasattr(model, "use_kv_cache"):
                model.use_kv_cache(kv)
            for name, job in jobs.items():
                times[kv, name].append(_ms(job))
    if hasattr(model, "use_kv_cache"):
        model.use_kv_cache(True)
    length = len(translate(model, sentence, src_vocab, tgt_vocab).tokens)
    return {key: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
            for key, v in times.items()}, length


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=20, help="timed training steps per run")
    p.add_argument("--runs", type=int, default=3, help="runs per model (the median is reported)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--src-len", type=int, default=12, help="longest source in a batch (tokens)")
    p.add_argument("--tgt-len", type=int, default=14, help="longest target in a batch (tokens)")
    p.add_argument("--src-vocab", type=int, default=6000)
    p.add_argument("--tgt-vocab", type=int, default=3500)
    p.add_argument("--latency-runs", type=int, default=20)
    p.add_argument("--latency-only", action="store_true", help="skip the training benchmark")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    p.add_argument("--threads", type=int, default=None)
    args = p.parse_args(argv)
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else
                          ("cpu" if args.device == "auto" else args.device))
    if args.threads:
        torch.set_num_threads(args.threads)
    cuda = device.type == "cuda"
    bf16 = cuda and torch.cuda.is_bf16_supported()

    def amp():
        return torch.autocast("cuda", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()

    config = TransformerConfig(args.src_vocab, args.tgt_vocab, **shape_of(family("transformer").train_defaults))
    print(f"device {device} ({torch.get_num_threads()} threads), {'bf16 autocast' if bf16 else 'float32'}; "
          f"d={config.num_hiddens}, {config.num_layers}+{config.num_layers} layers, {config.num_heads} heads, "
          f"FFN {config.ffn_num_hiddens}; batch {args.batch_size}, src<={args.src_len}, tgt<={args.tgt_len}; "
          f"{args.steps} steps x {args.runs} runs", flush=True)
    if args.latency_only:
        return report_latency(device, args.latency_runs)
    batches = make_batches(args.steps + 2, args.batch_size, args.src_vocab, args.tgt_vocab,
                           args.src_len, args.tgt_len)
    figures, pair_ratios, cpu_ratios = {"ours": [], "torch": []}, [], []
    for run in range(args.runs):
        torch.manual_seed(run)
        models = {"ours": build_model("transformer", config).to(device), "torch": TorchTranslator(config).to(device)}
        if cuda:
            enable_fused_attention(models["ours"])
        steps = time_training_interleaved(models, batches, device, amp)
        for name, timed in steps.items():
            figures[name].append(sum(tok for _, _, tok in timed) / sum(wall for wall, _, _ in timed))
        pair_ratios += [t[0] / o[0] for o, t in zip(steps["ours"], steps["torch"])]  # same batch: tokens cancel
        cpu_ratios += [t[1] / o[1] for o, t in zip(steps["ours"], steps["torch"]) if o[1] > 0]
        print(f"  run {run + 1}: ours {figures['ours'][-1]:9.0f} tokens/s, torch {figures['torch'][-1]:9.0f} "
              f"tokens/s (steps interleaved)", flush=True)
    ours, ref = statistics.median(figures["ours"]), statistics.median(figures["torch"])
    params = {n: sum(p.numel() for p in m.parameters()) for n, m in
              (("ours", build_model("transformer", config)), ("torch", TorchTranslator(config)))}
    print(f"parameters: ours {params['ours'] / 1e6:.2f}M, torch.nn.Transformer {params['torch'] / 1e6:.2f}M")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"training tokens/s (median of runs): ours {ours:.0f}, torch.nn.Transformer {ref:.0f}")
    print(f"speed ratio ours/torch, median of {len(pair_ratios)} paired steps: wall {statistics.median(pair_ratios):.2f}, "
          f"CPU {statistics.median(cpu_ratios) if cpu_ratios else float('nan'):.2f} (goal >= 0.9; load average "
          f"{load:.1f} on {os.cpu_count()} cores)")
    report_latency(device, args.latency_runs)


def report_latency(device, runs):
    """Print the translation latency figures (medians of `runs`)."""
    model, src_vocab, tgt_vocab, what = latency_model(device)
    figures, length = time_latency(model, src_vocab, tgt_vocab, device, runs)
    goals = {"translate greedy": " (goal < 50 ms)", "translate beam 4": " (goal < 100 ms)"}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"translation latency of {SENTENCE!r} ({what}; {length} characters out; {torch.get_num_threads()} "
          f"threads; median of {runs}; load average {load:.1f} on {os.cpu_count()} cores):")
    for (kv, name), (wall, cpu) in figures.items():
        mode = "key/value cache" if kv else "through the blocks"
        print(f"  {name:22s} {mode:18s} wall {wall:7.1f} ms  CPU {cpu:7.1f} ms{goals.get(name, '') if kv else ''}")


if __name__ == "__main__":
    main()
