"""Name the slip that explains a learner's results: the one automatic mutant they match.

A mutant explains the learner's file when it fails exactly the checks the
learner's file fails, agrees with the learner's values on each failing check (or
raised the same error there), and so, by how it was built, agrees with the
reference on every check the learner passed. When every mutant that explains the
file is the same change (one operator, function and line), the feedback names the
function, the line's role and what the learner's code does instead; when they
differ only in how the same line is wrong, it names the line; otherwise it says
nothing, rather than guess. The line a hint names is the learner's own, by its
number and the name they gave it (learner_lines.py), and so is every variable
it quotes; where no line of theirs is surely the one, it names none.

A named slip also gets a mistake id (`mistake_id`), which a class groups
submissions by: made of the operator, the function, the line's role and the
operator's fields, all names from the reference, never its line numbers or
code, so the same slip has the same id in every run and in every grader version
of the same reference. `label` words an id back in either language.
"""

import functools
import os
from typing import NamedTuple

from course.common.exercise_index import get as get_exercise

from ..compare import compare_values
from ..text import render, tr
from .. import checks as checks_registry
from .. import variants
from . import behaviour, learner_lines, mutants, scoped, substeps

HINTABLE = ("mismatch", "error")  # failing kinds a mutant can explain (not time-outs, stubs, lost results)
MAX_WAYS = 3  # a line wrong in more ways than this is too vague a hint
ID_PREFIX = "auto:"  # mistake ids of automatic mutants; the known mistakes' ids are plain names
SITES = {"": "(return)", "?condition": "(condition)", "?input": "(input)"}  # a line's role in an id, when it assigns no name
LINE_OP = "line"  # the id's operator part when the line is wrong in one of a few ways
NAMING_FIELDS = ("used", "meant", "name", "size", "param", "arg")  # operator fields that may hold the reference's
# variable names: a hint quotes them by the learner's names (learner_lines.renamed), or not at all
VAGUE = {("const_off_by_one", "?condition")}  # (operator, line role) never named: a test's constant off by one
# (`if n == 1` -> `if n == 0`) acts like that special case moved or missing, which many other slips also do
PARTLY_CHECKS = 2  # a slip that explains only some failing checks must explain at least this many
DRAWN_CALL_LIMIT_S = mutants.DRAWN_CALL_LIMIT_S  # CPU seconds per call of a mutant run at grading time
PUBLISHED_PROCEDURE = "demo_translations"  # its check runs at the published value on every variant (its cached
# results hold there): the trained model gives the parameter explicitly, or the grader pins it
DRAWN_WALL_LIMIT_S = 10.0  # and wall seconds, a backstop only: wall time grows with the machine's load


class Learner(NamedTuple):
    """What a hint's location is worded from on the learner's side: their source, the exercise, the function
    the first failing check runs (named when the slip's own function is not one of theirs), and, for a slip
    found in a part the learner computes inline, the function that does it (`inlined`)."""

    source: str | None
    ex_id: str
    function: str
    inlined: str = ""


class Diagnosis(NamedTuple):
    """What diagnosing one exercise found: the slip named, and whether its mutant cache was missing."""

    found: tuple | None = None  # (index of the first failing check, hint text, mistake id), or None
    mutants_missing: bool = False  # no cache for this grader version: the grader builds it, then judges again


def _agrees(mutant, got, keys, tolerance_dtype):
    return all(k in mutant and k in got and compare_values(k, mutant[k], got[k], tolerance_dtype) is None
               for k in keys)


def _same_error(mutant, record):
    """Did the learner raise what the mutant raised: the same type and message, or both a ValueError (the error
    the docstrings ask for, worded by each writer in their own way)?"""
    error = record.get("error") or {}
    if "error" not in mutant:
        return False
    if mutant["error"][0] == "ValueError" == error.get("type"):
        return True
    return tuple(mutant["error"]) == (error.get("type"), (error.get("message") or "")[:300])


