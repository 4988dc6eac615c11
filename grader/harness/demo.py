"""The demo-stage procedure: translate the probe sentences with a trained checkpoint.

Runs like every procedure: on the reference in the grader's process and on the
learner's staged package in the sandbox child. The child cannot import the
project, so the spec carries what it needs as data: the source text of the
model code (course/translation/models.py and what it imports), of the reference exercise
files the staged package lacks, the checkpoint's config and weights, and the
probe sentences already turned into ids. The procedure reports greedy ids and
logits; the grader judges (grader/checks/demo.py).
"""

import hashlib
import sys
import types
import uuid

import torch

from .seeding import seed
from .registry import procedure

PAD_ID, BOS_ID, EOS_ID = 0, 1, 2  # course/translation/vocab.py's fixed ids


def _package(name, members):
    """Register an empty package `name` and the given {member: module} under it."""
    package = types.ModuleType(name)
    package.__path__ = []
    sys.modules[name] = package
    for member, module in members.items():
        sys.modules[f"{name}.{member}"] = module
        setattr(package, member, module)
    return package


def _exec_module(full_name, source):
    """Run trusted source text (ours) as module `full_name`, registered first (dataclasses need it)."""
    module = types.ModuleType(full_name)
    module.__package__ = full_name.rpartition(".")[0]
    module.__file__ = f"<{full_name}>"
    sys.modules[full_name] = module
    exec(compile(source, f"<{full_name.rpartition('.')[2]}.py>", "exec"), module.__dict__)
    return module


def _course_models(sources):
    """course.translation.models built from its source text (cached by content)."""
    digest = hashlib.sha1("\0".join(sources[k] for k in sorted(sources)).encode()).hexdigest()[:12]
    name = f"_demo_course_{digest}"
    if f"{name}.models" not in sys.modules:
        _package(name, {})
        for member, source in sources.items():  # in import order
            _exec_module(f"{name}.{member}", source)
    return sys.modules[f"{name}.models"]


def _impl_package(modules, spec):
    """A package of exercise modules: the staged ones from `modules`, the rest from reference text (under a
    name of its own, removed from sys.modules once the model is built)."""
    name = f"_demo_impl_{uuid.uuid4().hex}"
    _package(name, {})
    for member in spec["impl_modules"]:  # in dependency order
        if member in spec["reference_sources"]:
            module = _exec_module(f"{name}.{member}", spec["reference_sources"][member])
        else:
            module = _pinned(modules(member), spec.get("pins", {}).get(member))
            sys.modules[f"{name}.{member}"] = module
        setattr(sys.modules[name], member, module)
    return name


def _pinned(module, text):
    """The module itself, or (with pin text from grader/variants.py) a copy of its namespace in which the
    variant parameter's default is pinned to the published value the trained weights need."""
    if not text:
        return module
    copy = types.ModuleType(module.__name__)
    copy.__dict__.update(module.__dict__)
    exec(compile(text, f"<published defaults of {module.__name__}>", "exec"), copy.__dict__)
    return copy


def _greedy_with_logits(model, src, src_valid_lens, max_len):
    """Batched greedy decoding -> per sentence: ids (with <eos> if emitted) and each step's logits."""
    B = src.shape[0]
    state = model.encode(src, src_valid_lens)
    tokens = torch.full((B, 1), BOS_ID, dtype=torch.long)  # (B, 1)
    done = torch.zeros(B, dtype=torch.bool)  # (B,)
    ids, logits_seen = [[] for _ in range(B)], [[] for _ in range(B)]
    for _ in range(max_len):
        logits, state, _ = model.decode_step(tokens, state)  # (B, V)
        logits = logits.float()
        masked = logits.clone()
        masked[:, [PAD_ID, BOS_ID]] = float("-inf")  # never a next token
        next_ids = masked.argmax(dim=-1)  # (B,)
        for b in range(B):
            if not done[b]:
                ids[b].append(int(next_ids[b]))
                logits_seen[b].append(logits[b])
        done |= next_ids == EOS_ID
        if bool(done.all()):
            break
        tokens = next_ids.unsqueeze(1)  # (B, 1)
    return ids, [torch.stack(rows) for rows in logits_seen]  # each (T_b, V)


@procedure
def demo_translations(modules, spec):
    """Load the checkpoint into a model built from `modules` and translate the probes greedily."""
    if spec.get("skip"):
        return {"skipped": True}
    models = _course_models(spec["course_sources"])
    impl = _impl_package(modules, spec)
    seed(0)
    try:
        model = models.build_model(spec["model_name"], spec["config"], impl)
    finally:  # the built model keeps what it needs; the package names are not needed again
        for name in [n for n in sys.modules if n == impl or n.startswith(impl + ".")]:
            del sys.modules[name]
    model.load_state_dict(spec["state_dict"], strict=True)
    model.float().eval()
    probes = spec["probe_ids"]
    lens = torch.tensor([len(p) for p in probes])  # (P,)
    src = torch.full((len(probes), int(lens.max())), PAD_ID, dtype=torch.long)  # (P, T_src)
    for i, p in enumerate(probes):
        src[i, : len(p)] = torch.tensor(p, dtype=torch.long)
    with torch.no_grad():
        ids, logits = _greedy_with_logits(model, src, lens, spec["max_len"])
    results = {"skipped": False, "num_probes": len(probes)}
    for i in range(len(probes)):
        results[f"ids.{i}"] = torch.tensor(ids[i], dtype=torch.long)  # (T_i,)
        results[f"logits.{i}"] = logits[i]  # (T_i, V)
    return results
