"""Calibrated copy detection on the independent correct files (solutions/ and tests/variants/).

Goals: at most 1 of the independent pairs flagged (judged with each file left out of its exercise's
null), at least 95% of disguised copies of every correct file flagged against their original, and at least
95% of copies with the copier's own variant value (with and without renamed locals) flagged whatever an
exercise's null says (above the CEILING, where a class's own pairs may put a threshold).
"""

import ast
import io
import itertools
import re

import pytest
from copydetect import CodeFingerprint, compare_files, defaults

from classroom.analytics import similarity
from classroom.analytics.disguise import disguise, own_value
from classroom.data.exercise_table import EXERCISE_IDS

pytestmark = pytest.mark.slow  # fingerprints every correct file (and 20 disguises of each): ~10 s

SEEDS = range(20)  # disguised copies per correct file


@pytest.fixture(scope="module")
def files():
    """{ex_id: [source of each independent correct file]}."""
    return {ex_id: [p.read_text(encoding="utf-8") for p in similarity.reference_files(ex_id)]
            for ex_id in EXERCISE_IDS}


@pytest.fixture(scope="module")
def prints(files):
    """{ex_id: [fingerprint of each file]}."""
    return {ex_id: [similarity.exercise_fingerprint(ex_id, s) for s in sources] for ex_id, sources in files.items()}


def _raw_print(source, stub):
    """copydetect's fingerprint with its defaults (no canonical form), the stub's hashes as boilerplate."""
    boilerplate = CodeFingerprint("stub.py", defaults.NOISE_THRESHOLD, 1, fp=io.StringIO(stub)).hashes
    import numpy as np
    return CodeFingerprint("f.py", defaults.NOISE_THRESHOLD, 1, np.array(sorted(boilerplate)), fp=io.StringIO(source))


def test_a_raw_threshold_flags_many_innocent_pairs(files):
    """The problem: copydetect's own display threshold puts many independent pairs above it."""
    from classroom.data.exercise_table import get
    from classroom.analytics.similarity import PROJECT_ROOT

    above = pairs = 0
    for ex_id, sources in files.items():
        stub = (PROJECT_ROOT / "exercises" / get(ex_id).filename).read_text(encoding="utf-8")
        raw = [_raw_print(s, stub) for s in sources]
        for a, b in itertools.combinations(raw, 2):
            pairs += 1
            above += max(compare_files(a, b)[1]) > defaults.DISPLAY_THRESHOLD
    assert pairs >= 60
    assert above >= 10, f"only {above} of {pairs} above copydetect's {defaults.DISPLAY_THRESHOLD}"


def _null(prints, ex_id, left_out=None):
    """The scores of an exercise's pairs, without those of one file (left_out: its index)."""
    return [similarity.score(prints[ex_id][i], prints[ex_id][j])
            for i, j in itertools.combinations(range(len(prints[ex_id])), 2) if left_out not in (i, j)]


def test_at_most_one_independent_pair_is_flagged_when_judged_out_of_sample(prints):
    """Each file's pairs are judged by a threshold calibrated without that file (as a new learner's would be)."""
    full = {ex_id: _null(prints, ex_id) for ex_id in EXERCISE_IDS}
    flagged, pairs = set(), set()
    for ex_id in EXERCISE_IDS:
        for held in range(len(prints[ex_id])):
            threshold = similarity.calibrate({**full, ex_id: _null(prints, ex_id, held)})[ex_id].value
            for other in range(len(prints[ex_id])):
                if other != held:
                    pair = (ex_id, *sorted((held, other)))
                    pairs.add(pair)
                    if similarity.score(prints[ex_id][held], prints[ex_id][other]) > threshold:
                        flagged.add(pair)
    assert len(pairs) >= 60
    assert len(flagged) <= 1, f"{len(flagged)} of {len(pairs)} independent pairs flagged: {sorted(flagged)}"


def test_at_most_one_independent_pair_is_flagged_in_sample(prints):
    nulls = {ex_id: _null(prints, ex_id) for ex_id in EXERCISE_IDS}
    thresholds = similarity.calibrate(nulls)
    flagged = [(ex_id, s) for ex_id, scores in nulls.items() for s in scores if s > thresholds[ex_id].value]
    assert len(flagged) <= 1, flagged


def test_every_threshold_lies_between_the_floor_and_the_ceiling(prints):
    thresholds = similarity.calibrate({ex_id: _null(prints, ex_id) for ex_id in EXERCISE_IDS})
    assert all(similarity.FLOOR <= t.value <= similarity.CEILING for t in thresholds.values())
    assert len({round(t.value, 3) for t in thresholds.values()}) > 3  # per exercise, not one number


