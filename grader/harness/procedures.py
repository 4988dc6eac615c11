"""What the grader asks an implementation to do, as plain procedures.

A procedure takes `modules` (a function: exercise module name -> module) and a
spec (plain data and tensors) and returns a flat dict of results: tensors,
numbers, strings. The grader runs the same procedure on the reference in its
own process and on the learner's code in a child process, then compares the
two dicts. Procedures never judge: they only report what the code did.

This file is copied into the child's sandbox: it imports torch and nothing
from the project.
"""

import inspect
import operator
import zlib

import torch

from .seeding import seed
from .registry import PROBE_PREFIX, PROCEDURES, procedure  # noqa: F401  (PROCEDURES: the table this module fills)


def _prepare(value, needs_grad):
    """A fresh copy of an input, with requires_grad when asked."""
    if isinstance(value, torch.Tensor):
        value = value.clone()
        if needs_grad:
            value.requires_grad_(True)
    return value


def _flatten(prefix, value, out):
    """Flatten nested outputs into out: {"output": t, "output.1.0": t, ...}."""
    if isinstance(value, (tuple, list)):
        out[f"{prefix}.len"] = len(value)
        for i, item in enumerate(value):
            _flatten(f"{prefix}.{i}", item, out)
    elif isinstance(value, torch.Tensor):
        out[prefix] = value.detach().as_subclass(torch.Tensor).clone()
    elif value is None or isinstance(value, (bool, int, float, str)):
        out[prefix] = value
    else:
        out[prefix] = f"<{type(value).__name__}>"


def _primary(value):
    """The tensor that gradients flow back from: the output or its first item."""
    while isinstance(value, (tuple, list)) and value:
        value = value[0]
    return value if isinstance(value, torch.Tensor) else None


def _backward(results, output, grad_seed, inputs, params=None):
    """Backpropagate sum(output * G), G seeded random, and record the grads."""
    primary = _primary(output)
    if grad_seed is None or primary is None or not primary.requires_grad:
        return
    if not primary.is_floating_point():
        return
    generator = torch.Generator().manual_seed(grad_seed)
    grad_out = torch.randn(primary.shape, generator=generator, dtype=torch.float64)
    (primary * grad_out.to(primary.dtype)).sum().backward()
    for name, value in inputs.items():
        if isinstance(value, torch.Tensor) and value.requires_grad:
            results[f"grad.{name}"] = None if value.grad is None else value.grad.detach().clone()
    for name, param in (params or {}).items():
        results[f"grad.{name}"] = None if param.grad is None else param.grad.detach().clone()


def _build(modules, spec):
    """Construct spec's class, load the reference weights, set eval (or, with spec["train"], training) mode."""
    cls = getattr(modules(spec["module"]), spec["cls"])
    seed(0)
    model = cls(*spec.get("init_args", ()), **spec.get("init_kwargs", {}))
    dtype = spec.get("dtype", torch.float32)
    model = model.to(dtype)
    if spec.get("state") is not None:
        model.load_state_dict(spec["state"], strict=True)
    elif spec.get("weights_seed") is not None:
        _draw_weights(model, spec["weights_seed"])
    model.train(bool(spec.get("train")))
    return model


def _draw_weights(model, weights_seed):
    """Every parameter redrawn from a generator seeded by (weights_seed, its name): where the parameters' shapes
    depend on a default the learner chose (ex11's num_kv_heads), the reference and a learner whose parameters have
    the same names and shapes get the same weights, whatever order the modules were built in."""
    with torch.no_grad():
        for name, param in model.named_parameters():
            generator = torch.Generator().manual_seed(weights_seed * 7919 + zlib.crc32(name.encode()))
            scale = 1.0 / max(1, param.shape[-1]) ** 0.5  # about nn.Linear's own scale
            param.copy_(scale * torch.randn(param.shape, generator=generator))  # float32 draws, cast to param's


def _submodule(root, path):
    """root's submodule at a dotted path ('attention.W_o'; a number indexes a list of blocks), or None."""
    obj = root
    for part in path.split("."):
        if isinstance(obj, (list, tuple)):
            obj = obj[int(part)] if part.isdigit() and int(part) < len(obj) else None
        else:
            obj = obj._modules.get(part) if isinstance(obj, torch.nn.Module) else None
    return obj if isinstance(obj, torch.nn.Module) else None


