"""The three translators by name: their configs and build_model().

`impl` names the package the attention modules come from: "solutions",
"exercises", or any importable package with the same files (the grader stages
a learner's copy). Every model has the same state_dict keys whatever `impl`
is, so one checkpoint loads into all of them.

Uniform interface (course.translation.decoding builds greedy and beam search on it):
  forward(src, src_valid_lens, tgt_in) -> logits (B, T_tgt, V)   training
  encode(src, src_valid_lens) -> state
  decode_step(tokens (B, 1), state) -> (logits (B, V), state, attention dict)
  reorder_state(state, index) -> state with batch rows index (beam search)
  encoder_attention() -> per-layer self-attention of the last encode, or None
"""

from .rnn import RNNConfig, RNNTranslator
from .transformer import TransformerConfig, TransformerTranslator

MODEL_NAMES = ("seq2seq", "bahdanau", "transformer")


def config_class(name):
    """The config dataclass for a model name."""
    check_name(name)
    return TransformerConfig if name == "transformer" else RNNConfig

def check_name(name):
    """Raise a clear error for an unknown model name."""
    if name not in MODEL_NAMES:
        raise ValueError(f"unknown model {name!r}; use one of {', '.join(MODEL_NAMES)}")

def build_model(name, config, impl="solutions"):
    """Model `name` ("seq2seq", "bahdanau" or "transformer") with modules from `impl`."""
    check_name(name)
    if isinstance(config, dict):
        config = config_class(name)(**config)
    try:
        if name == "transformer":
            return TransformerTranslator(config, impl)
        return RNNTranslator(config, impl, attention=(name == "bahdanau"))
    except NotImplementedError as err:
        raise NotImplementedError(
            f"cannot build the {name} model from {getattr(impl, '__name__', impl)!r}: {err} is not "
            "implemented yet; finish that exercise (and pass the grader) first"
        ) from err
