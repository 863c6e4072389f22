"""Attention Lab's Transformer, written from "Attention Is All You Need" (Vaswani et al., 2017)."""
from .config import TransformerConfig
from .model import AttentionMaps, ModelOutput, Transformer

__all__ = ["TransformerConfig", "Transformer", "ModelOutput", "AttentionMaps"]
