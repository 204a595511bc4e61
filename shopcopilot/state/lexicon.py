"""What words mean in this catalog: the shared attribute vocabulary plus the
catalog's own category names and brands.

Categories are matched against the catalog's category vocabulary (token level,
plural-folded), weighted by how rare each word is among products, so
"necklaces" counts for more than "women".
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from functools import cache

from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA
from wordfreq import zipf_frequency

from ..catalog import vocabulary
from ..catalog.vocabulary import Mention, find_mentions, find_mentions_in_each
from ..index import text as text_module
from ..index.categoriser import Categoriser, Reading
from ..index.text import ROOT_CATEGORY, STOPWORDS, path_stems, stem, tokens
from ..terms import Facet
from ..versions import source_hash
from .audience_cues import cues as audience_cues
from .budget import NUMBER_WORDS
from .critique import cue_words
from .cues import CONVERSATION
from .spelling import SpellFixer

# How close (rapidfuzz ratio) a said word must be to a word of a store name for that name
# to be scored at all: "suacony" ~ "saucony" is 86, "arch" ~ "archy" 89.
BRAND_WORD_CUTOFF = 75
NEAR_CACHE_SIZE = 20_000
READINGS_CACHE_SIZE = 4_096
MIN_COMPOUND_PART = 3  # "wrist" + "watches"; shorter parts make false compounds


# "Birthstone Jewelry Gifts" files rings, not gifts: a gift is whatever the shopper names.
_NOT_ITEMS = frozenset(stem(word) for word in CONVERSATION.words["not_items"])
_SUBJECTS = frozenset({"i", "we", "you", "they", "he", "she"})
_ANY_WORD = re.compile(r"[A-Za-z]+")
EVERYDAY = 5.3  # zipf frequency of words as common as "start", "first" or "next"
# The one-word brand cues ("by", "from", "brand"): after one, a common word may be the store.
_NAMES_A_STORE = frozenset(c for c in CONVERSATION.phrases["brand_cues"] if " " not in c)


def _everyday_word(text: str, word: re.Match[str], before: list[str]) -> bool:
    """A store name that is a very common word, typed in lower case with no "by" or "from"
    before it, is the word."""
    said = text[word.start() : word.end()]
    return (
        said.islower()
        and not (before and before[0] in _NAMES_A_STORE)
        and zipf_frequency(said.strip(".'"), "en") >= EVERYDAY
    )


_BRAND_WORD = re.compile(r"[a-z0-9][a-z0-9&'.-]*")
# Where a clause ends: a comma or full stop (or ; ! ?) before a space; "9.5" and "$40.99" stay
# whole.
_CLAUSE_BREAK = re.compile(r"[,.;!?]\s+")


class Lexicon:
    def __init__(
        self,
        category_paths: Mapping[tuple[str, ...], int],
        brands: Iterable[str] = (),
        catalog_words: Iterable[str] = (),
        categoriser: Categoriser | None = None,
    ) -> None:
        self.categoriser = categoriser  # learnt from this catalog's titles; None: words only
        self.category_idf = _category_idf(category_paths)
        self._nodes = _node_index(category_paths)
        self._ancestors = _ancestor_index(category_paths)
        self._heads = _head_nouns(category_paths)
        self.money_like_categories = tuple(
            sorted(
                {part for path in category_paths for part in path if "$" in part},
                key=len,
                reverse=True,
            )
        )
        self._brands = _brand_table(brands)
        self._brand_keys = sorted(self._brands)
        self._brands_with_word: dict[str, list[str]] = {}
        for key in self._brand_keys:
            for word in set(key.split()):
                self._brands_with_word.setdefault(word, []).append(key)
        self._brand_words = sorted(self._brands_with_word)
        self._near_cache: dict[str, tuple[str, ...]] = {}
        self._readings: dict[str, Reading] = {}
        self._longest_brand = max((len(k.split()) for k in self._brands), default=0)
        self._brand_first_words = frozenset(k.split(" ")[0] for k in self._brands)
        catalog_words = list(catalog_words)
        self._knows_catalog_words = bool(catalog_words)
        self._spelling = SpellFixer(
            _known_words(self.category_idf, category_paths, self._brands),
            catalog_words,
            _value_words(),
        )

    def uses_word(self, word: str) -> bool:
        """Does the catalog use the word (a category, brand or frequent product word)? Any
        word, when the catalog's own words are not known."""
        return not self._knows_catalog_words or self._spelling.knows(word)

    def fix_spelling(self, text: str, phrases: bool = False) -> str:
        """The text with its slips fixed; `phrases`: also a word a slip from the one its value's
        phrase has ("high wasted")."""
        fixed = self._spelling.fix(text)
        return _in_its_phrase(fixed) if phrases else fixed

    def in_catalog(self, word: str) -> bool:
        """Does the catalog's text use the word?"""
        return self._spelling.knows(word)

    # -- attribute values -------------------------------------------------
    def mentions(self, text: str, brands: bool = True) -> list[Mention]:
        """Values named in the message, each within one clause: in "no suede. leather!" the
        catalog phrase "suede leather" is not said. Store names too, unless `brands` is False."""
        starts = [0, *(m.end() for m in _CLAUSE_BREAK.finditer(text))]
        clauses = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
        found = [
            Mention(m.facet, m.value, m.start + start, m.end + start, m.text)
            for start, in_clause in zip(starts, find_mentions_in_each(clauses), strict=True)
            for m in in_clause
        ]
        if brands:
            found += self._brand_mentions(text)
        return found

    def _brand_mentions(self, text: str) -> list[Mention]:
        """Store names said in full, longest first at each word ("funny saying novelty gift
        ideas")."""
        matches = list(_BRAND_WORD.finditer(text.lower()))
        words = [m.group() for m in matches]
        starts = [i for i, word in enumerate(words) if _first_words(word) & self._brand_first_words]
        if not starts:
            return []  # most words start no store name
        hits, free = [], 0
        for index in starts:
            if index < free:
                continue  # inside a store name found already
            for width in range(min(self._longest_brand, len(words) - index), 0, -1):
                said = " ".join(words[index : index + width])
                # "just not Reebok.": the sentence's full stop is no part of the name
                name = said if said in self._brands else said.rstrip(".")
                if width == 1 and index and words[index - 1] in _SUBJECTS:
                    break  # "I guess", "we coach": a verb, not the store
                if width == 1 and _everyday_word(text, matches[index], words[index - 1 : index]):
                    break  # "where do I even start?": the word, not the store "Start"
                if name in self._brands:
                    start = matches[index].start()
                    end = matches[index + width - 1].end() - (len(said) - len(name))
                    hits.append(
                        Mention(Facet.BRAND, self._brands[name], start, end, text[start:end])
                    )
                    free = index + width
                    break
        return hits

    def guess_brand(self, text: str) -> Mention | None:
        """A brand named loosely or misspelled ("sauconey", "celersport"), for a reply about
        brands."""
        words = [t for t in tokens(text) if t not in STOPWORDS and t not in KNOWN_EXTRA_SET]
        if not words or not self._brand_keys:
            return None
        query = " ".join(words)
        best = process.extractOne(
            query, self._brands_near(words), scorer=fuzz.WRatio, score_cutoff=88
        )
        if best is None:
            return None
        return Mention(Facet.BRAND, self._brands[best[0]], 0, len(text), text)

    def _brands_near(self, words: list[str]) -> list[str]:
        """Store names with a word close to one of `words`: scoring every name costs ~20 ms at
        17k stores, a word-level prefilter ~1 ms."""
        near: set[str] = set()
        for word in words:
            for found in self._brand_words_near(word):
                near.update(self._brands_with_word[found])
        return sorted(near)

    def _brand_words_near(self, word: str) -> tuple[str, ...]:
        """Brand words close to `word`, remembered: shoppers' filler words ("usually", "skip")
        come back in every brand answer, and each costs a scan of every brand word."""
        near = self._near_cache.get(word)
        if near is None:
            if len(self._near_cache) >= NEAR_CACHE_SIZE:
                self._near_cache.clear()
            near = self._near_cache[word] = tuple(
                found
                for found, _, _ in process.extract(
                    word,
                    self._brand_words,
                    scorer=fuzz.ratio,
                    score_cutoff=BRAND_WORD_CUTOFF,
                    limit=None,
                )
            )
        return near

    # -- categories -------------------------------------------------------
    def read_item(self, text: str) -> Reading | None:
        """What the catalog's categoriser reads in `text` (the node it names, the likeliest
        path), or None without one. Remembered: a session says its item more than once."""
        if self.categoriser is None or not text.strip():
            return None
        reading = self._readings.get(text)
        if reading is None:
            if len(self._readings) >= READINGS_CACHE_SIZE:
                self._readings.clear()
            reading = self._readings[text] = self.categoriser.read(self._in_catalog_words(text))
        return reading

    def reading_of(self, node: str, text: str, p: float) -> Reading | None:
        """A reading of `node` (another reader's, `p` its confidence), on the likeliest of the
        catalog's paths through it; as sure as the surer of that reader and the catalog's own
        mass on the node. None when the catalog has no such node."""
        categoriser = self.categoriser
        if categoriser is None or not categoriser.has_node(node):
            return None
        probabilities = categoriser.distribution(self._in_catalog_words(text))
        through = categoriser.paths_through(node)
        best = max(through, key=lambda i: probabilities[i])
        mass = float(probabilities[through].sum())
        return Reading(node, max(p, mass), categoriser.paths[best], float(probabilities[best]))

    def _in_catalog_words(self, text: str) -> str:
        """The shopper's words for items put in the catalog's ("trainers" -> "sneaker"), which
        its titles may rarely use."""
        return _ANY_WORD.sub(lambda m: " ".join(self._catalog_word(m.group())), text)

    def _catalog_word(self, word: str) -> tuple[str, ...]:
        key = stem(word.lower())
        if key not in SHOPPER_WORDS or {key, f"{key}s"} & self.category_idf.keys():
            return (word,)  # the catalog's own word ("bikini": Bikinis)
        return (
            SHOPPER_WORDS[key]
            if all(w in self.category_idf for w in SHOPPER_WORDS[key])
            else (word,)
        )

    def category_tokens(self, text: str) -> dict[str, float]:
        """Category-vocabulary words in `text` (plural-folded) with their weights."""
        out: dict[str, float] = {}
        for token in tokens(text):
            if token in STOPWORDS:
                continue
            keys = self._category_stems(token)
            for key in keys:
                # Of a compound the head names the kind: "sundress" is a dress, its "sun" no
                # more than the dress (it had read as sun hats).
                out[key] = min(self.category_idf[key], self.category_idf[keys[-1]])
        return out

    def _category_stems(self, token: str) -> tuple[str, ...]:
        """The token's category word, the catalog's words for a shopper's word ("trousers":
        pant), or the two a compound joins ("wristwatches": wrist, watch; "sweatpants"); ()
        when it is none of these."""
        key = stem(token)
        if key in self.category_idf:
            return (key,)
        if key in SHOPPER_WORDS and all(word in self.category_idf for word in SHOPPER_WORDS[key]):
            return SHOPPER_WORDS[key]
        if len(token) >= 2 * MIN_COMPOUND_PART and token.isalpha():
            for cut in range(MIN_COMPOUND_PART, len(token) - MIN_COMPOUND_PART + 1):
                first, second = token[:cut], stem(token[cut:])
                if first in self.category_idf and second in self.category_idf:
                    return (first, second)
        return ()

    def _said_stems(self, text: str) -> list[str]:
        """The text's content words as stems, in order, compounds of category words split."""
        return [
            key
            for t in tokens(text)
            if t not in STOPWORDS
            for key in (self._category_stems(t) or (stem(t),))
        ]

    def names_category_node(self, text: str, by_head: bool = False) -> bool:
        """Does `text` name some category node in full ("Belts", "Wrist Watches"), not just by a
        word that occurs in one ("faux" of "Leather & Faux Leather")? With `by_head`, a text
        ending in a node's head noun is enough ("hooded sweatshirts" for "Active Sweatshirts";
        not "a polyester blend is fine")."""
        said = self._said_stems(text)
        if by_head and said and said[-1] in self._heads:
            return True
        words = set(said)
        return any(node <= words for word in words for node in self._nodes.get(word, ()))

    def is_head_noun(self, word: str) -> bool:
        """Is the word (or the catalog word it stands for) the plural a node names a kind of item
        by ("cardigans", "trousers"; not "cozy", "size", "womens")?"""
        return any(key in self._heads for key in self._category_stems(word.lower()))

    def narrows(self, current: Iterable[str], text: str) -> bool:
        """Does `text` name, in full, a category node below every node the `current` category
        words name ("cowboy hats" for "accessories", "loafers" for "shoes"; not "necklaces"
        for "piercing jewelry barbells", a sibling)?"""
        said, known = set(self._said_stems(text)), set(current)
        # Who it is for is not what it is: "clothes for women" names no item yet, and "shoes
        # for women" names shoes (not a "Women's Shoes" node beside them).
        kind = known - DEPARTMENT_NODES
        if not kind:
            return any(
                node <= said and not node <= DEPARTMENT_NODES
                for word in said
                for node in self._nodes.get(word, ())
            )
        named = {node for word in kind for node in self._nodes.get(word, ()) if node <= kind}
        if not named:
            return False
        for word in said:
            for node in self._nodes.get(word, ()):
                if node <= said and not node <= known and named <= self._ancestors.get(node, set()):
                    return True
        return False


