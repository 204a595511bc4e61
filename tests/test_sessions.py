"""Generated session sets: mix, determinism, disjointness and what each kind picks."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from shopcopilot.bench.sessions import (
    KINDS,
    PREFERENCE_TAGS,
    SessionGenerationError,
    generate_sessions,
    read_targets,
    write_session_set,
)
from shopcopilot.bench.sessions_io import load_sessions
from shopcopilot.catalog.loader import CatalogError
from shopcopilot.catalog.vocabulary import find_measures

# Leaf categories with very different sizes, so "rare" means something.
LEAVES = {
    "T-Shirts": 120,
    "Dresses": 80,
    "Sneakers": 60,
    "Hoop": 25,
    "Belts": 10,
    "Anklets": 4,
    "Cuff Links": 3,
    "Shoe Horns": 2,
    "Bolo Ties": 1,
    "Fascinators": 1,
}
DIMENSION_LINES = (
    "Heel measures approximately 2 inches",
    "Strap up to 30 mm wide",
    'Shaft measures 8.5" from arch',
    "Pendant is 15 mm across",
)
MONEY_LINES = ("Great value under $20 price", "Save money: affordable budget pick")


def write_catalog(path: Path, seed: int = 1) -> Path:
    rng = random.Random(seed)
    lines = []
    number = 0
    for leaf, count in LEAVES.items():
        for _ in range(count):
            number += 1
            features = ["Imported", "Machine Wash"]
            if rng.random() < 0.2:
                features += rng.sample(DIMENSION_LINES, rng.randint(1, 3))
            if rng.random() < 0.2:
                features.append(rng.choice(MONEY_LINES))
            lines.append(
                json.dumps(
                    {
                        "parent_asin": f"T{number:09d}",
                        "title": f"Brand{number} Women's {leaf} Classic",
                        "features": features,
                        "description": [],
                        "price": None if rng.random() < 0.15 else round(rng.uniform(5, 120), 2),
                        "categories": ["Clothing, Shoes & Jewelry", "Women", "Accessories", leaf],
                        "details": {},
                        "average_rating": 4.2,
                        "rating_number": rng.choice([None, 0, 3, 50, 900, 12000]),
                        "store": f"Brand{number}",
                    }
                )
            )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_catalog(tmp_path_factory.mktemp("sessions") / "catalog.jsonl")


@pytest.fixture(scope="module")
def catalog_rows(catalog: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in catalog.read_text(encoding="utf-8").splitlines()]
    return {row["parent_asin"]: row for row in rows}


@pytest.mark.parametrize(
    "n, expected", [(200, (80, 80, 30, 10)), (20, (8, 8, 3, 1)), (7, (3, 3, 1, 0))]
)
def test_scenario_mix_follows_the_official_proportions(
    catalog: Path, n: int, expected: tuple[int, ...]
) -> None:
    sessions = generate_sessions(catalog, "iid", n, seed=3)
    counts = Counter(s.scenario_type for s in sessions)
    assert (
        tuple(counts[name] for name in ("buying", "browsing", "intent_override", "boundary"))
        == expected
    )
    difficulty = {
        "buying": "easy",
        "browsing": "medium",
        "intent_override": "hard",
        "boundary": "medium",
    }
    assert all(s.difficulty_bucket == difficulty[s.scenario_type] for s in sessions)


@pytest.mark.parametrize("kind", KINDS)
def test_same_seed_same_set_other_seed_other_set(catalog: Path, kind: str) -> None:
    first = [s.to_record() for s in generate_sessions(catalog, kind, 40, seed=1)]
    again = [s.to_record() for s in generate_sessions(catalog, kind, 40, seed=1)]
    other = [s.to_record() for s in generate_sessions(catalog, kind, 40, seed=2)]
    assert first == again
    assert first != other
    assert len({r["sample_id"] for r in first}) == 40


@pytest.mark.parametrize("kind", KINDS)
def test_targets_are_unique_and_disjoint_from_excluded_ones(catalog: Path, kind: str) -> None:
    excluded = {s.target_asin for s in generate_sessions(catalog, kind, 30, seed=5)}
    sessions = generate_sessions(catalog, kind, 30, seed=5, exclude_targets=excluded)
    targets = [s.target_asin for s in sessions]
    assert len(set(targets)) == len(targets) == 30
    assert not set(targets) & excluded


def test_stress_targets_carry_dimension_phrases(
    catalog: Path, catalog_rows: dict[str, dict]
) -> None:
    sessions = generate_sessions(catalog, "stress", 30, seed=4)
    for session in sessions:
        features = " ".join(catalog_rows[session.target_asin]["features"])
        assert find_measures(features), features
    iid_dimension_share = (
        sum(
            bool(find_measures(" ".join(catalog_rows[s.target_asin]["features"])))
            for s in generate_sessions(catalog, "iid", 30, seed=4)
        )
        / 30
    )
    assert iid_dimension_share < 0.6  # the stress set is not just what uniform sampling gives


def test_long_tail_picks_rare_categories_and_little_rated_products(
    catalog: Path, catalog_rows: dict[str, dict]
) -> None:
    sessions = generate_sessions(catalog, "long_tail", 12, seed=6)
    leaves = [catalog_rows[s.target_asin]["categories"][-1] for s in sessions]
    # Every leaf gets one product before any leaf gets a second, rarest first.
    assert set(leaves) == set(LEAVES)
    rarest = [leaf for leaf, count in LEAVES.items() if count <= 3]
    assert set(rarest) <= set(leaves[: len(LEAVES)])
    mean_size = sum(LEAVES[leaf] for leaf in leaves) / len(leaves)
    assert mean_size < sum(count * count for count in LEAVES.values()) / sum(LEAVES.values())
    picks_per_leaf = Counter(leaves)
    for session, leaf in zip(sessions, leaves, strict=True):
        if picks_per_leaf[leaf] == 1:  # a leaf's only pick is its least-rated product
            ratings = [
                r["rating_number"] or 0
                for r in catalog_rows.values()
                if r["categories"][-1] == leaf
            ]
            assert (catalog_rows[session.target_asin]["rating_number"] or 0) == min(ratings)


def test_profiles_are_plausible_and_never_name_the_target(
    catalog: Path, catalog_rows: dict[str, dict]
) -> None:
    sessions = generate_sessions(catalog, "iid", 100, seed=8)
    styles = Counter()
    for session in sessions:
        profile = session.user_profile
        tags = profile["preference_tags"]
        assert (
            1 <= len(tags) <= 4
            and len(set(tags)) == len(tags)
            and set(tags) <= set(PREFERENCE_TAGS)
        )
        style = profile["rating_style"]
        assert (
            profile["summary"]
            == f"Prior purchases emphasize {', '.join(tags)}; ratings are {style}."
        )
        assert profile["average_prior_rating"] in (1.0, 2.0, 3.0, 4.0, 5.0)
        text = json.dumps(profile).lower()
        row = catalog_rows[session.target_asin]
        assert row["parent_asin"].lower() not in text and row["title"].lower() not in text
        styles[profile["rating_style"]] += 1
    assert styles["usually positive"] > styles["critical"] > 0


def test_written_sets_load_back_in_the_public_layout(catalog: Path, tmp_path: Path) -> None:
    sessions = generate_sessions(catalog, "long_tail", 20, seed=2)
    path = write_session_set(tmp_path / "out" / "long_tail.jsonl", sessions)
    loaded = load_sessions(path)
    assert [s.to_record() for s in loaded] == [s.to_record() for s in sessions]
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert set(first) == {
        "sample_id",
        "scenario_type",
        "user_profile",
        "ground_truth",
        "category_bucket",
        "difficulty_bucket",
    }
    assert set(first["user_profile"]) == {
        "purchase_frequency",
        "average_prior_rating",
        "rating_style",
        "preference_tags",
        "summary",
    }


def test_bad_requests_fail_with_a_clear_message(catalog: Path, tmp_path: Path) -> None:
    with pytest.raises(SessionGenerationError, match="unknown session kind 'weird'"):
        generate_sessions(catalog, "weird", 5, seed=1)
    with pytest.raises(SessionGenerationError, match="positive"):
        generate_sessions(catalog, "iid", 0, seed=1)
    with pytest.raises(
        SessionGenerationError, match=f"only {sum(LEAVES.values())} products qualify"
    ):
        generate_sessions(catalog, "iid", 1000, seed=1)
    with pytest.raises(SessionGenerationError, match="catalog not found"):
        generate_sessions(tmp_path / "missing.jsonl", "iid", 5, seed=1)
    broken = tmp_path / "broken.jsonl"
    broken.write_text(
        catalog.read_text(encoding="utf-8") + '{"parent_asin": "X1"}\n', encoding="utf-8"
    )
    with pytest.raises(
        CatalogError, match=f"broken.jsonl:{sum(LEAVES.values()) + 1}: missing or empty 'title'"
    ):
        generate_sessions(broken, "iid", 5, seed=1)


@pytest.mark.shared
def test_real_records_give_sets_disjoint_from_the_public_set(shared_data: Path) -> None:
    data = shared_data
    public = {s.target_asin for s in load_sessions(data / "public_set.jsonl")}
    catalog = data / "catalog_harvest.jsonl"
    for kind in KINDS:
        sessions = generate_sessions(catalog, kind, 200, seed=7, exclude_targets=public)
        assert len(sessions) == 200 and not {s.target_asin for s in sessions} & public
    stress = generate_sessions(catalog, "stress", 100, seed=7, exclude_targets=public)
    infos = {info.asin: info for info in read_targets(catalog, stress=True)}
    assert all(infos[s.target_asin].measures > 0 for s in stress)
