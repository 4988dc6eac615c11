"""When learner code raises for some inputs only: which property of the inputs separates the calls that raised
from the calls that ran.

Every check's inputs are the grader's own (its spec, built here from the seeded cases), so their properties are
read here without running anything; of the learner's run only which calls raised is used. A property is named
when every call of the function (or class) that raised has it and none of the calls that ran has it: 1-D or
2-D lengths, a size-1 axis, n_q = n_k, values as wide as queries, an odd size, training or eval mode, a dtype,
an argument given or left at its default, a string argument's value; where none separates alone, one is looked for
among the calls of the branch a string argument takes ("architecture = 'cnn' together with n = 1"). That is a
fact about the calls, said as one ("every call that raised had ..."), not a guess at the cause; with only one call
on either side nothing is said, as one call separates from another on almost anything.
"""

import importlib
import inspect

import torch

from ..text import tr

# d2l's names of the axes of the tensors the exercises take, for "n_q = 1" rather than "axis 1 of queries"
AXES = {
    "queries": ("B", "n_q", "d"),
    "keys": ("B", "n_k", "d"),
    "values": ("B", "n_k", "v"),
    "X": ("B", "T", "num_hiddens"),
}
SKIPPED = {"state", "states", "probe_state", "checkpoint", "state_dict", "config", "tgt_vocab", "probes",
           "reference_sources", "course_sources", "impl_modules", "capture", "grad", "watch_inputs"}
# the order properties are named in when several separate: a tensor's layout and shape relations before a size's
# parity, the mode and a dtype
RANK = ("ndim", "none", "given", "one", "rel", "small", "odd", "parity", "mode", "str", "kw", "dtype")
MAX_NAMED = 3  # properties said at most (one call that raised may differ from the others in several)
MIN_SIDE = 2  # at least this many calls that raised, or that ran, before a property is named


def reference_signatures(spec):
    """The signatures of the reference's members a check calls -> (call, constructor): a function's and None,
    or a class's forward and __init__; (None, None) where the spec names no reference member."""
    try:
        module = importlib.import_module(f"solutions.{spec['module']}")
        if spec.get("cls"):
            cls = getattr(module, spec["cls"])
            return inspect.signature(cls.forward), inspect.signature(cls.__init__)
        if spec.get("fn"):
            return inspect.signature(getattr(module, spec["fn"])), None
    except (KeyError, ImportError, AttributeError, TypeError, ValueError):
        pass
    return None, None


def parameter_names(spec):
    """The reference's parameter names for positional `args` (a function's or forward's) and `init_args` (a
    class's constructor's) -> (arg names, init names); () where unknown."""
    return tuple(tuple(p for p in sig.parameters if p != "self") if sig else () for sig in reference_signatures(spec))


def _tensor_features(name, value, out):
    """The properties of one tensor argument (or None) -> added to out: {feature: (catalog key, fields)}."""
    if value is None:
        out[f"none:{name}"] = ("raising.is_none", {"name": name})
        return
    if not isinstance(value, torch.Tensor):
        return
    out[f"given:{name}"] = ("raising.not_none", {"name": name})
    out[f"ndim:{name}"] = ("raising.ndim", {"name": name, "k": value.dim()})
    axes = AXES.get(name)
    for axis, size in enumerate(value.shape):
        if size == 1 and value.dim() > 1:
            label = axes[axis] if axes and value.dim() == len(axes) else None
            out[f"one:{name}:{axis}"] = (("raising.axis_one", {"axis": label}) if label
                                         else ("raising.size_one", {"name": name, "axis": axis}))
    if value.dim() and value.is_floating_point():
        out[f"odd:{name}"] = ("raising.odd_last" if value.shape[-1] % 2 else "raising.even_last", {"name": name})
    if value.is_floating_point():
        out[f"dtype:{name}"] = ("raising.dtype", {"name": name, "dtype": str(value.dtype).replace("torch.", "")})


def _scalar_features(name, value, out):
    """The properties of one int argument -> added to out."""
    if isinstance(value, bool) or not isinstance(value, int):
        return
    out[f"parity:{name}"] = ("raising.odd" if value % 2 else "raising.even", {"name": name})
    if value < 0:
        out[f"small:{name}"] = ("raising.negative", {"name": name})
    else:  # 0 and 1 are cases of their own (no layer, one head, a single step); more than one is the general case
        out[f"small:{name}"] = (("raising.more_than_one", {"name": name}) if value > 1
                                else ("raising.equals", {"name": name, "value": value}))


def _choice_features(name, value, out):
    """A string argument (an architecture, a mode): the branch of the function a call takes -> added to out."""
    if isinstance(value, str) and len(value) <= 40:
        out[f"str:{name}"] = ("raising.equals", {"name": name, "value": repr(value)})


def _relations(named, out):
    """Shape relations between queries, keys and values when all are (B, n, d)."""
    q, k, v = (named.get(n) for n in ("queries", "keys", "values"))
    if isinstance(q, torch.Tensor) and isinstance(k, torch.Tensor) and q.dim() == k.dim() == 3:
        out["rel:nq_nk"] = ("raising.nq_eq_nk" if q.shape[1] == k.shape[1] else "raising.nq_ne_nk", {})
        if isinstance(v, torch.Tensor) and v.dim() == 3:
            out["rel:d_v"] = ("raising.v_eq_d" if v.shape[-1] == q.shape[-1] else "raising.v_ne_d", {})
        out["rel:dq_dk"] = ("raising.dq_eq_dk" if q.shape[-1] == k.shape[-1] else "raising.dq_ne_dk", {})


