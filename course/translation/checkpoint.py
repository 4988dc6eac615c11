"""Save and load trained translators with everything needed to use them again.

A checkpoint (`<model>.pt`, written with torch.save, loadable with
weights_only=True) is a dict:
  format, format_version   "attention-lab-translator", 1
  model_name               a registered family: "seq2seq" | "bahdanau" | "transformer" | ... (models.FAMILIES)
  config                   the model config dataclass as a dict
  src_vocab, tgt_vocab     token lists in id order (specials at 0..3)
  src_subword              the English BPE tokenizer as JSON text (course.translation.subword),
                           or absent/None for a word-level source vocabulary
  seed                     the training seed
  versions                 python, torch, sacrebleu, numpy versions
  metrics                  BLEU, losses, tokens/s, training time ...
  train                    the training command's settings (plain values)
  weights_dtype            "float16" (shipped) or "float32"
  state_dict               the weights
Resume files (`.attention_lab/resume/<model>.resume.pt` by default, see course.translation.train)
hold full-precision weights, optimiser and
progress; they are large and never shipped.
"""

import os
import platform
import tempfile
from dataclasses import asdict, is_dataclass
from pathlib import Path

import torch

from .decoding import DecodingSettings
from .models import build_model, check_name, config_class
from .subword import SubwordVocab, tokenizer_json_of
from .vocab import Vocab

FORMAT = "attention-lab-translator"
FORMAT_VERSION = 1


def software_versions():
    """Versions of the software that produced a checkpoint."""
    versions = {"python": platform.python_version(), "torch": str(torch.__version__)}
    for name in ("sacrebleu", "numpy"):
        try:
            versions[name] = str(__import__(name).__version__)
        except ImportError:
            versions[name] = None
    return versions


def atomic_torch_save(obj, path):
    """torch.save to a temporary file renamed over path: never a half-written checkpoint."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        torch.save(obj, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _half_state_dict(model, half):
    """state_dict on the CPU, floating tensors in float16 when half.

    Keys that share one tensor (tied embeddings) share it in the copy too, so
    torch.save writes it once.
    """
    out, copies = {}, {}
    for key, value in model.state_dict().items():
        ident = (value.data_ptr(), value.dtype, tuple(value.shape), tuple(value.stride()))
        if ident not in copies:
            copy = value.detach().cpu()
            if half and copy.is_floating_point():
                copy = copy.to(torch.float16)
            copies[ident] = copy.clone()
        out[key] = copies[ident]
    return out


def save_checkpoint(path, model, model_name, src_vocab, tgt_vocab, seed, metrics=None, train=None, half=True):
    """Write a checkpoint dict (see the module docstring); returns the path."""
    check_name(model_name)
    config = asdict(model.config) if is_dataclass(model.config) else dict(model.config)
    payload = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "model_name": model_name,
        "config": config,
        "src_vocab": src_vocab.to_list(),
        "src_subword": tokenizer_json_of(src_vocab),
        "tgt_vocab": tgt_vocab.to_list(),
        "seed": int(seed),
        "versions": software_versions(),
        "metrics": dict(metrics or {}),
        "train": dict(train or {}),
        "weights_dtype": "float16" if half else "float32",
        "state_dict": _half_state_dict(model, half),
    }
    return atomic_torch_save(payload, path)


def read_checkpoint(path):
    """The raw checkpoint dict, checked for format."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}; train one with `python -m course.translation.train`")
    payload = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise ValueError(f"{path} is not an Attention Lab translator checkpoint")
    if payload.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"{path} has format version {payload.get('format_version')}, this code reads {FORMAT_VERSION}"
        )
    return payload


class LoadedModel:
    """A model in eval mode with its vocabularies and the checkpoint's metadata.

    model.decoding_settings holds the decoding settings its metrics record
    (course.translation.decoding.DecodingSettings.from_metrics).
    """

    def __init__(self, model, src_vocab, tgt_vocab, meta):
        self.model, self.src_vocab, self.tgt_vocab, self.meta = model, src_vocab, tgt_vocab, meta

    @property
    def name(self):
        return self.meta["model_name"]


def load_checkpoint(path, impl="solutions", device="cpu", dtype=torch.float32, kv_cache=None):
    """Build the checkpoint's model from `impl` modules and load its weights (as float32).

    kv_cache: decode the Transformer with its key/value cache (default: only
    when built from "solutions", so a learner's decoder blocks run as written).
    """
    payload = read_checkpoint(path)
    name = payload["model_name"]
    config = config_class(name)(**payload["config"])
    model = build_model(name, config, impl)
    state = {k: (v.to(dtype) if v.is_floating_point() else v) for k, v in payload["state_dict"].items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise ValueError(
            f"checkpoint {path} does not fit the {name} model built from {impl!r}: "
            f"missing keys {missing[:5]}, unexpected keys {unexpected[:5]}; if it was trained with an "
            f"older version of the course, train it again: "
            f"python -m course.translation.train --model {name} --data PATH"
        )
    model.to(device).eval()
    if hasattr(model, "use_kv_cache"):
        model.use_kv_cache(impl == "solutions" if kv_cache is None else kv_cache)
    model.decoding_settings = DecodingSettings.from_metrics(payload.get("metrics"))
    meta = {k: v for k, v in payload.items() if k != "state_dict"}
    return LoadedModel(model, source_vocab(payload), Vocab.from_list(payload["tgt_vocab"]), meta)


def source_vocab(payload):
    """A checkpoint's (or resume file's) English vocabulary: BPE pieces when it stores a tokenizer, else words."""
    if payload.get("src_subword"):
        return SubwordVocab.from_tokenizer_json(payload["src_subword"], expected=payload["src_vocab"])
    return Vocab.from_list(payload["src_vocab"])


def update_metrics(path, metrics):
    """Merge metrics into an existing checkpoint's metrics (atomic rewrite)."""
    payload = read_checkpoint(path)
    payload["metrics"] = {**payload.get("metrics", {}), **metrics}
    return atomic_torch_save(payload, path)
