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
