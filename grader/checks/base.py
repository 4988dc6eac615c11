"""The building blocks of an exercise's checks and its known mistakes.

A Check names a procedure (grader/harness/procedures.py) and its inputs. The
grader runs it on the reference and on the learner's code, then compares the
two result dicts; `properties` are extra judgements on the learner's results
alone (weights sum to 1, masked keys get 0, ...) whose messages are more
telling than a bare numeric difference.

A Mistake is a known wrong variant of the reference, written as a one-place
edit of the reference source: when the learner's results match the variant's
on a failing check of the function the mistake lives in (`where`), the learner
gets the mistake's hint (course/text/<lang>/grader.toml, hints.<exNN>.<id>).
A mistake that makes the code raise is recognised by its error message
(`raises`) instead. Check names and property messages are texts or
`(key, fields)` pairs rendered in the report's language (grader/text.py).
"""

from dataclasses import dataclass, field

import torch

from .. import compare
from ..harness.seeding import seed as seed_cpu
from ..harness.registry import PROBE_PREFIX


@dataclass
class Check:
    name: str  # what is checked, for the report
    call: str  # what was called, with shapes, for the feedback
    procedure: str
    spec: dict
    keys: tuple = None  # result keys compared with the reference (None: all)
    properties: tuple = ()  # callables (learner results, spec) -> message or None
    judge: object = None  # optional (reference, learner results, spec) -> (passed, message), replaces the comparison
    target: str = ""  # the function or class under test: a mistake's hint is shown only on its own target
    tolerance_dtype: object = None  # judge values with this dtype's tolerances when the spec promises no more
    precision_note: bool = False  # a near miss (no NaN/inf, within PRECISION_SLACK) is said to be lost precision
    locate: object = None  # optional (reference, learner results, spec) -> message or None: which sub-step differs first
    locate_properties: bool = False  # also locate a failing property (not only a failing comparison)
    weights: tuple = None  # result keys that are attention weights, shown as a diff when first wrong (None: *weights*)
    id: str = ""  # stable id for reports (set by number_checks)


@dataclass(frozen=True)
class Mistake:
    id: str  # stable id; its hint is the catalog text grader.hints.<exNN>.<id>
    old: str  # text that occurs exactly once in the reference file
    new: str  # what the mistaken version has instead
    also: tuple = field(default=())  # further (old, new) edits of the same mistake
    where: tuple = ()  # the targets (functions, classes) the mistake lives in; () = any
    raises: str = ""  # for a mistake that raises: a regular expression its error message matches

    def applies_to(self, target):
        """Is a failing check on `target` one where this mistake can live?"""
        return not self.where or target in self.where


def number_checks(ex_id, checks):
    """Give every check a stable id: exNN.<target>.<n> (n counts checks of that target)."""
    counts = {}
    for check in checks:
        key = check.target or check.procedure
        counts[key] = counts.get(key, 0) + 1
        check.id = f"{ex_id}.{key}.{counts[key]}"
    return checks


def generator(seed):
    """A seeded CPU generator: every check draws the same inputs every run."""
    return torch.Generator().manual_seed(seed)


def randn(gen, *shape, dtype=torch.float32):
    """Standard normal tensor of shape, reproducible from gen."""
    return torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)


def tensor_desc(name, value):
    """'queries (2, 3, 4) float32', or the values for small integer tensors."""
    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).replace("torch.", "")
        if not value.is_floating_point() and value.numel() <= 12:
            return f"{name}={value.tolist()}"
        return f"{name} {compare.shape_str(value.shape)} {dtype}"
    return f"{name}={value!r}"


def call_desc(callee, names, values):
    """'masked_softmax(X (2, 3, 4) float32, valid_lens=[2, 0])'."""
    return f"{callee}(" + ", ".join(tensor_desc(n, v) for n, v in zip(names, values)) + ")"


def init_text(cls_name, init_args):
    """'DotProductAttention(0.3)': a constructor call as the learner would write it."""
    return f"{cls_name}({', '.join(repr(a) for a in init_args)})"


