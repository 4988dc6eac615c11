"""Exercise variants in grading: the reference gets the variant's parameters explicitly, the learner's code
its own defaults (the variants themselves: course/common/exercise_variants.py)."""

import random

from course.common.exercise_variants import (  # noqa: F401  (the grader's names for them)
    MAX_VARIANT, PARAMETERS, Variant, VariantError, assign, check_number, describe, variant, variant_line)

from course.common.exercise_index import get as get_exercise

from .checks.base import number_checks


def build_checks(module, chosen, seed=None):
    """An exercise's checks for a variant: the published cases (built with `seed` where the module draws them),
    plus, off the default, the module's `variant_checks(chosen, rng)`: calls that leave the parameter to its
    default where no published case does, sized so that any other value shows; then `apply`.

    The learner's job holds the cases (their arguments are what the learner's code is called with), so they must
    not tell the value: `rng` is seeded by `seed` and the exercise alone, never by the variant's number or value,
    and variant_checks draws nothing from the value. Every non-default variant graded with one seed is therefore
    given the same job input, and a file that reads its input learns only that it is off the default
    (tests/test_variant_attack.py)."""
    checks = module.build() if seed is None else module.build(seed=seed)
    extra = getattr(module, "variant_checks", None)
    if extra is not None and not chosen.is_default():
        rng = random.Random(f"{seed}:{chosen.ex_id}:variant-cases")
        checks = number_checks(chosen.ex_id, checks + list(extra(chosen, rng)))
    return apply(checks, chosen)


def apply(checks, chosen):
    """The checks with the variant's parameters given explicitly to the reference (spec["init_kwargs"]) and
    listed in spec["variant_kwargs"], which the learner's job leaves out (learner_spec); the demo stage's model
    gets the published value explicitly (its weights were trained with it)."""
    parameter = PARAMETERS.get(chosen.ex_id)
    if parameter is None or chosen.number == 0:
        return checks
    for check in checks:
        if check.procedure == "demo_translations" and parameter.model_config and "config" in check.spec:
            # the trained weights need the published value: the model passes it explicitly to the learner's class
            check.spec = dict(check.spec, config={**check.spec["config"], parameter.model_config: parameter.default})
        elif check.procedure == "demo_translations" and "config" in check.spec:
            # no config key reaches the parameter (ex05's MultiHeadAttention is built by the blocks of ex07): the
            # demo pins the learner's module to the published value (grader/harness/demo.py)
            module = get_exercise(chosen.ex_id).module
            check.spec = dict(check.spec, pins={**check.spec.get("pins", {}), module: pin_text(chosen.ex_id)})
        elif check.spec.get("cls") in parameter.classes and not _given(check.spec, parameter.name):
            check.spec = dict(check.spec, init_kwargs={**check.spec.get("init_kwargs", {}), **chosen.kwargs()},
                              variant_kwargs=tuple(chosen.kwargs()), variant=chosen.number)
        elif check.spec.get("fn") in parameter.functions and _left_to_default(check.spec, parameter.name):
            check.spec = dict(check.spec, kwargs={**check.spec.get("kwargs", {}), **chosen.kwargs()},
                              variant_kwargs=tuple(chosen.kwargs()), variant=chosen.number)
    return checks


def _given(spec, name):
    """Does this constructor call give the parameter its own value (ex11's checks of a stated number of key/value
    heads)? A value with_parameter set off the default is not the call's own: a variant's value replaces it."""
    return name in spec.get("init_kwargs", {}) and spec.get("needs_parameter") != name


def _left_to_default(spec, name):
    """Does this call leave the parameter to the function's default (neither a positional nor a keyword)?"""
    return name not in spec.get("arg_names", ())[:len(spec.get("args", ()))] and name not in spec.get("kwargs", {})


def report_entry(ex_id, number):
    """The variant as a JSON report gives it: {"number": N, "params": {name: value}} (params None: no variant)."""
    try:
        return {"number": check_number(number), "params": variant(ex_id, number).kwargs()}
    except VariantError:
        return {"number": number if isinstance(number, int) else None, "params": None}


def learner_spec(spec):
    """The spec the learner's code is run with: the variant's parameters left to the learner's defaults."""
    names = spec.get("variant_kwargs")
    if not names:
        return spec
    left = {field: {k: v for k, v in spec[field].items() if k not in names}
            for field in ("init_kwargs", "kwargs") if field in spec}
    return {k: v for k, v in dict(spec, **left).items() if k not in ("variant_kwargs", "variant")}


def value_of(checks):
    """The value these checks give the reference for a non-default variant's parameter (None: variant 0)."""
    for check in checks:
        for name in check.spec.get("variant_kwargs", ()):
            for field in ("init_kwargs", "kwargs"):
                if name in check.spec.get(field, {}):
                    return check.spec[field][name]
    return None


_PIN_HELPER = """

# Added by the grader: this code's default {name} is pinned to {written} here (the published value for a file
# staged under the exercises built on it; a variant's value for a mutant run on that variant).
def _grader_published(member, name, value):
    import functools
    import inspect
    try:
        signature = inspect.signature(member)
    except (TypeError, ValueError):
        return member
    if name not in signature.parameters:
        return member
    if isinstance(member, type):
        class Published(member):
            def __init__(self, *args, **kwargs):
                if name not in signature.bind_partial(*args, **kwargs).arguments:
                    kwargs[name] = value
                super().__init__(*args, **kwargs)
        Published.__name__, Published.__qualname__ = member.__name__, member.__qualname__
        Published.__module__ = member.__module__
        return Published

    @functools.wraps(member)
    def published(*args, **kwargs):
        if name not in signature.bind_partial(*args, **kwargs).arguments:
            kwargs[name] = value
        return member(*args, **kwargs)
    return published
"""


def pin_text(ex_id, value=None):
    """Python text that, run in an exercise module's namespace, pins its variant parameter's default to `value`
    (None: back to the published value; "" for an exercise without a parameter); a member without the parameter
    is left as it is."""
    parameter = PARAMETERS.get(ex_id)
    if parameter is None:
        return ""
    value = parameter.default if value is None else value
    text = _PIN_HELPER.format(name=parameter.name, written=parameter.written(value))
    for m in parameter.functions + parameter.classes:
        text += f"\nif {m!r} in globals():\n    {m} = _grader_published({m}, {parameter.name!r}, {value!r})\n"
    return text


def pin_published(ex_id, source):
    """A learner's dependency file as staged for the exercises built on it: its variant parameter's default
    pinned back to the published value (ex03 graded with the learner's own ex01 must see ex01's published
    default, whatever ex01's variant was). A file without the parameter is left as it is."""
    if not source or ex_id not in PARAMETERS:
        return source
    return source.rstrip("\n") + "\n" + pin_text(ex_id)
