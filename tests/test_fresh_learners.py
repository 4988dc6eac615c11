"""How hints generalise: learner files written from the exercise docstrings and README alone, by writers
who never read grader/ or solutions/ (tests/fresh_learners/set_*/exNN/*.py, see its README).

Each file's header: `# style: ...`, `# bug: <function> | <what is wrong>` (or `# bug: none`), and for a
failing file `# expect: <function> | <phrase>`, the phrase a right hint contains (as tests/learner_bugs).
Every verdict must be right, no hint may name a mistake the file does not have, every correct file
passes with no hint, every failing file gets a hint or says which sub-step first differs, and the share
of failing files whose hint names the function and the mistake stays at least the figure reached
(`python bench/fresh_hints.py tests/fresh_learners/set_a` prints it).
"""

from pathlib import Path

import pytest

from bench.fresh_hints import first_hint, header, hint_is_right, located
from grader import checks as checks_registry
from grader.core import Submission, grade_submissions
from grader.text import hint_text

ROOT = Path(__file__).resolve().parent / "fresh_learners"
SETS = sorted(p.name for p in ROOT.glob("set_*") if p.is_dir())
# the least share of failing files with the right hint, per set
HINT_RATE = {"set_a": 0.9, "set_b": 0.9, "set_c": 0.9, "set_d": 0.9, "set_e": 0.9,
             "set_f": 0.55, "set_g": 0.25,
             "set_h": 0.02, "set_i": 0.1}  # F, G and H: their writers chose the phrases; most right hints word it otherwise