DEPARTMENT_NODES = frozenset({"women", "men", "girl", "boy", "baby", "kid", "unisex"})


def _node_index(category_paths: Mapping[tuple[str, ...], int]) -> dict[str, list[frozenset[str]]]:
    """word -> the category nodes (one path part each, as word sets) that contain it."""
    nodes: set[frozenset[str]] = set()
    for path in category_paths:
        for part in path:
            words = frozenset(stem(t) for t in tokens(part) if t not in STOPWORDS)
            if part.strip().lower() != ROOT_CATEGORY and words and not words <= DEPARTMENT_NODES:
                nodes.add(words)
    index: dict[str, list[frozenset[str]]] = {}
    for node in nodes:
        for word in node:
            index.setdefault(word, []).append(node)
    return index


def _head_nouns(category_paths: Mapping[tuple[str, ...], int]) -> frozenset[str]:
    """The plural last word of each category node's name, and of each part joined by "&" or a
    comma ("Down Jackets & Parkas": jackets, parkas): English names the thing last, and a shop
    names its kinds of item in the plural (not "Water", "Wool", "Tie-Dye")."""
    heads = set()
    for path in category_paths:
        for part in path:
            if part.strip().lower() == ROOT_CATEGORY:
                continue
            for conjunct in re.split(r"&|,|\band\b", part):
                words = [t for t in tokens(conjunct) if t not in STOPWORDS]
                if words and words[-1].endswith("s") and not words[-1].endswith("ss"):
                    head = stem(words[-1])
                    if head not in DEPARTMENT_NODES and head not in _NOT_ITEMS:
                        heads.add(head)
    return frozenset(heads)


