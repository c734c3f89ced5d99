"""Everything vision needs only to make and measure its models: the table renderer, datasets,
training, fine-tuning, evaluation and the rendered recording. Runtime vision never imports it.
"""
