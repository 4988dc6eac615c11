"""Test-set evaluation: BLEU (sacrebleu, Chinese tokenisation), greedy and beam, by source length.

Overall BLEU is over the held-out test set. BLEU by source length pools the
test set with the extra held-out long sentences (course.translation.data.split_pairs,
`long`), so the long buckets hold a few hundred sentences instead of a few
dozen; every bucket reports its count.

Beam search ranks finished hypotheses by GNMT's length-normalised score; its
exponent alpha is chosen per model on the validation set (the best of ALPHAS),
never on the test set, and recorded in the report. Then, at that alpha, the
repetition guard (n-gram blocking, course.translation.decoding.block_repeats)
is chosen the same way: the n of NGRAMS (0: off) with the best mean of greedy
and beam validation BLEU; both decoders use it on the test set.

`python -m course.translation.evaluate CHECKPOINT --data PATH` re-evaluates a saved model on
the same held-out test split the training command used (same seed and sizes).
"""

import argparse
import json
from pathlib import Path

import sacrebleu
import torch

from course.common.paths import atomic_write_text

from .data import LONG_MIN_WORDS, count_words, make_batch
from .decoding import DEFAULT_ALPHA, beam_search, greedy_decode
from .vocab import detokenize_zh, normalize_zh, tokenize_en

BUCKETS = ((1, 4), (5, 6), (7, 8), (9, 10), (11, 12), (13, None))  # source words, inclusive
ALPHAS = (0.6, 1.0, 1.4, 1.8, 2.2)  # beam search's length-penalty exponents tried on the validation set
NGRAMS = (0, 2, 3, 4)  # n-gram blocking sizes tried on the validation set (0: no blocking)
NGRAM_TIE = 0.1  # mean-BLEU gap (points) below which two guard sizes count as equal on the validation set


def corpus_bleu(hypotheses, references):
    """Corpus BLEU of Chinese strings with sacrebleu's "zh" tokeniser (one reference each)."""
    return sacrebleu.corpus_bleu(list(hypotheses), [list(references)], tokenize="zh").score


def bucket_label(lo, hi):
    """'1-5', ..., '21+'."""
    return f"{lo}+" if hi is None else f"{lo}-{hi}"


def bucket_of(length):
    """The bucket label for a source length in words."""
    for lo, hi in BUCKETS:
        if length >= lo and (hi is None or length <= hi):
            return bucket_label(lo, hi)
    return bucket_label(*BUCKETS[0])


def decode_all(model, src_ids, method="greedy", beam_size=4, batch_size=64, alpha=DEFAULT_ALPHA, no_repeat_ngram=0):
    """Decode every source id list in length-sorted batches; results in input order.

    alpha is the beam search's length-penalty exponent (unused by greedy);
    no_repeat_ngram the n of n-gram blocking (0: off).
    """
    device = next(model.parameters()).device
    order = sorted(range(len(src_ids)), key=lambda i: len(src_ids[i]))
    out = [None] * len(src_ids)
    model.eval()
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        batch = make_batch([(src_ids[i], []) for i in idx])
        src, lens = batch.src.to(device), batch.src_valid_lens.to(device)
        if method == "greedy":
            ids = greedy_decode(model, src, lens, no_repeat_ngram=no_repeat_ngram)[0]
        elif method == "beam":
            ids = beam_search(model, src, lens, beam_size=beam_size, alpha=alpha, no_repeat_ngram=no_repeat_ngram)
        else:
            raise ValueError(f"unknown decoding method {method!r}; use 'greedy' or 'beam'")
        for i, row in zip(idx, ids):
            out[i] = row
    return out


def choose_alpha(model, pairs, src_vocab, tgt_vocab, alphas=ALPHAS, beam_size=4, batch_size=64):
    """The length-penalty alpha whose beam search scores best on `pairs` (the validation set).

    Returns (alpha, [{"alpha", "bleu"}, ...]); a tie goes to the alpha listed first.
    """
    scores = [{"alpha": alpha, "bleu": evaluate(model, pairs, src_vocab, tgt_vocab, ("beam",), beam_size, batch_size,
                                                 alpha=alpha)["bleu"]["beam"]} for alpha in alphas]
    best = max(scores, key=lambda s: s["bleu"])  # max keeps the first of equal scores
    return best["alpha"], scores


