"""TransformerConfig: every size and switch of a model in one validated dataclass."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

ARCHS = ("encoder-decoder", "decoder-only", "encoder-only")  # encoder-only: BERT, a masked-LM head on the encoder
POS_ENCODINGS = ("sinusoidal", "learned", "rope", "alibi")  # rope, alibi: relative, applied inside attention
ATTENTIONS = ("mha", "mla")  # mha: n_kv_heads key/value heads (MHA, GQA, MQA); mla: multi-head latent attention
ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "silu")  # gelu_tanh: GPT-2's GELU; silu: x sigmoid(x), Marian's swish
SINUSOIDAL_LAYOUTS = ("interleaved", "halves")  # the paper's sin, cos, sin, ...; Marian's sines | cosines
NORMS = ("layer", "rms")  # LayerNorm (the paper), RMSNorm (Llama): transformer/norms.py
FFNS = ("standard", "swiglu")  # equation 2; SwiGLU's gated feed-forward (Llama): transformer/gated_feedforward.py
ROPE_LAYOUTS = ("interleaved", "halves")  # RoFormer's pairs (x_2i, x_2i+1); transformers' (x_i, x_i+d/2)


@dataclass
class TransformerConfig:
    """The hyper-parameters of one model. Defaults are the paper's base model (Table 3, "base").

    `n_encoder_layers=None` means 6 for "encoder-decoder" and "encoder-only" and 0 for "decoder-only"; an
    "encoder-only" model (BERT) has no decoder: n_decoder_layers=0.
    Every bad value raises ValueError naming the field, so a UI can show it as it is.

    pad_id, bos_id and eos_id may coincide: GPT-2 has one special token, <|endoftext|> (50256), that starts and
    ends a text and that Hugging Face also pads with. A pad_id equal to bos_id or eos_id means "no padding
    token" (`has_padding` is False): no key is masked as padding, and generation emits that token only as EOS.
    """

    arch: str = "encoder-decoder"
    vocab_size: int = 1000
    d_model: int = 512
    n_heads: int = 8
    n_kv_heads: int | None = None  # None = n_heads (MHA); 1 = MQA; a divisor of n_heads = GQA
    attention: str = "mha"  # "mla": keys and values rebuilt from a cached latent (transformer/latent_attention.py)
    kv_latent_dim: int | None = None  # MLA's latent size d_c; None = 4 * d_k (DeepSeek-V2's ratio)
    n_encoder_layers: int | None = None
    n_decoder_layers: int = 6
    d_ff: int = 2048
    ffn: str = "standard"  # "swiglu": SiLU(x W_gate) * (x W_up) W_down, Llama's gated feed-forward
    ffn_bias: bool = True  # biases b_1, b_2 of the feed-forward (the paper and GPT-2 have them; Llama has none)
    attention_only: bool = False  # True: layers without the feed-forward sub-layer (Olsson et al. 2022)
    attention_bias: bool = False  # biases on W^Q, W^K, W^V, W^O: the paper has none; GPT-2 has them
    dropout: float = 0.1
    max_len: int = 512
    pos_encoding: str = "sinusoidal"
    sinusoidal_layout: str = "interleaved"  # "halves": Marian's order of the same waves (positions/sinusoidal.py)
    rope_theta: float = 10000.0  # RoPE's base: theta_i = rope_theta^(-2i/d_k) (RoFormer's 10000; SmolLM2 100000)
    rope_layout: str = "interleaved"  # which dimensions RoPE pairs: RoFormer's (2i, 2i+1) or "halves" (i, i+d_k/2)
    type_vocab_size: int = 0  # BERT's token-type (segment) embeddings; 0 = none
    embedding_norm: bool = False  # a LayerNorm on the embedding sum before dropout (BERT)
    norm_first: bool = False  # False = post-norm, as in the paper
    norm: str = "layer"  # "rms": RMSNorm (Llama) instead of LayerNorm, in every sub-layer and the final norm
    activation: str = "relu"
    layer_norm_eps: float = 1e-5  # epsilon of every LayerNorm (torch's default; GPT-2 states its own)
    scale_embeddings: bool = True  # x sqrt(d_model) on the token embedding (section 3.4); GPT-2 does not scale
    init: str = "xavier"  # "xavier": uniform on every matrix; "gpt2": N(0, 0.02), residual projections / sqrt(N)
    tie_embeddings: bool = True
    final_logits_bias: bool = False  # logits = x W^T + b: a bias per vocabulary entry (Marian's); none in the paper
    pad_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    decoder_start_id: int | None = None  # the token the decoder input starts with; None = bos_id (Marian: its pad)

    def __post_init__(self):
        if self.arch not in ARCHS:
            raise ValueError(f"arch: must be one of {ARCHS}, got {self.arch!r}")
        if self.n_encoder_layers is None:
            self.n_encoder_layers = 0 if self.arch == "decoder-only" else 6
        if self.n_kv_heads is None:
            self.n_kv_heads = self.n_heads
        if self.attention not in ATTENTIONS:
            raise ValueError(f"attention: must be one of {ATTENTIONS}, got {self.attention!r}")
        if self.attention == "mla" and self.kv_latent_dim is None and isinstance(self.d_model, int) \
                and isinstance(self.n_heads, int) and self.n_heads > 0:
            self.kv_latent_dim = 4 * (self.d_model // self.n_heads)
        for name in ("vocab_size", "d_model", "n_heads", "n_kv_heads", "d_ff", "max_len") \
                + (() if self.arch == "encoder-only" else ("n_decoder_layers",)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name}: must be a positive integer, got {value!r}")
        if not isinstance(self.n_encoder_layers, int) or isinstance(self.n_encoder_layers, bool) \
                or self.n_encoder_layers < 0:
            raise ValueError(f"n_encoder_layers: must be a non-negative integer, got {self.n_encoder_layers!r}")
        if self.arch != "decoder-only" and self.n_encoder_layers == 0:
            raise ValueError(f"n_encoder_layers: an {self.arch} model needs at least one encoder layer")
        if self.arch == "encoder-only" and self.n_decoder_layers != 0:
            raise ValueError(f"n_decoder_layers: must be 0 for an encoder-only model, got {self.n_decoder_layers!r}")
        if self.arch == "decoder-only" and self.n_encoder_layers != 0:
            raise ValueError(f"n_encoder_layers: must be 0 for a decoder-only model, got {self.n_encoder_layers}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model: {self.d_model} is not divisible by n_heads={self.n_heads}")
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_kv_heads: {self.n_kv_heads} does not divide n_heads={self.n_heads}")
        if self.attention == "mla":
            if self.n_kv_heads != self.n_heads:
                raise ValueError(f"n_kv_heads: MLA rebuilds a key and a value for every head from its latent; "
                                 f"leave n_kv_heads at n_heads={self.n_heads}, got {self.n_kv_heads}")
            if not isinstance(self.kv_latent_dim, int) or isinstance(self.kv_latent_dim, bool) \
                    or self.kv_latent_dim < 1:
                raise ValueError(f"kv_latent_dim: must be a positive integer, got {self.kv_latent_dim!r}")
        elif self.kv_latent_dim is not None:
            raise ValueError("kv_latent_dim: only MLA has a latent; set attention='mla' or leave it unset")
        if not isinstance(self.dropout, (int, float)) or isinstance(self.dropout, bool) or not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout: must be in [0, 1), got {self.dropout!r}")
        if self.pos_encoding not in POS_ENCODINGS:
            raise ValueError(f"pos_encoding: must be one of {POS_ENCODINGS}, got {self.pos_encoding!r}")
        if self.pos_encoding == "rope" and self.d_k % (4 if self.attention == "mla" else 2):
            raise ValueError(f"pos_encoding: RoPE rotates pairs of dimensions, so d_k = d_model / n_heads must be "
                             f"even{' and d_k / 2 too (MLA rotates a d_k / 2 part)' if self.attention == 'mla' else ''}"
                             f", got d_k={self.d_k}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation: must be one of {ACTIVATIONS}, got {self.activation!r}")
        for name, choices in (("norm", NORMS), ("ffn", FFNS), ("rope_layout", ROPE_LAYOUTS),
                              ("sinusoidal_layout", SINUSOIDAL_LAYOUTS)):
            if getattr(self, name) not in choices:
                raise ValueError(f"{name}: must be one of {choices}, got {getattr(self, name)!r}")
        if not isinstance(self.rope_theta, (int, float)) or isinstance(self.rope_theta, bool) \
                or not math.isfinite(self.rope_theta) or self.rope_theta <= 1:
            raise ValueError(f"rope_theta: must be a finite number > 1, got {self.rope_theta!r}")
        if not isinstance(self.type_vocab_size, int) or isinstance(self.type_vocab_size, bool) \
                or self.type_vocab_size < 0:
            raise ValueError(f"type_vocab_size: must be a non-negative integer, got {self.type_vocab_size!r}")
        for name in ("attention_only", "attention_bias", "ffn_bias", "embedding_norm", "final_logits_bias"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name}: must be true or false, got {getattr(self, name)!r}")
        if not isinstance(self.layer_norm_eps, (int, float)) or isinstance(self.layer_norm_eps, bool) \
                or not math.isfinite(self.layer_norm_eps) or self.layer_norm_eps <= 0:
            raise ValueError(f"layer_norm_eps: must be a finite number > 0, got {self.layer_norm_eps!r}")
        if not isinstance(self.scale_embeddings, bool):
            raise ValueError(f"scale_embeddings: must be true or false, got {self.scale_embeddings!r}")
        if self.init not in ("xavier", "gpt2"):
            raise ValueError(f"init: must be one of ('xavier', 'gpt2'), got {self.init!r}")
        for name in ("pad_id", "bos_id", "eos_id", "decoder_start_id"):
            value = getattr(self, name)
            if name == "decoder_start_id" and value is None:
                continue
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < self.vocab_size:
                raise ValueError(f"{name}: must be a token id in [0, vocab_size={self.vocab_size}), got {value!r}")

    @property
    def d_k(self) -> int:
        """Size of one head's queries, keys and values: d_k = d_v = d_model / h (section 3.2.2)."""
        return self.d_model // self.n_heads

    @property
    def d_rope(self) -> int:
        """Size d_R of MLA's decoupled rotary query/key part: d_k / 2 as in DeepSeek-V2; 0 without RoPE or MLA."""
        return self.d_k // 2 if self.attention == "mla" and self.pos_encoding == "rope" else 0

    @property
    def decoder_start(self) -> int:
        """The first token of every decoder input: <s> (bos_id) in the paper's scheme; Marian starts with its pad."""
        return self.bos_id if self.decoder_start_id is None else self.decoder_start_id

    @property
    def has_padding(self) -> bool:
        """True when pad_id is a token of its own; False when it is also BOS or EOS (GPT-2: no padding token)."""
        return self.pad_id not in (self.bos_id, self.eos_id)

    @property
    def is_encoder_decoder(self) -> bool:
        return self.arch == "encoder-decoder"

    @property
    def is_encoder_only(self) -> bool:
        """BERT-style: the encoder alone, bidirectional, with a masked-LM head (no decoder, no generation)."""
        return self.arch == "encoder-only"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "TransformerConfig":
        """A stored config. One written before `attention_bias` existed describes a model with biases on its
        attention projections (every model had them then), so a missing key means True."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown config keys: {', '.join(unknown)}")
        return cls(**{"attention_bias": True, **data})
