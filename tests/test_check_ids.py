"""Every check keeps its id and its place: a new check is appended at the end of its exercise's `build()`.

A check's id (`exNN.<target>.<n>`, grader/checks/base.py number_checks, counted in build() order) is what
a class's stored results and analytics refer to, each call's random stream is seeded by its position
(grader/harness/seeding.py seed_call), and the mutant caches keep results by position: a check inserted
in the middle renumbers the ones after it and changes what they draw.
The list below is written out from the current checks (id, then the catalog key of its title where the
title is one): add a new check's line at the end of its exercise; never edit or reorder the others.
"""

import pytest

from course.common.exercise_index import EXERCISES
from grader import checks

PINNED = {
    "ex00": (
        "ex00.receptive_field.1",
        "ex00.receptive_field.2",
        "ex00.receptive_field.3",
        "ex00.receptive_field.4",
        "ex00.receptive_field.5",
        "ex00.receptive_field.6",
        "ex00.receptive_field.7 check.raises",
        "ex00.receptive_field.8 check.raises",
        "ex00.max_path_length.1",
        "ex00.max_path_length.2",
        "ex00.max_path_length.3",
        "ex00.max_path_length.4",
        "ex00.max_path_length.5",
        "ex00.max_path_length.6",
        "ex00.max_path_length.7",
        "ex00.max_path_length.8",
        "ex00.max_path_length.9",
        "ex00.max_path_length.10",
        "ex00.max_path_length.11",
        "ex00.max_path_length.12",
        "ex00.max_path_length.13",
        "ex00.max_path_length.14",
        "ex00.max_path_length.15",
        "ex00.max_path_length.16",
        "ex00.max_path_length.17",
        "ex00.max_path_length.18",
        "ex00.max_path_length.19",
        "ex00.max_path_length.20",
        "ex00.max_path_length.21",
        "ex00.max_path_length.22 check.raises",
        "ex00.max_path_length.23 check.raises",
        "ex00.max_path_length.24 check.raises",
        "ex00.max_path_length.25",
    ),
    "ex01": (
        "ex01.softmax.1 check.ex01.last_axis",
        "ex01.softmax.2 check.ex01.axis1",
        "ex01.softmax.3 check.ex01.overflow",
        "ex01.softmax.4 check.ex01.underflow",
        "ex01.softmax.5 check.ex01.minus_inf",
        "ex01.masked_softmax.1 check.ex01.no_lens",
        "ex01.masked_softmax.2 check.ex01.per_example",
        "ex01.masked_softmax.3 check.ex01.per_query",
        "ex01.masked_softmax.4 check.ex01.zero_length",
        "ex01.masked_softmax.5 check.ex01.zeros_per_query",
        "ex01.softmax.6 check.ex01.mixed_rows",
        "ex01.softmax.7 check.with_parameter",
        "ex01.masked_softmax.6 check.with_parameter",
    ),
    "ex02": (
        "ex02.gaussian_kernel_weights.1 check.with_keys",
        "ex02.gaussian_kernel_weights.2 check.with_keys",
        "ex02.gaussian_kernel_weights.3 check.with_keys",
        "ex02.nadaraya_watson.1 check.with_keys",
        "ex02.nadaraya_watson.2 check.with_keys",
        "ex02.NWKernelRegression.1 check.forward_of",
        "ex02.NWKernelRegression.2 check.forward_of",
        "ex02.NWKernelRegression.3 check.forward_of",
        "ex02.nadaraya_watson.3 check.with_keys",
        "ex02.nadaraya_watson.4 check.with_keys",
    ),
    "ex03": (
        "ex03.AdditiveAttention.1 check.attention",
        "ex03.AdditiveAttention.2 check.attention",
        "ex03.AdditiveAttention.3 check.attention",
        "ex03.DotProductAttention.1 check.attention",
        "ex03.DotProductAttention.2 check.attention",
        "ex03.DotProductAttention.3 check.attention",
        "ex03.DotProductAttention.4 check.attention",
        "ex03.AdditiveAttention.4 check.batch_items",
        "ex03.DotProductAttention.5 check.batch_items",
        "ex03.AdditiveAttention.5 check.train_mode",
        "ex03.DotProductAttention.6 check.train_mode",
        "ex03.DotProductAttention.7 check.train_mode",
        "ex03.AdditiveAttention.6 check.train_mode",
        "ex03.DotProductAttention.8 check.with_parameter",
        "ex03.AdditiveAttention.7 check.with_parameter",
    ),
    "ex04": (
        "ex04.Seq2SeqAttentionDecoder.1 check.gru_decoder",
        "ex04.Seq2SeqAttentionDecoder.2 check.gru_decoder",
        "ex04.Seq2SeqAttentionDecoder.3 check.gru_decoder",
        "ex04.Seq2SeqAttentionDecoder.4 check.gru_decoder",
        "ex04.Seq2SeqAttentionDecoder.5 check.train_mode",
        "ex04.demo_translations.1 demo.name",
    ),
    "ex05": (
        "ex05.transpose_qkv.1 check.heads_of",
        "ex05.transpose_qkv.2 check.heads_of",
        "ex05.transpose_output.1 check.heads_of",
        "ex05.transpose_output.2 check.roundtrip",
        "ex05.transpose_qkv.3 check.qkv_rejects",
        "ex05.MultiHeadAttention.1 check.mha",
        "ex05.MultiHeadAttention.2 check.mha",
        "ex05.MultiHeadAttention.3 check.mha",
        "ex05.MultiHeadAttention.4 check.mha",
        "ex05.MultiHeadAttention.5 check.mha",
        "ex05.MultiHeadAttention.6 check.mha_rejects",
        "ex05.MultiHeadAttention.7 check.train_mode",
        "ex05.demo_translations.1 demo.name",
    ),
    "ex06": (
        "ex06.PositionalEncoding.1 check.pe_table",
        "ex06.PositionalEncoding.2 check.pe_table",
        "ex06.PositionalEncoding.3 check.pe_table",
        "ex06.PositionalEncoding.4 check.pe_forward",
        "ex06.PositionalEncoding.5 check.pe_forward",
        "ex06.PositionalEncoding.6 check.pe_forward",
        "ex06.PositionalEncoding.7 check.pe_too_long",
        "ex06.PositionalEncoding.8 check.pe_moved",
        "ex06.PositionalEncoding.9 check.train_mode",
        "ex06.PositionalEncoding.10 check.train_mode",
        "ex06.demo_translations.1 demo.name",
        "ex06.PositionalEncoding.11 check.with_parameter",
        "ex06.PositionalEncoding.12 check.with_parameter",
    ),
    "ex07": (
        "ex07.PositionWiseFFN.1",
        "ex07.AddNorm.1",
        "ex07.AddNorm.2",
        "ex07.TransformerEncoderBlock.1",
        "ex07.TransformerEncoderBlock.2",
        "ex07.TransformerEncoderBlock.3",
        "ex07.TransformerDecoderBlock.1 check.decoder",
        "ex07.TransformerDecoderBlock.2 check.decoder",
        "ex07.TransformerDecoderBlock.3 check.decoder",
        "ex07.AddNorm.3 check.train_mode",
        "ex07.TransformerEncoderBlock.4 check.train_mode",
        "ex07.TransformerDecoderBlock.4 check.train_mode",
        "ex07.demo_translations.1 demo.name",
        "ex07.PositionWiseFFN.2 check.with_parameter",
    ),
    "ex08": (
        "ex08.sliding_window_mask.1 check.ex08.window",
        "ex08.sliding_window_mask.2 check.ex08.window",
        "ex08.sliding_window_mask.3 check.ex08.window",
        "ex08.sliding_window_mask.4 check.ex08.window",
        "ex08.sliding_window_mask.5 check.ex08.window",
        "ex08.sliding_window_mask.6 check.raises",
        "ex08.graph_mask.1 check.ex08.graph",
        "ex08.graph_mask.2 check.ex08.graph",
        "ex08.graph_mask.3 check.ex08.graph",
        "ex08.graph_mask.4 check.ex08.graph",
        "ex08.graph_mask.5 check.raises",
        "ex08.softmax_with_mask.1 check.ex08.softmax",
        "ex08.softmax_with_mask.2 check.ex08.softmax",
        "ex08.softmax_with_mask.3 check.ex08.softmax",
        "ex08.softmax_with_mask.4 check.ex08.softmax",
        "ex08.MaskedDotProductAttention.1 check.ex08.attention",
        "ex08.MaskedDotProductAttention.2 check.ex08.attention",
        "ex08.MaskedDotProductAttention.3 check.ex08.attention",
        "ex08.MaskedDotProductAttention.4 check.train_mode",
        "ex08.MaskedDotProductAttention.5 check.train_mode",
        "ex08.sliding_window_mask.7 check.with_parameter",
        "ex08.sliding_window_mask.8 check.with_parameter",
    ),
    "ex09": (
        "ex09.RotaryEmbedding.1 check.ex09.tables",
        "ex09.RotaryEmbedding.2 check.ex09.tables",
        "ex09.RotaryEmbedding.3 check.ex09.moved",
        "ex09.RotaryEmbedding.4 check.raises",
        "ex09.RotaryEmbedding.5 check.ex09.rotate",
        "ex09.RotaryEmbedding.6 check.ex09.rotate",
        "ex09.RotaryEmbedding.7 check.ex09.rotate",
        "ex09.RotaryEmbedding.8 check.ex09.rotate",
        "ex09.RotaryEmbedding.9 check.ex09.rotate",
        "ex09.RotaryEmbedding.10 check.raises",
        "ex09.RotaryDotProductAttention.1 check.attention",
        "ex09.RotaryDotProductAttention.2 check.attention",
        "ex09.RotaryDotProductAttention.3 check.attention",
        "ex09.RotaryDotProductAttention.4 check.train_mode",
        "ex09.RotaryDotProductAttention.5 check.train_mode",
        "ex09.RotaryEmbedding.11 check.ex09.rotate",
        "ex09.RotaryEmbedding.12 check.with_parameter",
        "ex09.RotaryEmbedding.13 check.with_parameter",
    ),
    "ex10": (
        "ex10.key_blocks.1 check.ex10.blocks",
        "ex10.key_blocks.2 check.ex10.blocks",
        "ex10.key_blocks.3 check.ex10.blocks",
        "ex10.key_blocks.4 check.ex10.blocks",
        "ex10.key_blocks.5 check.ex10.blocks",
        "ex10.key_blocks.6 check.raises",
        "ex10.block_mask.1 check.ex10.mask",
        "ex10.block_mask.2 check.ex10.mask",
        "ex10.block_mask.3 check.raises",
        "ex10.online_softmax_update.1 check.ex10.update",
        "ex10.online_softmax_update.2 check.ex10.update",
        "ex10.online_softmax_update.3 check.ex10.update",
        "ex10.online_softmax_update.4 check.ex10.update",
        "ex10.online_softmax_update.5 check.ex10.update",
        "ex10.tiled_attention.1 check.ex10.attention",
        "ex10.tiled_attention.2 check.ex10.attention",
        "ex10.tiled_attention.3 check.ex10.attention",
        "ex10.tiled_attention.4 check.ex10.attention",
        "ex10.tiled_attention.5 check.ex10.attention",
        "ex10.tiled_attention.6 check.ex10.large",
        "ex10.tiled_attention.7 check.ex10.attention",
        "ex10.tiled_attention.8 check.ex10.attention",
        "ex10.tiled_attention.9 check.ex10.measured",
        "ex10.tiled_attention.10 check.raises",
        "ex10.tiled_attention.11 check.raises",
    ),
    "ex11": (
        "ex11.repeat_kv.1 check.ex11.repeat",
        "ex11.repeat_kv.2 check.ex11.repeat",
        "ex11.repeat_kv.3 check.ex11.repeat",
        "ex11.GroupedQueryAttention.1 check.raises",
        "ex11.GroupedQueryAttention.2 check.raises",
        "ex11.GroupedQueryAttention.3 check.ex11.forward",
        "ex11.GroupedQueryAttention.4 check.ex11.forward",
        "ex11.GroupedQueryAttention.5 check.ex11.forward",
        "ex11.GroupedQueryAttention.6 check.ex11.forward",
        "ex11.GroupedQueryAttention.7 check.ex11.forward",
        "ex11.GroupedQueryAttention.8 check.ex11.decode",
        "ex11.GroupedQueryAttention.9 check.ex11.decode",
        "ex11.GroupedQueryAttention.10 check.ex11.decode",
        "ex11.GroupedQueryAttention.11 check.ex11.decode",
        "ex11.GroupedQueryAttention.12 check.train_mode",
        "ex11.GroupedQueryAttention.13 check.ex11.forward",
        "ex11.GroupedQueryAttention.14 check.ex11.decode",
    ),
}


def _listed(ex_id):
    """The exercise's checks as PINNED lists them: 'id', or 'id title-key' for a catalog title."""
    module = checks.for_exercise(ex_id)
    built = module.build(seed=0) if getattr(module, "CASES_DRAWN", False) else module.build()
    return [f"{c.id} {c.name[0]}" if isinstance(c.name, tuple) else c.id for c in built]


def test_every_exercise_is_pinned():
    assert sorted(PINNED) == sorted(ex.id for ex in EXERCISES)


@pytest.mark.parametrize("ex_id", sorted(PINNED))
def test_existing_checks_keep_their_ids_and_order(ex_id):
    listed = _listed(ex_id)
    pinned = list(PINNED[ex_id])
    assert listed[: len(pinned)] == pinned, (
        f"{ex_id}: a check was inserted, removed or reordered in build(); append new checks at the end "
        "(their ids and the inputs drawn for the checks after them would change)")
    assert len(listed) == len(pinned), (
        f"{ex_id}: checks beyond the pinned ones {listed[len(pinned):]}: if they were appended, add their lines "
        "to PINNED; if one was inserted among checks of the same title, move it to the end of build()")