def _ancestor_index(
    category_paths: Mapping[tuple[str, ...], int],
) -> dict[frozenset[str], set[frozenset[str]]]:
    """category node -> every node above it on some path (nodes as in `_node_index`)."""
    ancestors: dict[frozenset[str], set[frozenset[str]]] = {}
    for path in category_paths:
        above: list[frozenset[str]] = []
        for part in path:
            words = frozenset(stem(t) for t in tokens(part) if t not in STOPWORDS)
            if part.strip().lower() == ROOT_CATEGORY or not words or words <= DEPARTMENT_NODES:
                continue
            ancestors.setdefault(words, set()).update(above)
            above.append(words)
    return ancestors


def _category_idf(category_paths: Mapping[tuple[str, ...], int]) -> dict[str, float]:
    total = sum(category_paths.values()) or 1
    frequency: dict[str, int] = {}
    for path, count in category_paths.items():
        for word in path_stems(path):
            frequency[word] = frequency.get(word, 0) + count
    return {
        word: math.log(1 + total / df)
        for word, df in frequency.items()
        if word not in STOPWORDS and len(word) > 1
    }


def _in_its_phrase(text: str) -> str:
    """A word a slip away from the one a value's phrase has after the word before it: "high
    wasted" is high waisted, "mid calve" mid calf (each word alone is a word)."""
    words = list(_ANY_WORD.finditer(text))
    for before, word in zip(words, words[1:], strict=False):
        said = word.group().lower()
        seconds = _value_phrases().get(before.group().lower(), ())
        if said in seconds or len(said) < 4 or stem(said) in {stem(w) for w in seconds}:
            continue  # "pointed toes" is the phrase, in the plural
        meant = [w for w in seconds if OSA.distance(said, w) == 1 and said[0] == w[0]]
        if len(meant) == 1:
            text = text[: word.start()] + meant[0] + text[word.end() :]
    return text


