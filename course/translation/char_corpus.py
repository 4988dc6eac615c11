"""The decoder-only model's corpus (chapter 14): the English side of the Tatoeba pairs as a character stream.

Like the lab's sentence-pair slice (course.translation.lab_pairs), it is made from
the development data at run time and handed to course.lessons.training_lab as plain
id lists (`python -m course.translation.char_corpus --out FILE`, then `--pairs
FILE`); it is never shipped. Rule: each distinct English sentence once, in file
order, followed by a newline; every TEST_EVERY-th held out as the test stream. The
vocabulary is the training stream's characters, newline first, then the rest in
code-point order; a held-out sentence with a character outside it is left out.
"""

import argparse
import json
from pathlib import Path

from course.common.paths import atomic_write_text

from .data import load_pairs
from .lab_pairs import DATA

TEST_EVERY = 10  # one sentence in ten is held out
END = "\n"  # closes every sentence


def english_sentences(pairs):
    """The distinct English sentences of the pairs, in file order."""
    return list(dict.fromkeys(pair.en for pair in pairs))


def make_corpus(pairs):
    """{"tokens": characters, "train": ids, "test": ids} of the pairs' English side."""
    sentences = english_sentences(pairs)
    test = sentences[TEST_EVERY - 1::TEST_EVERY]
    train = [s for i, s in enumerate(sentences) if (i + 1) % TEST_EVERY]
    chars = sorted(set("".join(train)) - {END})
    tokens = [END, *chars]
    index = {ch: i for i, ch in enumerate(tokens)}
    test = [s for s in test if all(ch in index for ch in s)]
    return {"tokens": tokens, "train": [index[ch] for s in train for ch in s + END],
            "test": [index[ch] for s in test for ch in s + END]}


def load_corpus(path=DATA):
    """The corpus of the Tatoeba file at path; FileNotFoundError (saying where the data goes) if it is absent."""
    return make_corpus(load_pairs(path).pairs)


def main(argv=None):
    """Write the corpus as JSON for `python -m course.lessons.training_lab --pairs FILE`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help=f"the Tatoeba cmn-eng TSV (default {DATA})")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    atomic_write_text(args.out, json.dumps(load_corpus(args.data), ensure_ascii=False))


if __name__ == "__main__":
    main()
