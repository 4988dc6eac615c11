"""The English side's BPE vocabulary: learned on training words, stored in checkpoints, used by translate()."""

import pytest
import torch

from course.translation import demos
from course.translation.checkpoint import load_checkpoint, read_checkpoint, save_checkpoint, source_vocab
from course.translation.data import build_vocabs, encode_pairs
from course.translation.decoding import translate
from course.translation.models import build_model, config_class
from course.translation.subword import SubwordVocab
from course.translation.vocab import SPECIALS, UNK, UNK_ID, Vocab, tokenize_en

# Hand-written training sentences: "teacher", "is", "tom" are frequent; "teachers" never occurs.
SENTENCES = ["tom is a teacher.", "mary is a teacher.", "the teacher is here.", "is tom a teacher?",
             "tom reads.", "mary reads a book.", "the book is here.", "tom is here."] * 5
TGT = Vocab(list("汤姆是老师。玛丽在这里书读？"))


def words_of(sentences):
    return [tokenize_en(s) for s in sentences]


@pytest.fixture(scope="module")
def bpe():
    return SubwordVocab.train(words_of(SENTENCES), vocab_size=80, min_frequency=2)


def test_specials_keep_their_ids(bpe):
    assert bpe.itos[:4] == list(SPECIALS) and bpe.stoi[UNK] == UNK_ID


def test_frequent_words_stay_whole_and_rare_ones_are_spelled_with_pieces(bpe):
    assert bpe.segment(["teacher", "is", "tom", "."]) == ["teacher", "is", "tom", "."]
    pieces = bpe.segment(["teachers"])  # never seen: spelled from pieces, no <unk>
    assert len(pieces) > 1 and UNK not in pieces
    assert pieces[0] == "teacher" and all(p.startswith("##") for p in pieces[1:])
    assert "".join(p.removeprefix("##") for p in pieces) == "teachers"


def test_a_character_never_seen_is_unk_and_the_word_is_named(bpe):
    units, word_of = bpe.pieces_by_word(["tom", "☃", "is"])
    assert UNK in units and bpe.encode(units).count(UNK_ID) == 1
    assert word_of[units.index(UNK)] == 1


def test_word_vocab_segments_to_the_words_themselves():
    vocab = Vocab.build(words_of(SENTENCES))
    assert vocab.segment(["tom", "zorblax"]) == ["tom", "zorblax"]
    assert vocab.encode_words(["zorblax"]) == [UNK_ID]


def test_build_vocabs_learns_pieces_from_the_given_pairs_only():
    pairs = [(tokenize_en(s), list("汤姆")) for s in SENTENCES]
    src, _ = build_vocabs(pairs, src_subword=60)
    assert isinstance(src, SubwordVocab) and len(src) <= 60
    assert "teacher" in src and "zebra" not in src  # no piece from outside the training words
    words, _ = build_vocabs(pairs)  # src_subword=0: whole words
    assert type(words) is Vocab and "teacher" in words
    encoded = encode_pairs([(["teachers"], ["汤"])], src, TGT)
    assert encoded[0][0] == src.encode_words(["teachers"]) and len(encoded[0][0]) > 1


def tiny_transformer(src_vocab):
    config = config_class("transformer")(len(src_vocab), len(TGT), num_hiddens=16, ffn_num_hiddens=32,
                                         num_heads=2, num_layers=1, dropout=0.0, max_len=32)
    torch.manual_seed(0)
    return build_model("transformer", config).eval()


def test_checkpoint_keeps_the_tokenizer_and_translate_reads_pieces(bpe, tmp_path):
    path = save_checkpoint(tmp_path / "transformer.pt", tiny_transformer(bpe), "transformer", bpe, TGT, 0, half=False)
    loaded = load_checkpoint(path)
    assert isinstance(loaded.src_vocab, SubwordVocab) and loaded.src_vocab.itos == bpe.itos
    assert loaded.src_vocab.segment(["teachers"]) == bpe.segment(["teachers"])
    result = translate(loaded.model, "Tom is a teachers ☃.", loaded.src_vocab, loaded.tgt_vocab, max_len=4)
    assert result.source_tokens[:4] == ["tom", "is", "a", "teacher"] and result.source_tokens[4].startswith("##")
    assert result.unknown_words == ["☃"]
    assert result.cross_attention.shape[1] == len(result.source_tokens)
    assert result.source_words == ["tom", "is", "a", "teachers", "☃", "."]
    assert [result.source_words[i] for i in result.source_word_index] == \
        ["tom", "is", "a"] + ["teachers"] * (len(result.source_tokens) - 5) + ["☃", "."]
    marked = demos.marked_source(result)
    assert f"`{UNK}` (`☃`)" in marked and demos.reads_pieces(result)


def test_word_checkpoint_without_a_tokenizer_still_loads(tmp_path):
    vocab = Vocab.build(words_of(SENTENCES))
    path = save_checkpoint(tmp_path / "transformer.pt", tiny_transformer(vocab), "transformer", vocab, TGT, 0,
                           half=False)
    payload = read_checkpoint(path)
    assert payload["src_subword"] is None
    del payload["src_subword"]  # as in checkpoints written before subword units existed
    assert type(source_vocab(payload)) is Vocab
    result = translate(load_checkpoint(path).model, "tom reads zorblax.", vocab, TGT, max_len=3)
    assert result.source_tokens == ["tom", "reads", UNK, "."] and result.unknown_words == ["zorblax"]
    assert not demos.reads_pieces(result)


def test_a_tokenizer_that_does_not_match_the_piece_list_is_refused(bpe, tmp_path):
    path = save_checkpoint(tmp_path / "transformer.pt", tiny_transformer(bpe), "transformer", bpe, TGT, 0, half=False)
    payload = read_checkpoint(path)
    payload["src_vocab"] = payload["src_vocab"][:-1] + ["zzz"]
    with pytest.raises(ValueError, match="does not match"):
        source_vocab(payload)
    payload["src_subword"] = "{not json"
    with pytest.raises(ValueError, match="cannot be read"):
        source_vocab(payload)
