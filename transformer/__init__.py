"""Attention Lab's Transformer, written from "Attention Is All You Need" (Vaswani et al., 2017)."""
import sys

from .checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from .config import TransformerConfig
from .interpretability import ablation, analysis, probe
from .model import AttentionMaps, HeadMask, ModelOutput, Transformer
from .positions import alibi, rotary

# The paths these modules had before the packages (README examples, checkpoint cards, notebooks) name the same
# module objects: `from transformer.probe import record_attention` keeps working.
for _name, _module in {"probe": probe, "analysis": analysis, "ablation": ablation, "alibi": alibi,
                       "rotary": rotary}.items():
    sys.modules[f"{__name__}.{_name}"] = _module

__all__ = ["TransformerConfig", "Transformer", "ModelOutput", "AttentionMaps", "HeadMask", "load_checkpoint",
           "save_checkpoint", "CheckpointError"]