@cache
def _value_phrases() -> dict[str, frozenset[str]]:
    """First word -> the second words of the vocabulary's two-word values ("high": waisted...)."""
    pairs: dict[str, set[str]] = {}
    for term in _value_terms():
        said = term.lower().split()
        if len(said) == 2 and all(w.isalpha() for w in said):
            pairs.setdefault(said[0], set()).add(said[1])
    return {first: frozenset(seconds) for first, seconds in pairs.items()}


@cache
def _value_words() -> frozenset[str]:
    """The words of the vocabulary's values (colours, materials, styles, ...)."""
    return frozenset(word for term in _value_terms() for word in tokens(term))


def _value_terms() -> list[str]:
    """Every value of the vocabulary and every term it is said by."""
    from ..catalog.vocabulary import vocabulary

    return [
        term
        for table in vocabulary().tables.values()
        for canonical, terms in table.items()
        for term in (canonical, *terms)
    ]


def _known_words(category_idf, category_paths, brands) -> set[str]:
    """Every word the lexicon can read, so only unknown words are taken for typos."""

    words = set(STOPWORDS) | set(category_idf) | set(KNOWN_EXTRA) | set(SHOPPER_WORDS)
    for path in category_paths:
        for part in path:
            # The singular too: "neckless" is a slip for "necklace" as much as "necklaces".
            words.update(word for token in tokens(part) for word in (token, stem(token)))
    words.update(_value_words())
    for brand in brands:
        words.update(tokens(brand))
    words.update(cue_words())  # "pricey", "cheapest": how shoppers critique, never typos
    words.update(CONVERSATION.vocabulary())  # "dunno", "misspoke": how shoppers talk
    words.update(NUMBER_WORDS)  # "under a hunderd": a budget in words, typed in a hurry
    people = audience_cues()
    words.update(people.pronouns)  # "shes 9": she's, not "she 9"
    # "bday", "hubby", "yrs": who it is for and how old, as people write it
    words.update(word for unit in people.units.values() for word in unit)
    words.update(word for term in people.terms for word in term)
    return words