class _Probes:
    """Forward hooks that record intermediate values of a module's call, each the first time it is seen,
    as results `probe.<name>`. spec["probes"] lists (name, submodule path, slot): slot "out" records the
    submodule's output (its first tensor), [index, keyword] its input argument given at that position or
    under that keyword, "attr:<name>" the attribute the submodule holds once its call returns (the attention
    weights a MultiHeadAttention keeps). A submodule the code does not have, or never calls, records nothing."""

    def __init__(self, root, probes, results):
        self.handles = []
        for name, path, slot in probes or ():
            module = _submodule(root, path)
            if module is not None:
                self.handles.append(module.register_forward_hook(_probe_hook(PROBE_PREFIX + name, slot, results),
                                                                 with_kwargs=True))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for handle in self.handles:
            handle.remove()
        return False


def _probe_hook(key, slot, results):
    def hook(module, args, kwargs, output):
        if key in results:
            return None
        if slot == "out":
            value = output
        elif isinstance(slot, str) and slot.startswith("attr:"):
            value = getattr(module, slot[len("attr:"):], None)
        else:
            index, keyword = slot
            value = args[index] if len(args) > index else kwargs.get(keyword)
        value = _primary(value)
        if isinstance(value, torch.Tensor):
            results[key] = value.detach().as_subclass(torch.Tensor).clone()
        return None  # the output stays as it is

    return hook


def _seed_dropout(spec):
    """In training mode, seed the random stream right before the call: the same dropout
    masks on both sides whenever dropout is applied at the same places in the same order."""
    if spec.get("train"):
        seed(spec.get("train_seed", 0))


def _capture(results, model, attrs):
    """Record attributes the module stored during the call."""
    for attr in attrs:
        obj = model
        for part in attr.split("."):
            obj = getattr(obj, part, None)
        _flatten(attr, obj, results)


def _raised(err):
    """What an expected exception looked like, as data."""
    return {
        "raised": type(err).__name__,
        "raised_mro": ",".join(c.__name__ for c in type(err).__mro__),
        "raised_message": str(err)[:500],
    }


def _call_expecting_error(thunk):
    """Run thunk() where the reference raises: record the exception, or the output."""
    try:
        output = thunk()
    except NotImplementedError:
        raise  # a stub, not an answer
    except Exception as err:  # the learner's error is the data we report
        return _raised(err)
    results = {"raised": None}
    _flatten("output", output, results)
    return results


NOT_APPLICABLE = "not_applicable"  # the result of a check whose parameter (spec["needs_parameter"]) the code
# does not take: an answer written before the exercise had it is not judged on it


def _lacks_parameter(fn, spec):
    """{NOT_APPLICABLE: name} when spec asks for a parameter that fn's signature neither names nor takes as
    **kwargs, else None."""
    name = spec.get("needs_parameter")
    if not name:
        return None
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None  # no readable signature: call it and let the call say
    if name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return None
    return {NOT_APPLICABLE: name}


def _as_pairs(value):
    """A sequence of (start, stop) pairs as one int64 tensor (n, 2), compared as a whole (a list one block short
    has no item to compare with the reference's last); anything else as it is, for the comparison to describe."""
    try:
        rows = [tuple(pair) for pair in value]
        if all(len(row) == 2 and not any(isinstance(x, bool) for x in row) for row in rows):
            rows = [(operator.index(start), operator.index(stop)) for start, stop in rows]  # ints, not floats
            return torch.tensor(rows, dtype=torch.int64).reshape(len(rows), 2)
    except (TypeError, ValueError, OverflowError, RuntimeError):
        pass
    return value