def choose_ngram(model, pairs, src_vocab, tgt_vocab, alpha, ngrams=NGRAMS, beam_size=4, batch_size=64):
    """The n-gram blocking size with the best mean of greedy and beam BLEU on `pairs` (the validation set).

    Returns (n, [{"n", "greedy", "beam"}, ...]); see pick_ngram for ties.
    """
    scores = []
    for n in ngrams:
        bleu = evaluate(model, pairs, src_vocab, tgt_vocab, ("greedy", "beam"), beam_size, batch_size,
                        alpha=alpha, no_repeat_ngram=n)["bleu"]
        scores.append({"n": n, "greedy": bleu["greedy"], "beam": bleu["beam"]})
    return pick_ngram(scores), scores


def pick_ngram(scores, tie=NGRAM_TIE):
    """The n whose mean of greedy and beam BLEU is best; scores within `tie` of the best count as equal,
    and among equals the largest n wins (a guard over none, a looser guard over a stricter one)."""
    means = [(s["greedy"] + s["beam"]) / 2 for s in scores]
    best = max(means)
    return max(s["n"] for s, m in zip(scores, means) if best - m < tie)


def evaluate(model, pairs, src_vocab, tgt_vocab, methods=("greedy", "beam"), beam_size=4,
             batch_size=64, num_examples=3, long_pairs=(), alpha=DEFAULT_ALPHA, no_repeat_ngram=0):
    """BLEU of `pairs` for each method, and by source length over pairs + long_pairs, with examples."""
    pool = list(pairs) + list(long_pairs)
    sources = [tokenize_en(p.en) for p in pool]
    src_ids = [src_vocab.encode(units) for units in src_vocab.segment_many(sources)]
    refs = [normalize_zh(p.zh) for p in pool]  # the punctuation form the models were trained on
    words = [count_words(toks) for toks in sources]
    labels = [bucket_of(n) for n in words]
    n_test = len(pairs)
    result = {"num_sentences": n_test, "num_long_extra": len(pool) - n_test, "beam_size": beam_size,
              "beam_alpha": alpha, "no_repeat_ngram": no_repeat_ngram,
              "bleu": {}, "long": {}, "buckets": {}, "examples": {}}
    hyps_by_method = {}
    with torch.no_grad():
        for method in methods:
            ids = decode_all(model, src_ids, method, beam_size, batch_size, alpha=alpha,
                             no_repeat_ngram=no_repeat_ngram)
            hyps_by_method[method] = [normalize_zh(detokenize_zh(tgt_vocab.decode(row))) for row in ids]

    def bleu_of(members):
        """{method: BLEU} over the pool indices `members` (None for none)."""
        return {m: corpus_bleu([h[i] for i in members], [refs[i] for i in members]) if members else None
                for m, h in hyps_by_method.items()}

    result["bleu"] = bleu_of(range(n_test))
    long_members = [i for i, n in enumerate(words) if n >= LONG_MIN_WORDS]
    result["long"] = {"min_words": LONG_MIN_WORDS, "count": len(long_members), **bleu_of(long_members)}
    for lo, hi in BUCKETS:
        label = bucket_label(lo, hi)
        members = [i for i, lab in enumerate(labels) if lab == label]
        result["buckets"][label] = {"min_words": lo, "max_words": hi, "count": len(members), **bleu_of(members)}
        result["examples"][label] = [
            {"en": pool[i].en, "reference": refs[i], **{m: h[i] for m, h in hyps_by_method.items()}}
            for i in members[:num_examples]
        ]
    return result


