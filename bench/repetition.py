"""Count looping outputs of the shipped translators, with the repetition guard off and on.

    python bench/repetition.py --data PATH [MODEL ...]      # default: all three

Decodes the held-out test set plus the long pairs (the split each checkpoint
was trained with), greedy and beam, once without n-gram blocking and once
with the n its checkpoint records, and prints how many outputs have a
character three or more times in a row and how many repeat a 4-character
stretch of text (the references are counted the same way). Slow on a CPU:
two greedy and two beam passes over 1,200 sentences per model.
"""

import argparse
import re
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from course.translation import demos
from course.translation.checkpoint import load_checkpoint
from course.translation.data import load_pairs, prepare_splits
from course.translation.evaluate import decode_all
from course.translation.models import MODEL_NAMES
from course.translation.vocab import detokenize_zh, tokenize_en


def triple(text):
    """Whether one character occurs three or more times in a row."""
    return bool(re.search(r"(.)\1\1", text))


def repeated_4gram(text):
    """Whether some 4-character stretch occurs twice."""
    return any(text.count(text[i : i + 4]) > 1 for i in range(len(text) - 3))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("models", nargs="*", default=list(MODEL_NAMES))
    p.add_argument("--data", required=True, help="Tatoeba cmn-eng TSV file")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    pairs = load_pairs(args.data).pairs
    for name in args.models:
        loaded = load_checkpoint(demos.checkpoint_path(name))
        train, metrics = loaded.meta.get("train", {}), loaded.meta.get("metrics", {})
        splits = prepare_splits(pairs, loaded.meta["seed"], train.get("test_size", 1000), train.get("valid_size", 500),
                                train.get("max_pairs"), train.get("long_size", 0))
        pool = list(splits.test) + list(splits.long)
        ids = [loaded.src_vocab.encode_words(tokenize_en(pair.en)) for pair in pool]
        print(f"{name}: {len(pool)} held-out pairs; references: {sum(triple(q.zh) for q in pool)} with a "
              f"character 3+ times in a row, {sum(repeated_4gram(q.zh) for q in pool)} with a repeated 4-gram")
        for method in ("greedy", "beam"):
            for n in (0, int(metrics.get("no_repeat_ngram") or 0)):
                rows = decode_all(loaded.model, ids, method, 4, 64, alpha=metrics.get("beam_alpha", 0.6),
                                  no_repeat_ngram=n)
                texts = [detokenize_zh(loaded.tgt_vocab.decode(r)) for r in rows]
                print(f"  {method:6s} no-repeat n-gram {n}: {sum(triple(t) for t in texts)} with a character "
                      f"3+ times in a row, {sum(repeated_4gram(t) for t in texts)} with a repeated 4-gram", flush=True)


if __name__ == "__main__":
    main()