# (set H, ex00-ex11, two writers, 07 Dec 2026 18:18-18:24 UTC: 3/72 with the phrases as written, one of them on
# some of ex00's draws only; judged by reading, 56/72 right before this session's changes and 57/72 after)
# (reached: set A 56/60 with the behaviour rules and the partial and inlined slips, 43/60 before them, 38/60
# before its own widening; set B 52/60, 40/60 before; the goal is 0.9 on a set written after the changes;
# the bounds leave room for ex00, whose cases are drawn anew each run: a draw where a file's second slip
# also shows on the first failing check leaves its slip unnamed (set A's 09_closed_form_c: 2 of 3 runs
# named it); one run on a loaded machine, with a mutant cache missing mutants, gave set B fewer than 51;
# set C: 43/60 when measured once, then with the scoped diagnosis, the rules for axes in another order and
# entries left at 0, and the plainer texts, 22/24 on ex00-ex03 and 16/18 on ex06, ex08, ex09 (load about 20);
# set D: 42/60 when measured once; then, with known mistakes for the families no hint named and plainer texts,
# A 60/60, B 59/60, C 60/60, D 58/60 (load about 5);
# set E: 51/60 when measured once (55/60 judged by reading, none misleading, 88/90 verdicts); then, with checks at
# an explicit base and dilation and known mistakes for tiled shared keys and additive scores scaled like dot
# products, 55/60 (load 0.7))
# Hints that do not contain the expected phrase, each judged by reading it (the others must stay right):
NOT_RIGHT = {
    # "the line that computes `num_earlier`: the size used is X.shape[1]": the right line (the count of
    # cached positions), not said as "the cached positions are ignored"
    "set_a/ex07/07_lens_ignore_cache", "set_b/ex07/08_causal_ignores_cache",
    # no hint since the global-max known mistakes (a file without the shift matches neither exactly), only the
    # first differing sub-step; before them, the known mistake empty_row_nan (a second effect of the same slip)
    "set_b/ex01/04_no_max_shift",
    # set C, the hold-out written after the behaviour rules (measured once: 43/60 with its phrases as written
    # before grading). Right in substance, worded without the phrase chosen before grading:
    # (their other five, worded without the phrase, now name it: dim=, valid length 0, the wrong order, the
    # boundary itself, the test quoted; set C's ex01/04_global_max, misleading before, now gets no hint:
    # a known mistake of masked_softmax is not named while softmax, which it uses, fails its own checks)
    # set C, MISLEADING before the known mistake causal_ignores_cache (not yet re-measured with it): the file
    # ignores the cached positions (offset 0); the hint said the count is taken from X.shape[1]
    "set_c/ex07/07_bug_causal_no_offset",
    # set C: the slip sits in a helper of the learner's own (_cnn_steps), which the reference does not have: the
    # hint names no line and no variable of theirs, so the reference's `dilations` it quoted before is gone
    # ("a count is one too large (a sequence that starts at 1 instead of 0)": right in substance)
    "set_c/ex00/06_dilation_from_two",
    # set D, the hold-out written after the scoped diagnosis (measured once: 42/60 with its phrases as written
    # before grading, 50/60 judged by reading; its other seven hints in other words now name the slip plainly).
    # Right in substance, worded without the phrase:
    "set_d/ex02/02_w_dropped",  # "w is not passed to gaussian_kernel_weights": right, without the word "width"
    # set E, the hold-out written after the known mistakes for set D's families (measured once: 51/60 with its
    # phrases as written before grading). Right in substance, worded without the phrase:
    "set_e/ex01/09_mask_after_softmax",  # "masked_fill is applied after softmax instead of before it"
    "set_e/ex03/05_d_from_values",  # "d the size of the queries and keys (queries.shape[-1]), not ... the values"
    "set_e/ex07/05_ffn_residual_from_X",  # "addnorm2 is given `X` where `Y` belongs": the residual, by its name
    "set_e/ex07/09_cross_attn_query_X",  # "takes its queries from Y ... not from the block's input X"
    # sets F and G, written on 07 Dec 2026 from the docstrings alone with at least two input-dependent crashes and
    # one typed-in number per exercise, the `# expect:` phrases chosen by the writers before any grading. F was
    # measured before and after the hints for crashes and written-in numbers (grader/diagnosis/raising.py,
    # constants.py) and then used to tune them; G was written after that tuning and measured once before and once
    # after: 39/60 right by reading before, 51/60 after (16/60 with the phrase), 0 wrong, two that name the
    # crash's inputs rather than the slip (below). Right in substance, worded without the phrase:
    "set_f/ex01/09_unsqueeze_last",  # "the call that raised had `dim` = 1": the axis the missing keepdim breaks
    "set_f/ex02/09_squeeze_diff",  # "NWKernelRegression.forward raised ...: size 1 on axis 0 of `keys`": one query
    "set_f/ex02/07_weights_kept_3d",  # "`attention_weights` the shape (5, 1, 7), where the docstring's is (5, 7)"
    "set_f/ex03/06_additive_no_temperature",  # "the division is missing": the division by the temperature
    "set_f/ex03/09_float32_buffer",  # the call that raised "had ... `queries` in float64": the dtype, second
    "set_f/ex04/04_layer_zero_typed_in",  # "the query is the TOP GRU layer's ..., hidden_state[0] is the bottom"
    "set_f/ex04/08_squeeze_layer_axis",  # "every call that raised had `num_layers` > 1"
    "set_f/ex04/09_squeeze_context",  # "the call that raised had size 1 on axis 0 of `X`": a batch of one
    "set_f/ex05/08_repeat_interleave_no_dim",  # "the call that raised had a 2-D `valid_lens`"
    "set_f/ex05/09_weights_square",  # "the size used is queries.shape[1]" where the number of keys belongs
    "set_f/ex07/05_norm_then_add",  # "adds the residual first and normalises the sum"
    "set_f/ex07/07_causal_off_by_one",  # "the causal valid lengths are one too small"
    "set_f/ex08/04_fill_minus_1e9",  # "a row that sees no key at all then gets equal weights 1/n_k"
    "set_f/ex08/06_causal_strict",  # "the comparison excludes its boundary (< or >) where it must include it"
    "set_f/ex08/08_mask_2d_only",  # "the call that raised had a 3-D `mask`"
    "set_f/ex08/09_unpack_two_axes",  # "the call that raised had a 3-D `adjacency`"
    "set_f/ex09/07_rotation_sign",  # "the rotation turns the wrong way"
    "set_g/ex00/04_typed_kernel_width",  # "computes with 2, which is `kernel_size` - 1 only when `kernel_size` = 3"
    "set_g/ex00/05_dilations_none_crash",  # "every call that raised had `dilations` left at its default"
    "set_g/ex00/06_dilated_list_off_by_one",  # "a count is one too large": one dilation too many
    "set_g/ex00/07_rnn_counts_positions",  # "n positions in a chain are n - 1 steps apart"
    "set_g/ex00/09_strict_cover",  # "stop at the fewest layers whose receptive field covers all n positions"
    "set_g/ex01/04_lens_per_example_only",  # "every call that raised had a 2-D `valid_lens`"
    "set_g/ex01/05_none_lens_crash",  # "the call that raised had `valid_lens` = None"
    "set_g/ex01/07_global_max",  # "each slice along dim needs its own maximum"
    "set_g/ex01/08_length_inclusive",  # "key j is valid when j < valid_len"
    "set_g/ex01/09_temperature_multiplied",  # "it multiplies where it must divide"
    "set_g/ex02/06_w_literal",  # "w is not passed to gaussian_kernel_weights"
    "set_g/ex02/07_w_not_squared",  # "the exponent grows with w squared, not with w"
    "set_g/ex02/08_softmax_over_queries",  # "sum to 1 over the keys: ... dim=1 ..., not dim=0"
    "set_g/ex03/05_valid_lens_to_device",  # "the call that raised had `valid_lens` = None"
    "set_g/ex03/06_temperature_literal",  # "the division is missing": the division by the temperature
    "set_g/ex03/07_scale_by_num_keys",  # "the size used is keys.shape[1] ...", where the query size belongs
    "set_g/ex04/04_all_layers_query",  # "every call that raised had `num_layers` > 1"
    "set_g/ex04/05_squeeze_context",  # "the call that raised had size 1 on axis 0 of `X`": a batch of one
    "set_g/ex04/06_layer_index_literal",  # "the query is the TOP GRU layer's ..."
    "set_g/ex04/07_deep_output_order",  # "the GRU outputs first, then the contexts, then the embeddings"
    "set_g/ex04/08_hidden_not_carried",  # "every step starts the GRU ... from the encoder's hidden state"
    "set_g/ex05/04_repeat_no_dim",  # "the call that raised had a 2-D `valid_lens`"
    "set_g/ex05/08_lens_tiled",  # "each example's valid length must go to its own num_heads consecutive rows"
    "set_g/ex06/04_odd_width_crash",  # "the slice that keeps only the columns that exist is missing, so odd sizes"
    "set_g/ex06/08_sin_cos_swapped",  # "even columns (2j) hold the sine"
    "set_g/ex06/09_max_len_off_by_one",  # "the test `T >= self.max_len`: the comparison includes its boundary"
    "set_g/ex07/04_cache_cat_batch_axis",  # "cat works along dim ..." of the cached keys and values
    "set_g/ex07/07_norm_then_add",  # "ln is applied to one term before they are added"
    "set_g/ex07/08_causal_only_training",  # "causal in every mode, training and eval (inference) alike"
    "set_g/ex07/09_ffn_on_block_input",  # "ffn is given `X` where `Y` belongs"
    "set_g/ex08/04_any_dim2",  # "every call that raised had a 2-D `mask`"
    "set_g/ex08/05_unpack_2d_adjacency",  # "the call that raised had a 3-D `adjacency`"
    "set_g/ex08/09_empty_row_uniform",  # "a row that sees no key at all then gets equal weights 1/n_k"
    "set_g/ex09/07_rotate_half_pairs",  # "pair j is the interleaved columns (2j, 2j + 1)"
    "set_g/ex09/08_values_rotated",  # "only queries and keys are rotated"
    "set_g/ex09/09_rotation_sign",  # "the rotation turns the wrong way"
    # Not wrong, but not the slip: they name the inputs the crash needs and the learner's line, not its cause
    "set_f/ex02/08_keys_assumed_2d",  # "the size used is queries.shape[1] or ... keys.shape[1]": one of several
    "set_f/ex05/04_two_heads_typed_in",  # raised whenever valid_lens is given: where the typed-in 2 repeats them
    "set_g/ex02/04_keys_assumed_2d",  # as set F's: the sizes listed include the one used
    "set_g/ex05/06_two_heads_literal",  # as set F's 04_two_heads_typed_in
    # set H, judged by reading by a reader who did not write the grader (56/72 right before, 57/72 after):
    "set_h/ex00/04_hardcoded_kernel",  # "your line 33 has 3 written in" (on some draws the one-layer-late hint)
    "set_f/ex00/09_log2_n_equals_one",  # "every call that raised had `architecture` = 'cnn' together with `n` = 1"
    "set_g/ex02/05_bmm_for_1d_values",  # "every call that raised had a 1-D `keys` (... a 1-D `values`)"
    # 'every call that raised had `dilations` left at its default' in `receptive_field`: the None-default ...
    "set_h/ex00/05_len_before_default",
    # max_path_length: 'the check of its arguments that raises ValueError is missing'; the check name give...
    "set_h/ex00/06_no_kernel_check",
    # 'Stop at the fewest layers whose receptive field covers all n positions (R >= n), not one layer late...
    "set_h/ex00/07_strict_cover",
    # max_path_length: 'a sequence that starts at 1 instead of 0' = line 32 `range(1, layers + 1)` exponents
    "set_h/ex00/08_dilation_exponent",
    "set_h/ex00/09_attention_n1",  # 'your line 29, the test `n == 1`: the early return ... comes too late'
    "set_h/ex01/04_only_1d_lens",  # 'every call that raised had a 2-D `valid_lens`': masked_softmax's (B,)-only handling
    # 'softmax subtracts one maximum over the whole tensor: each slice along dim needs its own maximum'
    "set_h/ex01/05_global_max",
    "set_h/ex01/07_hardcoded_dim",  # 'Normalise along the `dim` argument, not always along the last axis'
    "set_h/ex01/09_inplace_mask",  # 'masked_softmax changes X in place ... Build a new tensor instead'
    # gaussian_kernel_weights: 'the size used is ... keys.shape[1] ..., which is not the size that belongs...
    "set_h/ex02/04_keys_2d_only",
    # before: no hint, msg names line 19 `torch.matmul(weights, values)` (located, the slip line). after: ...
    "set_h/ex02/05_matmul_values",
    # before: 'line 18 ... w is not passed to gaussian_kernel_weights' (though 'called without its last ar...
    "set_h/ex02/06_w_literal",
    "set_h/ex02/07_w_outside_square",  # 'w scales the distance before squaring: -((q - k) * w)**2 / 2'
    "set_h/ex02/08_softmax_queries",  # 'take the softmax along dim=1 (the keys axis ...), not dim=0'
    "set_h/ex02/09_store_scores",  # 'NWKernelRegression.forward stores the raw scores in self.attention_weights'
    "set_h/ex03/07_weights_after_dropout",  # 'Store self.attention_weights before dropout'
    # 'Scale by sqrt(d) with d the size of the queries and keys ..., not the size of the values'
    "set_h/ex03/08_value_size_scale",
    "set_h/ex03/09_tanh_after_wv",  # 'AdditiveAttention.forward applies tanh in the wrong place'
    # 'the call that raised had size 1 on axis 0 of `X`' (B == 1; 'an even `embed_size`' is noise)
    "set_h/ex04/04_squeeze_context",
    "set_h/ex04/06_first_layer_query",  # 'The query is the TOP GRU layer's previous hidden state, hidden_state[-1]'
    "set_h/ex04/07_hidden_not_carried",  # 'the new hidden state is kept only after the loop. Carry it from step to step'
    "set_h/ex04/08_concat_order",  # 'You put the contexts first: the pieces are joined in the wrong order'
    "set_h/ex04/09_last_step_weights",  # 'attention_weights must hold every step's weights, (B, T_tgt, T_src)'
    "set_h/ex05/04_lens_none",  # 'the call that raised had `valid_lens` = None'
    "set_h/ex05/05_flat_repeat",  # 'the call that raised had a 2-D `valid_lens`' (float64 dtypes are noise)
    "set_h/ex05/07_plain_reshape",  # 'Reshaping (B, T, H) straight to (B * heads, T, H / heads) mixes positions into heads'
    "set_h/ex05/08_tiled_lens",  # 'valid_lens.repeat(num_heads) tiles the whole batch instead'
    "set_h/ex05/09_output_no_permute",  # 'transpose_output must undo the permute of transpose_qkv'
    "set_h/ex06/04_hardcoded_base",  # 'builds the table with 10000 whatever base it is given'
    "set_h/ex06/05_odd_width",  # 'every call that raised had an odd `num_hiddens`'
    # 'line 31, the test `T >= self.max_len`: the comparison includes its boundary ... where it must exclu...
    "set_h/ex06/06_maxlen_boundary",
    "set_h/ex06/07_exponent_j",  # 'The exponent is 2j / num_hiddens ..., not j / num_hiddens'
    "set_h/ex06/08_sin_cos_swapped",  # 'Even columns (2j) hold the sine and odd columns (2j + 1) the cosine'
    "set_h/ex06/09_batch_axis_slice",  # 'line 25 (the one that computes `n`): the size used is X.shape[0]'
    "set_h/ex07/04_lens_ignore_cache",  # 'The causal valid lengths ignore the cached positions'
    "set_h/ex07/05_dropout_after_add",  # 'dropout is applied to the whole sum (the residual included)'
    "set_h/ex07/06_cache_only_new",  # 'caches[self.i] = cat(caches[self.i], X), not just the newest X'
    # sliding_window_mask: 'one part of the combined mask ... is left out' + msg 'every failing call ... h...
    "set_h/ex08/04_no_dilation_step",
    "set_h/ex08/05_fill_minus_1e6",  # 'A huge negative fill (-1e9) ... Fill with float('-inf')' (says -1e9, file has -1e6)
    "set_h/ex08/06_mask_none",  # 'the call that raised had `mask` = None' ('even last axis' is noise)
    # sliding_window_mask: 'the comparison excludes its boundary (< or >) where it must include it' + caus...
    "set_h/ex08/07_causal_strict",
    # graph_mask: 'the size used is adjacency.shape[0], which is not the size that belongs here' (garbled ...
    "set_h/ex08/09_eye_batch_axis",
    "set_h/ex09/04_positions_1000",  # 'your line 23 has 1000 written in: where `max_len` belongs, use the parameter'
    "set_h/ex09/05_rotate_half",  # 'Pairing column j with column j + d/2 (rotate_half) is another layout'
    "set_h/ex09/06_conjugate",  # 'The rotation turns the wrong way'
    "set_h/ex09/07_offset_ignored",  # 'take self.cos[offset:offset + T] ..., not the first T rows'
    "set_h/ex09/08_complex_no_upcast",  # 'the call that raised had `X` in bfloat16'
    "set_h/ex10/04_drop_partial_block",  # 'The last block is missing when num_keys is not a multiple of block_size'
    # since the hints for crashes and literals (raising.py's ALONE, relations, BRANCHES; constants.py's source
    # facts): right in substance, worded without the writer's phrase
    "set_f/ex03/08_squeeze_all",  # 'the call that raised had each example passed alone (B = 1)' + the line
    "set_g/ex03/04_squeeze_all_axes",  # the same: a size-1 batch axis that squeeze() drops
    "set_h/ex03/04_squeeze_all",  # the same
    "set_h/ex03/06_literal_dropout",  # 'passes 0.1 ... to `nn.functional.dropout`, where the parameter `dropout` belongs'
    "set_h/ex05/06_five_heads",  # 'wrong only in calls where `num_heads` is not 5 ... your line 57 has 5 written in'
    "set_h/ex07/09_leaky_slope_literal",  # 'passes 0.01 ... to `F.leaky_relu`, where ... `negative_slope` belongs'
    "set_h/ex09/09_rotate_qk_together",  # 'every call that raised had ... (n_q ≠ n_k)', valid_lens given second
    "set_h/ex10/07_lens_1d_only",  # 'every call that raised had a 2-D `valid_lens`' + block_mask's line
    "set_h/ex11/06_groups_literal_2",  # 'wrong only where `num_kv_heads` is not 2 ... your line 43 has 2 written in'
    # 'your line 15 has 16 written in: where `block_size` belongs, use the parameter' (names `tiled_attent...
    "set_h/ex10/05_step_16",
    "set_h/ex10/09_mask_from_zero",  # 'compare torch.arange(start, stop) with the lengths'
    "set_h/ex11/04_repeat_tiles",  # 'X.repeat(1, num_groups, 1, 1) tiles the whole stack instead'
    "set_h/ex11/05_causal_no_offset",  # 'In the causal mask query i stands at position n_k - n_q + i, not at i'
    "set_h/ex11/08_cache_cat_axis1",  # 'step appends the new keys and values on the wrong axis of the cache'
    "set_h/ex11/09_cache_inputs",  # 'The cache holds the inputs x, not the projected keys and values'
    # since ex01's and ex04's appended checks: 'a `valid_lens` given together with ... (n_q ≠ n_k)', and 'B ≠ T' with
    # the line of the deep output's cat, where the time-major embeddings meet the batch-major outputs
    "set_h/ex01/06_query_axis_arange", "set_h/ex04/05_permute_not_back",
}
# set I, judged by reading after the tuning it was used for (67/72 named, none misleading): each of these names
# its slip in other words than the writer's phrase
NOT_RIGHT |= {
    "set_i/ex00/04_dilations_none_crash",  # "`receptive_field` raised in 4 of the calls checked and ran in 2: "
    "set_i/ex00/05_dilated_extra_layer_crash",  # "Your results point at one line in max_path_length, in the co"
    "set_i/ex00/06_kernel_literal",  # "`max_path_length` was wrong only in calls where `kernel_size` is not 3 "
    "set_i/ex00/07_rnn_off_by_one",  # "n positions in a chain are n - 1 steps apart (positions 1 and n)."
    "set_i/ex00/08_strict_cover",  # "Stop at the fewest layers whose receptive field covers all n positions (R"
    "set_i/ex00/09_attention_n1",  # "Your results match one specific slip in max_path_length, in the condition"
    "set_i/ex01/04_lens_2d_crash",  # "`masked_softmax` raised in 3 of the calls checked and ran in 5: every ca"
    "set_i/ex01/05_mask_query_axis_crash",  # "`masked_softmax` raised in 5 of the calls checked and ran in 3: "
    "set_i/ex01/06_softmax_dim_literal",  # "Normalise along the `dim` argument, not always along the last axis"
    "set_i/ex01/07_global_max",  # "softmax subtracts one maximum over the whole tensor: each slice along dim n"
    "set_i/ex01/08_inplace_mask",  # "masked_softmax changes X in place (do not modify X): masked_fill_ (or X[m"
    "set_i/ex02/04_shared_keys_crash",  # "`nadaraya_watson` raised in 4 of the calls checked and ran in 2: eve"
    "set_i/ex02/05_values_matmul_order",  # "`nadaraya_watson` raised in 2 of the calls checked and ran in 4: e"
    "set_i/ex02/06_w_literal",  # "Your results match one specific slip in nadaraya_watson, in your line 26 (th"
    "set_i/ex02/07_softmax_query_axis",  # "Each query's weights must sum to 1 over the keys: take the softmax "
    "set_i/ex02/08_w_not_squared",  # "w scales the distance before squaring: -((q - k) * w)**2 / 2, i.e. the e"
    "set_i/ex02/09_forward_shape",  # "NWKernelRegression.forward gives `output` the shape (5, 1), where the do"
    "set_i/ex03/04_squeeze_all_crash",  # "`AdditiveAttention.forward` raised in one of the calls checked and r"
    "set_i/ex03/05_broadcast_swapped_crash",  # "AdditiveAttention.forward pairs queries with the wrong keys: e"
    "set_i/ex03/06_valid_lens_none_crash",  # "`DotProductAttention.forward` raised in one of the calls checked"
    "set_i/ex03/07_scale_literal_8",  # "`DotProductAttention.forward`: your line 42 divides the scores by 8, a"
    "set_i/ex03/08_dropout_on_output",  # "Dropout goes on the attention weights, not on the output: dropout(we"
    "set_i/ex03/09_additive_ignores_lens",  # "AdditiveAttention: pass valid_lens to masked_softmax, so that pa"
    "set_i/ex04/04_time_major_embs_crash",  # "`Seq2SeqAttentionDecoder.forward` raised in 5 of the calls check"
    "set_i/ex04/05_squeeze_batch1_crash",  # "`Seq2SeqAttentionDecoder.forward` raised in one of the calls chec"
    "set_i/ex04/06_query_layer_literal",  # "The query is the TOP GRU layer's previous hidden state, hidden_sta"
    "set_i/ex04/07_deep_output_order",  # "The deep output reads torch.cat((outputs, contexts, embs), dim=-1): "
    "set_i/ex04/08_weights_last_step",  # "attention_weights must hold every step's weights, (B, T_tgt, T_src):"
    "set_i/ex04/09_stale_hidden_state",  # "Your results match one specific slip in Seq2SeqAttentionDecoder.for"
    "set_i/ex05/04_lens_2d_crash",  # "`MultiHeadAttention.forward` raised in one of the calls checked and ran "
    "set_i/ex05/05_weights_square_crash",  # "Your results match one specific slip in one line of the code that"
    "set_i/ex05/06_heads_literal",  # "`MultiHeadAttention.forward` was wrong only in calls where `num_heads` i"
    "set_i/ex05/07_head_split_strided",  # "transpose_qkv splits the heads in the wrong order: reshape to (B, T"
    "set_i/ex05/08_lens_tiled",  # "Each example's valid length must go to its own num_heads consecutive rows ("
    "set_i/ex05/09_no_output_projection",  # "After merging the heads, mix them with the output projection W_o."
    "set_i/ex06/04_odd_width_crash",  # "`PositionalEncoding.__init__` raised in 2 of the calls checked and ran"
    "set_i/ex06/05_max_len_boundary_crash",  # "Your results match one specific slip in PositionalEncoding.forw"
    "set_i/ex06/06_literal_base",  # "Your results match one specific slip in one line of the code that Positio"
    "set_i/ex06/09_dropout_before_add",  # "Dropout goes on the sum X + P, not on X alone: return self.dropout("
    "set_i/ex07/07_addnorm_dropout_on_sum",  # "Your results match one specific slip in AddNorm.forward, in wha"
    "set_i/ex07/08_causal_only_in_training",  # "Decoder self-attention must be causal in every mode, training "
    "set_i/ex07/09_no_offset_for_cache",  # "The causal valid lengths ignore the cached positions: new position"
    "set_i/ex08/04_batched_mask_crash",  # "`softmax_with_mask` raised in one of the calls checked and ran in 3"
    "set_i/ex08/05_graph_batch_shape_check",  # "`graph_mask` raised in one of the calls checked and ran in 3: "
    "set_i/ex08/06_literal_scale",  # "`MaskedDotProductAttention.forward`: your line 61 divides the scores by "
    "set_i/ex08/07_graph_transposed",  # "Row i of the mask is node i's query: node i reads node j when adjacen"
    "set_i/ex08/09_large_negative_fill",  # "A huge negative fill (-1e9) works for rows with at least one visib"
    "set_i/ex09/04_offset_slice_crash",  # "`RotaryEmbedding.forward` raised in 4 of the calls checked and ran "
    "set_i/ex09/05_cat_queries_keys_crash",  # "`RotaryDotProductAttention.forward` raised in 4 of the calls ch"
    "set_i/ex09/07_half_split_pairs",  # "Pair j is the interleaved columns (2j, 2j + 1), as in chapter 6's tab"
    "set_i/ex09/08_sin_sign_loops",  # "The rotation turns the wrong way: out[2j] = x[2j] * cos - x[2j+1] * sin"
    "set_i/ex09/09_half_precision_dtype",  # "RotaryEmbedding.forward returns `output` as float32 where the ref"
    "set_i/ex10/04_reshape_into_blocks_crash",  # "`tiled_attention` raised in 7 of the calls checked and ran i"
    "set_i/ex10/05_per_query_lens_crash",  # "`tiled_attention` raised in 3 of the calls checked and ran in 6: "
    "set_i/ex10/07_acc_not_rescaled",  # "When a block raises the running max, acc (the sum of exp(score - m) *"
    "set_i/ex10/08_no_neg_inf_guard",  # "A row whose scores are all -inf so far has m_new = -inf, and exp(-inf"
    "set_i/ex10/09_mask_off_by_one",  # "Your results match one specific slip in block_mask, in what it returns"
    "set_i/ex11/07_repeat_tiles_heads",  # "The key/value heads are given to the wrong query heads: query head "
}

