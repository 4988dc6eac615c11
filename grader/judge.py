"""Verdicts: compare the learner's sandboxed results with the reference, check by check.

A failing check is also run on the known mistaken variants (grader/mistakes.py,
one MistakeVariants per grading run): a learner whose results match one gets
that mistake's hint, on the checks of the function the mistake lives in only,
and once per exercise.
"""

import dataclasses
import functools
import re
from pathlib import Path
from typing import NamedTuple

import torch

from course.common.exercise_index import get as get_exercise, score_for
from course.common.i18n import catalog, t

from . import checks as checks_registry, weight_diff
from .compare import compare_results, compare_tensors, compare_values, judged_keys, precision_loss
from .harness import load_procedures
from .harness.procedures import NOT_APPLICABLE
from .messages import bounded, error_kind, error_message, import_message, missing_message, own_line, summary_line
from .diagnosis import constants, explain, raising, substeps, variant_default
from .mistakes import MistakeVariants
from .report import CheckResult, ExerciseResult
from .variants import value_of
from .text import hint_text, render, tr

MAX_HINTED_CHECKS = 3  # mistake detection on the first few failing checks only
MAX_TEXT = 2000  # characters of any one message or output in a report
REPORT_BUDGET = 32000  # characters of messages one exercise's report holds before they shrink to 200 each
PROCEDURES = load_procedures()


class Judged(NamedTuple):
    """One exercise's verdicts, and whether its diagnosis found no mutant cache (build it, then judge again)."""

    result: ExerciseResult
    mutants_missing: bool = False


def judge_exercise(ex_id, checks, references, job, learner_name, limits, source=None, lang="en", variants=None,
                   label=None):
    """Turn one exercise's sandbox data into verdicts -> Judged (variants: the run's MistakeVariants; default:
    its own; label: what the learner's file is called in messages when it is not a file of its own, a
    notebook's cell)."""
    if variants is None:
        with MistakeVariants() as own:
            return judge_exercise(ex_id, checks, references, job, learner_name, limits, source, lang, own, label)
    exercise = get_exercise(ex_id)
    mutants_missing = False
    if job.import_error is not None:
        results = [_file_result(ex_id, job.import_error, learner_name, lang, source, label)]
    else:
        results = [judge_check(check, reference, record, job, limits, lang, source, exercise.filename, label)
                   for check, reference, record in zip(checks, references, job.records)]
        rules = _source_results(ex_id, source, lang)
        named = {r.mistake for r in rules}
        value_hint = variant_default.diagnose(
            ex_id, checks, job.records, results, source,
            lambda check, reference, record: judge_check(check, reference, record, job, limits, source=source).passed,
            lang)
        if not (value_hint and value_hint[1]):  # whole: right for the value it has, which is all there is to say
            refused = [results[i] for i in (value_hint[2] if value_hint else ()) if not results[i].passed]
            for result in refused:  # said by the value hint: the rest of the diagnosis looks at the others
                result.passed = True
            add_hints(variants, ex_id, checks, references, job.records, results, lang, named)
            add_error_hints(ex_id, checks, job.records, results, lang, named, variants)
            if not rules and any(r.hint for r in results):
                _prefer_written_number(variants, ex_id, checks, references, job.records, results, source, lang)
            if not rules and not any(r.hint for r in results):  # a known mistake, when one explains it, says more
                constants.add_constant_hints(checks, results, source, lang, references, job.records)
            own = functools.partial(_own, source=source, filename=exercise.filename, label=label)
            if not rules and not any(r.hint for r in results):
                mutants_missing = add_mutant_hint(ex_id, checks, references, job.records, results, lang, source)
                if not value_hint:
                    _prefer_separation(checks, job.records, results, lang, own)
            if not rules and not value_hint and not any(r.hint for r in results):
                raising.add_separation_hints(checks, job.records, results, lang, own)
            for result in refused:
                result.passed = False
        if value_hint:
            _say_first(results, value_hint[0])
        substeps.add_locations(ex_id, checks, references, job.records, results, lang)
        results = rules + results
    total, done = len(results), sum(r.passed for r in results)
    results = _collapse_not_started(results, job.records if job.import_error is None else [],
                                    exercise, learner_name, lang, checks)
    _bound_texts(results, lang)
    failing = [r for r in results if not r.passed]
    if not failing:
        status = "passed"
    elif all(r.kind == "not_implemented" for r in failing):
        status = "not_written"
    elif job.import_error is not None:
        status = "error"
    else:
        status = "failed"
    summary = failing[0].message if job.import_error is not None else summary_line(status, results, failing, lang)
    return Judged(ExerciseResult(
        ex_id, t(f"exercises.{ex_id}.title", lang), exercise.filename, status, not failing,
        score_for(status, done, total), 0.0, summary, results,
        bounded(job.output, MAX_TEXT, lang),
        checks_passed=done, checks_total=total,
    ), mutants_missing)


