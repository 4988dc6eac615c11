"""The training loop behind `python -m course.translation.train` (the command line is in train.py).

`train(args)` runs one time-boxed, resumable training run from the parsed
options and saves, then evaluates, the checkpoint. The small pieces it is made
of (learning-rate schedule, loss, validation points, the moving average of the
weights, fused attention for GPUs) are functions of their own, tested one by one.
"""

import math
import os
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

from course.model.train_loop import train_steps

from . import data as D
from .checkpoint import atomic_torch_save, save_checkpoint, software_versions, source_vocab, update_metrics
from .evaluate import evaluate_splits, report_metrics, report_path, write_report
from .models import build_model, config_class, family
from .subword import tokenizer_json_of
from .vocab import PAD_ID, Vocab

SHAPE_FIELDS = ("embed_size", "num_hiddens", "num_layers", "dropout", "io_dropout", "attention_dropout",
                "ffn_num_hiddens", "num_heads", "decoder_init", "bidirectional", "tie_embeddings")


class FusedDotProductAttention(nn.Module):
    """Drop-in for DotProductAttention: fused kernel in training, the exact module in eval."""

    def __init__(self, original):
        super().__init__()
        self.original = [original]  # kept out of the module tree: state_dict keys do not change
        self.p = getattr(getattr(original, "dropout", None), "p", 0.0)

    def forward(self, queries, keys, values, valid_lens=None):
        """Same shapes as DotProductAttention; stores cheap placeholder weights in training."""
        if not self.training:
            self.original[0].eval()
            out = self.original[0](queries, keys, values, valid_lens)
            self.attention_weights = self.original[0].attention_weights
            return out
        BH, n_q, n_k = queries.shape[0], queries.shape[1], keys.shape[1]
        mask = None
        if valid_lens is not None:
            lens = valid_lens if valid_lens.dim() == 2 else valid_lens[:, None].expand(BH, n_q)  # (BH, n_q)
            mask = torch.arange(n_k, device=queries.device)[None, None, :] < lens[:, :, None]  # (BH, n_q, n_k)
        out = F.scaled_dot_product_attention(queries, keys, values, attn_mask=mask, dropout_p=self.p)  # (BH, n_q, d)
        self.attention_weights = queries.new_zeros(()).expand(BH, n_q, n_k)  # not computed when fused
        return out

def enable_fused_attention(model):
    """Swap every DotProductAttention inside `model` for the fused version; returns how many."""
    count = 0
    for module in list(model.modules()):
        child = getattr(module, "attention", None)
        if isinstance(child, nn.Module) and type(child).__name__ == "DotProductAttention":
            if not list(child.parameters()):
                module.attention = FusedDotProductAttention(child)
                count += 1
    return count

def lr_factor(step, warmup, progress):
    """Linear warm-up over `warmup` steps, then cosine decay to 2% as progress goes 0 -> 1."""
    warm = min(1.0, (step + 1) / max(1, warmup))
    return warm * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress))))

def sequence_loss(logits, tgt_out, label_smoothing=0.0):
    """Mean cross-entropy over real target tokens (padding ignored)."""
    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), tgt_out.reshape(-1),
                           ignore_index=PAD_ID, label_smoothing=label_smoothing)

@torch.no_grad()
def mean_loss(model, examples, batch_size, device):
    """Per-token cross-entropy of examples (no label smoothing), model in eval mode."""
    model.eval()
    total, count = 0.0, 0
    for batch in D.iterate_batches(examples, batch_size, shuffle=False):
        batch = batch.to(device)
        n = int(batch.tgt_valid_lens.sum())
        total += float(sequence_loss(model(batch.src, batch.src_valid_lens, batch.tgt_in), batch.tgt_out)) * n
        count += n
    model.train()
    return total / max(1, count)

