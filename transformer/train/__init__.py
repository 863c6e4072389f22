"""Training: the Trainer (yields small event records), the paper's schedule and optimiser (trainer.py).

    python -m transformer.train --task reverse --out checkpoints/reverse

runs the command line (transformer/cli.py, through __main__.py): the CLI and the app's Train tab are two consumers
of the same `Trainer.run()` event stream.
"""
from .trainer import (SCHEDULES, EvalEvent, StepEvent, TrainConfig, Trainer, TrainingError, bf16_pays,
                      learning_rate, loss_share)
