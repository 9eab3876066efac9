"""Device and precision rules shared by every model backend."""
from __future__ import annotations


def cuda_available() -> bool:
    """Whether torch sees a CUDA device (False when torch is missing)."""
    try:
        import torch  # noqa: PLC0415 - heavy, only when a model is loaded

        return bool(torch.cuda.is_available())
    except ImportError:  # pragma: no cover - torch comes with the models extra
        return False


def resolve_device(device: str | None) -> str:
    """``device`` when set, else ``cuda`` when available, else ``cpu``."""
    if device:
        return device
    return "cuda" if cuda_available() else "cpu"


def use_half(device: str, fp16: bool) -> bool:
    """Half precision only on GPU: on CPU it is slow and lossy (GUIDE pitfalls)."""
    return bool(fp16 and device.startswith("cuda"))


def train_precision(device: str, precision: str = "auto", *, bf16_supported: bool | None = None) -> str:
    """Mixed precision for training: ``fp32``, ``fp16`` or ``bf16``.

    ``auto`` is bf16 on a CUDA device that supports it, else fp16 on CUDA, else fp32. Half precision
    is never used off CUDA: asking for it on CPU (or MPS) gives fp32, because the HF trainer's AMP
    paths are CUDA-only and a CPU run in half precision is slow and lossy.

    Args:
        device: the resolved device (``cpu``, ``cuda``, ``cuda:1``...).
        precision: ``auto``, ``fp32``, ``fp16`` or ``bf16``.
        bf16_supported: whether the GPU supports bf16 (default: ask torch).
    """
    if precision not in ("auto", "fp32", "fp16", "bf16"):
        raise ValueError(f"precision {precision!r} is not one of auto, fp32, fp16, bf16")
    if not device.startswith("cuda") or precision == "fp32":
        return "fp32"
    if bf16_supported is None:
        import torch  # noqa: PLC0415

        bf16_supported = bool(torch.cuda.is_bf16_supported())
    if precision == "auto":
        return "bf16" if bf16_supported else "fp16"
    if precision == "bf16" and not bf16_supported:
        return "fp16"
    return precision