@procedure
def call(modules, spec):
    """Call a function: fn(*args, **kwargs); record output, grads, inputs after."""
    fn = getattr(modules(spec["module"]), spec["fn"])
    lacking = _lacks_parameter(fn, spec)
    if lacking:
        return lacking
    names = spec.get("arg_names") or [f"arg{i}" for i in range(len(spec["args"]))]
    grad_names = set(spec.get("grad", ()))
    args = [_prepare(v, n in grad_names) for n, v in zip(names, spec["args"])]
    kwargs = {k: _prepare(v, k in grad_names) for k, v in spec.get("kwargs", {}).items()}
    if spec.get("expect_error"):
        return _call_expecting_error(lambda: fn(*args, **kwargs))
    results = {}
    output = fn(*args, **kwargs)
    _flatten("output", _as_pairs(output) if spec.get("output_pairs") else output, results)
    inputs = dict(zip(names, args), **kwargs)
    _backward(results, output, spec.get("grad_seed"), inputs)
    for name, value in inputs.items():
        if isinstance(value, torch.Tensor) and name in spec.get("watch_inputs", ()):
            results[f"input_after.{name}"] = value.detach().clone()
    return results


@procedure
def call_without_builtin_softmax(modules, spec):
    """Like `call`, with torch's own softmax functions made to raise."""
    import torch.nn.functional as F

    def forbidden(*args, **kwargs):
        raise RuntimeError(
            "do not call torch's softmax here: write it from torch.exp and sum"
        )

    saved = (torch.softmax, F.softmax, torch.Tensor.softmax, torch.nn.Softmax.forward)
    torch.softmax = F.softmax = torch.Tensor.softmax = forbidden
    torch.nn.Softmax.forward = lambda self, x: forbidden()
    try:
        with _OpRecorder() as ops:
            results = call(modules, spec)
    finally:
        torch.softmax, F.softmax, torch.Tensor.softmax, torch.nn.Softmax.forward = saved
    # Data for the grader, which judges it (with the learner's source, outside this process).
    results["softmax_ops"] = ",".join(sorted(op for op in ops.seen if "softmax" in op))
    return results


LARGEST_NUMEL = PROBE_PREFIX + "largest_numel"  # results of call_measuring_tensors (probes: never compared)
LARGEST_SHAPE = PROBE_PREFIX + "largest_shape"


@procedure
def call_measuring_tensors(modules, spec):
    """Like `call`, then the same call once more (no gradients) with the size of every tensor a torch operation
    creates recorded: the largest one's number of elements and shape, as LARGEST_NUMEL and LARGEST_SHAPE (data
    for the grader, which judges it; probes, so never compared with the reference's)."""
    results = call(modules, spec)
    if NOT_APPLICABLE in results or spec.get("expect_error"):
        return results
    fn = getattr(modules(spec["module"]), spec["fn"])
    args = [_prepare(v, False) for v in spec["args"]]
    kwargs = {k: _prepare(v, False) for k, v in spec.get("kwargs", {}).items()}
    with torch.no_grad(), _SizeRecorder() as sizes:
        fn(*args, **kwargs)
    results[LARGEST_NUMEL] = sizes.numel
    results[LARGEST_SHAPE] = ", ".join(str(size) for size in sizes.shape)
    return results


class _SizeRecorder:
    """Record the largest tensor (elements, shape) the aten operators run inside the block return."""

    def __enter__(self):
        from torch.utils._python_dispatch import TorchDispatchMode

        recorder = self
        self.numel, self.shape = 0, ()

        class Mode(TorchDispatchMode):
            @classmethod
            def _should_skip_dynamo(cls):
                return False  # as in _OpRecorder: no torch._dynamo import

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                for tensor in out if isinstance(out, (tuple, list)) else (out,):
                    if isinstance(tensor, torch.Tensor) and tensor.numel() > recorder.numel:
                        recorder.numel, recorder.shape = tensor.numel(), tuple(tensor.shape)
                return out

        self._mode = Mode()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc):
        self._mode.__exit__(*exc)
        return False


class _OpRecorder:
    """Record the names of the aten operators run inside the block (a TorchDispatchMode)."""

    def __enter__(self):
        from torch.utils._python_dispatch import TorchDispatchMode

        seen = self.seen = set()

        class Mode(TorchDispatchMode):
            @classmethod
            def _should_skip_dynamo(cls):
                return False  # no torch.compile here: wrapping for it would import torch._dynamo (~5 s)

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.add(str(func.overloadpacket.__name__))
                return func(*args, **(kwargs or {}))

        self._mode = Mode()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc):
        self._mode.__exit__(*exc)
        return False