def test_disguised_copies_of_every_correct_file_are_flagged(files, prints):
    """>= 95% of the disguised copies of each file score above its exercise's threshold against the original."""
    thresholds = similarity.calibrate({ex_id: _null(prints, ex_id) for ex_id in EXERCISE_IDS})
    rates, caught, total = {}, 0, 0
    for ex_id, sources in files.items():
        for index, source in enumerate(sources):
            hits = sum(similarity.score(prints[ex_id][index],
                                        similarity.exercise_fingerprint(ex_id, disguise(source, seed)))
                       > thresholds[ex_id].value for seed in SEEDS)
            rates[(ex_id, index)] = hits / len(SEEDS)
            caught, total = caught + hits, total + len(SEEDS)
    print(f"disguised copies flagged: {caught}/{total} = {caught / total:.1%}")
    assert caught / total >= 0.95
    assert min(rates.values()) >= 0.95, {k: v for k, v in rates.items() if v < 0.95}


@pytest.mark.parametrize("rename", [False, True], ids=["own value", "own value and renames"])
def test_copies_with_the_copiers_own_variant_value_are_flagged_whatever_the_null(files, prints, rename):
    """The copy a class with variants sees most: the one edit the Practice page asks for (and renames)."""
    thresholds = similarity.calibrate({ex_id: _null(prints, ex_id) for ex_id in EXERCISE_IDS})
    rates, caught, total = {}, 0, 0
    for ex_id, sources in files.items():
        for index, source in enumerate(sources):
            copies = [own_value(source, ex_id, seed, rename) for seed in SEEDS]
            assert all(copy != source for copy in copies)
            scores = [similarity.score(prints[ex_id][index], similarity.exercise_fingerprint(ex_id, copy))
                      for copy in copies]
            assert all(value > thresholds[ex_id].value for value in scores), (ex_id, index, min(scores))
            hits = sum(value > similarity.CEILING for value in scores)
            rates[(ex_id, index)] = hits / len(SEEDS)
            caught, total = caught + hits, total + len(SEEDS)
    print(f"own-value copies (rename={rename}) above the ceiling: {caught}/{total} = {caught / total:.1%}")
    assert caught / total >= 0.95
    assert min(rates.values()) >= 0.95, {k: v for k, v in rates.items() if v < 0.95}


NUMBER = re.compile(r"(?<![\w.])(?:\d+\.?\d*|\.\d+)(?![\w.])")  # a number as written: 3, 3.0, 3., .37


def test_an_own_value_copy_changes_the_parameters_default_alone(files):
    """The generator makes the copy it claims: one value of the parameter's choices, written where the file had
    the parameter's default (or, without one, the published constant), in several forms; nothing else changed."""
    from course.common.exercise_variants import PARAMETERS

    forms = set()
    for ex_id, sources in files.items():
        parameter = PARAMETERS[ex_id]
        for source in sources:
            for seed in range(6):
                copy = own_value(source, ex_id, seed)
                changed = [(a, b) for a, b in zip(source.splitlines(), copy.splitlines()) if a != b]
                assert changed and len(source.splitlines()) == len(copy.splitlines())
                written = []
                for before, after in changed:
                    old, new = NUMBER.findall(before), NUMBER.findall(after)
                    assert NUMBER.sub("N", before) == NUMBER.sub("N", after) and len(old) == len(new), (before, after)
                    for was, now in zip(old, new):
                        if was != now:
                            assert float(was) == parameter.default, (ex_id, before, after)
                            written.append(now)
                values = {float(w) for w in written}
                assert len(values) == 1 and values <= set(map(float, parameter.choices)), (ex_id, written)
                if ex_id == "ex00":
                    forms |= {"." if w.endswith(".") else ".0" if w.endswith(".0") else "int" for w in written}
    assert forms == {"int", ".", ".0"}  # 3, 3. and 3.0 all written


def test_a_disguise_changes_the_text_but_not_the_names_a_grader_calls(files):
    for ex_id, sources in files.items():
        for source in sources:
            copy = disguise(source, seed=3)
            assert copy != source
            assert _top_level_names(copy) == _top_level_names(source)


def test_a_disguise_lowers_the_raw_copydetect_score(files):
    """The generator disguises for real: without the canonical form, copydetect scores copies lower."""
    lowered = 0
    for ex_id, sources in files.items():
        stub = (similarity.PROJECT_ROOT / "exercises" / similarity.exercise_table.get(ex_id).filename).read_text()
        for source in sources:
            original = _raw_print(source, stub)
            lowered += max(compare_files(original, _raw_print(disguise(source, 1), stub))[1]) < 0.95
    assert lowered >= 10


def _top_level_names(source):
    """The names a file defines at the top level."""
    return sorted(n.name for n in ast.parse(source).body if isinstance(n, (ast.FunctionDef, ast.ClassDef)))
