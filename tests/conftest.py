"""Fixtures the test modules share.

- `catalog_record`, `write_catalog`: catalog records and JSONL files written by hand.
- `hand_records`, `hand_catalog`, `hand_index`: a small hand-written catalog, each product
  there to show one search rule, and its index in a private cache.
- `synthetic_catalog`, `synthetic_cache`, `synthetic_index`: one generated catalog of
  realistic shape, indexed once per run for the modules that read it.
- `lexicon`, `play`: a small category lexicon and a helper that plays messages into a state.
- `redis_server`: a private redis-server (Debian's binary) on a free port, or a skip naming why.
- `shared_data`: the folder of real records (../shared/data), or a skip. It is the only way
  a test reaches the real records, and only tests marked `shared` may use it.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

from shopcopilot.agent import FOR_PEOPLE, Agent
from shopcopilot.bench.local_redis import LocalRedis, redis_server_binary
from shopcopilot.catalog.synth import write_catalog as write_synthetic_catalog
from shopcopilot.index import CatalogIndex, open_index
from shopcopilot.paths import shared_data_dir
from shopcopilot.state import Lexicon, ShoppingState, StateDiff, update

TOP = "Clothing, Shoes & Jewelry"
SHARED_FIXTURE = "shared_data"
LOOKUP = "shared_data_dir"  # the name library modules call it by


# --- the real records ----------------------------------------------------------------------------


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # `-m "not shared"` can only leave out what is marked: refuse an unmarked reader.
    unmarked = [
        item.nodeid
        for item in items
        if SHARED_FIXTURE in getattr(item, "fixturenames", ())
        and item.get_closest_marker("shared") is None
    ]
    if unmarked:
        raise pytest.UsageError(
            f"tests using the {SHARED_FIXTURE!r} fixture must be marked @pytest.mark.shared: "
            + ", ".join(unmarked)
        )


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data (or SHOPCOPILOT_SHARED_DATA); the test is skipped when it is absent."""
    folder = shared_data_dir()
    if folder is None:
        pytest.skip("the real records (../shared/data or SHOPCOPILOT_SHARED_DATA) are absent")
    return folder


def _no_shared_data() -> None:
    """What library code finds when it looks for the real records during the tests."""


def _swap_lookup(old: object, new: object) -> None:
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] == "shopcopilot" and getattr(module, LOOKUP, None) is old:
            setattr(module, LOOKUP, new)


@pytest.fixture(scope="session", autouse=True)
def library_finds_no_shared_data() -> Iterator[None]:
    """Some library code looks for ../shared/data itself (the web demo's public sessions, the
    CLI's public targets, the understanding benchmark's category paths): it finds none, so no
    test's inputs change with the folder. Marked tests get the records from `shared_data`."""
    _swap_lookup(shared_data_dir, _no_shared_data)
    yield
    _swap_lookup(_no_shared_data, shared_data_dir)  # modules imported since bound the stand-in


@pytest.fixture(scope="session", autouse=True)
def no_model_resolver() -> Iterator[None]:
    """A developer's SHOPCOPILOT_LLM_* must not put a model in the tests' answers; the resolver's
    own tests hand the agent one explicitly."""
    with pytest.MonkeyPatch.context() as patch:
        for name in ("BASE_URL", "MODEL", "API_KEY", "TIMEOUT"):
            patch.delenv(f"SHOPCOPILOT_LLM_{name}", raising=False)
        yield


# --- a Redis server -------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRedis]:
    """A redis-server of our own on a free loopback port, append-only file on; skipped with the
    reason when the binary is missing (`make redis-deps` installs it)."""
    if redis_server_binary() is None:
        pytest.skip("redis-server is not installed (`make redis-deps`, or apt-get install it)")
    with LocalRedis(tmp_path_factory.mktemp("redis")) as server:
        yield server


# --- hand-written catalogs -----------------------------------------------------------------------


