"""An entry of the wheel's test databases (OpInfo, ModuleInfo, OptimizerInfo, an MPS list key) as
the declared table sees it: `EntryRef`, the public function it tests (or why there is none) and the
row shape every declaration takes; and dtype names as the table spells them.

Shared by the databases' harvest (databases.py) and the MPS lists (mps.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

# Where an OpInfo name may be public, tried in this order; the first in the api table wins. The
# in-place method comes after the method (OpInfo "uniform" tests Tensor.uniform_), and the aten op
# namespace last (OpInfo "slice" tests torch.ops.aten.slice), since the api table lists both.
OPINFO_CANDIDATES = (
    "torch.{}",
    "torch.nn.functional.{}",
    "torch.linalg.{}",
    "torch.special.{}",
    "torch.fft.{}",
    "torch.Tensor.{}",
    "torch.Tensor.{}_",
    "torch.ops.aten.{}",
)


@dataclass(frozen=True)
class EntryRef:
    """One database entry, with the public function it tests (or why there is none)."""

    origin: str
    entry: str
    variant: str | None
    function: str | None
    unmapped_reason: str | None

    def row(self, **values: Any) -> dict[str, Any]:
        """A table row of this entry; `values` fill the declaration's own columns."""
        return {
            "function": self.function,
            "unmapped_reason": self.unmapped_reason,
            "origin": self.origin,
            "entry": self.entry,
            "variant": self.variant,
            "device_type": None,
            "dtype": None,
            "aspect": None,
            "test_class": None,
            "test_name": None,
            "active": True,
            "reason": None,
            **values,
        }


# --------------------------------------------------------------------------- names


def dtype_name(dtype: object) -> str:
    """torch.float32 -> float32 (aliases print their canonical name: torch.half -> float16)."""
    import torch

    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"not a torch.dtype: {dtype!r}")
    return str(dtype).removeprefix("torch.")


def public_function(
    candidates: Iterable[str], public: frozenset[str], private: bool
) -> tuple[str | None, str | None]:
    """The first candidate that is a public name of the api table, else (None, why not)."""
    for name in candidates:
        if name in public:
            return name, None
    return None, "private_name" if private else "not_in_api"


def _is_private(name: str) -> bool:
    return any(part.startswith("_") for part in name.split("."))


def opinfo_function(names: Sequence[str], public: frozenset[str]) -> tuple[str | None, str | None]:
    """An OpInfo name (then its aten_name) as torch.<name>, torch.nn.functional.<name>, ...,
    torch.Tensor.<name>[_], torch.ops.aten.<name>: the first that the api table has."""
    unique = [name.removeprefix("torch.") for name in dict.fromkeys(names) if name]
    candidates = [pattern.format(name) for name in unique for pattern in OPINFO_CANDIDATES]
    return public_function(candidates, public, _is_private(unique[0]))


def class_function(
    cls: type, candidates: Sequence[str], public: frozenset[str]
) -> tuple[str | None, str | None]:
    """A module or optimizer class by its public spellings, then where it is defined."""
    defined = f"{cls.__module__}.{cls.__qualname__}"
    return public_function([*candidates, defined], public, cls.__name__.startswith("_"))
