"""Test-set evaluation: BLEU (sacrebleu, Chinese tokenisation), greedy and beam, by source length.

`python -m course.evaluate CHECKPOINT --data PATH` re-evaluates a saved model on
the same held-out test split the training command used (same seed and sizes).
"""

import argparse
import json
from pathlib import Path

import sacrebleu
import torch

from .data import make_batch
from .decoding import beam_search, greedy_decode
from .progress import atomic_write_text
from .vocab import detokenize_zh, tokenize_en

BUCKETS = ((1, 5), (6, 10), (11, 15), (16, 20), (21, None))  # source words, inclusive


def corpus_bleu(hypotheses, references):
    """Corpus BLEU of Chinese strings with sacrebleu's "zh" tokeniser (one reference each)."""
    return sacrebleu.corpus_bleu(list(hypotheses), [list(references)], tokenize="zh").score


def bucket_label(lo, hi):
    """'1-5', ..., '21+'."""
    return f"{lo}+" if hi is None else f"{lo}-{hi}"


def count_words(tokens):
    """Source length in words: tokens with a letter or digit (punctuation not counted)."""
    return sum(1 for tok in tokens if any(ch.isalnum() for ch in tok))


def bucket_of(length):
    """The bucket label for a source length in words."""
    for lo, hi in BUCKETS:
        if length >= lo and (hi is None or length <= hi):
            return bucket_label(lo, hi)
    return bucket_label(*BUCKETS[0])


def decode_all(model, src_ids, method="greedy", beam_size=4, batch_size=64):
    """Decode every source id list in length-sorted batches; results in input order."""
    device = next(model.parameters()).device
    order = sorted(range(len(src_ids)), key=lambda i: len(src_ids[i]))
    out = [None] * len(src_ids)
    model.eval()
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        batch = make_batch([(src_ids[i], []) for i in idx])
        src, lens = batch.src.to(device), batch.src_valid_lens.to(device)
        if method == "greedy":
            ids = greedy_decode(model, src, lens)[0]
        elif method == "beam":
            ids = beam_search(model, src, lens, beam_size=beam_size)
        else:
            raise ValueError(f"unknown decoding method {method!r}; use 'greedy' or 'beam'")
        for i, row in zip(idx, ids):
            out[i] = row
    return out


def evaluate(model, pairs, src_vocab, tgt_vocab, methods=("greedy", "beam"), beam_size=4,
             batch_size=64, num_examples=3):
    """BLEU overall and per source-length bucket for each method, with example translations."""
    sources = [tokenize_en(p.en) for p in pairs]
    src_ids = [src_vocab.encode(toks) for toks in sources]
    refs = [p.zh for p in pairs]
    labels = [bucket_of(count_words(toks)) for toks in sources]
    result = {"num_sentences": len(pairs), "beam_size": beam_size, "bleu": {}, "buckets": {}, "examples": {}}
    hyps_by_method = {}
    with torch.no_grad():
        for method in methods:
            ids = decode_all(model, src_ids, method, beam_size, batch_size)
            hyps = [detokenize_zh(tgt_vocab.decode(row)) for row in ids]
            hyps_by_method[method] = hyps
            result["bleu"][method] = corpus_bleu(hyps, refs)
    for lo, hi in BUCKETS:
        label = bucket_label(lo, hi)
        members = [i for i, lab in enumerate(labels) if lab == label]
        entry = {"min_words": lo, "max_words": hi, "count": len(members)}
        for method, hyps in hyps_by_method.items():
            entry[method] = corpus_bleu([hyps[i] for i in members], [refs[i] for i in members]) if members else None
        result["buckets"][label] = entry
        result["examples"][label] = [
            {"en": pairs[i].en, "reference": refs[i], **{m: h[i] for m, h in hyps_by_method.items()}}
            for i in members[:num_examples]
        ]
    return result


def write_report(result, path):
    """Save an evaluation result as JSON (atomic)."""
    atomic_write_text(path, json.dumps(result, indent=2, ensure_ascii=False))
    return Path(path)


def report_path(checkpoint_path):
    """`<dir>/<model>.bleu.json` beside `<dir>/<model>.pt`."""
    checkpoint_path = Path(checkpoint_path)
    return checkpoint_path.with_name(checkpoint_path.stem + ".bleu.json")


def main(argv=None):
    """Command line: evaluate a checkpoint on the held-out test split of --data."""
    from .checkpoint import load_checkpoint, update_metrics
    from .data import load_pairs, prepare_splits

    parser = argparse.ArgumentParser(prog="python -m course.evaluate", description=__doc__)
    parser.add_argument("checkpoint")
    parser.add_argument("--data", required=True, help="Tatoeba cmn-eng TSV file")
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--impl", default="solutions", help="package of the attention modules")
    args = parser.parse_args(argv)
    loaded = load_checkpoint(args.checkpoint, impl=args.impl)
    train = loaded.meta.get("train", {})
    splits = prepare_splits(
        load_pairs(args.data).pairs, loaded.meta["seed"], train.get("test_size", 1000),
        train.get("valid_size", 500), train.get("max_pairs"),
    )
    result = evaluate(loaded.model, splits.test, loaded.src_vocab, loaded.tgt_vocab, beam_size=args.beam_size)
    out = write_report(result, report_path(args.checkpoint))
    update_metrics(args.checkpoint, {"test_bleu": result["bleu"]})
    print(json.dumps(result["bleu"]), "->", out)


if __name__ == "__main__":
    main()
