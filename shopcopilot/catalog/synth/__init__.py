"""The synthetic catalog: the embedded default, and the padding around real records.

write_catalog(path, size, seed, progress=False) -> int
iter_synthetic(size, seed, start=0) -> Iterator[dict]
"""

from .generator import ID_PREFIX, ProductGenerator, iter_synthetic, synthetic_id
from .writer import write_catalog, write_records

__all__ = [
    "ID_PREFIX",
    "ProductGenerator",
    "iter_synthetic",
    "synthetic_id",
    "write_catalog",
    "write_records",
]
