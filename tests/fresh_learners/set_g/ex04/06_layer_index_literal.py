# style: preallocated output tensors filled by index
# bug: Seq2SeqAttentionDecoder.forward | query from hidden[0] (index 0 typed in) instead of the top layer hidden[-1]; wrong for num_layers > 1
# expect: Seq2SeqAttentionDecoder.forward | top layer
"""Exercise 4: the Bahdanau attention decoder (chapter 4, "Bahdanau attention,
computed by hand").

The encoder (course.translation.rnn.Seq2SeqEncoder, given) turns a source sentence
into outputs (B, T_src, H) and a final hidden state (num_layers, B, H).
At every target step this decoder asks "which source words matter now?".
"""

import torch
from torch import nn

from .ex03_scoring import AdditiveAttention


class Seq2SeqAttentionDecoder(nn.Module):
    """GRU decoder that attends over the encoder outputs at each step."""

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0, temperature=1.0):
        super().__init__()
        self.attention = AdditiveAttention(num_hiddens, num_hiddens, num_hiddens, dropout, temperature)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(
            embed_size + num_hiddens, num_hiddens, num_layers, dropout=dropout, batch_first=True
        )
        self.deep_output = nn.Linear(2 * num_hiddens + embed_size, num_hiddens)
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens):
        """Decoder state from the encoder: (outputs, hidden, valid_lens). Given."""
        outputs, hidden_state = enc_outputs  # (B, T_src, H), (num_layers, B, H)
        return (outputs, hidden_state, enc_valid_lens)

    def forward(self, X, state):
        enc_outputs, hidden, lens = state
        B, T = X.shape
        H = enc_outputs.shape[-1]
        emb = self.embedding(X)
        step_out = emb.new_zeros(B, T, H)
        step_ctx = emb.new_zeros(B, T, H)
        attn = emb.new_zeros(B, T, enc_outputs.shape[1])
        for t in range(T):
            q = hidden[0][:, None, :]
            ctx = self.attention(q, enc_outputs, enc_outputs, lens)
            rnn_in = torch.cat((ctx, emb[:, t].unsqueeze(1)), dim=2)
            o, hidden = self.rnn(rnn_in, hidden)
            step_out[:, t] = o[:, 0]
            step_ctx[:, t] = ctx[:, 0]
            attn[:, t] = self.attention.attention_weights[:, 0]
        self.attention_weights = attn
        z = self.deep_output(torch.cat([step_out, step_ctx, emb], dim=2))
        return self.dense(torch.tanh(z)), (enc_outputs, hidden, lens)
