# style: named intermediate steps, expand causal lens
# bug: none
"""Exercise 7: the Transformer's building blocks (chapter 7, "The Transformer")."""

import torch
from torch import nn

from .ex05_multihead import MultiHeadAttention


class PositionWiseFFN(nn.Module):
    """The same two-layer MLP applied to every position independently."""

    def __init__(self, num_inputs, ffn_num_hiddens, num_outputs, negative_slope=0.0):
        super().__init__()
        self.dense1 = nn.Linear(num_inputs, ffn_num_hiddens)
        self.relu = nn.LeakyReLU(negative_slope)  # negative_slope 0: the ReLU
        self.dense2 = nn.Linear(ffn_num_hiddens, num_outputs)

    def forward(self, X):
        hidden = self.dense1(X)
        hidden = self.relu(hidden)
        out = self.dense2(hidden)
        return out


class AddNorm(nn.Module):
    """Residual connection followed by layer normalisation."""

    def __init__(self, normalized_shape, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, X, Y):
        residual = X + self.dropout(Y)
        normed = self.ln(residual)
        return normed


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
        attn_out = self.attention(X, X, X, valid_lens)
        Y = self.addnorm1(X, attn_out)
        ffn_out = self.ffn(Y)
        out = self.addnorm2(Y, ffn_out)
        return out


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
        enc_outputs, enc_valid_lens, caches = state
        cached = caches[self.i]
        key_values = X if cached is None else torch.cat([cached, X], dim=1)
        caches[self.i] = key_values
        B, T, _ = X.shape
        start = 0 if cached is None else cached.shape[1]
        positions = torch.arange(start, start + T, device=X.device)
        causal_lens = (positions + 1).unsqueeze(0).expand(B, T)
        attn1 = self.attention1(X, key_values, key_values, causal_lens)
        Y = self.addnorm1(X, attn1)
        attn2 = self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens)
        Z = self.addnorm2(Y, attn2)
        out = self.addnorm3(Z, self.ffn(Z))
        return out, state
