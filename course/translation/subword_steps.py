"""How the BPE tokenizer cuts an English word into pieces, one merge at a time.

A SubwordVocab (course.translation.subword) holds the merges its tokenizer learned
on the training split, in the order it learned them: the most frequent adjacent
pair first. To read a word, the tokenizer

1. spells it in characters, every character after the first marked "##"
   (it continues the word): "unbelievably" -> u ##n ##b ##e ...;
2. repeatedly merges the adjacent pair whose merge was learned earliest (of equal
   pairs, the leftmost), until no adjacent pair has a learned merge.

A frequent word ends as one piece; a rare one keeps several. A character the
tokenizer never saw becomes `<unk>`. `merge_steps` replays this from the tokenizer's
own merge list; the course checks it against the library's own output.
"""

import json
from dataclasses import dataclass

from .subword import CONTINUE, SubwordVocab
from .vocab import UNK, tokenize_en


@dataclass(frozen=True)
class WordPieces:
    """One English word as the model reads it."""

    word: str
    start: tuple  # the word spelled for BPE, before any merge
    pieces: tuple  # the final pieces ("##" continues the word)
    steps: tuple  # ((left, right) merged, pieces after it) for each merge, in order
    unknown: bool  # some character is outside the vocabulary (<unk>)


def merge_ranks(vocab):
    """{(left, right): rank} of the tokenizer's learned merges (rank 0 was learned first)."""
    if not isinstance(vocab, SubwordVocab):
        raise ValueError("this model reads whole words, not BPE pieces: it has no merges to show")
    merges = json.loads(vocab.to_tokenizer_json())["model"]["merges"]
    return {tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m): rank for rank, m in enumerate(merges)}


def characters(word):
    """The word spelled for BPE: its first character, then each further one marked as a continuation."""
    return [ch if i == 0 else CONTINUE + ch for i, ch in enumerate(word)]


def joined(left, right):
    """The piece that merging left and right makes ("a" + "##n" -> "an")."""
    return left + right.removeprefix(CONTINUE)


def merge_steps(word, ranks, known=None):
    """WordPieces of one word: the merges applied in order, the final pieces.

    known: the vocabulary's pieces; a starting character outside it becomes <unk> (never merged).
    """
    pieces = [p if known is None or p in known else UNK for p in characters(word)]
    start, steps = tuple(pieces), []
    while len(pieces) > 1:
        pairs = [(ranks.get((a, b)), i) for i, (a, b) in enumerate(zip(pieces, pieces[1:]))]
        learned = [(rank, i) for rank, i in pairs if rank is not None]
        if not learned:
            break
        _, i = min(learned)
        pair = (pieces[i], pieces[i + 1])
        pieces[i : i + 2] = [joined(*pair)]
        steps.append((pair, tuple(pieces)))
    return WordPieces(word, start, tuple(pieces), tuple(steps), UNK in pieces)


def sentence_pieces(sentence, vocab, ranks=None):
    """[WordPieces] of every word of an English sentence (tokenize_en's words: lower-cased, punctuation apart).

    ranks: merge_ranks(vocab), when the caller keeps it (reading the merges takes a moment)."""
    ranks = merge_ranks(vocab) if ranks is None else ranks
    known = set(vocab.itos)
    return [merge_steps(word, ranks, known) for word in tokenize_en(sentence)]