def valid_point(model, averaged, valid_ex, device, step, elapsed, train_loss=None):
    """One point of the loss curves: step, training minutes, validation loss (and the training loss then).

    With a moving average of the weights (`averaged`, or None) valid_loss is the
    average's, the model that would be saved, and valid_loss_raw the live weights'.
    train_loss is the running average of the training batches' loss at that step
    (dropout on), or absent before the first step.
    """
    point = {"step": step, "minutes": elapsed / 60}
    if train_loss is not None:
        point["train_loss"] = float(train_loss)
    if averaged is not None:
        point["valid_loss_raw"] = mean_loss(model, valid_ex, 128, device)
        model = averaged.module
    point["valid_loss"] = mean_loss(model, valid_ex, 128, device)
    return point

def describe_point(point):
    """'valid loss 2.034' (and the live weights' loss when an average is kept)."""
    text = f"valid loss {point['valid_loss']:.3f}"
    if "valid_loss_raw" in point:
        text += f" (moving average; live weights {point['valid_loss_raw']:.3f})"
    return text

def start_ema(model, decay, blank):
    """An exponential moving average of model's weights (torch's AveragedModel), starting from them.

    `blank` is a freshly built model of the same shape: AveragedModel deep-copies
    the module it is given, and the live model holds tensors from its last
    forward pass (attention weights) that cannot be copied.
    """
    averaged = AveragedModel(blank, multi_avg_fn=get_ema_multi_avg_fn(decay))
    averaged.update_parameters(model)  # the first update copies the weights
    return averaged

