"""The English-to-Chinese translators behind the Demos pages and the grader's demo stage.

vocab and data (Tatoeba pairs, tokenisers, splits, batches), the models
(model_base, rnn, transformer; registered as families in models), decoding (greedy and
beam search), checkpoint (save/load), training (the run: its steps go through course.model.train_loop) and train (its command,
`python -m course.translation.train`), evaluate (BLEU,
`python -m course.translation.evaluate`), demos (what the demo pages compute) and trained_views
(training curves and the learned alignment the chapters show); bleu_steps, beam_steps, subword_steps
and decoding_views take BLEU, beam search and the BPE tokenizer apart for the Pieces, beams and BLEU page.
A new model family is a new module next to rnn.py and one register(Family(...)) in models.py.
May import course.common, course.model (the training loop), solutions/ and, by name, a package of exercise files
(exercises/ or a learner's staged copy); never course.app, course.lessons or app_pages/.
"""