def explains(entry, failing, checks, references, records, partly=False):
    """Does this mutant fail exactly `failing` and agree with the learner there (values, or the same error)?
    partly: it fails the first failing check and only failing ones, agreeing there (a slip the file has,
    beside another)."""
    fails = set(entry["fails"])
    if fails != set(failing) and not (partly and failing[0] in fails and fails < set(failing)):
        return False
    for index in fails:
        mutant, record = entry["fails"][index], records[index] or {}
        if "ok" in record:
            if "error" in mutant or not _agrees(mutant, record["ok"], mutants.observable(references[index]),
                                                checks[index].tolerance_dtype):
                return False
        elif not _same_error(mutant, record):
            return False
    return True


def _entries(ex_id, checks, references, records, failing):
    """The exercise's mutants with their failing checks (cached; run now for cases drawn per run, and on an
    exercise variant other than 0 for the checks the variant changes); None when its cache is not built."""
    cached = mutants.load(ex_id)
    if cached is None:
        return None
    value = variants.value_of(checks)
    if cached["drawn"]:
        return _run_drawn(ex_id, cached["mutants"], checks, references, records, failing, value)
    if value is not None:  # the cache holds variant 0's results: they hold on the checks the variant leaves alone
        return _on_variant(ex_id, cached["mutants"], checks, references, records, failing, value)
    return cached["mutants"]


@functools.cache
def _published_count(ex_id):
    """How many checks the published exercise has (a variant's extra checks come after them)."""
    return len(checks_registry.for_exercise(ex_id).build())


def _on_variant(ex_id, entries, checks, references, records, failing, value):
    """Mutants on a variant: a mutant whose cached (variant 0) results fail a check the learner passes and the
    variant leaves alone, or pass the first failing check there, goes without running; the others run now on
    the failing checks and on those the variant changes (a mutant that falls back to the parameter's default
    differs from its cached self even on a check that never names the parameter); the demo's results stay cached."""
    alone = {i for i, c in enumerate(checks) if not c.spec.get("variant") and i < _published_count(ex_id)}
    passed_alone = alone - set(failing)
    pinned = {i for i in alone if checks[i].procedure == PUBLISHED_PROCEDURE}  # run at the published value
    fresh = sorted((set(failing) | (set(range(len(checks))) - alone)) - pinned)
    first_alone = {failing[0]} & alone  # a mutant right there at variant 0 explains neither all nor the first
    candidates = [dict(entry, fails={i: v for i, v in entry["fails"].items() if i in pinned}) for entry in entries
                  if not passed_alone & set(entry["fails"]) and first_alone <= set(entry["fails"])]
    return _run_drawn(ex_id, candidates, checks, references, records, failing, value, fresh)


def _run_drawn(ex_id, entries, checks, references, records, failing, value=None, indexes=None):
    """Mutants run now on `indexes` (default: every check), the failing checks first, each call under
    DRAWN_CALL_LIMIT_S of CPU time (a loaded machine does not drop a finite mutant), their defaults pinned to the
    variant's `value` (as the learner's are); a mutant is dropped as soon as it fails a check the learner passes
    or disagrees with the learner on one it fails (those that pass some failing checks stay, for a partial
    explanation)."""
    kept = []
    indexes = range(len(checks)) if indexes is None else indexes
    order = [i for i in failing if i in indexes] + [i for i in indexes if i not in failing]
    pins = "" if value is None else "\n" + variants.pin_text(ex_id, value)
    for number, entry in enumerate(entries):
        try:
            module = mutants.mutant_module(ex_id, entry["source"] + pins, number)
        except Exception:
            continue
        fails = dict(entry.get("fails") or {})  # known already (cached, on checks not run here)
        for index in order:
            if index not in failing and not fails:
                break  # right wherever the learner is wrong: it explains nothing
            results = mutants.run_mutant(ex_id, module, index, checks[index], DRAWN_WALL_LIMIT_S,
                                         DRAWN_CALL_LIMIT_S)
            wrong = mutants.differs(references[index], results, checks[index])
            if mutants.timed_out(results) or wrong and index not in failing or not wrong and index == failing[0]:
                break  # a mutant right on the first failing check explains neither all of them nor a first part
            if wrong:
                fails[index] = results
                if not explains(dict(entry, fails={index: results}), [index], checks, references, records):
                    break
        else:
            kept.append(dict(entry, fails=fails))
    return kept