def _prefer_separation(checks, records, results, lang, own):
    """Where every failing check raised and the automatic mutant named says only that a line is wrong in one of
    several ways (explain.vague), the property that separates several calls that raised from those that ran is
    said instead, if there is one (one call that raised differs from the others in too many ways)."""
    hinted = [r for r in results if r.hint]
    if len(hinted) != 1 or not _only_raised(results) or not explain.vague(hinted[0].mistake):
        return
    text, hinted[0].hint = hinted[0].hint, ""
    if not raising.add_separation_hints(checks, records, results, lang, own, raising.MIN_SIDE):
        hinted[0].hint = text


def _only_raised(results):
    """Did every failing check raise (none gave a wrong result)?"""
    failing = [r for r in results if not r.passed]
    return bool(failing) and all(r.kind == "error" for r in failing)


def _say_first(results, text):
    """Put `text` before the hint of the first failing check (its whole hint when it has none)."""
    first = next(r for r in results if not r.passed)
    first.hint = f"{text} {first.hint}" if first.hint else text


def _bound_texts(results, lang):
    """Every message cleaned and capped (MAX_TEXT each; REPORT_BUDGET for the exercise, 200 once spent)."""
    budget = REPORT_BUDGET
    for r in results:
        r.message = bounded(r.message, max(200, min(MAX_TEXT, budget)), lang)
        r.call = bounded(r.call, MAX_TEXT, lang)
        r.name = bounded(r.name, 500, lang)
        budget -= len(r.message) + len(r.call)


def _form_problem(check, reference, got, lang):
    """The first tensor result whose shape is not the reference's, said as the learner's mistake; checked
    before any property builds masks or loops from the learner's shapes (a dtype is judged after them,
    whose messages say more; the demo stage's lengths may differ, but not its dtypes or dimensions)."""
    for key in judged_keys(reference):
        want, have = reference[key], got.get(key)
        if not isinstance(want, torch.Tensor) or not isinstance(have, torch.Tensor):
            continue  # missing or not a tensor: the comparison says so
        if check.judge is not None:
            if have.dtype == want.dtype and have.dim() == want.dim():
                continue
        elif have.shape == want.shape:
            continue
        return compare_tensors(key, want, have, lang=lang)  # says shape, else dtype
    return None


def judge_check(check, reference, record, job, limits, lang="en", source=None, filename=None, label=None):
    """The verdict on one check from the learner's record and the reference (an error names the learner's own
    line that raised when its traceback points into `source`, staged as `filename`: messages.own_line; label:
    what their file is called, when it is a notebook's cell)."""
    name, call = render(check.name, lang), render(check.call, lang)

    def result(passed, message="", kind="ok", shown=None):
        return CheckResult(name, passed, message, call=call, kind=kind, id=check.id,
                           weights=None if passed else _weights_shown(check, reference, got, shown))

    got = None  # the learner's results, once read
    if record is None:
        return result(False, missing_message(job, limits, lang), "missing")
    if "error" in record:
        error = record["error"]
        return result(False, error_message(error, limits.memory_mb, lang, _own(error, source, filename, label)),
                      error_kind(error))
    got = record["ok"]
    if check.spec.get("needs_parameter") and isinstance(got, dict) and got.get(NOT_APPLICABLE):
        name = check.spec["needs_parameter"]  # data from the learner's run: believed only where the source agrees
        if variant_default.lacks_parameter(source, check.spec.get("cls") or check.spec.get("fn"), name):
            return result(True, tr("check.not_applicable", lang, name=name))
        return result(False, tr("check.not_applicable_refused", lang, name=name), "mismatch")
    problem = _form_problem(check, reference, got, lang)
    if problem:
        return result(False, problem, "mismatch")
    for prop in check.properties:
        said = prop(got, check.spec)
        if said:
            message = render(said, lang)
            located = _locate(check, reference, got) if check.locate_properties else None
            if located:
                message = tr("step.joined", lang, message=message, located=render(located, lang))
            return result(False, message, "mismatch", shown=weight_diff.property_shown(said, located))
    if check.judge is not None:  # a check that words its own verdict (the demo stage)
        passed, message = check.judge(reference, got, check.spec)
        return result(passed, render(message, lang), "ok" if passed else "mismatch")
    message = compare_results(reference, got, check.keys, check.tolerance_dtype, lang=lang)
    if message:
        if check.precision_note:
            message = precision_loss(reference, got, lang) or message
        located = _locate(check, reference, got)
        if located:
            message = tr("step.joined", lang, message=message, located=render(located, lang))
        return result(False, message, "mismatch", shown=located or ("values", {}))
    return result(True)


