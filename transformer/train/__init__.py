"""Training: the Trainer (yields small event records), the paper's schedule and optimiser (trainer.py); the run a
config and a task or text become (run.py); variants trained side by side (compare.py); torchrun's processes
(distributed.py); the induction phase change trained live (induction.py); the command line (cli.py):

    python -m transformer.train --task reverse --out checkpoints/reverse

The CLI and the app's Train tab are two consumers of the same `Trainer.run()` event stream. The Trainer imports
nothing of transformer.interpretability: what it reports of attention comes from a callback (`attention=`).
"""
from .trainer import (SCHEDULES, EvalEvent, StepEvent, TrainConfig, Trainer, TrainingError, bf16_pays,
                      learning_rate, loss_share)
