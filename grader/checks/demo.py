"""The demo stage: the trained translator, rebuilt from the learner's module, must translate like ours.

`demo_check(ex_id, model_name)` is appended to an exercise's checks (ex04: the
Bahdanau model; ex05, ex06, ex07: the Transformer). The model is built from
the learner's module for this exercise and the references for the rest, the
shipped checkpoint is loaded into it, and the probe sentences of course.translation.demos
are translated greedily, in one padded batch, in the sandbox child. A probe
agrees when the output ids are identical to the reference model's and every
step's logits agree within LOGIT_TOL. Without a checkpoint the check passes
with a note that says how to train one. In strict mode (`strict_variant`) no
reference text goes into the job: the model is built from the learner's own
modules only, and where it needs one the exercise does not build on, the stage
is skipped with a note saying why.
"""

import dataclasses
import functools

import torch

from course.common.exercise_index import get as get_exercise
from course.common.paths import PROJECT_ROOT
from course.translation import demos
from course.translation.checkpoint import read_checkpoint, source_vocab
from course.translation.models import family, source_modules
from course.translation.vocab import EOS_ID, tokenize_en

from .base import Check

NAME = ("demo.name", {})  # rendered in the report's language (grader/text.py)
LOGIT_TOL = (1e-3, 1e-3)  # (rtol, atol) on float32 logits after the whole network
SOLUTIONS_DIR = PROJECT_ROOT / "solutions"
MODEL_DIR = PROJECT_ROOT / "course" / "translation"


@functools.lru_cache(maxsize=4)
def _cached_checkpoint(path, inode, mtime_ns, size):
    """A checkpoint read once, with float32 weights and the probe sentences in its source vocabulary's ids
    (building a subword vocabulary costs ~40 ms, and checks are built per exercise, per run and per variant);
    keyed on the file's identity and stamp."""
    payload = dict(read_checkpoint(path))
    payload["float_state_dict"] = {k: (v.float() if v.is_floating_point() else v)
                                   for k, v in payload["state_dict"].items()}
    src_vocab = source_vocab(payload)
    payload["probe_ids"] = [src_vocab.encode_words(tokenize_en(s)) for s in demos.PROBE_SENTENCES]
    return payload


def _checkpoint(path):
    """The checkpoint at path: one read serves ex05, ex06 and ex07 (same Transformer).

    The cache lives as long as the process (the warm `python -m grader serve` grades many runs), so its key
    is what the file is, not only where: a checkpoint trained again is written atomically (a new inode) and
    has a new mtime and size, so the next run reads it. Keyed rather than scoped to one grading run because
    checks are built per exercise (`build()` takes no run object) and a read costs a torch.load per
    exercise; at most 4 checkpoints stay in memory.
    """
    stat = path.stat()
    return _cached_checkpoint(str(path), stat.st_ino, stat.st_mtime_ns, stat.st_size)


def demo_check(ex_id, model_name):
    """The demo-stage Check for one exercise, or a skip note when no checkpoint exists."""
    path = demos.checkpoint_path(model_name)
    if not path.is_file():
        note = ("demo.skipped", {"model": family(model_name).title, "path": str(path),
                                 "command": demos.train_command(model_name)})
        return Check(NAME, f"demo stage ({model_name})", "demo_translations", {"skip": note}, judge=_judge)
    payload = _checkpoint(path)
    exercise = get_exercise(ex_id)
    staged = {exercise.module} | {get_exercise(dep).module for dep in exercise.needs}
    impl_modules = family(model_name).impl_modules
    probe_ids = [list(ids) for ids in payload["probe_ids"]]  # the spec's own copy
    spec = {
        "model_name": model_name,
        "config": dict(payload["config"]),
        "state_dict": payload["float_state_dict"],  # shared, read-only: procedures only load it
        "course_sources": {m: (MODEL_DIR / f"{m}.py").read_text(encoding="utf-8") for m in source_modules()},
        "impl_modules": list(impl_modules),
        "reference_sources": {m: (SOLUTIONS_DIR / f"{m}.py").read_text(encoding="utf-8")
                              for m in impl_modules if m not in staged},
        "probe_ids": probe_ids,
        "probes": list(demos.PROBE_SENTENCES),
        "tgt_vocab": list(payload["tgt_vocab"]),
        "max_len": 2 * max(len(p) for p in probe_ids) + 10,
        "checkpoint": str(path),
    }
    call = ("demo.call", {"model": model_name, "checkpoint": path.name, "filename": exercise.filename,
                          "count": len(probe_ids)})
    return Check(NAME, call, "demo_translations", spec, judge=_judge)


def strict_variant(check):
    """The check as the strict sandbox runs it: the same, or, when the model needs reference modules the
    job does not stage, a skip note (the job's spec then holds no reference text at all)."""
    if check.procedure != "demo_translations" or check.spec.get("skip"):
        return check
    fields = check.call[1]
    missing = list(check.spec["reference_sources"])
    if not missing:
        return dataclasses.replace(check, call=("demo.call_own", fields))
    note = ("demo.strict_skipped", {"model": family(check.spec["model_name"]).title, "filename": fields["filename"],
                                    "modules": ", ".join(f"{m}.py" for m in missing)})
    return dataclasses.replace(check, spec={"skip": note})


def _text(ids, itos):
    """Ids -> the Chinese text up to <eos> (for messages)."""
    out = []
    for i in ids:
        if i == EOS_ID:
            break
        out.append(itos[i] if 0 <= i < len(itos) else "<unk>")
    return "".join(out) or "(empty)"


def _probe_problem(i, reference, got, spec):
    """None if probe i agrees, else what differs."""
    want_ids, have_ids = reference[f"ids.{i}"], got.get(f"ids.{i}")
    want_logits, have_logits = reference[f"logits.{i}"], got.get(f"logits.{i}")
    if not isinstance(have_ids, torch.Tensor) or not isinstance(have_logits, torch.Tensor):
        return ("demo.no_output", {})
    if not torch.equal(want_ids, have_ids):
        itos = spec["tgt_vocab"]
        return ("demo.other_text", {"want": _text(want_ids.tolist(), itos), "got": _text(have_ids.tolist(), itos)})
    if have_logits.shape != want_logits.shape:
        return ("demo.logits_shape", {"got": str(tuple(have_logits.shape)), "want": str(tuple(want_logits.shape))})
    if not torch.isfinite(have_logits).all():
        return ("demo.logits_nan", {})
    rtol, atol = LOGIT_TOL
    if not torch.allclose(have_logits, want_logits, rtol=rtol, atol=atol):
        error = (have_logits - want_logits).abs().max().item()
        return ("demo.logits_differ", {"error": f"{error:.3g}", "tolerance": f"{atol:g}"})
    return None


def _judge(reference, got, spec):
    """(passed, message): how many probe sentences translate identically."""
    if spec.get("skip"):
        return True, spec["skip"]
    count = len(spec["probe_ids"])
    problems = [(i, _probe_problem(i, reference, got, spec)) for i in range(count)]
    failing = [(i, p) for i, p in problems if p]
    agree = count - len(failing)
    if not failing:
        return True, ("demo.passed", {"agree": agree, "count": count, "model": spec["model_name"]})
    i, problem = failing[0]
    return False, ("demo.failed", {"agree": agree, "count": count, "probe": repr(spec["probes"][i]),
                                   "problem": problem})