def _weights_shown(check, reference, got, shown):
    """The weights diff of a failing check (grader/weight_diff.py), or None: only for a mismatch (`shown`: the
    failing property's or the localisation's message, ("values", {}) for a plain comparison)."""
    if shown is None or not isinstance(got, dict):
        return None
    try:
        keys = check.keys if check.keys is not None else [k for k in judged_keys(reference)]
        key = weight_diff.first_wrong_weights(keys, reference, got, shown, check.weights)
        fields = shown[1] if isinstance(shown[1], dict) else {}
        diff = None if key is None else weight_diff.weights_diff(key, reference.get(key), got.get(key),
                                                                  fields.get("b"))  # the example it names
        step = fields.get("step")
        if diff is not None and fields.get("probe") == key and isinstance(step, tuple) and len(step) == 2:
            diff["name"] = [f"grader.{step[0]}", dict(step[1])]  # a probe's key read as the step it records
        return diff
    except Exception:  # hostile or odd results: the check's own message stands
        return None


def _locate(check, reference, got):
    """The check's sub-step localisation, or None (also if it cannot read these results)."""
    if check.locate is None:
        return None
    try:
        return check.locate(reference, got, check.spec)
    except Exception:  # the comparison's own message stands
        return None


def _own(error, source, filename, label):
    """messages.own_line's (line, code), with the label of a file that is a notebook's cell third."""
    own = own_line(error, source, filename)
    return own + (label,) if own is not None and label else own


def _file_result(ex_id, error, learner_name, lang, source=None, label=None):
    """One file-level result for a file that cannot be imported (syntax error, bad import; an error raised in
    the learner's own line names it: messages.own_line)."""
    own = _own(error, source, get_exercise(ex_id).filename, label)
    result = CheckResult(tr("check.file", lang), False, import_message(error, learner_name, lang, own),
                         kind=error_kind(error), id=f"{ex_id}.file")
    if result.kind == "not_implemented":  # raised at import time: treat like any other stub
        result.kind = "error"
    mistake = _raising_mistake(ex_id, error, None)
    if mistake:
        result.mistake, result.hint = mistake.id, hint_text(ex_id, mistake, lang)
    return result


def _source_results(ex_id, source, lang):
    """Rules judged on the learner's source text here, outside their process (checks' SOURCE_RULES)."""
    results = []
    for rule in getattr(checks_registry.for_exercise(ex_id), "SOURCE_RULES", ()):
        problem = rule(source) if source is not None else None
        if problem:
            message, mistake_id = problem
            mistake = next(m for m in checks_registry.for_exercise(ex_id).MISTAKES if m.id == mistake_id)
            results.append(CheckResult(tr(f"rule.{mistake_id}", lang), False, render(message, lang),
                                       hint=hint_text(ex_id, mistake, lang), kind="mismatch",
                                       id=f"{ex_id}.rule.{mistake_id}", mistake=mistake_id))
    return results


def _not_written_what(record):
    """The name a stub's NotImplementedError gives (its message, else the function)."""
    error = (record or {}).get("error") or {}
    return error.get("message") or (error.get("where") or {}).get("function") or "?"


def _stub_name(what, lang):
    """'PositionalEncoding.__init__ (build the table P)' with its note in the learner's language."""
    name, _, note = what.partition(" (")
    key = f"grader.stub_note.{name}"
    if note.endswith(")") and key in catalog(lang):
        return name + tr("where.wrapped", lang, text=t(key, lang))
    return what


