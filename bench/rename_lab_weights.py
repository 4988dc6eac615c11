"""Rename the parameters in the shipped weights of the lab's models to the names of exercise 7's blocks.

    python bench/rename_lab_weights.py [--check]

Chapters 14 and 15 ship the state_dicts of lab models (course/lessons/data/ch14_char_lm_seed*.pt and
ch15_induction_seed*.pt). They were saved when the lab built its own blocks, whose sub-layer wiring was a SubLayer
with a `norm`, and whose decoder named its attentions `self_attention` and `cross_attention`. The lab now builds
exercise 7's TransformerEncoderBlock / TransformerDecoderBlock (course.lessons.lab_blocks), whose names differ
(OLD_TO_NEW). This script renames the keys of each file once, in place (and the module names in the state_dict's
`_metadata`, which holds each module's version; the old SubLayer modules' own entries, which had no parameters and
have no counterpart, stay as they were), and nothing else: every tensor is
asserted equal (values, dtype, shape) to the one it was read as, and the renamed file must load, strictly, into
the lab model of the chapter's shipped config. A file already renamed is left as it is. --check only reports.
"""

import argparse
import sys
from collections import OrderedDict
from dataclasses import replace
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from course.lessons import ch14, ch15, training_lab

# Within a block, an old name's part -> the new one (the state_dict's key between the block's index and the
# parameter's own name, e.g. encoder.0.sub1.norm.weight -> encoder.0.addnorm1.ln.weight).
OLD_TO_NEW = {
    "sub1.norm": "addnorm1.ln",
    "sub2.norm": "addnorm2.ln",
    "sub3.norm": "addnorm3.ln",
    "self_attention": "attention1",
    "cross_attention": "attention2",
}


def new_name(key):
    """The key with each old part replaced (parts are matched whole, between dots)."""
    for old, new in OLD_TO_NEW.items():
        key = key.replace(f".{old}.", f".{new}.")
    return key


def renamed(state):
    """A new state_dict: state's tensors, in its order, under the new names; its `_metadata` (each module's
    version, by the module's name) kept, under the modules' new names."""
    out = OrderedDict((new_name(k), v) for k, v in state.items())
    if len(out) != len(state):
        raise ValueError("two old names map to one new name")
    for k, v in state.items():
        w = out[new_name(k)]
        assert w is v and torch.equal(w, v) and w.dtype == v.dtype and w.shape == v.shape, k
    metadata = getattr(state, "_metadata", None)
    if metadata is not None:
        out._metadata = OrderedDict((new_name(f"{m}.")[:-1], v) for m, v in metadata.items())
    return out


def shipped():
    """[(path, a function building the chapter's shipped model of that seed without weights)]."""
    files = []
    for chapter in (ch14, ch15):
        results = chapter.load_results()
        for seed in results["seeds"]:
            files.append((chapter.weights_path(seed), lambda r=results, s=seed: empty_model(r, s)))
    return files


def empty_model(results, seed):
    """The lab model of a chapter's shipped config for `seed`, with its initial weights."""
    config = replace(training_lab.LabConfig(**results["config"]), seed=seed)
    vocab = len(results["tokens"]) if "tokens" in results else None
    return training_lab.LabTransformer(config, vocab_size=vocab)


def convert(path, build, write=True):
    """Rename one file's keys (in place when write) -> a line saying what was done."""
    state = torch.load(path, map_location="cpu", weights_only=True)
    new = renamed(state)
    if list(new) == list(state):
        return f"{path.name}: already renamed"
    build().load_state_dict(new, strict=True)  # every key the model has, none it lacks
    if write:
        torch.save(new, path)
        again = torch.load(path, map_location="cpu", weights_only=True)
        assert list(again) == list(new) and all(torch.equal(again[k], new[k]) for k in new), path
    return f"{path.name}: {sum(k != new_name(k) for k in state)} of {len(state)} keys renamed"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report what would change; write nothing")
    args = parser.parse_args(argv)
    for path, build in shipped():
        print(convert(path, build, write=not args.check))


if __name__ == "__main__":
    main()
