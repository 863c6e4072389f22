"""Where a token is: the paper's sinusoidal table and learned vectors (absolute, added to the embeddings), RoPE and
ALiBi (relative, inside attention), and `position_scheme`, the one factory that picks a model's."""
from .alibi import ALiBi, alibi_slopes
from .rotary import RotaryEmbedding
from .scheme import PositionScheme, RelativePosition, position_scheme
from .sinusoidal import BASE, LearnedPositionalEncoding, SinusoidalPositionalEncoding, sinusoidal_table
