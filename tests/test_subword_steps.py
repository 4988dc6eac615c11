"""BPE merges replayed word by word (course.translation.subword_steps) against the tokenizers library.

The expected pieces are what the library's own tokenizer returns (SubwordVocab.pieces_by_word),
for a vocabulary trained here and for the shipped checkpoints' vocabularies.
"""

import itertools

import pytest

from course.common.paths import PROJECT_ROOT
from course.translation.subword import SubwordVocab
from course.translation.subword_steps import merge_ranks, merge_steps, sentence_pieces
from course.translation.vocab import Vocab, tokenize_en

SENTENCES = ["the cat sat on the mat.", "the cats sat on the mats.", "a cat and a hat.", "that is the answer.",
             "she sells sea shells.", "they are there and then they are not.", "tom has a cat and a mat."] * 3
SHIPPED = PROJECT_ROOT / "checkpoints"


@pytest.fixture(scope="module")
def small_vocab():
    """A BPE vocabulary of 60 pieces trained on a handful of sentences: most words end in several pieces."""
    return SubwordVocab.train([tokenize_en(s) for s in SENTENCES], vocab_size=60, min_frequency=2)


def words_to_try(vocab):
    """Every word of the sentences, every piece as a word, short letter strings, repeats, unknown characters."""
    words = {w for s in SENTENCES for w in tokenize_en(s)}
    words |= {p.removeprefix("##") for p in vocab.itos[4:]}
    words |= {"".join(t) for t in itertools.product("aehst", repeat=3)}
    return sorted(words | {"aaaa", "thththth", "sassafras", "zebra", "naïve", "東京"})


def test_the_replayed_merges_give_the_librarys_pieces(small_vocab):
    ranks, known = merge_ranks(small_vocab), set(small_vocab.itos)
    for word in words_to_try(small_vocab):
        assert list(merge_steps(word, ranks, known).pieces) == small_vocab.pieces_by_word([word])[0], word


def test_each_step_joins_the_adjacent_pair_learned_earliest(small_vocab):
    ranks = merge_ranks(small_vocab)
    for word in ("the", "there", "shells", "answer"):
        steps = merge_steps(word, ranks).steps
        pieces = [word[0]] + ["##" + ch for ch in word[1:]]  # the word spelled for BPE
        assert steps, word
        for pair, after in steps:
            pairs = [(ranks[p], i) for i, p in enumerate(zip(pieces, pieces[1:])) if p in ranks]
            _, i = min(pairs)  # the earliest learned merge, leftmost on a tie
            assert pair == (pieces[i], pieces[i + 1])
            pieces = pieces[:i] + [pieces[i] + pieces[i + 1].removeprefix("##")] + pieces[i + 2 :]
            assert list(after) == pieces
        assert list(merge_steps(word, ranks).pieces) == small_vocab.pieces_by_word([word])[0]


def test_a_character_never_seen_is_unk_and_a_whole_word_vocabulary_has_no_merges(small_vocab):
    pieces = sentence_pieces("The zebra", small_vocab)
    assert [w.word for w in pieces] == ["the", "zebra"]
    assert pieces[1].unknown and "<unk>" in pieces[1].pieces and not pieces[0].unknown
    with pytest.raises(ValueError, match="whole words"):
        merge_ranks(Vocab(["the", "cat"]))


@pytest.mark.slow  # loads each checkpoint (2-4 s)
@pytest.mark.parametrize("name", ["seq2seq", "bahdanau", "transformer"])
def test_the_shipped_tokenizers_are_replayed_exactly(name):
    path = SHIPPED / f"{name}.pt"
    if not path.is_file():
        pytest.skip(f"{path} is not here")
    from course.translation.checkpoint import load_checkpoint

    vocab = load_checkpoint(path).src_vocab
    ranks, known = merge_ranks(vocab), set(vocab.itos)
    words = sorted({p.removeprefix("##") for p in vocab.itos[4:]} | {"unbelievably", "tokenization", "ai", "café"})
    for word in words:
        assert list(merge_steps(word, ranks, known).pieces) == vocab.pieces_by_word([word])[0], word


def test_the_merges_table_starts_from_the_spelled_word_and_ends_with_the_librarys_pieces(small_vocab):
    from course.translation.decoding_views import merges_frame

    word = sentence_pieces("shells", small_vocab)[0]
    table = merges_frame(word)
    assert table["pieces"].iloc[0] == "s ##h ##e ##l ##l ##s" and table["step"].tolist() == list(range(len(table)))
    assert table["pieces"].iloc[-1] == " ".join(small_vocab.pieces_by_word(["shells"])[0])
