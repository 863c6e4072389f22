"""Colour as a colour-blind viewer sees it, for the colour tests (an oracle written from the papers, not from the app).

Simulation: Machado, Oliveira and Fernandes, "A Physiologically-based Model for Simulation of Color Vision
Deficiency", IEEE TVCG 15(6), 2009, Table 1 at severity 1.0 (protanopia, deuteranopia, tritanopia): a 3 x 3 matrix
applied to linear RGB. Lightness and colour difference: CIE 1976 L*a*b* (D65 white) from sRGB (IEC 61966-2-1), and
ΔE*ab (CIE76, the Euclidean distance in L*a*b*). Contrast: WCAG 2.2's relative luminance and contrast ratio.
"""
from __future__ import annotations

import re

import numpy as np

MACHADO_2009 = {  # severity 1.0
    "protan": np.array([[0.152286, 1.052583, -0.204868],
                        [0.114503, 0.786281, 0.099216],
                        [-0.003882, -0.048116, 1.051998]]),
    "deutan": np.array([[0.367322, 0.860646, -0.227968],
                        [0.280085, 0.672501, 0.047413],
                        [-0.011820, 0.042940, 0.968881]]),
    "tritan": np.array([[1.255528, -0.076749, -0.178779],
                        [-0.078411, 0.930809, 0.147602],
                        [0.004733, 0.691367, 0.303900]]),
}
DEFICIENCIES = tuple(MACHADO_2009)
_SRGB_TO_XYZ = np.array([[0.4124564, 0.3575761, 0.1804375],
                         [0.2126729, 0.7151522, 0.0721750],
                         [0.0193339, 0.1191920, 0.9503041]])
_WHITE = np.array([0.95047, 1.0, 1.08883])  # D65


def rgb(colour: str) -> np.ndarray:
    """'rgb(1,2,3)', 'rgba(1,2,3,1)' or '#rrggbb' as three 0..255 floats."""
    colour = colour.strip()
    if colour.startswith("#"):
        return np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=float)
    return np.array([float(v) for v in re.findall(r"[\d.]+", colour)[:3]])


def linear(srgb255) -> np.ndarray:
    """sRGB 0..255 to linear light 0..1 (IEC 61966-2-1)."""
    c = np.asarray(srgb255, dtype=float) / 255
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def encoded(lin) -> np.ndarray:
    """Linear light 0..1 back to sRGB 0..255 (clipped to the gamut)."""
    c = np.clip(lin, 0, 1)
    return 255 * np.where(c <= 0.0031308, 12.92 * c, 1.055 * c ** (1 / 2.4) - 0.055)


def simulate(srgb255, deficiency: str) -> np.ndarray:
    """What a viewer with `deficiency` (protan, deutan, tritan; severity 1.0) sees of an sRGB colour."""
    return encoded(MACHADO_2009[deficiency] @ linear(srgb255))


def lab(srgb255) -> np.ndarray:
    """CIE L*a*b* (D65) of an sRGB colour."""
    xyz = _SRGB_TO_XYZ @ linear(srgb255) / _WHITE
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def delta_e(a, b) -> float:
    """ΔE*ab (CIE76) between two sRGB colours."""
    return float(np.linalg.norm(lab(a) - lab(b)))


def luminance(srgb255) -> float:
    """WCAG relative luminance."""
    return float(np.dot([0.2126, 0.7152, 0.0722], linear(srgb255)))


def contrast(a, b) -> float:
    """WCAG contrast ratio of two sRGB colours (1 to 21)."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)
