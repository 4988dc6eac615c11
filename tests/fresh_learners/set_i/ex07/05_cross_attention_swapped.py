# style: helper methods per sub-layer, descriptive names
# bug: TransformerDecoderBlock.forward | the encoder-decoder attention is called with the encoder outputs as queries and Y as keys/values (attention2(enc_outputs, Y, Y, ...)) instead of Y as queries and enc_outputs as keys/values: exception when the source and target lengths differ, wrong values when they are equal
# expect: TransformerDecoderBlock.forward | encoder-decoder attention queries
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
        h = self.relu(self.dense1(X))
        return self.dense2(h)


class AddNorm(nn.Module):
    """Residual connection followed by layer normalisation."""

    def __init__(self, normalized_shape, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, X, Y):
        out = self.dropout(Y)
        out = out + X
        return self.ln(out)


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
        self_att = self.attention(X, X, X, valid_lens)
        Y = self.addnorm1(X, self_att)
        return self.addnorm2(Y, self.ffn(Y))


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

    def _self_attention(self, X, caches):
        if caches[self.i] is None:
            n_before = 0
            memory = X
        else:
            n_before = caches[self.i].shape[1]
            memory = torch.cat((caches[self.i], X), dim=1)
        caches[self.i] = memory
        batch, steps = X.shape[0], X.shape[1]
        lens = torch.arange(1, steps + 1, device=X.device) + n_before
        lens = lens.repeat(batch, 1)
        return self.addnorm1(X, self.attention1(X, memory, memory, lens))

    def _cross_attention(self, Y, enc_outputs, enc_valid_lens):
        ctx = self.attention2(enc_outputs, Y, Y, enc_valid_lens)
        return self.addnorm2(Y, ctx)

    def forward(self, X, state):
        enc_outputs, enc_valid_lens = state[0], state[1]
        Y = self._self_attention(X, state[2])
        Z = self._cross_attention(Y, enc_outputs, enc_valid_lens)
        return self.addnorm3(Z, self.ffn(Z)), state