def pick_device(name):
    """'auto' -> cuda when available, else cpu; a clear error for cuda without a GPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda was asked for but no CUDA GPU is visible; use --device cpu or auto")
    return torch.device(name)

def build_data(args):
    """Load, split, tokenise, filter and encode; vocabularies from the training split."""
    report = D.load_pairs(args.data)
    print(report.summary(), flush=True)
    splits = D.prepare_splits(report.pairs, args.seed, args.test_size, args.valid_size, args.max_pairs,
                              args.long_size)
    train_tok = D.filter_by_length(D.tokenize_pairs(splits.train), args.max_len, args.max_len)
    valid_tok = D.filter_by_length(D.tokenize_pairs(splits.valid), args.max_len, args.max_len)
    src_vocab, tgt_vocab = D.build_vocabs(train_tok, args.min_freq, args.min_freq, args.src_subword)
    print(f"split: {len(splits.train)} train ({len(train_tok)} after length filter), "
          f"{len(splits.valid)} valid, {len(splits.test)} test, {len(splits.long)} long held out; "
          f"vocab {len(src_vocab)} en ({src_vocab.describe()}), {len(tgt_vocab)} zh", flush=True)
    return splits, train_tok, valid_tok, src_vocab, tgt_vocab

class Progress:
    """Plain-text progress: one updated line on a terminal, periodic lines otherwise."""

    def __init__(self, every):
        self.every, self.last, self.tty = every, 0.0, sys.stdout.isatty()

    def show(self, text, force=False):
        now = time.monotonic()
        if force or now - self.last >= self.every:
            self.last = now
            print(("\r" + text.ljust(100)) if self.tty else text, end="" if self.tty else "\n", flush=True)

def train(args):
    """Run the whole command; returns the checkpoint path."""
    device = pick_device(args.device)
    torch.set_num_threads(args.threads or os.cpu_count() or 1)
    out = Path(args.out)
    ckpt_path, resume_path = out / f"{args.model}.pt", Path(args.resume_dir) / f"{args.model}.resume.pt"
    splits, train_tok, valid_tok, src_vocab, tgt_vocab = build_data(args)
    resume = None
    if args.resume and resume_path.is_file():
        resume = torch.load(resume_path, map_location="cpu", weights_only=True)
        src_vocab, tgt_vocab = source_vocab(resume), Vocab.from_list(resume["tgt_vocab"])
        print(f"resuming from {resume_path}: step {resume['step']}, {resume['elapsed'] / 60:.1f} min done", flush=True)
    elif args.resume:
        print(f"no {resume_path} to resume from; starting fresh", flush=True)
    train_ex = D.encode_pairs(train_tok, src_vocab, tgt_vocab)
    valid_ex = D.encode_pairs(valid_tok, src_vocab, tgt_vocab)
    shape = {k: getattr(args, k) for k in SHAPE_FIELDS if getattr(args, k) is not None}  # parse_args checked fit
    config = config_class(args.model)(len(src_vocab), len(tgt_vocab), **shape)
    torch.manual_seed(args.seed)
    model = build_model(args.model, config, args.impl).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, betas=family(args.model).adam_betas)
    step, epoch, batch_pos, elapsed, tokens_seen, valid_curve = 0, 0, 0, 0.0, 0, []
    averaged = None  # the moving average of the weights, once --ema-start is reached

    def new_average():
        """A moving average starting from the live weights, in a freshly built model."""
        return start_ema(model, args.ema, build_model(args.model, config, args.impl).to(device))

    if resume is not None:
        model.load_state_dict(resume["model"])
        optimizer.load_state_dict(resume["optimizer"])
        step, epoch, batch_pos = resume["step"], resume["epoch"], resume["batch_pos"]
        elapsed, tokens_seen = resume["elapsed"], resume["tokens_seen"]
        valid_curve = list(resume.get("valid_curve", []))
        torch.set_rng_state(resume["rng"])
        if resume.get("ema") is not None and args.ema > 0:
            averaged = new_average()
            averaged.load_state_dict(resume["ema"])
    cuda = device.type == "cuda"
    if args.fused_attention == "on" or (args.fused_attention == "auto" and cuda):
        enable_fused_attention(model)
    amp = torch.autocast("cuda", dtype=torch.bfloat16) if cuda and torch.cuda.is_bf16_supported() else None
    budget = args.minutes * 60
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{args.model}: {n_params / 1e6:.2f}M parameters on {device} ({torch.get_num_threads()} threads), "
          f"{'bf16 autocast' if amp else 'float32'}, budget {args.minutes:g} min", flush=True)

    def save_resume():
        atomic_torch_save({
            "model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step, "epoch": epoch,
            "batch_pos": batch_pos, "elapsed": elapsed, "tokens_seen": tokens_seen, "rng": torch.get_rng_state(),
            "valid_curve": valid_curve, "ema": averaged.state_dict() if averaged is not None else None,
            "src_vocab": src_vocab.to_list(), "src_subword": tokenizer_json_of(src_vocab),
            "tgt_vocab": tgt_vocab.to_list(),
        }, resume_path)

    def on_term(signum, frame):
        raise KeyboardInterrupt

    old_term = signal.signal(signal.SIGTERM, on_term) if hasattr(signal, "SIGTERM") else None
    progress, loss_avg, last_save = Progress(args.log_every), None, time.monotonic()
    last_valid = time.monotonic()
    model.train()
    batches = []
    start = time.monotonic() - elapsed

    def epoch_batches():
        """The training batches in order, from the resumed position on, while the epochs and the budget last."""
        nonlocal epoch, batch_pos, batches
        while epoch < args.max_epochs and elapsed < budget:
            batches = D.bucket_batches(train_ex, args.batch_size, args.seed, epoch)
            while batch_pos < len(batches) and elapsed < budget:
                yield D.make_batch([train_ex[i] for i in batches[batch_pos]]).to(device)
            if batch_pos >= len(batches):
                epoch, batch_pos = epoch + 1, 0

    def budget_used():
        return elapsed / budget if budget else 1.0

    def loss_of(batch):
        with amp if amp is not None else torch.enable_grad():
            logits = model(batch.src, batch.src_valid_lens, batch.tgt_in)  # (B, T, V)
        return sequence_loss(logits, batch.tgt_out, args.label_smoothing)

    def lr_at(index):
        return args.lr * lr_factor(index, args.warmup, budget_used())

    try:
        for done in train_steps(model, optimizer, epoch_batches(), loss_of, args.clip, lr_at, start=step):
            if args.ema > 0 and budget_used() >= args.ema_start:
                if averaged is None:
                    averaged = new_average()
                else:
                    averaged.update_parameters(model)
            step, batch_pos, tokens_seen = step + 1, batch_pos + 1, tokens_seen + done.batch.num_tokens
            loss_value = done.loss.detach().item()
            loss_avg = loss_value if loss_avg is None else 0.95 * loss_avg + 0.05 * loss_value
            elapsed = time.monotonic() - start
            progress.show(f"[{args.model}] {elapsed / 60:5.1f}/{args.minutes:g} min  epoch {epoch + 1} "
                          f"{batch_pos}/{len(batches)}  step {step}  loss {loss_avg:.3f}  "
                          f"lr {optimizer.param_groups[0]['lr']:.2e}  "
                          f"{tokens_seen / max(elapsed, 1e-9):,.0f} tok/s")
            if valid_ex and args.valid_every > 0 and time.monotonic() - last_valid >= args.valid_every:
                valid_curve.append(valid_point(model, averaged, valid_ex, device, step, elapsed, loss_avg))
                print(f"\n[{args.model}] step {step}: {describe_point(valid_curve[-1])}", flush=True)
                last_valid = time.monotonic()
            if time.monotonic() - last_save >= args.save_every:
                save_resume()
                last_save = time.monotonic()
    except KeyboardInterrupt:
        save_resume()
        print(f"\ninterrupted at step {step}; continue with the same command plus --resume", flush=True)
        raise SystemExit(130)
    finally:
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)
    save_resume()
    print(flush=True)
    final = valid_point(model, averaged, valid_ex, device, step, elapsed, loss_avg) if valid_ex else {}
    valid_loss = final.get("valid_loss")
    metrics = {
        "train_loss": loss_avg, "valid_loss": valid_loss, "steps": step,
        "epochs": epoch + batch_pos / max(1, len(batches)),
        "train_minutes": elapsed / 60, "tokens_per_s": tokens_seen / max(elapsed, 1e-9),
        "num_parameters": n_params, "device": str(device), "threads": torch.get_num_threads(),
        "train_pairs": len(train_ex),
        "valid_curve": valid_curve + ([final] if final else []),
    }
    if averaged is not None:  # what is saved and evaluated from here on is the average
        metrics.update(valid_loss_raw=final.get("valid_loss_raw"),
                       ema={"decay": args.ema, "start": args.ema_start, "updates": int(averaged.n_averaged)})
        model = averaged.module
    settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    settings["command"] = "python -m course.translation.train " + " ".join(sys.argv[1:])
    model = model.float()
    save_checkpoint(ckpt_path, model, args.model, src_vocab, tgt_vocab, args.seed, metrics, settings,
                    half=not args.fp32)
    print(f"saved {ckpt_path} ({ckpt_path.stat().st_size / 1e6:.1f} MB); valid loss {valid_loss}; "
          f"{metrics['tokens_per_s']:,.0f} tok/s over {step} steps", flush=True)
    if not args.no_eval:
        if hasattr(model, "use_kv_cache"):  # faster decoding, same outputs; a learner's blocks run as written
            model.use_kv_cache(args.impl == "solutions")
        result = evaluate_splits(model, splits, src_vocab, tgt_vocab, args.beam_size, args.beam_alpha)
        result.update({"model": args.model, "config": asdict(config), "train_metrics": metrics,
                       "versions": software_versions()})
        json_path = write_report(result, report_path(ckpt_path))
        update_metrics(ckpt_path, report_metrics(result))
        print(f"test BLEU greedy {result['bleu']['greedy']:.1f}, beam {result['bleu']['beam']:.1f} "
              f"(length-penalty alpha {result['beam_alpha']:g}, no-repeat n-gram {result['no_repeat_ngram']}) "
              f"-> {json_path}", flush=True)
    return ckpt_path
