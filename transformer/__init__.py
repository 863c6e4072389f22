"""Attention Lab's Transformer, written from "Attention Is All You Need" (Vaswani et al., 2017)."""
from .checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from .config import TransformerConfig
from .model import AttentionMaps, HeadMask, ModelOutput, Transformer

__all__ = ["TransformerConfig", "Transformer", "ModelOutput", "AttentionMaps", "HeadMask", "load_checkpoint",
           "save_checkpoint", "CheckpointError"]
