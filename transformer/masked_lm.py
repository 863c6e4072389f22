"""BERT's masked-LM head (Devlin et al. 2019): what turns an encoder's output back into token scores."""
from __future__ import annotations

from torch import Tensor, nn

from .config import TransformerConfig
from .layers import ACTIVATION_FUNCTIONS
from .norms import make_norm


class MaskedLMHead(nn.Module):
    """h' = LayerNorm(GELU(h W_T + b_T)), then logits = h' E^T + b        (BERT's `cls.predictions`)

    A dense layer with the model's activation and a norm transform each encoder output h (B, S, d_model); the
    model's output layer (`lm_head`, tied to the token embedding E, with a bias b over the vocabulary) scores every
    token for every position. Trained to recover the 15% of input tokens that were masked.
    """

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.dense = nn.Linear(cfg.d_model, cfg.d_model)  # W_T, b_T
        self.activation = ACTIVATION_FUNCTIONS[cfg.activation]
        self.norm = make_norm(cfg)

    def forward(self, h: Tensor) -> Tensor:
        return self.norm(self.activation(self.dense(h)))  # (B, S, d_model)
