# style: time-major permute of embeddings, torch.stack of squeezed steps
# bug: Seq2SeqAttentionDecoder.forward | GRU input concatenated as (embedding, context) instead of (context, embedding)
# expect: Seq2SeqAttentionDecoder.forward | order
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
        emb = self.embedding(X)
        emb_steps = emb.permute(1, 0, 2)  # (T, B, E)
        step_outs, step_ctx, step_w = [], [], []
        for x_t in emb_steps:
            query = torch.unsqueeze(hidden_state[-1], dim=1)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            gru_in = torch.cat((torch.unsqueeze(x_t, dim=1), context), dim=-1)
            out, hidden_state = self.rnn(gru_in, hidden_state)
            step_outs.append(out.squeeze(1))
            step_ctx.append(context.squeeze(1))
            step_w.append(self.attention.attention_weights.squeeze(1))
        outs = torch.stack(step_outs, dim=1)
        ctxs = torch.stack(step_ctx, dim=1)
        self.attention_weights = torch.stack(step_w, dim=1)
        deep = torch.tanh(self.deep_output(torch.cat([outs, ctxs, emb], dim=2)))
        return self.dense(deep), (enc_outputs, hidden_state, enc_valid_lens)