def call_features(spec):
    """{feature id: (catalog key, fields)}: the properties of one check's inputs, in the order they are tried."""
    arg_names, init_names = parameter_names(spec)
    args = spec.get("args") if isinstance(spec.get("args"), (list, tuple)) else ()
    # an argument is described by its name only: the check's own names, or a called function's signature
    names = list(spec.get("arg_names") or (arg_names if spec.get("fn") else ()))
    named = dict(zip(names, args))
    for key, value in spec.items():  # a procedure's own inputs, where the called code takes them by that name
        if key in arg_names and key not in SKIPPED and (value is None or isinstance(value, torch.Tensor)):
            named.setdefault(key, value)
    out = {}
    for name, value in named.items():
        _tensor_features(name, value, out)
    _relations(named, out)
    if "train" in spec:
        out["mode"] = ("raising.train" if spec["train"] else "raising.eval", {})
    for i, value in enumerate(spec.get("init_args") or ()):
        if i < len(init_names):
            _scalar_features(init_names[i], value, out)
    for name, value in named.items():
        _scalar_features(name, value, out)
        _choice_features(name, value, out)
    kwargs = spec.get("kwargs") or {}
    if spec.get("fn"):  # a called function's later arguments: passed or left at their default
        for name in arg_names[len(args):]:
            out[f"kw:{name}"] = ("raising.kw_given" if name in kwargs else "raising.kw_default", {"name": name})
    for name, value in kwargs.items():
        _scalar_features(name, value, out)
    return out


def separating(raised, ran):
    """The features every spec in `raised` shares with one value and no spec in `ran` has -> [(key, fields)],
    in RANK's order; [] when either side has fewer than MIN_SIDE calls."""
    if len(raised) < 1 or len(ran) < 1 or max(len(raised), len(ran)) < MIN_SIDE:
        return []
    raised_features = [call_features(spec) for spec in raised]
    ran_features = [call_features(spec) for spec in ran]
    found = _separating_features(raised_features, ran_features)
    if found or len(raised) < MIN_SIDE:
        return found
    # none alone: within the branch every call that raised took (a string argument's value), the calls of that
    # branch that ran, where the property must hold as strictly ("arch = 'cnn' together with n = 1")
    for feature, said in raised_features[0].items():
        if not feature.startswith("str:") or any(f.get(feature) != said for f in raised_features[1:]):
            continue
        branch = [f for f in ran_features if f.get(feature) == said]
        inside = _separating_features(raised_features, branch) if len(branch) >= MIN_SIDE else []
        if inside:
            return [("raising.both", {"a": said, "b": key_fields}) for key_fields in inside]
    return []


def _separating_features(raised_features, ran_features):
    """The features all of raised_features share with one value and none of ran_features has, in RANK's order."""
    found = []
    for feature, said in raised_features[0].items():
        if all(f.get(feature) == said for f in raised_features[1:]) \
                and not any(f.get(feature) == said for f in ran_features):
            found.append((RANK.index(feature.partition(":")[0]), said))
    return [said for _, said in sorted(found, key=lambda pair: pair[0])]


def _raised(result, record, check):
    """Did this check's call raise an exception of the learner's (not a stub, a time or memory limit, a
    rejected result, or a check that expects an error)?"""
    if check.spec.get("expect_error") or not record or "error" not in record or result.kind != "error":
        return False
    return record["error"].get("kind") not in ("not_implemented", "memory", "rejected", "exit")


def _ran(result, record, check):
    """Did this check's call return (right or wrong)?"""
    return not check.spec.get("expect_error") and bool(record) and "ok" in record


def called_name(check):
    """What the learner wrote that a check calls: "softmax", "DotProductAttention.forward", "X.__init__"."""
    cls = check.spec.get("cls")
    if cls:
        return f"{cls}.__init__" if check.procedure == "construct" else f"{cls}.forward"
    return check.spec.get("fn") or check.target or check.procedure


def property_words(key, fields, lang):
    """One property in words; a property within a branch says both (see separating)."""
    if key == "raising.both":
        return tr(key, lang, a=property_words(*fields["a"], lang), b=property_words(*fields["b"], lang))
    return tr(key, lang, **fields)


def add_separation_hints(checks, records, results, lang="en"):
    """For each function or class whose calls raised for some inputs only, a hint on its first call that raised
    and has none yet, naming the property that separates them (at most two properties) -> the results hinted."""
    hinted = []
    targets = dict.fromkeys(c.target or c.procedure for c in checks)
    for target in targets:
        rows = [(c, rec, res) for c, rec, res in zip(checks, records, results) if (c.target or c.procedure) == target]
        raised = [(c, res) for c, rec, res in rows if _raised(res, rec, c)]
        ran = [c for c, rec, res in rows if _ran(res, rec, c)]
        if not raised or any(res.hint for _, res in raised):
            continue
        found = separating([c.spec for c, _ in raised], [c.spec for c in ran])
        if not found:
            continue
        said = [property_words(key, fields, lang) for key, fields in found[:MAX_NAMED]]
        check, result = raised[0]
        if len(raised) == 1:  # one call separates from the others on several things: all of them are said
            result.hint = tr("raising.hint_one", lang, function=called_name(check), ran=len(ran),
                             properties=tr("raising.joiner", lang).join(said))
        else:
            also = tr("raising.also", lang, property=said[1]) if len(said) > 1 else ""
            result.hint = tr("raising.hint", lang, function=called_name(check), raised=len(raised), ran=len(ran),
                             property=said[0], also=also)
        hinted.append(result)
    return hinted
