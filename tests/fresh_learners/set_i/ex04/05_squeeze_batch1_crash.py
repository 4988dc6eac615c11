# style: batch-first loop, squeeze per step then torch.stack
# bug: Seq2SeqAttentionDecoder.forward | each step's context is stored as context.squeeze(), which also drops the batch axis when B == 1, so stacking gives (H, T_tgt) and the deep-output concat crashes for a batch of one
# expect: Seq2SeqAttentionDecoder.forward | batch size 1
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
        """X (B, T_tgt) token ids -> (logits (B, T_tgt, vocab_size), new state)."""
        enc_outputs, hidden_state, enc_valid_lens = state
        embedded = self.embedding(X)                       # (B, T, E)
        outs, ctxs, attn = [], [], []
        for t in range(embedded.shape[1]):
            q = hidden_state[-1].unsqueeze(1)
            ctx = self.attention(q, enc_outputs, enc_outputs, enc_valid_lens)
            out, hidden_state = self.rnn(torch.cat((ctx, embedded[:, t].unsqueeze(1)), dim=-1), hidden_state)
            outs.append(out[:, 0])
            ctxs.append(ctx.squeeze())
            attn.append(self.attention.attention_weights[:, 0])
        outs = torch.stack(outs, dim=1)
        ctxs = torch.stack(ctxs, dim=1)
        self.attention_weights = torch.stack(attn, dim=1)
        hidden = torch.tanh(self.deep_output(torch.cat((outs, ctxs, embedded), dim=-1)))
        return self.dense(hidden), (enc_outputs, hidden_state, enc_valid_lens)
