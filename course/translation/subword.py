"""Subword units for the English side: a small BPE vocabulary (Hugging Face `tokenizers`).

A word-level source vocabulary turns every word it did not see twice in
training into `<unk>`: 14% of the test sentences held one. Byte-pair encoding
keeps frequent words whole and spells rare ones with pieces learned on the
training split ("unbelievably" -> "unb ##el ##ie ##v ##ab ##ly"), so almost
nothing becomes `<unk>`. A piece that continues a word starts with "##".

English is first split into words by course.translation.vocab.tokenize_en (the
same lower-casing and punctuation rules as before); BPE only splits inside a
word. Chinese stays one token per character. A SubwordVocab is a Vocab whose
`segment(words)` returns the pieces; a plain Vocab returns the words, so code
that calls `vocab.encode_words(words)` works with both.
"""

from tokenizers import Tokenizer, models, pre_tokenizers, trainers

from .vocab import SPECIALS, UNK, Vocab

CONTINUE = "##"  # prefix of a piece that continues the word before it
DEFAULT_SIZE = 4000  # pieces incl. specials; the word-level vocabulary had 4,374 words


class SubwordVocab(Vocab):
    """A source vocabulary of BPE pieces; ids are the tokenizer's own ids."""

    def __init__(self, tokenizer):
        itos = sorted(tokenizer.get_vocab(), key=tokenizer.token_to_id)  # ids 0..V-1
        if tuple(itos[:4]) != SPECIALS:
            raise ValueError(f"a subword vocabulary must start with {SPECIALS}; got {itos[:4]}")
        super().__init__(itos[4:])
        self.tokenizer = tokenizer

    @classmethod
    def train(cls, word_lists, vocab_size=DEFAULT_SIZE, min_frequency=2):
        """Learn BPE merges from tokenised sentences (lists of words): the training split only."""
        if vocab_size <= len(SPECIALS):
            raise ValueError(f"a subword vocabulary needs more than {len(SPECIALS)} entries; got {vocab_size}")
        tokenizer = Tokenizer(models.BPE(unk_token=UNK, continuing_subword_prefix=CONTINUE))
        tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()  # the words come split already
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                      special_tokens=list(SPECIALS), continuing_subword_prefix=CONTINUE,
                                      show_progress=False)
        tokenizer.train_from_iterator((" ".join(words) for words in word_lists), trainer)
        return cls(tokenizer)

    def segment(self, words):
        """Words -> BPE pieces (a rare word becomes several; unknown characters -> <unk>)."""
        return self.pieces_by_word(words)[0]

    def pieces_by_word(self, words):
        """(pieces, word index of each piece) for a list of words."""
        encoding = self.tokenizer.encode(list(words), is_pretokenized=True, add_special_tokens=False)
        return list(encoding.tokens), list(encoding.word_ids)

    def segment_many(self, word_lists):
        """segment() for many sentences at once (the training data)."""
        encodings = self.tokenizer.encode_batch([list(w) for w in word_lists], is_pretokenized=True,
                                                add_special_tokens=False)
        return [list(encoding.tokens) for encoding in encodings]

    def to_tokenizer_json(self):
        """The tokenizer as JSON text: what a checkpoint stores beside the piece list."""
        return self.tokenizer.to_str()

    @classmethod
    def from_tokenizer_json(cls, text, expected=None):
        """Rebuild from to_tokenizer_json(); `expected` (a token list) must match its pieces."""
        try:
            tokenizer = Tokenizer.from_str(text)
        except Exception as err:  # the library raises its own exception type for bad JSON
            raise ValueError(f"the stored subword tokenizer cannot be read: {err}") from err
        vocab = cls(tokenizer)
        if expected is not None and list(expected) != vocab.itos:
            raise ValueError("the stored subword tokenizer does not match the stored source vocabulary")
        return vocab

    def describe(self):
        """A short description for logs and pages."""
        return f"BPE, {len(self)} pieces"


def tokenizer_json_of(vocab):
    """What a checkpoint stores for a source vocabulary's subword model (None for words)."""
    return vocab.to_tokenizer_json() if isinstance(vocab, SubwordVocab) else None
