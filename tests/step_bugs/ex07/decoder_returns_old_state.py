# bug: the decoder block builds a new state with its cache but returns the state it was given
# located: decoder block | the state the blocks return: block 0's cache
"""Exercise 7: the Transformer's building blocks (chapter 7, "The Transformer")."""

import torch
from torch import nn

from .ex05_multihead import MultiHeadAttention


class PositionWiseFFN(nn.Module):
    """The same two-layer MLP applied to every position independently."""

    def __init__(self, num_inputs, ffn_num_hiddens, num_outputs):
        super().__init__()
        self.dense1 = nn.Linear(num_inputs, ffn_num_hiddens)
        self.relu = nn.ReLU()
        self.dense2 = nn.Linear(ffn_num_hiddens, num_outputs)

    def forward(self, X):
        hidden = self.dense1(X)
        hidden = self.relu(hidden)
        return self.dense2(hidden)


class AddNorm(nn.Module):
    """Residual connection followed by layer normalisation."""

    def __init__(self, normalized_shape, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, X, Y):
        residual = X
        out = self.dropout(Y)
        out = out + residual
        return self.ln(out)


class TransformerEncoderBlock(nn.Module):
    """Self-attention and FFN sub-layers, each with AddNorm."""

    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias=False):
        super().__init__()
        self.attention = MultiHeadAttention(
            num_hiddens, num_hiddens, num_hiddens, num_hiddens, num_heads, dropout, use_bias
        )
        self.addnorm1 = AddNorm(num_hiddens, dropout)
        self.ffn = PositionWiseFFN(num_hiddens, ffn_num_hiddens, num_hiddens)
        self.addnorm2 = AddNorm(num_hiddens, dropout)

    def forward(self, X, valid_lens):
        X = self.addnorm1(X, self.attention(X, X, X, valid_lens))
        X = self.addnorm2(X, self.ffn(X))
        return X


class TransformerDecoderBlock(nn.Module):
    """Causal self-attention, encoder-decoder attention and FFN, each with AddNorm."""

    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, i):
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
        self.ffn = PositionWiseFFN(num_hiddens, ffn_num_hiddens, num_hiddens)
        self.addnorm3 = AddNorm(num_hiddens, dropout)

    def forward(self, X, state):
        caches = list(state[2])
        if caches[self.i] is not None:
            caches[self.i] = torch.cat((caches[self.i], X), dim=1)
        else:
            caches[self.i] = X
        kv = caches[self.i]
        new_state = [state[0], state[1], caches]
        n_new, n_all = X.shape[1], kv.shape[1]
        lens = torch.tile(torch.arange(n_all - n_new + 1, n_all + 1, device=X.device), (X.shape[0], 1))
        Y = self.addnorm1(X, self.attention1(X, kv, kv, lens))
        Z = self.addnorm2(Y, self.attention2(Y, state[0], state[0], state[1]))
        return self.addnorm3(Z, self.ffn(Z)), state  # should be new_state