# Shoppers' words for items that catalogs file under other names (American and British
# usage and everyday short forms), as stems -> the catalog's category stems. Used only when
# the catalog has no category word of its own for the shopper's word.
SHOPPER_WORDS: dict[str, tuple[str, ...]] = {
    "trouser": ("pant",),
    "slack": ("pant",),
    "jumper": ("sweater",),
    "trainer": ("sneaker",),
    "plimsoll": ("sneaker",),
    "runner": ("running", "shoe"),
    "pyjama": ("pajama",),
    "pjs": ("pajama",),
    "jammy": ("pajama",),
    "jogger": ("sweatpant",),
    "tracky": ("sweatpant",),
    "undy": ("underwear",),
    "knicker": ("panty",),
    "pantyhose": ("hosiery",),
    "heel": ("pump",),
    "stiletto": ("pump",),
    "cami": ("camisole",),
    "cardi": ("cardigan",),
    "bikini": ("swimsuit",),
    "cossie": ("swimsuit",),
    "bather": ("swimsuit",),
    "tux": ("tuxedo",),
    "welly": ("rain", "boot"),
    "wellington": ("rain", "boot"),
    "slider": ("slide",),
    "waistcoat": ("vest",),
    "nighty": ("nightgown",),
    "gown": ("dress",),
    "sundress": ("dress",),
    "onesy": ("bodysuit",),
    "brogue": ("oxford",),
    "bralette": ("bra",),
    "rucksack": ("backpack",),
    "handbag": ("purse",),
    "chino": ("pant",),
    "suitcase": ("luggage",),
    "duffle": ("duffel",),
    "bumbag": ("waist", "pack"),
    "fanny": ("waist", "pack"),
    "stocking": ("hosiery",),
}
# Conversational words a shopper uses that no catalog table lists.
KNOWN_EXTRA = [
    "about",
    "around",
    "matters",
    "matter",
    "preference",
    "preferences",
    "requirement",
    "requirements",
    "important",
    "earlier",
    "previous",
    "actually",
    "ignore",
    "instead",
    "rather",
    "scratch",
    "forget",
    "switch",
    "change",
    "changed",
    "thought",
    "second",
    "mean",
    "meant",
    "sorry",
    "exploring",
    "browsing",
    "looking",
    "shopping",
    "wanted",
    "budget",
    "price",
    "cheap",
    "cheaper",
    "expensive",
    "spend",
    "dollars",
    "bucks",
    "under",
    "below",
    "between",
    "least",
    "most",
    "something",
    "anything",
    "nothing",
    "everything",
    "features",
    "feature",
    "quality",
    "comfortable",
    "comfort",
    "durable",
    "durability",
    "style",
    "stylish",
    "fit",
    "fits",
    "fitting",
    "looks",
    "nice",
    "pretty",
    "daughter",
    "son",
    "wife",
    "husband",
    "mom",
    "dad",
    "mother",
    "father",
    "sister",
    "brother",
    "friend",
    "gift",
    "present",
    "birthday",
    "thanks",
    "please",
    "sure",
    "maybe",
    "ideally",
    "preferably",
    "definitely",
    "specifically",
    "mainly",
    "mostly",
    "really",
    "honestly",
    "color",
    "colour",
    "material",
    "fabric",
    "size",
    "brand",
    "occasion",
    "purpose",
    "kind",
    "type",
    "sort",
    "one",
    "ones",
    "pair",
    "pairs",
    "wear",
    "wearing",
    "work",
    "working",
    "weekend",
    "everyday",
    "daily",
    "outdoor",
    "indoor",
    "weather",
    "rain",
    "snow",
    "summer",
    "winter",
    "spring",
    "fall",
]


