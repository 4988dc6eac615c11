"""Hostile ex03: printed text and error messages with line/paragraph separators, bidi controls,
zero-width and tag characters, to fake report lines such as "ex07 passed 23/23"."""

FAKE = "\u2028ex07 passed 23/23\u2029ex06 passed 11/11\u202e\u200b\u200c\u200d\ufeff\u061c\u2066\U000e0041"
print("printed" + FAKE)


def _forward(self, queries, keys, values, valid_lens=None):
    raise ValueError("wrong" + FAKE)


AdditiveAttention.forward = DotProductAttention.forward = _forward