def slip_place(entry, learner=None):
    """(key, fields) for where a mutant's slip is: worded with the reference's names when `learner` is None (a
    mistake id's label, which many learners share), else with the learner's own line and names
    (_learner_where)."""
    if learner is not None:
        return _learner_where(entry, learner)
    condition = entry.get("condition") or substeps.changed_test(entry)
    if entry["target"] == "?condition" and condition:
        return ("mutant.where_test", {"function": entry["function"], "condition": condition})
    if entry["target"] == "?condition":
        return ("mutant.where_condition", {"function": entry["function"]})
    if entry["target"] == "?input":
        return ("mutant.where_input", {"function": entry["function"]})
    if entry["target"]:
        return ("mutant.where_target", {"function": entry["function"], "target": entry["target"]})
    return ("mutant.where_return", {"function": entry["function"]})


def _learner_where(entry, learner):
    """(key, fields) for where the slip is in the learner's file: their line number and the name that line
    assigns (or the test it makes), as they wrote them (learner_lines.site); without a line of theirs that is
    surely the one, a wording that names no variable; a function they do not define is never named."""
    function = entry["function"]
    if learner.inlined:
        return ("mutant.where_inlined", {"function": learner.inlined, "part": function})
    try:
        defined = learner_lines.defines(learner.source, function)
    except Exception:  # as below
        defined = False
    if not defined:
        return ("mutant.where_somewhere", {"function": learner.function})
    target = entry["target"]
    if target == "?input":
        return ("mutant.where_input", {"function": function})
    try:
        found = learner_lines.site(learner.source, entry.get("source") or "", function, target,
                                   _reference_text(learner.ex_id),
                                   entry.get("condition") or substeps.changed_test(entry))
    except Exception:  # a learner's file the syntax tree reader trips on: no line named
        found = None
    if found is None:
        key = {"?condition": "mutant.where_condition", "": "mutant.where_return"}.get(target, "mutant.where_somewhere")
        return (key, {"function": function})
    fields = {"function": function, "line": found.line}
    if target == "?condition":
        return ("mutant.where_test_own", dict(fields, condition=found.text)) if found.text \
            else ("mutant.where_condition_own", fields)
    if target == "":
        return ("mutant.where_return_own", fields)
    return ("mutant.where_own", dict(fields, name=found.text)) if found.text else ("mutant.where_own_line", fields)


@functools.cache
def _reference_text(ex_id):
    """The exercise's reference as the mutants' sources are written (ast.unparse), or None."""
    try:
        return substeps.solution_text(mutants.SOLUTIONS_DIR / get_exercise(ex_id).filename)
    except (KeyError, OSError, SyntaxError):
        return None


def _what(entry, lang):
    return render((f"mutant.op.{entry['op']}", {k: str(v) for k, v in entry["fields"].items()}), lang)


def describe(entry, lang, learner=None):
    """'... in masked_softmax, in your line 12 (the one that computes `logits`): ...' for one mutant (with the
    reference's names when `learner` is None)."""
    return tr("mutant.hint", lang, where=render(slip_place(entry, learner), lang), what=_what(entry, lang))


def _own_values(field, values, learner, entry):
    """The values of an operator's field a hint may quote: all of them, but for a field that names variables
    (NAMING_FIELDS) with a learner known, each by the learner's own names (in the function that computes a part
    inline, that function's), and only those that have them."""
    if learner is None or field not in NAMING_FIELDS:
        return values
    own = []
    for value in values:
        try:
            mine = learner_lines.renamed(learner.source, entry.get("source") or "",
                                         learner.inlined or entry["function"], value, _reference_text(learner.ex_id))
        except Exception:  # a learner's file the syntax tree reader trips on: the name is not quoted
            mine = None
        if mine and mine not in own:
            own.append(mine)
    return own