def _ambiguous_word(name: str, category_words: set[str]) -> bool:
    """A one-word store name that is also an everyday or catalog word ("Fashion", "Navy")."""
    word = name.lower().strip()
    return stem(word) in category_words or word in KNOWN_EXTRA_SET or bool(find_mentions(name))


KNOWN_EXTRA_SET = frozenset(KNOWN_EXTRA)


def _brand_table(brands: Iterable[str]) -> dict[str, str]:
    """Normalised brand name -> display name; short or common-word names are too ambiguous."""
    table: dict[str, str] = {}
    for brand in brands:
        key = " ".join(brand.lower().split())
        if len(key) >= 4 and key not in STOPWORDS and not key.isdigit():
            table.setdefault(key, brand)
    return table


def _first_words(word: str) -> set[str]:
    """A word as it may start a store name, with and without a full stop after it."""
    return {word, word.rstrip(".")}


def usable_brands(
    brands: Iterable[str], category_paths: Mapping[tuple[str, ...], int]
) -> list[str]:
    """The store names safe to match in a message: several words, or one word that is not an
    everyday or catalog word. It depends on the vocabulary and on this file's rules, and takes a
    quarter second at 13k names: the index remembers it per `usable_brands_version()`."""
    category_words = set(_category_idf(category_paths))
    return [b for b in brands if len(tokens(b)) > 1 or not _ambiguous_word(b, category_words)]


@cache
def usable_brands_version() -> str:
    return source_hash(
        __file__, text_module.__file__, vocabulary.__file__, vocabulary.VOCABULARY_PATH
    )
