"""The weights diff a failing attention exercise carries (grader/weight_diff.py): which cell, which example, how shown.

The pure part is checked on tensors built by hand; the known mistakes are graded for real (slow), and the set
that must carry a diff is written out below with the reason each does or does not.
"""

import math
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from grader import checks as checks_registry
from grader import weight_diff
from grader.harness import procedures
from tests.grading_support import known_mistake_results


def uniform(B, n_q, n_k):
    return torch.full((B, n_q, n_k), 1.0 / n_k)


def test_the_worst_cell_and_its_example_are_found():
    want = uniform(2, 3, 4)
    got = want.clone()
    got[1, 2, 3] += 0.5  # the worst
    got[0, 0, 0] += 0.1
    diff = weight_diff.weights_diff("attention_weights", want, got)
    assert diff["example"] == [1] and diff["worst"] == [2, 3]
    assert diff["expected"][2][3] == 0.25 and diff["got"][2][3] == 0.75
    assert (diff["rows_from"], diff["cols_from"], diff["shape"]) == (0, 0, [2, 3, 4])


def test_a_flat_position_is_unravelled_as_torch_does_and_without_importing_sympy():
    for shape in [(7,), (3, 4), (2, 3, 5), (2, 1, 4, 3)]:
        for flat in range(math.prod(shape)):
            assert weight_diff.unravel(flat, shape) == [int(i) for i in torch.unravel_index(torch.tensor(flat), shape)]
    # each judging runs in a fork of its own: a module it imports (sympy, via torch.unravel_index) is imported
    # again for every failing exercise
    code = ("import sys, torch; from grader import weight_diff; w = torch.rand(2, 3, 4); "
            "assert weight_diff.weights_diff('attention_weights', w, w + 1) is not None; "
            "print('sympy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.strip() == "False", out.stderr


def test_the_example_the_message_names_is_the_one_shown():
    want = uniform(2, 3, 4)
    got = want.clone()
    got[1, 2, 3] += 0.5
    got[0, 1, 2] += 0.1
    diff = weight_diff.weights_diff("attention_weights", want, got, example=0)
    assert diff["example"] == [0] and diff["worst"] == [1, 2]


def test_heads_are_an_index_of_the_example_and_a_nan_is_the_worst_cell():
    want = torch.full((2, 4, 3, 5), 0.2)  # (B, heads, n_q, n_k)
    got = want.clone()
    got[0, 3, 1, 4] = 0.9
    got[1, 2, 0, 1] = float("nan")
    diff = weight_diff.weights_diff("probe.weights", want, got)
    assert diff["example"] == [1, 2] and diff["worst"] == [0, 1] and diff["got"][0][1] is None
    assert math.isnan(diff["got_value"])


def test_a_large_matrix_is_cropped_around_the_worst_cell():
    want = uniform(1, 40, 30)
    got = want.clone()
    got[0, 37, 2] = 0.9
    diff = weight_diff.weights_diff("attention_weights", want, got)
    assert len(diff["got"]) == weight_diff.MAX_SIDE and len(diff["got"][0]) == weight_diff.MAX_SIDE
    assert diff["rows_from"] == 40 - weight_diff.MAX_SIDE and diff["cols_from"] == 0  # the window stays inside
    assert diff["got"][37 - diff["rows_from"]][2] == 0.9
    assert "queries 28-39, keys 0-11 of 40 x 30" in weight_diff.worst_sentence(diff, "en")


def test_agreeing_or_incomparable_weights_give_no_diff():
    want = uniform(2, 3, 4)
    assert weight_diff.weights_diff("w", want, want.clone()) is None
    assert weight_diff.weights_diff("w", want, uniform(2, 3, 5)) is None  # the shape message says it
    assert weight_diff.weights_diff("w", want, want.double()) is None  # the dtype message says it


def test_only_a_weights_key_that_is_the_first_wrong_quantity_is_shown():
    reference = {"attention_weights": uniform(1, 2, 2), "output": torch.zeros(1, 2, 3)}
    wrong_weights = {"attention_weights": uniform(1, 2, 2) + 0.1, "output": torch.ones(1, 2, 3)}
    wrong_output = {"attention_weights": uniform(1, 2, 2), "output": torch.ones(1, 2, 3)}
    keys = ["output", "attention_weights"]
    assert weight_diff.first_wrong_weights(keys, reference, wrong_output) is None
    assert weight_diff.first_wrong_weights(keys, reference, wrong_weights) is None  # output is compared first
    located = ("step.weights_differ", {"result": "attention_weights", "b": 0, "q": 0})
    assert weight_diff.first_wrong_weights(keys, reference, wrong_weights, located) == "attention_weights"
    step = ("step.first_differs", {"probe": "probe.heads.out", "index": "(0,)"})
    assert weight_diff.first_wrong_weights(keys, reference, wrong_weights, step) is None
    assert weight_diff.first_wrong_weights(["output"], reference, wrong_output, declared=("output",)) == "output"


def test_a_located_property_failure_shows_the_weights_its_localisation_found():
    reference = {"full": torch.zeros(1, 2, 3), "probe.dec0_attention1_weights": uniform(1, 2, 2)}
    got = {"full": torch.ones(1, 2, 3), "probe.dec0_attention1_weights": uniform(1, 2, 2) + 0.1}
    located = ("step.first_differs", {"step": ("step.name.dec_attention1_weights", {"block": 0}),
                                      "index": "(0, 0, 0)", "probe": "probe.dec0_attention1_weights"})
    shown = weight_diff.property_shown(("prop.not_causal", {"t": 1}), located)
    assert weight_diff.first_wrong_weights(["full"], reference, got, shown) == "probe.dec0_attention1_weights"
    # a property that names its result keeps it
    leak = ("prop.weight_leaked", {"result": "attention_weights", "k": 1, "q": 0, "b": 0})
    assert weight_diff.property_shown(leak, located) == leak
    assert weight_diff.property_shown(("prop.not_causal", {"t": 1}), None) == ("prop.not_causal", {"t": 1})


def test_a_probe_can_record_what_a_submodule_keeps_after_its_call():
    class Keeper(torch.nn.Module):
        def forward(self, X):
            self.attention_weights = X.softmax(dim=-1)  # (B, n_q, n_k)
            return X * 2

    class Outer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.keeper = Keeper()

        def forward(self, X):
            return self.keeper(X) + 1

    X = torch.randn(2, 3, 4)  # (B, n_q, n_k)
    learner = SimpleNamespace(Outer=Outer)  # the learner's module, as the procedure is handed it
    spec = {"module": "ex_probed", "cls": "Outer", "arg_names": ["X"], "args": [X],
            "probes": [("kept_weights", "keeper", "attr:attention_weights"), ("out", "keeper", "out")]}
    results = procedures.module_forward(lambda name: learner, spec)
    torch.testing.assert_close(results["probe.kept_weights"], X.softmax(dim=-1))
    torch.testing.assert_close(results["probe.out"], X * 2)  # the submodule's output, not the module's
    torch.testing.assert_close(results["output"], X * 2 + 1)


def test_the_text_grid_marks_one_cell_on_each_side():
    want = uniform(1, 2, 3)
    got = want.clone()
    got[0, 1, 2] = 0.9
    lines = weight_diff.text_lines(weight_diff.weights_diff("attention_weights", want, got), "zh")
    assert "查询 1、键 2" in lines[0]
    assert "期望的权重" in lines[1] and "你的权重" in lines[1]
    marked = [line for line in lines[1:] if "[" in line]
    assert len(marked) == 1 and "[0.33]" in marked[0] and "[0.90]" in marked[0]


# Every known mistake of the attention exercises. DIFF: the first wrong quantity is a weight matrix, so the failing
# check must carry the diff; the others must not (their first wrong quantity is something else, said in the reason).
WEIGHTS_FIRST = {
    "ex01": {"mask_fill_zero", "mask_off_by_one", "empty_row_nan", "mask_lens_per_query_ignored"},  # masked_softmax
    "ex02": {"no_half", "w_outside_square", "softmax_over_queries", "no_minus"},  # the kernel weights themselves
    "ex03": {"dot_no_scale", "dot_scale_by_d", "dot_softmax_over_queries", "additive_no_tanh", "additive_ignores_mask",
             "dot_ignores_mask", "weights_after_dropout", "dot_scale_value_size"},  # scores or softmax wrong
    "ex04": {"query_bottom_layer", "cat_order", "no_valid_lens", "state_not_updated"},  # the attention query/mask
    "ex05": {"lens_tiled", "weights_head_axis"},  # the per-head weights
    "ex08": {"mask_fill_zero", "mask_inverted", "empty_row_uniform", "torch_softmax_nan"},  # softmax_with_mask
    # the decoder's masked self-attention weights (a probe step): the causality failure or the output is located there
    "ex07": {"decoder_not_causal", "causal_sees_next", "causal_sees_nothing"},
    # the grouped attention's weights of each query head: its scale, its causal or length mask, its head split
    "ex11": {"scale_num_hiddens", "causal_without_offset", "causal_excludes_self", "lens_ignored", "heads_strided"},
}
NOT_WEIGHTS = {  # mistake: why its first wrong quantity is not a weight matrix
    "ex01": {"softmax_no_shift": "softmax(X, dim) over any axis, not (queries, keys) weights",
             "softmax_fixed_axis": "softmax(X, dim) over any axis, not (queries, keys) weights",
             "builtin_softmax": "a rule on the source", "input_modified_in_place": "an input changed in place"},
    "ex03": {"weights_times_keys": "the output's shape", "no_dropout": "weights agree; dropout comes after",
             "dropout_on_output": "weights agree; dropout comes after"},
    "ex04": {"deep_output_order": "logits after the attention", "deep_output_no_tanh": "logits after the attention",
             "weights_last_step_only": "the weights' shape", "deep_output_context_first": "logits",
             "deep_output_embs_first": "logits"},
    "ex05": {"reshape_without_transpose": "the queries split into heads", "no_output_projection": "after the heads",
             "output_without_transpose": "the heads merged back"},
    "ex08": {"window_off_by_one": "a boolean mask", "window_full_width": "a boolean mask",
             "causal_wrong_side": "a boolean mask", "graph_transposed": "a boolean mask",
             "graph_no_self_loops": "a boolean mask", "no_scale": "the attention output (weights not returned)",
             "no_dropout": "the attention output (weights not returned)"},
    "ex07": {"norm_before_residual": "the layer norm's input", "no_residual": "the layer norm's input",
             "ffn_no_relu": "the FFN's hidden layer", "cache_not_extended": "incremental decoding (the state)",
             "cross_attention_on_x": "the cross-attention's queries", "addnorm_no_dropout": "the layer norm's input",
             "addnorm_args_swapped": "the residual AddNorm gets"},
    "ex09": {"rotation_direction": "the rotated output", "half_split_pairs": "the rotated output",
             "not_a_rotation": "the rotated output", "exponent_j_over_d": "the cos table",
             "positions_from_one": "the cos table", "offset_ignored": "the scores' output",
             "values_rotated": "the output", "no_scale": "the output", "no_dropout": "the output",
             "tables_persistent": "the module's state_dict", "absolute_import": "the import"},
    "ex10": {"sum_not_rescaled": "the running statistics", "acc_not_rescaled": "the running statistics",
             "acc_normalised_factor": "the running statistics", "max_not_subtracted": "the running statistics",
             "running_max_not_kept": "the running statistics", "masked_row_nan": "the running statistics",
             "divided_per_block": "the running statistics", "mask_fill_zero": "the tiled output (no weight matrix)",
             "last_block_dropped": "the key blocks", "last_block_overruns": "the key blocks",
             "empty_row_nan": "the tiled output", "no_scale": "the tiled output", "mask_from_zero": "a boolean mask"},
    "ex11": {"heads_tiled": "repeat_kv's output (no weights)", "cache_wrong_axis": "an error in step",
             "attends_before_append": "the weights' shape", "inputs_cached": "the cache's shape",
             "no_output_projection": "after the heads", "no_dropout": "weights agree; dropout comes after"},
}


@pytest.mark.slow
def test_every_known_mistake_whose_first_wrong_quantity_is_weights_carries_a_diff():
    cases = [(ex_id, m) for ex_id in sorted(set(WEIGHTS_FIRST) | set(NOT_WEIGHTS))
             for m in checks_registry.for_exercise(ex_id).MISTAKES
             if m.id in WEIGHTS_FIRST.get(ex_id, ()) or m.id in NOT_WEIGHTS.get(ex_id, {})]
    listed = sum(len(v) for v in WEIGHTS_FIRST.values()) + sum(len(v) for v in NOT_WEIGHTS.values())
    assert len(cases) == listed  # every listed id is a known mistake
    graded = known_mistake_results()  # graded once per run, shared with test_grader
    results = [graded[ex_id, mistake.id] for ex_id, mistake in cases]
    wrong = []
    for (ex_id, mistake), result in zip(cases, results):
        first = next(c for c in result.checks if not c.passed)
        expected = mistake.id in WEIGHTS_FIRST.get(ex_id, ())
        if bool(first.weights) != expected:
            wrong.append(f"{ex_id} {mistake.id}: diff {'missing' if expected else 'shown'} ({first.message[:120]})")
        if first.weights and ex_id == "ex07":  # the decoder's self-attention weights of one example and head
            assert first.weights["result"].endswith("attention1_weights") and len(first.weights["example"]) == 2
            assert "masked self-attention's weights" in weight_diff.worst_sentence(first.weights)  # words, not a key
        if first.weights:
            q, k = first.weights["worst"]
            assert first.weights["expected"][q - first.weights["rows_from"]][k - first.weights["cols_from"]] \
                is not None
    assert wrong == []


def test_a_diff_located_at_a_recorded_step_is_named_in_words_on_every_view():
    """A probe's key ('probe.dec0_attention1_weights') never reaches the learner: the CLI's sentence and the
    Practice page's use the step's words from the diff's `name`, in each language; a diff without one keeps its key."""
    from course.app.weights_view import worst_sentence as page_sentence

    want = uniform(2, 3, 3).view(1, 2, 3, 3)  # (B, heads, n_q, n_k)
    diff = weight_diff.weights_diff("probe.dec0_attention1_weights", want, want + 0.1)
    plain = weight_diff.worst_sentence(diff)
    assert "probe.dec0_attention1_weights" in plain
    diff["name"] = ["grader.step.name.dec_attention1_weights", {"block": 1}]
    for lang, words in (("en", "masked self-attention's weights of each head in block 1"), ("zh", "第 1 个块中带掩码的自注意力")):
        for sentence in (weight_diff.worst_sentence(diff, lang), page_sentence(diff, lang)):
            assert "probe." not in sentence and words in sentence
    diff["name"] = ["no.such.key", {}]  # stored data that names nothing falls back to the key
    assert "probe.dec0_attention1_weights" in weight_diff.worst_sentence(diff)


def test_a_diff_of_a_function_s_output_names_it_in_the_learner_s_language():
    """ex01's masked_softmax: the diff's result is the key 'output'; the zh sentence says 输出 on the CLI and the
    Practice page, never the English key."""
    from course.app.weights_view import worst_sentence as page_sentence

    want = uniform(1, 2, 3)  # (B, n_q, n_k)
    diff = weight_diff.weights_diff("output", want, want + 0.1)
    for sentence in (weight_diff.worst_sentence(diff, "zh"), page_sentence(diff, "zh")):
        assert "输出" in sentence and "output" not in sentence, sentence
    for sentence in (weight_diff.worst_sentence(diff, "en"), page_sentence(diff, "en")):
        assert "output" in sentence, sentence
