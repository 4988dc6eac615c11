"""The GRU translators: a fixed-context baseline and the Bahdanau attention model.

The encoder (Seq2SeqEncoder) is shared; the decoder is either FixedContextDecoder
(one context vector for every step) or the learner's Seq2SeqAttentionDecoder
(exercise 4), so the two models differ only in where the context comes from.
"""

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from .model_base import Translator, import_impl


@dataclass
class RNNConfig:
    src_vocab_size: int  # English vocabulary size (from the training split)
    tgt_vocab_size: int  # Chinese character vocabulary size
    embed_size: int = 256  # token embedding width, encoder and decoder
    num_hiddens: int = 256  # GRU hidden size (also the attention width)
    num_layers: int = 2  # stacked GRU layers, encoder and decoder alike
    dropout: float = 0.2  # between GRU layers and on attention weights
    io_dropout: float = 0.0  # training only: on token embeddings and on the features the vocabulary layer reads
    attention_dropout: float = -1.0  # on the attention weights (Bahdanau); negative: the same as dropout
    decoder_init: str = "encoder"  # Bahdanau decoder's first state: "encoder" (final encoder state) or "zeros"
    bidirectional: bool = False  # encoder reads both ways, num_hiddens // 2 units per direction


class Seq2SeqEncoder(nn.Module):
    """Embed source tokens and run a multi-layer GRU over them.

    With bidirectional=True (the encoder of Bahdanau et al., 2014) each layer
    reads the sentence both ways with num_hiddens // 2 units per direction, and
    the two halves are concatenated: the outputs and the final state keep the
    shapes of the one-way encoder, so the decoder cannot tell the difference,
    but every output now summarises the words on both sides of its position.
    """

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0, bidirectional=False):
        super().__init__()
        if bidirectional and num_hiddens % 2:
            raise ValueError(f"a bidirectional encoder splits num_hiddens between two directions; "
                             f"num_hiddens={num_hiddens} is odd, use an even number")
        self.bidirectional = bidirectional
        per_direction = num_hiddens // 2 if bidirectional else num_hiddens
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size, per_direction, num_layers, dropout=dropout, batch_first=True,
                          bidirectional=bidirectional)

    def merge_directions(self, hidden_state):
        """GRU final state (L * directions, B, H / directions) -> (L, B, H), forward half first."""
        if not self.bidirectional:
            return hidden_state  # (L, B, H)
        two_l, batch, half = hidden_state.shape
        halves = hidden_state.reshape(two_l // 2, 2, batch, half)  # (L, 2, B, H/2)
        return halves.permute(0, 2, 1, 3).reshape(two_l // 2, batch, 2 * half)  # (L, B, H)

    def forward(self, X, *args):
        """X (B, T_src) token ids -> (outputs (B, T_src, H), hidden (num_layers, B, H))."""
        embs = self.embedding(X)  # (B, T_src, E)
        outputs, hidden_state = self.rnn(embs)  # (B, T_src, H), (L * directions, B, H / directions)
        return outputs, self.merge_directions(hidden_state)  # (B, T_src, H), (L, B, H)


def run_encoder(encoder, src, src_valid_lens):
    """Seq2SeqEncoder over packed sequences, so padding never reaches the final state."""
    embs = encoder.embedding(src)  # (B, T_src, E) (a hook drops out some in training: add_io_dropout)
    lengths = src_valid_lens.detach().to("cpu", torch.long).clamp_min(1)  # (B,)
    packed = pack_padded_sequence(embs, lengths, batch_first=True, enforce_sorted=False)
    outputs, hidden_state = encoder.rnn(packed)  # packed, (L * directions, B, H / directions)
    outputs, _ = pad_packed_sequence(outputs, batch_first=True, total_length=src.shape[1])  # (B, T_src, H)
    return outputs, encoder.merge_directions(hidden_state)  # (B, T_src, H), (L, B, H)

class FixedContextDecoder(nn.Module):
    """GRU decoder fed one fixed context (the encoder's last top-layer state) at every step.

    Like the Bahdanau decoder (exercise 4) it has a deep output that reads the
    GRU output, the context and the input embedding, so the two models differ
    only in where the context comes from: one vector, or attention at each step.
    """

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size + num_hiddens, num_hiddens, num_layers, dropout=dropout, batch_first=True)
        self.deep_output = nn.Linear(2 * num_hiddens + embed_size, num_hiddens)
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens):
        """State (context, hidden): context is h_n of the top encoder layer."""
        _, hidden_state = enc_outputs  # (L, B, H)
        return (hidden_state[-1], hidden_state)  # (B, H), (L, B, H)

    def forward(self, X, state):
        """X (B, T) -> logits (B, T, vocab), new state."""
        context, hidden_state = state
        embs = self.embedding(X)  # (B, T, E)
        contexts = context.unsqueeze(1).expand(-1, X.shape[1], -1)  # (B, T, H)
        outputs, hidden_state = self.rnn(torch.cat((embs, contexts), dim=-1), hidden_state)  # (B, T, H)
        features = torch.tanh(self.deep_output(torch.cat((outputs, contexts, embs), dim=-1)))  # (B, T, H)
        return self.dense(features), (context, hidden_state)  # (B, T, V)

