"""Helpers for the exercise-variant tests: a learner's file rewritten for a variant, and grading in process.

`personalise` writes what a learner who follows their variant text writes: the variant's value as the
parameter's default (or, in a file without the parameter, in place of the published constant).
`judge_in_process` grades trusted test files (references, tests/variants/, tests/learner_bugs/) in this
process with the grader's own procedures and verdicts, skipping the demo stage, so that hundreds of variants
take seconds instead of a sandboxed run each.
"""

import importlib.util
import random
import re
import sys
import types
from collections.abc import Sequence

from course.common.exercise_index import get as get_exercise
from grader import checks as checks_registry
from grader import variants
from grader.core import reference_modules
from grader.harness import load_procedures, seed_call
from grader.judge import judge_check
from grader.sandbox import SandboxLimits

PROCEDURES = load_procedures()
CONSTANT = {"ex06": "10000", "ex09": "10000"}  # the published constant a file without the parameter writes


def _written_pattern(text):
    """A regex for a value as written in code: 1 also as 1.0, a name in either quotes."""
    if text[:1] in "'\"":
        return rf"""['"]{re.escape(text[1:-1])}['"]"""
    return rf"{re.escape(text)}(?:\.0*)?(?![\w.])"


def personalise(source, ex_id, number):
    """The file as a learner of variant `number` writes it: the parameter's default (else the published
    constant) replaced by the variant's value."""
    chosen = variants.variant(ex_id, number)
    if not chosen.params:
        return source
    (_, value), = chosen.params
    return with_value(source, ex_id, value)


def with_value(source, ex_id, value):
    """The file as a learner who writes `value` writes it: the exercise's parameter's default (else the
    published constant) replaced by `value` (bench/variant_attack.py writes the value an attacker guessed)."""
    parameter = variants.PARAMETERS[ex_id]
    text = parameter.written(value)
    pattern = rf"\b{parameter.name}\s*=\s*{_written_pattern(parameter.written(parameter.default))}"
    if re.search(pattern, source) or ex_id not in CONSTANT:
        return re.sub(pattern, f"{parameter.name}={text}", source)
    return re.sub(rf"(?<![\w.]){CONSTANT[ex_id]}(?:\.0*)?(?![\w.])", f"{text}.0", source)


def load_module(ex_id, source, tag):
    """Import a trusted exercise source as a module whose relative imports reach solutions/."""
    exercise_module = get_exercise(ex_id).module
    name = f"solutions._variant_{tag}_{exercise_module}"
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = types.ModuleType(spec.name)
    module.__package__ = "solutions"
    module.EXERCISE_MODULE = exercise_module  # the name the procedures ask for
    module.SOURCE = source  # the judge reads a file's own source (a check not applicable where it lacks a parameter)
    sys.modules[name] = module
    exec(compile(source, f"<{tag}:{exercise_module}>", "exec"), module.__dict__)
    return module


class References(Sequence):
    """The reference results of prepared checks, each run (seeded as the grader seeds it) when first read: a
    grading that stops at the first failing check never runs the references of the checks after it."""

    def __init__(self, checks):
        self.checks, self.results = checks, {}

    def __len__(self):
        return len(self.checks)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        index = range(len(self))[index]  # IndexError past the end, as a list
        if index not in self.results:
            seed_call(index)
            self.results[index] = PROCEDURES[self.checks[index].procedure](reference_modules, self.checks[index].spec)
        return self.results[index]


def built(ex_id, number, touched_only=False, sample=None, lazy=False):
    """(checks without the demo stage, reference results) of one exercise variant; with touched_only, only the
    checks the variant changes (its value given to the reference, or drawn for it): the others are variant 0's
    own checks, graded as published by tests/test_variants.py. sample=k keeps k of those, chosen by the
    variant number (over many variants every check is drawn). lazy: the references are run when first read."""
    module, chosen = checks_registry.for_exercise(ex_id), variants.variant(ex_id, number)
    seed = number if getattr(module, "CASES_DRAWN", False) else None
    checks = [c for c in variants.build_checks(module, chosen, seed) if c.procedure != "demo_translations"]
    if touched_only:
        checks = [c for c in checks if c.spec.get("variant")]
    if sample is not None and len(checks) > sample:
        checks = random.Random(number).sample(checks, sample)
    references = References(checks)
    return checks, (references if lazy else list(references))


def judge_in_process(module, checks, references, first_only=False):
    """The failing check ids of a module graded on prepared checks (learner side without the variant's
    explicit parameters, as in the sandbox); first_only stops at the first failing one."""
    def modules(name):
        return module if name == module.EXERCISE_MODULE else reference_modules(name)

    failing = []
    for index, (check, reference) in enumerate(zip(checks, references)):
        seed_call(index)
        try:
            record = {"ok": PROCEDURES[check.procedure](modules, variants.learner_spec(check.spec))}
        except Exception as err:  # a raising file fails the check
            record = {"error": {"type": type(err).__name__, "message": str(err)}}
        if not judge_check(check, reference, record, None, SandboxLimits(), source=module.SOURCE).passed:
            failing.append(check.id)
            if first_only:
                break
    return failing
