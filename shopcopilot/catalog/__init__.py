"""Catalog stage: reading, validating and describing products."""

from .loader import CatalogError, LoadReport, load_catalog
from .product import Product, product_from_record

__all__ = ["CatalogError", "LoadReport", "Product", "load_catalog", "product_from_record"]