# Failing files the grader passes, with why (each is a slip the published exercise cannot show):
WRONG_VERDICT = set()  # (set D's ex01/01_no_temp_mask and ex03/03_temp_precedence, right at the published
# temperature 1.0, now fail the temperature checks appended to ex01 and ex03, which judge only code that takes the
# parameter)
# Hints judged misleading by reading (known, not yet fixed): a fact about the calls that raised which is not
# the slip's condition (the grader's cases have no call that separates the two)
MISLEADING = set()  # (set H's ex01/06_query_axis_arange blamed 'a `valid_lens` given' until ex01's square cases
# with lengths let the hint name n_q != n_k; set I's three were fixed by the changes it was used to tune)
# Files their writers labelled correct that the grader rightly fails (each breaks what its docstring asks)
NOT_CORRECT = {
    # block_mask with valid_lens of another batch size raises RuntimeError (from expand), where the docstring
    # asks for ValueError
    "set_h/ex10/02_while_blocks", "set_h/ex10/03_einsum",
}
SILENT = {  # failing files with neither a right hint nor a sub-step or the line raising (the error names the line
    # only where the traceback reaches the learner's file: these raise inside torch or in a helper of theirs)
    "set_f/ex07/08_lens_1d", "set_f/ex07/09_lens_over_all_keys",
    "set_g/ex07/05_ffn_reshape_to_input",
    "set_g/ex00/08_precedence_slip",  # its first differing step is named on some of ex00's draws only
    # set H: no hint, and the message names no line of theirs
    "set_h/ex03/05_nq_for_keys",
    "set_h/ex07/07_truthy_cache",
    "set_h/ex07/08_lens_over_keys",
    "set_h/ex11/07_view_after_transpose",
    # set I: ex07's raise in every call (the token-by-token pass has T = 1), ex11's where no one property separates
    "set_i/ex07/04_causal_lens_1d", "set_i/ex07/05_cross_attention_swapped",
    "set_i/ex11/04_square_tril_causal_crash", "set_i/ex11/05_view_after_expand_crash",
}
# (set C's ex04/08_weights_time_major was silent before the rule for axes in another order)