def with_parameter(check, name, value):
    """The check given the exercise's parameter `name` explicitly, off its published default (a keyword of the call,
    or of the module's constructor, its weights unchanged): a slip the published default hides (a temperature of 1,
    a base or dilation ignored) shows here. Judged only where the learner's function or class takes `name` (the
    harness reads its signature); an answer written before the exercise had the parameter is not applicable."""
    spec = check.spec
    if "cls" in spec:
        spec["init_kwargs"] = dict(spec.get("init_kwargs", {}), **{name: value})
        check.call = _with_keyword(check.call, spec["cls"], name, value)
    else:
        spec["kwargs"] = dict(spec.get("kwargs", {}), **{name: value})
        check.call = call_desc(spec["fn"], spec["arg_names"] + list(spec["kwargs"]),
                               spec["args"] + list(spec["kwargs"].values()))
    spec["needs_parameter"] = name
    check.name = ("check.with_parameter", {"what": check.name, "name": name, "value": value})
    return check


def _with_keyword(call, cls_name, name, value):
    """A check's call text with `name=value` added to the constructor call `cls_name(...)` it shows."""
    if isinstance(call, tuple):  # ("call.in_mode", {"module": "Cls(...)", ...})
        key, fields = call
        return key, dict(fields, module=_with_keyword(fields["module"], cls_name, name, value))
    start = call.find(cls_name + "(")
    if start < 0:
        return call
    close = call.index(")", start)
    sep = "" if call[close - 1] == "(" else ", "
    return f"{call[:close]}{sep}{name}={value!r}{call[close:]}"


def reference_state(cls, init_args, dtype=torch.float32, seed=0, init_kwargs=None):
    """Reference weights to copy into the learner's module (seeded init): random values drawn through the
    reference class's constructor, inputs like the seeded random arguments, never a reference's output."""
    seed_cpu(seed)
    model = cls(*init_args, **(init_kwargs or {}))
    # Default inits are small; spread weights a little so mistakes show.
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn(p.shape, generator=generator(seed + p.numel()), dtype=p.dtype))
    return {k: v.to(dtype) if v.is_floating_point() else v for k, v in model.state_dict().items()}


# ---- properties: judgements on the learner's results alone --------------------------


def _row_lengths(valid_lens, B, n_q, n_k):
    """Valid length per (b, q) row as a (B, n_q) tensor."""
    if valid_lens is None:
        return torch.full((B, n_q), n_k)
    if valid_lens.dim() == 1:
        return valid_lens[:, None].expand(B, n_q)
    return valid_lens


def weights_property(key, valid_lens_arg):
    """Attention weights are >= 0, exactly 0 on masked keys, sum to 1 over valid keys."""

    def check(results, spec):
        weights = results.get(key)
        if not isinstance(weights, torch.Tensor) or weights.dim() < 3:
            return None  # shape problems are reported by the comparison
        # (B, n_q, n_k), or (B, heads, n_q, n_k): judge each head's (B, n_q, n_k) slice
        heads = [weights] if weights.dim() == 3 else [weights[:, h] for h in range(weights.shape[1])]
        lens = spec["args"][valid_lens_arg] if valid_lens_arg is not None else None
        for W in heads:
            B, n_q, n_k = W.shape
            lengths = _row_lengths(lens, B, n_q, n_k) if lens is None or lens.shape[0] == B else None
            if lengths is None:
                return None
            mask = torch.arange(n_k)[None, None, :] < lengths[:, :, None]
            leaked = (W != 0) & ~mask
            if leaked.any():
                b, q, k = leaked.nonzero()[0].tolist()
                return ("prop.weight_leaked", {"result": key, "k": k, "q": q, "b": b,
                                               "weight": f"{W[b, q, k].item():.4g}", "length": int(lengths[b, q])})
            sums = W.sum(-1)
            want = (lengths > 0).to(W.dtype)
            off = (sums - want).abs() > (1e-3 if W.dtype != torch.float64 else 1e-9)
            if off.any():
                b, q = off.nonzero()[0].tolist()
                return ("prop.weights_sum", {"result": key, "q": q, "b": b, "sum": f"{sums[b, q].item():.4g}",
                                             "want": int(want[b, q])})
        return None

    return check


