"""Tokenisers (English words, Chinese characters) and the vocabulary.

English is lower-cased and split into words and punctuation marks. A word
keeps its internal apostrophes, so contractions and possessives stay one token
("don't" -> "don't", "tom's" -> "tom's"): a single token per surface form is
easier to read in the attention heatmaps than the treebank split "do n't".
Chinese is split into characters with all whitespace dropped, so Latin words
inside Chinese text become letter tokens and are joined back losslessly. The
Tatoeba sentences mix half-width and full-width punctuation ("吗?" beside
"吗？"); normalize_zh makes it full-width before tokenising, and evaluation
normalises references the same way, so a model is not asked to guess which
form one translator happened to type.
"""

import re
from collections import Counter

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SPECIALS = (PAD, BOS, EOS, UNK)  # fixed ids 0, 1, 2, 3
PAD_ID, BOS_ID, EOS_ID, UNK_ID = range(4)

# A word is letters/digits, optionally joined by apostrophes; anything else that
# is not a space (punctuation, symbols) is a token of its own.
_EN_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*|[^\w\s]|_")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


def tokenize_en(text):
    """English sentence -> lower-cased word and punctuation tokens."""
    return _EN_TOKEN.findall(text.translate(_APOSTROPHES).lower())


_ZH_PUNCT = str.maketrans({"?": "？", "!": "！", ",": "，", ":": "：", ";": "；", "\u200b": ""})


def normalize_zh(text):
    """Half-width ? ! , : ; -> full-width, zero-width spaces dropped (Chinese text only)."""
    return text.translate(_ZH_PUNCT)


def tokenize_zh(text):
    """Chinese sentence -> one token per character (punctuation normalised), whitespace dropped."""
    return [ch for ch in normalize_zh(text) if not ch.isspace()]


def detokenize_zh(tokens):
    """Chinese character tokens -> the sentence (characters joined with no spaces)."""
    return "".join(tokens)


class Vocab:
    """Token <-> id mapping with <pad> <bos> <eos> <unk> at ids 0..3."""

    def __init__(self, tokens=()):
        self.itos = list(SPECIALS)
        for tok in tokens:
            if tok not in SPECIALS:
                self.itos.append(tok)
        self.stoi = {tok: i for i, tok in enumerate(self.itos)}
        if len(self.stoi) != len(self.itos):
            raise ValueError("vocabulary tokens must be unique")

    @classmethod
    def build(cls, sentences, min_freq=1):
        """Vocabulary of the tokens that occur at least min_freq times, most frequent first."""
        if min_freq < 1:
            raise ValueError(f"min_freq must be at least 1, got {min_freq}")
        counts = Counter(tok for sent in sentences for tok in sent)
        kept = [tok for tok, n in counts.items() if n >= min_freq and tok not in SPECIALS]
        kept.sort(key=lambda tok: (-counts[tok], tok))  # deterministic order
        return cls(kept)

    def __len__(self):
        return len(self.itos)

    def __contains__(self, token):
        return token in self.stoi

    def segment(self, words):
        """Words -> this vocabulary's units: the words themselves (a SubwordVocab splits them)."""
        return list(words)

    def pieces_by_word(self, words):
        """(units, word index of each unit): one unit per word here."""
        words = list(words)
        return words, list(range(len(words)))

    def encode_words(self, words):
        """Words -> ids of this vocabulary's units (segment, then encode)."""
        return self.encode(self.segment(words))

    def segment_many(self, word_lists):
        """segment() for many sentences."""
        return [self.segment(words) for words in word_lists]

    def describe(self):
        """A short description for logs and pages."""
        return f"words, {len(self)} entries"

    def encode(self, tokens):
        """Tokens -> ids, unknown tokens -> <unk>."""
        return [self.stoi.get(tok, UNK_ID) for tok in tokens]

    def decode(self, ids, strip_specials=True):
        """Ids -> tokens; stops at <eos> and drops <pad>/<bos> when strip_specials."""
        out = []
        for i in ids:
            i = int(i)
            if strip_specials and i == EOS_ID:
                break
            if strip_specials and i in (PAD_ID, BOS_ID):
                continue
            out.append(self.itos[i] if 0 <= i < len(self.itos) else UNK)
        return out

    def to_list(self):
        """The tokens in id order (specials first): what a checkpoint stores."""
        return list(self.itos)

    @classmethod
    def from_list(cls, tokens):
        """Rebuild from to_list(); checks that the specials sit at ids 0..3."""
        tokens = list(tokens)
        if tuple(tokens[:4]) != SPECIALS:
            raise ValueError(f"a vocabulary must start with {SPECIALS}; got {tokens[:4]}")
        return cls(tokens[4:])