def mistake_id(entry, op=None):
    """'auto:masked_softmax:mask:cmp_includes' (then ':field=value' per field, in name order) for a named
    slip; op=LINE_OP for a line wrong in one of a few ways (no fields)."""
    site = SITES.get(entry["target"], entry["target"].replace(" ", ""))
    parts = [entry["function"], site, op or entry["op"]]
    if op is None:
        parts += [f"{k}={v}" for k, v in sorted(entry["fields"].items())]
    return ID_PREFIX + ":".join(parts)


def vague(mistake):
    """Does this mistake id name a line wrong in one of several ways (LINE_OP, or fields with several values)
    rather than one slip?"""
    if not isinstance(mistake, str) or not mistake.startswith(ID_PREFIX):
        return False
    parts = mistake[len(ID_PREFIX):].split(":")
    return len(parts) >= 3 and (parts[2] == LINE_OP or any("|" in part for part in parts[3:]))


def label(mistake, lang="en"):
    """A mistake id of this module in words ('Found automatically in ...: ...'), None for another id."""
    if not isinstance(mistake, str) or not mistake.startswith(ID_PREFIX):
        return None
    parts = mistake[len(ID_PREFIX):].split(":")
    if len(parts) < 3 or not all(parts[:3]):
        return None
    function, site, op = parts[:3]
    if site == "constant":  # grader/diagnosis/constants.py: a number written in where parameter `op` belongs
        return tr("constant.label", lang, function=function, name=op)
    fields = dict(part.partition("=")[::2] for part in parts[3:])
    target = {v: k for k, v in SITES.items()}.get(site, site.replace(",", ", "))
    where = render(slip_place({"function": function, "target": target}), lang)
    if op == LINE_OP:
        return tr("mutant.label_line", lang, where=where)
    try:
        what = _what({"op": op, "fields": {k: v.replace("|", tr("mutant.either", lang)) for k, v in fields.items()}},
                     lang)
    except (KeyError, IndexError, ValueError):  # an operator or field this grader no longer words
        return tr("mutant.label_line", lang, where=where)
    return tr("mutant.label", lang, where=where, what=what)


def diagnose(ex_id, checks, references, records, results, lang="en", source=None):
    """Diagnosis of one exercise: found is (index of the first failing check, hint text, mistake id) naming
    the one slip that explains the file, or None. source: the learner's file, whose own line and names the
    hint's location is worded with (none: a wording that names no line or variable of theirs)."""
    if os.environ.get("ATTENTION_LAB_DIAGNOSIS") == "0":
        return Diagnosis()  # switched off (bench/grader.py measures what diagnosis costs)
    failing = [i for i, r in enumerate(results) if not r.passed]
    if not failing or any(results[i].kind not in HINTABLE for i in failing):
        return Diagnosis()
    if not any(results[i].kind == "mismatch" for i in failing) and len(failing) == len(results):
        return Diagnosis()  # every check raised: a mutant raising everywhere too says nothing about where
    entries = _entries(ex_id, checks, references, records, failing)
    if entries is None:
        return Diagnosis(mutants_missing=True)
    named = [e for e in entries if (e["op"], e["target"]) not in VAGUE]
    first = checks[failing[0]] if failing[0] < len(checks) else None
    learner = Learner(source, ex_id, behaviour.function_name(first.target, getattr(first, "procedure", ""))
                      if first is not None else "")
    found = named_slip([e for e in named if explains(e, failing, checks, references, records)], failing, lang, learner)
    found = found or behaviour.diagnose(checks, references, records, results, lang)
    found = found or _inlined(ex_id, named, failing, checks, references, records, results, lang, learner)
    found = found or _partly(named, failing, checks, references, records, lang, learner)
    return Diagnosis(found or scoped.diagnose(ex_id, named, failing, checks, references, records, lang,
                                                      explains, functools.partial(named_slip, learner=learner)))


