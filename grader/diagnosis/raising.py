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

# d2l's names of the axes of the tensors the exercises take, by the tensor's number of axes, for "n_q = 1" rather
# than "axis 1 of queries"; a function whose argument of that name holds something else has its own (FUNCTION_AXES)
AXES = {
    "queries": {3: ("B", "n_q", "d"), 1: ("n_q",)},
    "keys": {3: ("B", "n_k", "d"), 2: ("n_q", "n_k"), 1: ("n_k",)},
    "values": {3: ("B", "n_k", "v"), 2: ("n_q", "n_k"), 1: ("n_k",)},
    "X": {3: ("B", "T", "num_hiddens"), 2: ("B", "T")},
    "enc_outputs": {3: ("B", "T_src", "num_hiddens")},
}
FUNCTION_AXES = {"masked_softmax": {"X": {3: ("B", "n_q", "n_k")}}}  # scores, not a sequence
# pairs of axes whose sizes are compared ("B ≠ T"): (n_q, n_k) is worded on its own (raising.nq_eq_nk)
RELATED = (("n_q", "n_k"), ("B", "T"), ("T", "T_src"))
DIVIDES = (("n_k", "block_size"),)  # (axis, int parameter): "n_k is not a multiple of block_size"
ALONE = {"batch_items": ("raising.items_alone", {})}  # a procedure that also calls with each example alone (B = 1)
BRANCHES = ("str", "given", "ndim")  # features a property may be looked for within ("`valid_lens` given together
# with n_q ≠ n_k"): the branch an argument's value or form takes
SKIPPED = {"state", "states", "probe_state", "checkpoint", "state_dict", "config", "tgt_vocab", "probes",
           "reference_sources", "course_sources", "impl_modules", "capture", "grad", "watch_inputs"}
# the order properties are named in when several separate: a tensor's layout and shape relations before a size's
# parity, the mode and a dtype
RANK = ("ndim", "one", "rel", "div", "none", "given", "small", "odd", "parity", "mode", "str", "kw", "dtype")
MAX_NAMED = 3  # properties said at most (one call that raised may differ from the others in several)
MIN_SIDE = 2  # at least this many calls that raised, or that ran, before a property is named
PROCEDURE = "_procedure"  # the key add_separation_hints gives a spec's procedure under, for ALONE


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


def axis_labels(function, name, value):
    """d2l's names of the axes of tensor argument `name` of `function` (AXES, FUNCTION_AXES), or None."""
    table = FUNCTION_AXES.get(function, {}).get(name) or AXES.get(name) or {}
    return table.get(value.dim()) if isinstance(value, torch.Tensor) else None


def _tensor_features(name, value, out, axes=None):
    """The properties of one tensor argument (or None) -> added to out: {feature: (catalog key, fields)}; axes:
    the names of its axes (axis_labels)."""
    if value is None:
        out[f"none:{name}"] = ("raising.is_none", {"name": name})
        return
    if not isinstance(value, torch.Tensor):
        return
    out[f"given:{name}"] = ("raising.not_none", {"name": name})
    out[f"ndim:{name}"] = ("raising.ndim", {"name": name, "k": value.dim()})
    for axis, size in enumerate(value.shape):
        if size == 1 and value.dim() > 1:
            label = axes[axis] if axes else None
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


def _sizes(function, named):
    """{axis name: size} over the tensor arguments (AXES); an axis name two tensors give different sizes is
    left out (a call the names do not fit)."""
    sizes, clash = {}, set()
    for name, value in named.items():
        for label, size in zip(axis_labels(function, name, value) or (), getattr(value, "shape", ())):
            if sizes.setdefault(label, size) != size:
                clash.add(label)
    return {label: size for label, size in sizes.items() if label not in clash}


def _relations(function, named, ints, out):
    """Shape relations: between the named axes of the tensor arguments (RELATED), an axis and an int parameter
    (DIVIDES), and the widths of queries, keys and values when all are (B, n, d)."""
    sizes = _sizes(function, named)
    for a, b in RELATED:
        if a in sizes and b in sizes:
            if (a, b) == ("n_q", "n_k"):
                out["rel:nq_nk"] = ("raising.nq_eq_nk" if sizes[a] == sizes[b] else "raising.nq_ne_nk", {})
            else:
                out[f"rel:{a}:{b}"] = ("raising.sizes_eq" if sizes[a] == sizes[b] else "raising.sizes_ne",
                                       {"a": a, "b": b})
    for axis, name in DIVIDES:
        step = ints.get(name)
        if axis in sizes and isinstance(step, int) and not isinstance(step, bool) and step > 0:
            out[f"div:{axis}:{name}"] = ("raising.multiple" if sizes[axis] % step == 0 else "raising.not_multiple",
                                         {"axis": axis, "name": name})
    q, k, v = (named.get(n) for n in ("queries", "keys", "values"))
    if isinstance(q, torch.Tensor) and isinstance(k, torch.Tensor) and q.dim() == k.dim() == 3:
        if isinstance(v, torch.Tensor) and v.dim() == 3:
            out["rel:d_v"] = ("raising.v_eq_d" if v.shape[-1] == q.shape[-1] else "raising.v_ne_d", {})
        out["rel:dq_dk"] = ("raising.dq_eq_dk" if q.shape[-1] == k.shape[-1] else "raising.dq_ne_dk", {})