def first_difference(want, have, tolerance_dtype=None):
    """The index (tuple) of the first element outside tolerance, None if all agree or shapes differ."""
    if not isinstance(want, torch.Tensor) or not isinstance(have, torch.Tensor) or want.shape != have.shape \
            or have.dtype != want.dtype or not want.is_floating_point():
        return None
    rtol, atol = compare.tolerance(tolerance_dtype or want.dtype)
    off = ~torch.isclose(have, want, rtol=max(rtol, compare.tolerance(want.dtype)[0]), atol=atol, equal_nan=True)
    if not off.any():
        return None
    return tuple(off.nonzero()[0].tolist())


def weights_locator(key="attention_weights", kind="attention"):
    """Which step first differs in an attention module: its weights (and where: example and query, or
    target step), or, when the weights agree, what comes after them."""

    def locate(reference, got, spec):
        want, have = reference.get(key), got.get(key)
        if not isinstance(want, torch.Tensor) or not isinstance(have, torch.Tensor) or want.shape != have.shape:
            return None
        first = first_difference(want, have)
        if first is None:
            return ("step.decoder_weights_agree" if kind == "decoder" else "step.weights_agree", {"result": key})
        if kind == "decoder":
            return ("step.decoder_weights_differ", {"result": key, "b": first[0], "t": first[1]})
        return ("step.weights_differ", {"result": key, "b": first[0], "q": first[1]})

    return locate


def steps_locator(steps, output="output"):
    """Which intermediate value first differs, in the order the code computes them. `steps`: (result key,
    step name) pairs, the keys mostly the values a check's spec["probes"] records in the learner's process
    (grader/harness/procedures.py); a step's text is grader.step.name.<name>. A step the learner's code
    never reached (another structure, a submodule not called) is passed over; one whose value is there but
    is not a tensor of the reference's shape is the first difference. Every step agreeing while `output`
    differs locates the difference after the last step."""

    def locate(reference, got, spec):
        last = None
        for key, name, *fields in steps:
            want = reference.get(key)
            if not isinstance(want, torch.Tensor) or key not in got:
                continue
            have, step = got[key], (f"step.name.{name}", fields[0] if fields else {})
            if not isinstance(have, torch.Tensor):
                return ("step.first_missing", {"step": step, "shape": compare.shape_str(want.shape)})
            if have.shape != want.shape:
                return ("step.first_shape", {"step": step, "expected": compare.shape_str(want.shape),
                                             "got": compare.shape_str(have.shape)})
            if have.dtype != want.dtype:
                continue  # the comparison of the results says which dtype is wrong
            first = first_difference(want, have, spec.get("tolerance_dtype"))
            if first is not None:
                return ("step.first_differs", {"step": step, "index": compare.shape_str(first), "probe": key})
            last = step
        want, have = reference.get(output), got.get(output)
        if last is not None and isinstance(want, torch.Tensor) and isinstance(have, torch.Tensor) \
                and first_difference(want, have) is not None:
            return ("step.after_last", {"last": last})
        return None

    return locate


def probe_steps(probes, first=(), then=()):
    """The (result key, step name) pairs of a check's probes, in order, with other result keys (captured
    attributes) put before (`first`) or after (`then`) them as (key, name) pairs."""
    return tuple(first) + tuple((PROBE_PREFIX + name, name) for name, _, _ in probes) + tuple(then)


def unchanged_input(name):
    """The input tensor `name` must not be modified in place."""

    def check(results, spec):
        after = results.get(f"input_after.{name}")
        before = spec["args"][spec["arg_names"].index(name)] if "arg_names" in spec else None
        if isinstance(after, torch.Tensor) and isinstance(before, torch.Tensor):
            if after.shape == before.shape and not torch.equal(torch.nan_to_num(after), torch.nan_to_num(before)):
                return ("prop.input_modified", {"name": name})
        return None

    return check