def _collapse_not_started(results, records, exercise, learner_name, lang, checks=()):
    """Replace every 'still raises NotImplementedError' result by one line naming what to write."""
    stubs = [i for i, r in enumerate(results) if r.kind == "not_implemented"]
    if not stubs:
        return results
    offset = len(results) - len(records)  # results of source rules come first
    names = []
    for i in stubs:
        j = i - offset
        if 0 <= j < len(checks) and checks[j].procedure == "demo_translations" and names:
            continue  # the demo stage rewords the stub's error; its function is already named
        what = _stub_name(_not_written_what(records[j] if 0 <= j < len(records) else None), lang)
        if what not in names:
            names.append(what)
    path = Path(learner_name)
    where = f"{path.parent.name}/{path.name}" if path.name == exercise.filename and path.parent.name \
        else learner_name
    message = tr("not_started", lang, names=", ".join(names), file=where)
    first = results[stubs[0]]
    collapsed = CheckResult(tr("check.not_started", lang), False, message, kind="not_implemented",
                            id=f"{exercise.id}.not_started", call=first.call)
    return [collapsed if i == stubs[0] else r for i, r in enumerate(results)
            if i == stubs[0] or i not in stubs]


def _observable_keys(reference):
    """The result keys a mistake is recognised by (values, not gradients)."""
    return [k for k in judged_keys(reference) if not k.startswith(("grad.", "input_after.", "raised_"))]


def _agrees(mutant, got, keys, tolerance_dtype=None):
    """Does the learner's result equal the mistaken variant's on these keys?"""
    return all(k in mutant and k in got and compare_values(k, mutant[k], got[k], tolerance_dtype) is None
               for k in keys)


def _explains(variants, ex_id, mistake, index, check, reference, record):
    """Does the mistaken variant differ from the reference and agree with the learner on check `index`?"""
    if not mistake.applies_to(check.target) or mistake.raises or not record or "ok" not in record:
        return False
    keys = _observable_keys(reference)
    mutant = variants.results(ex_id, mistake, index, check)
    return (mutant is not None and compare_results(reference, mutant, keys, check.tolerance_dtype) is not None
            and _agrees(mutant, record["ok"], keys, check.tolerance_dtype))


def _contradicts(variants, ex_id, mistake, index, check, reference, record):
    """Does the mistaken variant predict a wrong value on check `index` that the learner did not produce?"""
    if not mistake.applies_to(check.target) or mistake.raises or not record or "ok" not in record:
        return False
    keys = _observable_keys(reference)
    mutant = variants.results(ex_id, mistake, index, check)
    return (mutant is not None and compare_results(reference, mutant, keys, check.tolerance_dtype) is not None
            and not _agrees(mutant, record["ok"], keys, check.tolerance_dtype))


def _prefer_written_number(variants, ex_id, checks, references, records, results, source, lang):
    """A known mistake named from the failing checks gives way to a number written in where a parameter belongs,
    when the constants rule finds one in the learner's source ("wrong only where kernel_size is not 3, and your line
    has 3 written in"): that is read off their own line and explains the checks that pass as well as those that
    fail, where a known mistake can match the failing checks by coincidence ("one layer late" on a draw where every
    cnn call's kernel size differs from 3 by one layer's worth)."""
    named = {r.mistake for r in results if r.hint and r.mistake and not r.mistake.startswith("auto:")}
    mistakes = [m for m in checks_registry.for_exercise(ex_id).MISTAKES if m.id in named]
    if not mistakes or any(_writes_in_a_number(m) for m in mistakes):
        return  # none named, or the known mistake is itself a number written in: its own hint says it best
    trial = [dataclasses.replace(r, hint=None, mistake=None) for r in results]
    constants.add_constant_hints(checks, trial, source, lang, references, records)
    if any(r.hint for r in trial):
        for result, tried in zip(results, trial):
            if result.mistake in named:
                result.mistake = None
            result.hint, result.mistake = tried.hint, tried.mistake or result.mistake


def _writes_in_a_number(mistake):
    """Does the known mistake put a number where the reference has a name (`pow(float(base), ...)` ->
    `pow(10000.0, ...)`)?"""
    def tokens(text):
        return set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", text)), set(re.findall(r"(?<![\w.])\d+(?:\.\d*)?", text))
    for old, new in ((mistake.old, mistake.new), *mistake.also):
        (old_names, old_numbers), (new_names, new_numbers) = tokens(old), tokens(new)
        if old_names - new_names and new_numbers - old_numbers:
            return True
    return False