class OutputDropout:
    """Forward hook: dropout on a module's output while the module is training."""

    def __init__(self, p):
        self.p = p

    def __call__(self, module, inputs, output):
        return nn.functional.dropout(output, self.p, module.training)

class InputDropout:
    """Forward pre-hook: dropout on a module's first input while the module is training."""

    def __init__(self, p):
        self.p = p

    def __call__(self, module, inputs):
        return (nn.functional.dropout(inputs[0], self.p, module.training),) + tuple(inputs[1:])

def add_io_dropout(model, p):
    """Regularise an RNN translator without touching its modules' code or state_dict keys.

    Dropout on the source and target embeddings and on the deep output's
    features before the vocabulary layer, in training only (eval is exactly the plain
    model); hooks, because the decoder's forward is the learner's exercise.
    """
    if p <= 0:
        return model
    model.encoder.embedding.register_forward_hook(OutputDropout(p))
    model.decoder.embedding.register_forward_hook(OutputDropout(p))
    model.decoder.dense.register_forward_pre_hook(InputDropout(p))
    return model

def set_attention_dropout(decoder, p):
    """Dropout on the decoder's attention weights (p < 0 keeps the constructor's value)."""
    dropout = getattr(getattr(decoder, "attention", None), "dropout", None)
    if p >= 0 and isinstance(dropout, nn.Dropout):
        dropout.p = p

class RNNTranslator(Translator):
    """GRU encoder-decoder; with attention=True the decoder is the learner's Bahdanau decoder."""

    def __init__(self, config, impl="solutions", attention=True):
        super().__init__()
        self.config, self.attention = config, attention
        c = config
        self.encoder = Seq2SeqEncoder(c.src_vocab_size, c.embed_size, c.num_hiddens, c.num_layers, c.dropout,
                                      c.bidirectional)
        if attention:
            decoder_cls = import_impl(impl, "ex04_bahdanau").Seq2SeqAttentionDecoder
        else:
            decoder_cls = FixedContextDecoder
        self.decoder = decoder_cls(c.tgt_vocab_size, c.embed_size, c.num_hiddens, c.num_layers, c.dropout)
        if attention and c.decoder_init not in ("encoder", "zeros"):
            raise ValueError(f"decoder_init must be 'encoder' or 'zeros', not {c.decoder_init!r}")
        set_attention_dropout(self.decoder, c.attention_dropout)
        add_io_dropout(self, c.io_dropout)

    def encode(self, src, src_valid_lens):
        """Source (B, T_src) -> decoder state."""
        outputs, hidden_state = run_encoder(self.encoder, src, src_valid_lens)  # (B, T_src, H), (L, B, H)
        if self.attention and self.config.decoder_init == "zeros":
            hidden_state = torch.zeros_like(hidden_state)  # the source reaches the decoder only through attention
        return self.decoder.init_state((outputs, hidden_state), src_valid_lens)

    def decode_step(self, tokens, state):
        """tokens (B, 1) -> logits (B, V), state, {"cross": (B, T_src)} if attending."""
        logits, state = self.decoder(tokens, state)  # (B, 1, V)
        attn = {}
        if self.attention:
            attn["cross"] = self.decoder.attention_weights[:, -1]  # (B, T_src)
        return logits[:, -1], state, attn

    def reorder_state(self, state, index):
        """Keep batch rows `index` of every state tensor."""
        if self.attention:
            outputs, hidden_state, valid_lens = state
            return (outputs[index], hidden_state[:, index], None if valid_lens is None else valid_lens[index])
        context, hidden_state = state
        return (context[index], hidden_state[:, index])

    def encoder_attention(self):
        """An RNN encoder has no self-attention."""
        return None
