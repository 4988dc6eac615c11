# style: batch-first loop with a separate "h" variable for the running state
# bug: Seq2SeqAttentionDecoder.forward | the returned state carries the incoming hidden_state, not the GRU's new hidden state after the last step, so decoding step by step restarts from the encoder state every call
# expect: Seq2SeqAttentionDecoder.forward | new hidden_state
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
        embs = self.embedding(X)
        h = hidden_state
        outs, ctxs, ws = [], [], []
        for t in range(X.shape[1]):
            context = self.attention(h[-1].unsqueeze(1), enc_outputs, enc_outputs, enc_valid_lens)
            out, h = self.rnn(torch.cat((context, embs[:, t:t + 1]), dim=-1), h)
            outs.append(out)
            ctxs.append(context)
            ws.append(self.attention.attention_weights)
        self.attention_weights = torch.cat(ws, dim=1)
        deep = torch.cat((torch.cat(outs, dim=1), torch.cat(ctxs, dim=1), embs), dim=-1)
        logits = self.dense(torch.tanh(self.deep_output(deep)))
        return logits, (enc_outputs, hidden_state, enc_valid_lens)