def _inlined(ex_id, entries, failing, checks, references, records, results, lang, learner=None):
    """(index, hint, id) when every failing check is one module's or function's, a part it uses (in the
    reference) passes all its own checks, and one slip of that part explains the failing checks exactly: the
    learner computes the part's work inside the tested code and has the slip there."""
    if len(checks) != len(results):
        return None
    targets = {checks[i].target for i in failing}
    if len(targets) != 1:
        return None
    target = targets.pop()
    parts = substeps.uses(ex_id).get(target.split(".")[0], set())
    passing = {c.target for c, r in zip(checks, results) if r.passed} - {c.target for c, r in zip(checks, results)
                                                                          if not r.passed}
    matches = []
    for entry in entries:
        part = entry["function"].split(".")[0]
        if part not in parts or part not in passing:
            continue
        own = {i: v for i, v in entry["fails"].items() if checks[i].target == target}
        if own and explains(dict(entry, fails=own), failing, checks, references, records):
            matches.append(dict(entry, fails=own))
    if not matches or len({(e["op"], e["function"], e["target"]) for e in matches}) != 1:
        return None
    function = behaviour.function_name(target)
    found = named_slip(matches, failing, lang, learner and learner._replace(inlined=function))
    if found is None:
        return None
    index, text, _ = found
    part = matches[0]["function"]
    return index, tr("mutant.inlined", lang, function=function, part=part, hint=text), \
        mistake_id(dict(matches[0], function=function, target=f"{part}>{matches[0]['target']}"))


def _partly(entries, failing, checks, references, records, lang, learner=None):
    """(index, hint, id) for the one slip that explains the first failing checks and no others wrongly, when
    no mutant explains them all: each match must fail the first failing check and at least PARTLY_CHECKS."""
    matches = [e for e in entries if len(e["fails"]) >= PARTLY_CHECKS
               and explains(e, failing, checks, references, records, partly=True)]
    if not matches or len({(e["op"], e["function"], e["target"]) for e in matches}) != 1:
        return None
    found = named_slip(matches, failing, lang, learner)
    if found is None:
        return None
    index, text, mistake = found
    return index, tr("mutant.partly", lang, hint=text, count=len(matches[0]["fails"]), total=len(failing)), mistake


def named_slip(matches, failing, lang, learner=None):
    """(index, hint text, mistake id) when the matching mutants are one slip or one line, else None (the
    location worded with the learner's own line and names: slip_place). scoped.diagnose is handed this naming
    (it does not import this module)."""
    if not matches:
        return None
    if len({(e["op"], e["function"], e["target"]) for e in matches}) == 1:  # one slip, said several ways
        either = tr("mutant.either", lang)
        values = {k: list(dict.fromkeys(str(e["fields"][k]) for e in matches)) for k in matches[0]["fields"]}
        ids = {k: "|".join(sorted(v)) for k, v in values.items()}
        mistake = mistake_id(dict(matches[0], fields=ids))
        said = {k: _own_values(k, v, learner, matches[0]) for k, v in values.items()}
        if not all(said.values()):  # the slip is worded with a name the learner never wrote: only where it is
            return failing[0], tr("mutant.hint_where", lang, where=render(slip_place(matches[0], learner), lang)), mistake
        fields = {k: either.join(v) for k, v in said.items()}
        return failing[0], describe(dict(matches[0], fields=fields), lang, learner), mistake
    if len({(e["function"], e["target"]) for e in matches}) == 1:  # one line, wrong in one of a few ways
        ways = list(dict.fromkeys(_what(e, lang) for e in matches
                                  if all(_own_values(k, [str(v)], learner, e) for k, v in e["fields"].items())))
        if ways and len(ways) <= MAX_WAYS:
            return failing[0], tr("mutant.near", lang, where=render(slip_place(matches[0], learner), lang),
                                  ways=tr("mutant.or", lang).join(ways)), mistake_id(matches[0], LINE_OP)
    return None