def key(path):
    return f"{path.parent.parent.name}/{path.parent.name}/{path.stem}"


def files(name):
    return sorted((ROOT / name).glob("ex*/*.py"))


def is_right(path, hint):
    """Does the hint name the expected function (or is it a known mistake's hint) and contain the phrase?"""
    registered = {hint_text(path.parent.name, m, "en")
                  for m in checks_registry.for_exercise(path.parent.name).MISTAKES}
    return hint_is_right(header(path)["expect"], hint, registered)


@pytest.fixture(scope="module", params=SETS)
def graded(request):
    paths = files(request.param)
    results = grade_submissions([Submission(p.parent.name, p.read_text(encoding="utf-8"), p.name) for p in paths])
    return request.param, dict(zip(paths, results))


def test_each_set_has_failing_and_correct_files_for_every_exercise():
    assert "set_a" in SETS
    for name in SETS:
        for ex in [f"ex{n:02d}" for n in range(10)]:
            heads = [header(p) for p in (ROOT / name / ex).glob("*.py")]
            assert sum(h["expect"] is not None for h in heads) >= 6, (name, ex)
            assert sum(h["expect"] is None for h in heads) >= 3, (name, ex)
            assert all(h["bug"] for h in heads), (name, ex)


@pytest.mark.slow  # grades every fresh file
def test_every_verdict_is_right_and_no_hint_misleads(graded):
    name, results = graded
    wrong = []
    for path, result in results.items():
        hint = first_hint(result)
        if key(path) in NOT_CORRECT:
            if result.passed:
                wrong.append((path.name, "fails what its docstring asks", result.status, hint))
        elif header(path)["expect"] is None:
            if not result.passed or any(c.hint for c in result.checks):
                wrong.append((path.name, "correct file", result.status, hint))
        elif key(path) in WRONG_VERDICT:
            continue
        elif result.status != "failed" or (hint and not is_right(path, hint) and key(path) not in NOT_RIGHT | MISLEADING):
            wrong.append((path.name, header(path)["expect"], result.status, hint))
    assert not wrong, wrong


@pytest.mark.slow  # grades every fresh file
def test_failing_files_get_the_right_hint_or_the_first_differing_sub_step(graded):
    name, results = graded
    failing = [p for p in results if header(p)["expect"] is not None]
    right = [p for p in failing if is_right(p, first_hint(results[p]))]
    assert len(right) >= HINT_RATE.get(name, 0.0) * len(failing), f"{name}: {len(right)}/{len(failing)}"
    silent = [p.name for p in failing  # neither a right hint, nor a sub-step or the line raising
              if p not in right and key(p) not in SILENT | NOT_RIGHT | MISLEADING | WRONG_VERDICT
              and not located(results[p])]
    assert not silent, silent