@procedure
def construct(modules, spec):
    """Only build the module; record its buffers/attributes or the error raised."""
    lacking = _lacks_parameter(getattr(modules(spec["module"]), spec["cls"]), spec)
    if lacking:
        return lacking
    try:
        model = _build(modules, spec)
    except Exception as err:
        if not spec.get("expect_error") or isinstance(err, NotImplementedError):
            raise
        return _raised(err)
    results = {"raised": None}
    _capture(results, model, spec.get("capture", ()))
    results["state_keys"] = ",".join(sorted(model.state_dict().keys()))
    return results


@procedure
def module_forward(modules, spec):
    """Build a module, call it on inputs; record outputs, attrs and grads."""
    lacking = _lacks_parameter(getattr(modules(spec["module"]), spec["cls"]), spec)
    if lacking:
        return lacking
    model = _build(modules, spec)
    names = spec["arg_names"]
    grad_names = set(spec.get("grad", ()))
    args = [_prepare(v, n in grad_names) for n, v in zip(names, spec["args"])]
    if spec.get("expect_error"):
        return _call_expecting_error(lambda: model(*args))
    results = {}
    if spec.get("param_grads"):
        for p in model.parameters():
            p.requires_grad_(True)
    _seed_dropout(spec)
    probed = {}
    with _Probes(model, spec.get("probes"), probed):
        output = model(*args)
    _flatten("output", output, results)
    _capture(results, model, spec.get("capture", ()))
    results.update(probed)
    params = dict(model.named_parameters()) if spec.get("param_grads") else None
    _backward(results, output, spec.get("grad_seed"), dict(zip(names, args)), params)
    for name, value in zip(names, args):
        if isinstance(value, torch.Tensor) and name in spec.get("watch_inputs", ()):
            results[f"input_after.{name}"] = value.detach().clone()
    return results


@procedure
def batch_items(modules, spec):
    """Run a module on the whole batch, then on each example alone."""
    model = _build(modules, spec)
    args = spec["args"]
    results = {}
    with torch.no_grad():
        _flatten("full", model(*args), results)
        for b in range(args[0].shape[0]):
            item_args = [a[b : b + 1] if isinstance(a, torch.Tensor) else a for a in args]
            _flatten(f"item{b}", model(*item_args), results)
    return results


@procedure
def seq2seq_decoder(modules, spec):
    """init_state from encoder outputs, then one forward over the target."""
    model = _build(modules, spec)
    enc_outputs = _prepare(spec["enc_outputs"], True)  # (B, T_src, H)
    enc_hidden = spec["enc_hidden"].clone()  # (L, B, H)
    state = model.init_state((enc_outputs, enc_hidden), spec["enc_valid_lens"])
    _seed_dropout(spec)
    logits, new_state = model(spec["X"], state)
    results = {}
    _flatten("logits", logits, results)
    _capture(results, model, ("attention_weights",))
    if isinstance(new_state, (tuple, list)) and len(new_state) > 1:
        _flatten("hidden_state", new_state[1], results)
    _backward(results, logits, spec.get("grad_seed"), {"enc_outputs": enc_outputs})
    return results


@procedure
def transpose_roundtrip(modules, spec):
    """transpose_output(transpose_qkv(X)) should give X back."""
    mod = modules(spec["module"])
    X = spec["X"].clone()
    split = mod.transpose_qkv(X, spec["num_heads"])
    return {"split": split.detach().clone(), "merged": mod.transpose_output(split, spec["num_heads"]).detach().clone()}


def _decoder_blocks(modules, spec):
    """Build a stack of decoder blocks from spec (weights of each block given)."""
    cls = getattr(modules(spec["module"]), "TransformerDecoderBlock")
    blocks = []
    for i, state in enumerate(spec["states"]):
        seed(0)
        block = cls(*spec["init_args"], i, **spec.get("init_kwargs", {})).to(spec.get("dtype", torch.float32))
        block.load_state_dict(state, strict=True)
        blocks.append(block.train(bool(spec.get("train"))))
    return blocks


def _run_decoder(blocks, X, enc_outputs, enc_valid_lens):
    """Run X through every block with a fresh state; return output and state."""
    state = [enc_outputs, enc_valid_lens, [None] * len(blocks)]
    for block in blocks:
        X, state = block(X, state)
    return X, state


