"""The gated feed-forward of Llama and SmolLM2: SwiGLU (Shazeer 2020, "GLU Variants Improve Transformer")."""
from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from .dropout import Dropout
from .points import Point


class SwiGLU(nn.Module):
    """FFN_SwiGLU(x) = (SiLU(x W_gate) * (x W_up)) W_down        (Shazeer 2020, section 2, with beta = 1)

    SiLU(z) = z sigmoid(z) (Swish_1). Instead of one hidden activation max(0, x W_1) (equation 2 of the paper), a
    SiLU "gate" multiplies, element by element, a second linear map of x; W_down brings the d_ff hidden units back to
    d_model. Three matrices instead of two, so Llama sizes d_ff about 2/3 of 4 d_model to keep the parameter count.
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, bias: bool = False):
        super().__init__()
        self.w_gate = nn.Linear(d_model, d_ff, bias=bias)
        self.w_up = nn.Linear(d_model, d_ff, bias=bias)
        self.w_down = nn.Linear(d_ff, d_model, bias=bias)
        self.dropout = Dropout(dropout)
        self.out = Point()  # the FFN's output (transformer/points.py)

    def forward(self, x: Tensor) -> Tensor:
        hidden = F.silu(self.w_gate(x)) * self.w_up(x)  # (B, T, d_ff)
        return self.out(self.w_down(self.dropout(hidden)))  # (B, T, d_model)
