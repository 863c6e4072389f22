"""Reading a safetensors file that may be hostile: the header is checked before any tensor is read.

The format (https://github.com/huggingface/safetensors): 8 bytes, the little-endian length N of a JSON header;
N bytes of header, mapping each tensor's name to its dtype, shape and data_offsets (a [begin, end) byte range of
the data that follows); then the data. `read_header` refuses anything that does not describe weights: a header
longer than `max_header_bytes`, too deep, a dtype that is not floating point, byte ranges that do not fit their
shapes or do not tile the data exactly, a file longer or shorter than declared. Only then does `read_tensors`
read the file, once, into one buffer the tensors are views of.
"""
from __future__ import annotations

import json
import math
from typing import BinaryIO

import torch

DTYPES = {"F16": torch.float16, "BF16": torch.bfloat16, "F32": torch.float32, "F64": torch.float64}
MAX_DIMS = 8


def read_header(f: BinaryIO, size: int, max_header_bytes: int) -> tuple[dict, int]:
    """(header without __metadata__, offset where the data starts) of the `size`-byte file `f`, read from its
    start; raises ValueError saying what is wrong."""
    length = int.from_bytes(f.read(8).ljust(8, b"\xff"), "little")
    if length > min(max_header_bytes, size - 8):
        raise ValueError(f"its header would be {length:,} bytes (the file has {size:,}; the limit is "
                         f"{max_header_bytes:,})")
    try:
        header = json.loads(f.read(length))
    except RecursionError:
        raise ValueError("its header is nested too deeply") from None
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError
        raise ValueError(f"its header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise ValueError("its header is not a JSON object")
    header.pop("__metadata__", None)
    end = 0
    for name, entry in sorted(header.items(), key=lambda item: _offsets(item[1])):
        _check_entry(name, entry)
        begin, stop = _offsets(entry)
        if begin != end or stop - begin != math.prod(entry["shape"]) * DTYPES[entry["dtype"]].itemsize:
            raise ValueError(f"the bytes of tensor {name!r:.80} do not follow the previous tensor's or do not fit "
                             f"its shape")
        end = stop
    if 8 + length + end != size:
        raise ValueError(f"its header declares {end:,} bytes of tensor data but the file holds {size - 8 - length:,}")
    return header, 8 + length


def _check_entry(name: str, entry) -> None:
    """A header entry has a shape, a byte range and a floating-point dtype."""
    shape = entry.get("shape") if isinstance(entry, dict) else None
    if not (isinstance(shape, list) and len(shape) <= MAX_DIMS and all(type(n) is int and n >= 0 for n in shape)) \
            or _offsets(entry)[0] < 0:
        raise ValueError(f"tensor {name!r:.80} has no valid shape and data_offsets")
    if entry.get("dtype") not in DTYPES:
        raise ValueError(f"tensor {name!r:.80} has dtype {entry.get('dtype')!r:.20}; weights must be floating point "
                         f"({', '.join(DTYPES)})")


def _offsets(entry) -> tuple[int, int]:
    """A header entry's [begin, end) byte range, or (-1, -1) when it has no valid one."""
    offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
    if isinstance(offsets, list) and len(offsets) == 2 and all(type(o) is int for o in offsets) \
            and 0 <= offsets[0] <= offsets[1]:
        return offsets[0], offsets[1]
    return -1, -1


def read_tensors(f: BinaryIO, size: int, header: dict, start: int) -> dict[str, torch.Tensor]:
    """The tensors of a file whose header `read_header` accepted: the whole file read once, each tensor a view of
    that buffer (little-endian, as safetensors specifies and torch's hosts are)."""
    f.seek(0)
    buffer = bytearray(size)
    if f.readinto(buffer) != size:
        raise ValueError("it changed while it was being read")
    tensors = {}
    for name, entry in header.items():
        dtype, shape = DTYPES[entry["dtype"]], entry["shape"]
        count = math.prod(shape)
        tensors[name] = (torch.frombuffer(buffer, dtype=dtype, count=count, offset=start + entry["data_offsets"][0])
                         .reshape(shape) if count else torch.empty(shape, dtype=dtype))
    return tensors