def add_hints(variants, ex_id, checks, references, records, results, lang="en", named=()):
    """Attach the hints of the known mistakes that best explain the learner's results.

    Going through the first failing checks in order: the candidates are the
    mistakes that live in the check's target and whose variant equals the
    learner's results there; the one that also agrees with the learner on the
    most other checks of the same targets wins. Its hint goes on the first
    check it explains, its id on every one; each mistake is named once.
    """
    failing = [i for i, r in enumerate(results) if r.kind == "mismatch"][:MAX_HINTED_CHECKS]
    used = set(named)  # hints already given (by a source rule)
    value = value_of(checks)
    if value is not None:  # on an exercise variant the learner's defaults are the variant's: so are the mistakes'
        variants = variants.on_value(value)
    for i in failing:
        if results[i].mistake or substeps.part_fails(ex_id, checks, results, i):
            continue  # named already, or the difference may start in a part it uses that fails its own checks
        best, best_score = None, -1
        for mistake in checks_registry.for_exercise(ex_id).MISTAKES:
            if mistake.id in used or not _explains(variants, ex_id, mistake, i, checks[i], references[i], records[i]):
                continue
            if any(_contradicts(variants, ex_id, mistake, j, checks[j], references[j], records[j]) for j in failing):
                continue  # it predicts other wrong values than the learner's elsewhere: a coincidence here
            matched = [j for j in failing
                       if _explains(variants, ex_id, mistake, j, checks[j], references[j], records[j])]
            score = len(matched) * 100 + sum(
                1 for j, record in enumerate(records)
                if j not in failing and mistake.applies_to(checks[j].target) and record and "ok" in record
                and (m := variants.results(ex_id, mistake, j, checks[j])) is not None
                and _agrees(m, record["ok"], _observable_keys(references[j]), checks[j].tolerance_dtype))
            if score > best_score:
                best, best_score = (mistake, matched), score
        if best:
            mistake, matched = best
            used.add(mistake.id)
            for j in matched:
                if not results[j].mistake:
                    results[j].mistake = mistake.id
            results[i].hint = hint_text(ex_id, mistake, lang)
    for i in failing:  # a mistake already named elsewhere: its id only, no second hint
        for mistake_id in named:
            mistake = next(m for m in checks_registry.for_exercise(ex_id).MISTAKES if m.id == mistake_id)
            if not results[i].mistake and _explains(variants, ex_id, mistake, i, checks[i], references[i],
                                                    records[i]):
                results[i].mistake = mistake_id


def add_mutant_hint(ex_id, checks, references, records, results, lang="en", source=None):
    """No known mistake explains the file: name the one automatic mutant that does, if exactly one does (its
    stable id, explain.mistake_id, goes where a known mistake's would; its hint names the line and the names of
    the learner's `source`). Returns whether the exercise's mutant cache was missing."""
    diagnosis = explain.diagnose(ex_id, checks, references, records, results, lang, source)
    if diagnosis.found:
        index, text, mistake = diagnosis.found
        results[index].hint, results[index].mistake = text, mistake
    return diagnosis.mutants_missing


def _raising_mistake(ex_id, error, target):
    """The known mistake whose error message pattern matches this error, if any."""
    for mistake in checks_registry.for_exercise(ex_id).MISTAKES:
        if mistake.raises and (target is None or mistake.applies_to(target)) \
                and re.search(mistake.raises, error.get("message") or ""):
            return mistake
    return None


def _raises_alike(variants, ex_id, mistake, checks, records):
    """Does the mistake's variant raise on every check of the mistake's targets where the learner's code raised
    an error its pattern matches?"""
    value = value_of(checks)
    pinned = variants.on_value(value) if value is not None else variants
    return all(pinned.results(ex_id, mistake, i, check) is None for i, (check, record) in enumerate(zip(checks, records))
               if record and "error" in record and mistake.applies_to(check.target)
               and re.search(mistake.raises, record["error"].get("message") or "")
               and not check.spec.get("expect_error")
               and check.procedure != explain.PUBLISHED_PROCEDURE)  # the demo stage: a whole translation, not run


def add_error_hints(ex_id, checks, records, results, lang="en", named=(), variants=None):
    """Hints for known mistakes that raise (an input modified in place, ...), once each: a mistake whose error
    message matches, and (with the run's `variants`) whose variant also raises on every check of its targets
    where the learner's code raised such an error (the same message can come from another slip: a mask of the
    wrong size)."""
    used = {r.mistake for r in results if r.mistake} | set(named)
    for check, record, result in zip(checks, records, results):
        if result.kind != "error" or not record or "error" not in record:
            continue
        mistake = _raising_mistake(ex_id, record["error"], check.target)
        if mistake and variants is not None and not _raises_alike(variants, ex_id, mistake, checks, records):
            continue
        if mistake:
            result.mistake = mistake.id
            if mistake.id not in used:
                used.add(mistake.id)
                result.hint = hint_text(ex_id, mistake, lang)

