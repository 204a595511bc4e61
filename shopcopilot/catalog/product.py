"""The typed Product: one catalog record, normalised from the Amazon Reviews 2023 layout."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any

_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True, slots=True)
class Product:
    parent_asin: str
    title: str
    features: tuple[str, ...] = ()
    description: tuple[str, ...] = ()
    price: float | None = None
    categories: tuple[str, ...] = ()
    details: dict[str, str] = field(default_factory=dict)
    average_rating: float | None = None
    rating_number: int | None = None
    store: str = ""
    # One URL per product image (the largest the record offers); most catalogs have none.
    images: tuple[str, ...] = ()

    def to_record(self) -> dict[str, Any]:
        """The official JSON layout (what a catalog line holds); `images` only when there are
        some, so a record without them is written as before."""
        record: dict[str, Any] = {
            "parent_asin": self.parent_asin,
            "title": self.title,
            "features": list(self.features),
            "description": list(self.description),
            "price": self.price,
            "categories": list(self.categories),
            "details": dict(self.details),
            "average_rating": self.average_rating,
            "rating_number": self.rating_number,
            "store": self.store,
        }
        if self.images:
            record["images"] = [{"large": url} for url in self.images]
        return record

    @property
    def leaf_category(self) -> str:
        return self.categories[-1] if self.categories else ""


class RecordError(ValueError):
    """A record that cannot become a Product; the message names the field."""


def product_from_record(record: Any) -> Product:
    """Normalise one decoded JSON value, tolerating the oddities of real files."""
    if not isinstance(record, dict):
        raise RecordError(f"expected a JSON object, got {type(record).__name__}")
    asin = _text(record.get("parent_asin"))
    if not asin:
        raise RecordError("missing or empty 'parent_asin'")
    title = _text(record.get("title"))
    if not title:
        raise RecordError(f"missing or empty 'title' (parent_asin {asin})")
    return Product(
        parent_asin=asin,
        title=title,
        features=_text_list(record.get("features")),
        description=tuple(t for t in map(_strip_html, _text_list(record.get("description"))) if t),
        price=_number(record.get("price")),
        categories=_text_list(record.get("categories")),
        details=_details(record.get("details")),
        average_rating=_number(record.get("average_rating")),
        rating_number=_int(record.get("rating_number")),
        store=_text(record.get("store")),
        images=_images(record.get("images")),
    )


def _text(value: Any) -> str:
    if type(value) is str:  # nearly every call: a product makes about 23
        return value.strip()
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return " ".join(_text(v) for v in value).strip()
    return str(value).strip()


def _text_list(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)):
        value = [value]
    # filter(None, ...) keeps the non-empty texts, in C.
    return tuple(filter(None, map(_text, value)))


def _strip_html(text: str) -> str:
    # Descriptions carry HTML fragments; keep the words, drop the markup. split() and join
    # collapse whitespace as re's \s+ did (the same characters), about 3x faster.
    return " ".join(html.unescape(_TAG.sub(" ", text)).split())


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if value == value else None  # NaN is unknown
    text = str(value).strip().replace(",", "").lstrip("$").strip()
    if not text:
        return None
    try:
        number = float(text)
    except ValueError:
        return None
    return number if number == number else None


def _int(value: Any) -> int | None:
    number = _number(value)
    # A count that no 64-bit integer holds ("1e400", 2**70) is a broken value, not a count.
    if number is None or not abs(number) < 2**63:
        return None
    return int(number)


# The Amazon Reviews 2023 layout: a list of {"thumb", "large", "hi_res", "variant"}; the largest
# that is a web address wins. A plain list of addresses is read too.
_IMAGE_KEYS = ("large", "hi_res", "thumb")


def _images(value: Any) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)):
        return ()
    urls: list[str] = []
    for image in value:
        candidates: list[Any] = [image]
        if isinstance(image, dict):
            candidates = [image.get(key) for key in _IMAGE_KEYS]
        url = next((c.strip() for c in candidates if _is_web_address(c)), None)
        if url and url not in urls:
            urls.append(url)
    return tuple(urls)


def _is_web_address(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower().startswith(("https://", "http://"))


def _details(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    out: dict[str, str] = {}
    for key, val in value.items():
        key_text, val_text = _text(key), _text(val)
        if key_text:
            out[key_text] = val_text
    return out
