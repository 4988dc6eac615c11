"""Exercise 7: the Transformer's building blocks (chapter 7).

An encoder block is self-attention then a position-wise FFN, each wrapped in
a residual connection and layer normalisation. A decoder block adds masked
(causal) self-attention over the target so far and attention over the encoder.
"""

import torch
from torch import nn

from .ex05_multihead import MultiHeadAttention


class PositionWiseFFN(nn.Module):
    """The same two-layer MLP applied to every position independently, with a leaky ReLU between the layers.

    negative_slope 0.0 (the published default) is the ReLU; a class variant gives each learner their own default
    (course/common/exercise_variants.py), passed on by both blocks."""

    def __init__(self, num_inputs, ffn_num_hiddens, num_outputs, negative_slope=0.0):
        super().__init__()
        self.dense1 = nn.Linear(num_inputs, ffn_num_hiddens)
        self.relu = nn.LeakyReLU(negative_slope)  # negative_slope 0: the ReLU
        self.dense2 = nn.Linear(ffn_num_hiddens, num_outputs)

    def forward(self, X):
        """X (B, T, num_inputs) -> (B, T, num_outputs)."""
        return self.dense2(self.relu(self.dense1(X)))


class AddNorm(nn.Module):
    """Residual connection followed by layer normalisation: ln(dropout(Y) + X)."""

    def __init__(self, normalized_shape, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, X, Y):
        """X is the sub-layer's input, Y its output; both (B, T, d)."""
        return self.ln(self.dropout(Y) + X)


class TransformerEncoderBlock(nn.Module):
    """Self-attention and FFN sub-layers, each with AddNorm."""

    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias=False, negative_slope=0.0):
        super().__init__()
        self.attention = MultiHeadAttention(
            num_hiddens, num_hiddens, num_hiddens, num_hiddens, num_heads, dropout, use_bias
        )
        self.addnorm1 = AddNorm(num_hiddens, dropout)
        self.ffn = PositionWiseFFN(num_hiddens, ffn_num_hiddens, num_hiddens, negative_slope)
        self.addnorm2 = AddNorm(num_hiddens, dropout)

    def forward(self, X, valid_lens):
        """X (B, T, d), valid_lens (B,) or None -> (B, T, d)."""
        Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))  # (B, T, d)
        return self.addnorm2(Y, self.ffn(Y))  # (B, T, d)


class TransformerDecoderBlock(nn.Module):
    """Causal self-attention, encoder-decoder attention and FFN, each with AddNorm."""

    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, i, negative_slope=0.0):
        super().__init__()
        self.i = i  # this block's index into the state's caches
        self.attention1 = MultiHeadAttention(
            num_hiddens, num_hiddens, num_hiddens, num_hiddens, num_heads, dropout
        )
        self.addnorm1 = AddNorm(num_hiddens, dropout)
        self.attention2 = MultiHeadAttention(
            num_hiddens, num_hiddens, num_hiddens, num_hiddens, num_heads, dropout
        )
        self.addnorm2 = AddNorm(num_hiddens, dropout)
        self.ffn = PositionWiseFFN(num_hiddens, ffn_num_hiddens, num_hiddens, negative_slope)
        self.addnorm3 = AddNorm(num_hiddens, dropout)

    def forward(self, X, state):
        """X (B, T, d) new target positions; state [enc_outputs, enc_valid_lens, caches]."""
        enc_outputs, enc_valid_lens, caches = state[0], state[1], state[2]
        # The cache holds this block's inputs at all earlier target positions.
        if caches[self.i] is None:
            key_values = X  # (B, T, d)
        else:
            key_values = torch.cat((caches[self.i], X), dim=1)  # (B, T_seen + T, d)
        caches[self.i] = key_values
        B, T = X.shape[0], X.shape[1]
        num_earlier = key_values.shape[1] - T
        # Causal mask: new position t may see every earlier position and itself.
        dec_valid_lens = torch.arange(num_earlier + 1, num_earlier + T + 1, device=X.device)  # (T,)
        dec_valid_lens = dec_valid_lens.repeat(B, 1)  # (B, T)
        Y = self.addnorm1(X, self.attention1(X, key_values, key_values, dec_valid_lens))  # (B, T, d)
        Z = self.addnorm2(Y, self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens))  # (B, T, d)
        return self.addnorm3(Z, self.ffn(Z)), state  # (B, T, d)