def _record(asin: str, title: str, **fields: object) -> dict[str, object]:
    base: dict[str, object] = {
        "parent_asin": asin,
        "title": title,
        "features": [],
        "description": [],
        "price": None,
        "categories": [TOP],
        "details": {},
        "average_rating": 4.0,
        "rating_number": 10,
        "store": "",
    }
    base.update(fields)
    return base


def _write_catalog(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _filler(count: int) -> list[dict[str, object]]:
    """Products that all say "everyday" so paging has something to page through."""
    rng = random.Random(3)
    words = ["linen", "denim", "fleece", "satin", "tweed", "velvet", "chiffon", "corduroy"]
    return [
        _record(
            f"FILL{n:03d}",
            f"Everyday {rng.choice(words)} {rng.choice(words)} top "
            f"{'everyday ' * rng.randint(0, 3)}".strip(),
            features=[f"{rng.choice(words)} blend"],
            price=float(rng.randint(5, 90)),
        )
        for n in range(count)
    ]


_COATS = [TOP, "Women", "Clothing", "Coats, Jackets & Vests"]
_HAND_RECORDS = [
    _record(
        "TITLE01", "Quokka Canvas Tote", description=["Roomy bag for daily errands and the market."]
    ),
    _record(
        "DESC01",
        "Canvas Shopper Tote",
        description=["Roomy bag with a quokka print for daily errands."],
    ),
    _record("PHRASE1", "Red Cotton Dress Midi", features=["Breathable fabric"]),
    _record("PHRASE2", "Cotton Dress in Red", features=["Breathable fabric"]),
    _record("AND01", "Zephyr Lantern Beanie"),
    _record("OR01", "Zephyr Compass Gloves"),
    _record("OR02", "Lantern Orchard Socks"),
    _record(
        "PARKA1", "Quilted Parka", price=10.0, categories=_COATS, details={"Department": "Womens"}
    ),
    _record(
        "PARKA2",
        "Hooded Parka",
        price=50.0,
        categories=[TOP, "Men", "Clothing", "Coats, Jackets & Vests"],
        details={"Department": "Mens"},
    ),
    _record(
        "PARKA3", "Belted Parka", price=None, categories=_COATS, details={"Department": "Womens"}
    ),
    _record("STORE01", "Plain Knit Cardigan", store="Wombatwear", features=["Ribbed cuffs"]),
    *_filler(24),
]


@pytest.fixture(scope="session")
def catalog_record() -> Callable[..., dict[str, object]]:
    """record(asin, title, **fields): a catalog record with plain defaults."""
    return _record


@pytest.fixture(scope="session")
def write_catalog() -> Callable[[Path, list[dict[str, object]]], Path]:
    """write(path, records) -> path: records as a JSONL catalog."""
    return _write_catalog


@pytest.fixture(scope="session")
def hand_records() -> list[dict[str, object]]:
    """The hand-written catalog's records, in file order (read them, do not change them)."""
    return _HAND_RECORDS


@pytest.fixture(scope="session")
def hand_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write_catalog(tmp_path_factory.mktemp("hand") / "catalog.jsonl", _HAND_RECORDS)


@pytest.fixture(scope="module")
def hand_index(
    hand_catalog: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CatalogIndex]:
    """An index over the hand-written catalog. Module-scoped: its answer cache is per module,
    so one module's searches never decide whether another's reach the back end."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SHOPCOPILOT_CACHE", str(tmp_path_factory.mktemp("hand-cache")))
        index = open_index(hand_catalog, progress=False)
    yield index
    index.close()


# --- one generated catalog -----------------------------------------------------------------------


@pytest.fixture(scope="session")
def synthetic_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("synthetic") / "catalog.jsonl"
    write_synthetic_catalog(path, size=1500, seed=3)
    return path


@pytest.fixture(scope="session")
def synthetic_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cache holding `synthetic_index`: point SHOPCOPILOT_CACHE here to reopen it unbuilt."""
    return tmp_path_factory.mktemp("synthetic-cache")


@pytest.fixture(scope="session")
def synthetic_index(synthetic_catalog: Path, synthetic_cache: Path) -> Iterator[CatalogIndex]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SHOPCOPILOT_CACHE", str(synthetic_cache))
        index = open_index(synthetic_catalog, progress=False)
    yield index
    index.close()


# --- understanding the shopper -------------------------------------------------------------------


LEXICON_PATHS = {
    (TOP, "Women", "Shoes", "Athletic", "Running"): 40,
    (TOP, "Women", "Jewelry", "Necklaces"): 30,
    (TOP, "Women", "Handbags & Wallets", "Handbags Under $30"): 5,
    (TOP, "Men", "Clothing", "Jackets & Coats"): 50,
    (TOP, "Women", "Clothing", "Dresses"): 80,
}


def _make_lexicon(
    *more_paths: dict[tuple[str, ...], int],
    brands: Iterable[str] = (),
    catalog_words: Iterable[str] = (),
) -> Lexicon:
    paths = dict(LEXICON_PATHS)
    for more in more_paths:
        paths.update(more)
    return Lexicon(paths, brands, catalog_words)


@pytest.fixture(scope="session")
def make_lexicon() -> Callable[..., Lexicon]:
    """make(*more_paths, brands=(), catalog_words=()) -> a Lexicon over the paths of `lexicon`
    and more, knowing those words of the catalog's text."""
    return _make_lexicon


@pytest.fixture(scope="session")
def lexicon() -> Lexicon:
    """A few category paths (one with a price in its name) and two brands."""
    return _make_lexicon(brands=["Nike", "Cherokee"])


def _play(
    lexicon: Lexicon, *messages: str, asked: list[str | None] | None = None
) -> tuple[ShoppingState, list[StateDiff]]:
    state = ShoppingState()
    diffs = []
    for turn, message in enumerate(messages, start=1):
        state, diff = update(state, message, lexicon, turn)
        diffs.append(diff)
        # asked[i]: the question the agent asked after message i (None: no question)
        question = asked[turn - 1] if asked and turn - 1 < len(asked) else None
        if question:
            state.questions.append((turn, question))
    return state, diffs


@pytest.fixture(scope="session")
def play() -> Callable[..., tuple[ShoppingState, list[StateDiff]]]:
    """play(lexicon, *messages, asked=None) -> (state, diffs): one message per turn from an
    empty state; `asked` lists the question asked after each message."""
    return _play


# --- the copilot as people meet it ------------------------------------------------------------


@pytest.fixture(scope="module")
def person_on(
    tmp_path_factory: pytest.TempPathFactory, write_catalog: Callable[..., Path]
) -> Callable[[list[dict[str, object]]], Agent]:
    """person_on(records) -> an Agent with the people's settings over those records, on words
    alone (no product vectors): the tests using it are about filters and order."""

    def make(records: list[dict[str, object]]) -> Agent:
        folder = tmp_path_factory.mktemp("person")
        catalog = write_catalog(folder / "catalog.jsonl", records)
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("SHOPCOPILOT_CACHE", str(folder / "cache"))
            patch.setenv("SHOPCOPILOT_DENSE", "0")
            return Agent(catalog, settings=FOR_PEOPLE, warm_up=False)

    return make


def _say(agent: Agent, *messages: str) -> dict:
    agent.reset("s", {})
    response: dict = {}
    for turn, message in enumerate(messages, 1):
        response = agent.respond("s", message, turn)
    return response


@pytest.fixture(scope="session")
def say() -> Callable[..., dict]:
    """say(agent, *messages) -> the response to the last message, said one per turn in a fresh
    session."""
    return _say


def _altered(source: Path, folder: Path, change: Callable[[dict], object]) -> Path:
    raw = json.loads(source.read_text(encoding="utf-8"))
    change(raw)
    path = folder / source.name
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def altered() -> Callable[[Path, Path, Callable[[dict], object]], Path]:
    """altered(data_file, folder, change) -> a copy of a JSON data file in `folder`, with
    `change` applied to its parsed object (to check that loading it fails as it should)."""
    return _altered