def evaluate_splits(model, splits, src_vocab, tgt_vocab, beam_size=4, alpha=None, no_repeat_ngram=None):
    """The held-out evaluation: alpha, then the n-gram blocking size, chosen on splits.valid (unless given),
    then evaluate() on test + long."""
    by_alpha = by_ngram = None
    if alpha is None:
        alpha, by_alpha = choose_alpha(model, splits.valid, src_vocab, tgt_vocab, beam_size=beam_size) \
            if splits.valid else (ALPHAS[0], None)
    if no_repeat_ngram is None:
        no_repeat_ngram, by_ngram = choose_ngram(model, splits.valid, src_vocab, tgt_vocab, alpha,
                                                 beam_size=beam_size) if splits.valid else (0, None)
    result = evaluate(model, splits.test, src_vocab, tgt_vocab, beam_size=beam_size, long_pairs=splits.long,
                      alpha=alpha, no_repeat_ngram=no_repeat_ngram)
    result["valid_beam_bleu_by_alpha"] = by_alpha
    result["valid_bleu_by_ngram"] = by_ngram
    return result


def report_metrics(result):
    """What a checkpoint's metrics keep of an evaluation: BLEU overall, by length, on long pairs, the alpha."""
    buckets = {k: {m: v.get(m) for m in ("count", "greedy", "beam")} for k, v in result["buckets"].items()}
    return {"test_bleu": result["bleu"], "test_bleu_by_length": buckets, "long_bleu": result["long"],
            "beam_alpha": result["beam_alpha"], "valid_beam_bleu_by_alpha": result.get("valid_beam_bleu_by_alpha"),
            "no_repeat_ngram": result.get("no_repeat_ngram", 0),
            "valid_bleu_by_ngram": result.get("valid_bleu_by_ngram")}


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

    parser = argparse.ArgumentParser(prog="python -m course.translation.evaluate", description=__doc__)
    parser.add_argument("checkpoint")
    parser.add_argument("--data", required=True, help="Tatoeba cmn-eng TSV file")
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--beam-alpha", type=float, default=None,
                        help=f"length-penalty exponent; default: the best of {ALPHAS} on the validation set")
    parser.add_argument("--keep-alpha", action="store_true",
                        help="use the alpha the checkpoint already records (chosen on the validation set "
                             "by an earlier evaluation) instead of searching again")
    parser.add_argument("--no-repeat-ngram", type=int, default=None,
                        help=f"n-gram blocking size (0: off); default: the best of {NGRAMS} on the validation set")
    parser.add_argument("--impl", default="solutions", help="package of the attention modules")
    parser.add_argument("--report-only", action="store_true",
                        help="write only <model>.bleu.json; leave the checkpoint's metrics as they are")
    args = parser.parse_args(argv)
    loaded = load_checkpoint(args.checkpoint, impl=args.impl)
    train = loaded.meta.get("train", {})
    splits = prepare_splits(
        load_pairs(args.data).pairs, loaded.meta["seed"], train.get("test_size", 1000),
        train.get("valid_size", 500), train.get("max_pairs"), train.get("long_size", 0),
    )
    alpha, by_alpha = args.beam_alpha, None
    if args.keep_alpha:
        recorded = loaded.meta.get("metrics", {})
        if recorded.get("beam_alpha") is None:
            parser.error(f"{args.checkpoint} records no alpha; drop --keep-alpha to choose one on the validation set")
        alpha, by_alpha = recorded["beam_alpha"], recorded.get("valid_beam_bleu_by_alpha")
    result = evaluate_splits(loaded.model, splits, loaded.src_vocab, loaded.tgt_vocab, args.beam_size,
                             alpha, args.no_repeat_ngram)
    if args.keep_alpha:
        result["valid_beam_bleu_by_alpha"] = by_alpha
    meta = loaded.meta
    evaluated = report_metrics(result)
    trained = {k: v for k, v in meta.get("metrics", {}).items() if k not in evaluated}
    result.update({"model": meta["model_name"], "config": meta["config"], "train_metrics": trained,
                   "versions": meta.get("versions")})  # as the training command writes them
    out = write_report(result, report_path(args.checkpoint))
    if not args.report_only:
        update_metrics(args.checkpoint, evaluated)
    print(json.dumps(result["bleu"]), f"beam alpha {result['beam_alpha']}",
          f"no-repeat n-gram {result['no_repeat_ngram']}", "->", out)


if __name__ == "__main__":
    main()