@procedure
def decoder_train(modules, spec):
    """A stack of decoder blocks in training mode, the whole sequence at once, dropout seeded."""
    blocks = _decoder_blocks(modules, dict(spec, train=True))
    _seed_dropout(dict(spec, train=True))
    probed = {}
    with _Probes(blocks, spec.get("probes"), probed):
        full, _ = _run_decoder(blocks, spec["X"], spec["enc_outputs"], spec["enc_valid_lens"])
    return {"full": full.detach().clone(), **probed}


@procedure
def decoder_modes(modules, spec):
    """Full-sequence decoding, incremental decoding and a changed future."""
    blocks = _decoder_blocks(modules, spec)
    X, enc, lens = spec["X"], spec["enc_outputs"], spec["enc_valid_lens"]
    results = {}
    X_grad = _prepare(X, True)
    probed = {}
    with _Probes(blocks, spec.get("probes"), probed):
        full, state = _run_decoder(blocks, X_grad, enc, lens)
    _flatten("full", full, results)
    # probe_state: the state the blocks return, each block's cache after the whole sequence
    for i in range(len(blocks) if spec.get("probe_state") else 0):
        caches = state[2] if isinstance(state, (list, tuple)) and len(state) > 2 else None
        cache = caches[i] if isinstance(caches, (list, tuple)) and len(caches) > i else None
        probed[f"{PROBE_PREFIX}state.cache.{i}"] = cache.detach().as_subclass(torch.Tensor).clone() \
            if isinstance(cache, torch.Tensor) else None
    results["cache_len"] = None if state[2][0] is None else int(state[2][0].shape[1])
    _backward(results, full, spec.get("grad_seed"), {"X": X_grad})
    with torch.no_grad():
        state = [enc, lens, [None] * len(blocks)]
        steps = []
        for t in range(X.shape[1]):
            Y = X[:, t : t + 1]
            for block in blocks:
                Y, state = block(Y, state)
            steps.append(Y)
        results["incremental"] = torch.cat(steps, dim=1)
        X_changed = X.clone()
        X_changed[:, spec["change_from"] :] = spec["future"]
        results["changed_future"] = _run_decoder(blocks, X_changed, enc, lens)[0]
    results.update(probed)
    return results



def _cache_shapes(cache):
    """A KV cache's shapes as text: '(2, 2, 3, 4), (2, 2, 3, 4)' for a (keys, values) pair, else its type."""
    if isinstance(cache, (tuple, list)):
        return ", ".join(str(tuple(c.shape)) if isinstance(c, torch.Tensor) else f"<{type(c).__name__}>"
                         for c in cache[:4])[:200]
    return f"<{type(cache).__name__}>"


@procedure
def kv_decode(modules, spec):
    """A self-attention module's parallel causal pass over X, model(X, X, X, None, causal=True), and the same
    sequence decoded through model.step in chunks (spec["chunks"]: sizes summing to X's length), each step given
    the cache the one before returned: record both outputs ("parallel", "steps"), the cache's shapes after every
    step ("cache_shape.<i>"), the last cache ("cache.0", "cache.1"), the last step's attention weights and the
    gradients of X through each path ("grad.X", "grad.X_steps")."""
    model = _build(modules, spec)
    results = {}
    X_full = _prepare(spec["X"], True)
    full = model(X_full, X_full, X_full, None, causal=True)  # (B, T, H)
    _flatten("parallel", full, results)
    _backward(results, full, spec.get("grad_seed"), {"X": X_full})
    X_steps = _prepare(spec["X"], True)
    cache, outputs, start = None, [], 0
    for i, n in enumerate(spec["chunks"]):
        output, cache = model.step(X_steps[:, start : start + n], cache)
        outputs.append(output)
        results[f"cache_shape.{i}"] = _cache_shapes(cache)
        start += n
    steps = torch.cat(outputs, dim=1)  # (B, T, H): every position's output, in order
    _flatten("steps", steps, results)
    _flatten("cache", cache, results)
    _capture(results, model, ("attention_weights",))
    _backward(results, steps, spec.get("grad_seed"), {"X_steps": X_steps})
    return results