def _int_values(spec, named, init_names):
    """{name: int} of a call's int parameters: passed, given to the constructor, or the reference's defaults."""
    ints = {}
    for sig in reversed(reference_signatures(spec)):
        for name, parameter in (sig.parameters.items() if sig else ()):
            if isinstance(parameter.default, int):
                ints[name] = parameter.default
    ints.update(zip(init_names, spec.get("init_args") or ()))
    ints.update(spec.get("init_kwargs") or {})
    ints.update({k: v for k, v in named.items() if isinstance(v, int)})
    ints.update(spec.get("kwargs") or {})
    return {k: v for k, v in ints.items() if isinstance(v, int) and not isinstance(v, bool)}


def call_features(spec):
    """{feature id: (catalog key, fields)}: the properties of one check's inputs, in the order they are tried."""
    arg_names, init_names = parameter_names(spec)
    args = spec.get("args") if isinstance(spec.get("args"), (list, tuple)) else ()
    # an argument is described by its name only: the check's own names, or a called function's signature
    names = list(spec.get("arg_names") or (arg_names if spec.get("fn") else ()))
    named = dict(zip(names, args))
    for key, value in spec.items():  # a procedure's own inputs, where the called code takes them by that name
        # (or they are tensors whose axes AXES names: the encoder's outputs a decoder is initialised with)
        known = key in arg_names or key in AXES
        if known and key not in SKIPPED and (value is None or isinstance(value, torch.Tensor)):
            named.setdefault(key, value)
    out = {}
    function = spec.get("fn") or spec.get("cls")
    kwargs = spec.get("kwargs") or {}
    for name, value in list(named.items()) + [(k, v) for k, v in kwargs.items() if k not in named]:
        _tensor_features(name, value, out, axis_labels(function, name, value))
    _relations(function, {**{k: v for k, v in kwargs.items() if isinstance(v, torch.Tensor)}, **named},
               _int_values(spec, named, init_names), out)
    if spec.get(PROCEDURE) in ALONE:
        out["one:B"] = ALONE[spec[PROCEDURE]]
    if "train" in spec:
        out["mode"] = ("raising.train" if spec["train"] else "raising.eval", {})
    for i, value in enumerate(spec.get("init_args") or ()):
        if i < len(init_names):
            _scalar_features(init_names[i], value, out)
    for name, value in (spec.get("init_kwargs") or {}).items():
        _scalar_features(name, value, out)
    for name, value in named.items():
        _scalar_features(name, value, out)
        _choice_features(name, value, out)
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
    # none alone: within the branch every call that raised took (a string argument's value, an argument given,
    # a tensor's number of axes: BRANCHES), the calls of that branch that ran, where the property must hold as
    # strictly ("arch = 'cnn' together with n = 1")
    for feature, said in raised_features[0].items():
        if feature.partition(":")[0] not in BRANCHES or any(f.get(feature) != said for f in raised_features[1:]):
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


def _spec(check):
    """A check's spec with its procedure beside it (ALONE: a procedure's own calls are properties too)."""
    return {**check.spec, PROCEDURE: check.procedure}


def _look(records, own, lang):
    """The hint's last sentence: the learner's line, where every call that raised raised at the same one of
    theirs (own: an error record -> (line, code) or None), else a pointer to the checks' messages."""
    lines = {own(record["error"]) if own else None for record in records}
    if len(lines) == 1 and None not in lines:
        line, code = lines.pop()[:2]
        return tr("raising.look_line", lang, line=line, code=code)
    return tr("raising.look", lang)


def add_separation_hints(checks, records, results, lang="en", own=None, min_raised=1):
    """For each function or class whose calls raised for some inputs only (in at least `min_raised` calls), a
    hint on its first call that raised and has none yet, naming the property that separates them (at most two
    properties) -> the results hinted. own: an error record -> (the learner's line, its code) or None
    (messages.own_line), for naming that line."""
    hinted = []
    targets = dict.fromkeys(c.target or c.procedure for c in checks)
    for target in targets:
        rows = [(c, rec, res) for c, rec, res in zip(checks, records, results) if (c.target or c.procedure) == target]
        raised = [(c, res) for c, rec, res in rows if _raised(res, rec, c)]
        raised_records = [rec for c, rec, res in rows if _raised(res, rec, c)]
        ran = [c for c, rec, res in rows if _ran(res, rec, c)]
        if len(raised) < max(1, min_raised) or any(res.hint for _, res in raised):
            continue
        found = separating([_spec(c) for c, _ in raised], [_spec(c) for c in ran])
        if not found:
            continue
        said = list(dict.fromkeys(property_words(key, fields, lang) for key, fields in found))[:MAX_NAMED]
        check, result = raised[0]
        look = _look(raised_records, own, lang)
        if len(raised) == 1:  # one call separates from the others on several things: all of them are said
            result.hint = tr("raising.hint_one", lang, function=called_name(check), ran=len(ran),
                             properties=tr("raising.joiner", lang).join(said), look=look)
        else:
            also = tr("raising.also", lang, property=said[1]) if len(said) > 1 else ""
            result.hint = tr("raising.hint", lang, function=called_name(check), raised=len(raised), ran=len(ran),
                             property=said[0], also=also, look=look)
        hinted.append(result)
    return hinted
