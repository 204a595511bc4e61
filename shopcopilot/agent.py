"""Agent: the official reset/respond contract over the one-way pipeline

    message -> state.update -> retrieve -> rerank -> dialogue.decide -> response

Sessions are isolated ShoppingState values; every stage emits a trace event.
"""

from __future__ import annotations

import gc
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from .dialogue import DialogueSettings, decide
from .dialogue.answers import Answer, answer, as_listed, short, which_have
from .dialogue.examples import starters
from .dialogue.replies import (
    change_lead,
    plural,
    say,
    spoken,
    taken_back,
    unmet,
    unrelaxed,
    unsaid,
)
from .dialogue.wording import question_text, relaxed_text
from .index.catalog_index import CatalogIndex, open_index
from .index.categoriser import WHO_WORDS, load_or_train
from .index.counts import catalog_counts
from .index.features_build import load_or_build
from .index.forms import word_forms
from .index.page_cache import prefetch
from .index.text import STOPWORDS, stem, tokens
from .index.vectors import ProductVectors, dense_enabled, load_encoder
from .index.vectors import load_or_build as load_vectors
from .llm import resolver_from_env
from .rank import RankWeights, reason, rerank
from .rank.evidence import Batch, accepted_departments
from .rank.hard import hard_requirements
from .rank.spread import blank_streak, picked
from .reader.model import shipped as shipped_reader
from .retrieve import RetrievalSettings, meaning_text, retrieve, with_nearest
from .retrieve.candidates import Candidates, with_found
from .retrieve.nearest_kind import department_leaves, nearest_kind, same_kind
from .state import ShoppingState, update
from .state.critique import Shown, words_with_spans
from .state.lexicon import Lexicon, usable_brands, usable_brands_version
from .state.model import CritiqueRecord, Fragment, StateDiff, Turn
from .state.questions import (
    OF_A_PAIR,
    OF_THE_LIST,
    Question,
    follow_up,
    of_the_pair,
    read_question,
)
from .state.questions import SHORT as FOLLOW_UP_WORDS
from .state.requirements import drop as drop_requirement
from .state.requirements import requirements
from .state.spelling import is_english
from .state.update import Consult
from .terms import Attribute, Level
from .trace import EventSink, Tracer


@dataclass(frozen=True, slots=True)
class AgentSettings:
    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)
    ranking: RankWeights = field(default_factory=RankWeights)
    dialogue: DialogueSettings = field(default_factory=DialogueSettings)
    # A person's copilot: questions about shown products are answered, the list keeps what is
    # still best (new matches marked), the reply says what changed. The benchmark keeps its own
    # protocol: never the same product twice in an epoch, a question every turn.
    people: bool = False
    # The learned reader (shopcopilot/reader/) decides the item and what a negation governs.
    reader: bool = False


# What a person sees (the web page, `chat`): the whole list on every turn, and meaning beside
# the words (product vectors, when the index has them). The default settings keep the
# benchmark's policy of showing one product while a question narrows, and words alone: the
# simulators never paraphrase, and meaning cost them about 0.002 TechnicalScore while it put
# the right kind of item first 3.4 points more often on shoppers' own phrasing
# (docs/benchmarks.md, "Product vectors").
# The categoriser's reading of the item counts for a person's list when it is this sure, and
# then weighs this much beside a category match (`RankWeights.kind`).
KIND_SURE = 0.8
KIND_BONUS = 3.0
# ... and this many times as much when words beside the category words decided the node: then
# it outweighs a full category match of another kind ("nose stud" against "stud earrings").
DECISIVE = 2.5
# How far a child's product falls behind a grown-up's when nobody was said to be a child: less
# than a word of the item's name weighs (`RankWeights.category` 6.0), so a product of the kind
# asked for still comes before one of another kind.
UNASKED_YOUNG = 2.0
# How much more a wish counts where a card shows it (title, first features) than in a
# description alone: beside `RankWeights.fragment_partial` 1.2 for the words anywhere.
SHOWN_WORDS = 0.6
# How far a product filed under a part or accessory of the item ("Watch Bands" of a watch) falls
# behind the item's own: as much as the categoriser's reading of the kind weighs.
ACCESSORY = KIND_BONUS
FOR_PEOPLE = AgentSettings(
    retrieval=RetrievalSettings(dense_window=50, goal_band=True, item_window=100, item_forms=True),
    ranking=RankWeights(
        semantic=1.0,
        hold_hard=True,
        spread_after=2,
        kind=KIND_BONUS,
        unasked_young=UNASKED_YOUNG,
        shown_words=SHOWN_WORDS,
        accessory=ACCESSORY,
        wishes_first=True,
    ),
    dialogue=DialogueSettings(narrow=False),
    people=True,
    reader=True,
)


@dataclass(slots=True)
class TurnResult:
    response: dict[str, Any]
    state: dict[str, Any]
    diff: dict[str, Any]
    trace: list[dict[str, Any]]


class Agent:
    def __init__(
        self,
        catalog_path: str | Path | None = None,
        *,
        settings: AgentSettings | None = None,
        index=None,
        progress: bool = False,
        warm_up: bool = True,
        resolver: Consult | None | Literal["env"] = "env",
    ) -> None:
        """`resolver`: the model resolver asked where the rules are unsure; "env": the one the
        SHOPCOPILOT_LLM_* variables configure, if any (shopcopilot/llm.py)."""
        self.resolver = resolver_from_env() if resolver == "env" else resolver  # fails fast
        self.settings = settings or AgentSettings()
        self.index = index or open_index(catalog_path, progress=progress)
        self.lexicon = _lexicon(self.index)
        self.features = load_or_build(self.index.store, self.index.path, progress=progress)
        self.vectors = _vectors(self.index, self.settings, progress)
        self.reader = shipped_reader() if self.settings.reader else None
        self._sessions: dict[str, ShoppingState] = {}
        self._lock = threading.Lock()
        _out_of_gc_reach()
        if (
            warm_up
        ):  # in the background, so start-up does not wait (a server calls warm_up() itself)
            threading.Thread(target=self.warm_up, name="agent-warm-up", daemon=True).start()

    def warm_up(self) -> None:
        """Load what the first turns would otherwise wait for (about 1 s of work at 50k
        products)."""
        prefetch(self.index.path)  # the disk pages the first turns read, asked of the kernel
        self.index.store.asins_for_rows([])  # the row -> id map every search uses
        is_english("warm")  # the spelling guard's dictionary
        self.features.warm_facets()  # what the question policy reads for every candidate pool
        _out_of_gc_reach()

    def with_settings(self, settings: AgentSettings) -> Agent:
        """A sibling agent sharing this one's index and caches (ablations, tuning); no sessions."""
        sibling = object.__new__(Agent)
        sibling.settings, sibling.index, sibling.lexicon, sibling.features = (
            settings,
            self.index,
            self.lexicon,
            self.features,
        )
        sibling.vectors, sibling.resolver = self.vectors, self.resolver
        sibling.reader = shipped_reader() if settings.reader else None
        sibling._sessions, sibling._lock = {}, threading.Lock()
        return sibling

    # -- the official contract -------------------------------------------
    def reset(self, session_id: str, user_profile: dict | None = None) -> None:
        with self._lock:
            self._sessions[session_id] = ShoppingState(profile=dict(user_profile or {}))

    def respond(
        self, session_id: str, user_message: str, turn: int, top_k: int = 10
    ) -> dict[str, Any]:
        return self._turn(session_id, user_message, turn, top_k, None, detailed=False)[0]

    # -- the richer API (web demo, CLI chat, tests) ----------------------
    def respond_traced(
        self,
        session_id: str,
        user_message: str,
        turn: int | None = None,
        top_k: int = 10,
        on_event: EventSink | None = None,
        detailed: bool = True,
        drop: tuple[str, str | None] | None = None,
    ) -> TurnResult:
        """One turn through every stage; `on_event` receives each stage's trace event as it ends.
        Without `detailed` the trace keeps each stage's timing and summary only, as respond()
        does, and the response is the same. `drop`: (facet, value or None) takes back a
        requirement instead of reading a message (a chip's ×); an unknown facet raises
        `UnknownFacet`. The response also lists the requirements held after the turn."""
        response, state, diff, tracer = self._turn(
            session_id, user_message, turn, top_k, on_event, detailed=detailed, drop=drop
        )
        response["requirements"] = [r.to_dict() for r in requirements(state)]
        return TurnResult(response, state.to_dict(), diff.to_dict(), tracer.to_list())

    def examples(self, n: int = 4) -> list[str]:
        """Requests a person could start with that this catalog answers well."""
        paths = catalog_counts(self.index.store, self.index.path).paths
        return starters(paths, n, names_a_kind=self.lexicon.is_head_noun)

    def _turn(
        self,
        session_id: str,
        user_message: str,
        turn: int | None,
        top_k: int,
        on_event: EventSink | None,
        detailed: bool,
        drop: tuple[str, str | None] | None = None,
    ) -> tuple[dict[str, Any], ShoppingState, Any, Tracer]:
        before = self._session(session_id)
        turn = turn if turn is not None else before.turn + 1
        tracer = Tracer(on_event, detailed)
        message = str(user_message or "")
        talk = Talk(question=self._question(before, message) if drop is None else None)
        if talk.question is not None:
            talk.having = self._having(before, talk.question)
        if drop is not None:
            state, diff, talk.dropped = self._drop(tracer, before, drop, turn)
        elif (
            talk.question is not None
            and not self._asks_more(before, message, turn, talk)
            and talk.having != []  # "any in brown?" of a list none of which is: look for it
        ):
            # Only a question: what it names is asked about, not wanted.
            state, diff = self._asked(tracer, before, message, turn, talk.question)
        else:
            talk.mixed = talk.question is not None
            state, diff = self._state(tracer, before, message, turn, top_k)
            if talk.question is not None and talk.having == []:
                _wished(state, diff, talk.question.values)
        meaning = self._meaning(state)
        candidates = self._retrieve(tracer, state, meaning)
        ranked = self._rank(tracer, state, candidates, top_k, meaning)
        if nearest := self._nearest_kind(state, ranked):
            # A child's department no product of the item is for: its nearest kind instead.
            searched, talk.nearest = nearest
            candidates = self._retrieve(tracer, searched, meaning)
            ranked = self._rank(tracer, searched, candidates, top_k, meaning)
        decision = self._decide(tracer, state, ranked, turn, top_k)
        if self.settings.people:
            ranked = self._keep_asked_about(before, ranked, talk)
            decision = self._for_people(before, state, diff, ranked, decision, talk)
        response = self._respond(tracer, state, ranked, decision, turn, diff.resolver)
        if self.settings.people:
            _mark_new(response, before.last_shown)
            response["answers"] = [a.to_dict() for a in talk.answers]
        with self._lock:
            self._sessions[session_id] = state
        return response, state, diff, tracer

    # -- the stages, each traced ------------------------------------------
    def _state(self, tracer: Tracer, state: ShoppingState, message: str, turn: int, top_k: int):
        with tracer.stage("state", message=message, last_question=state.last_question()) as event:
            shown = self._shown_facts(state.last_shown)
            recent = self._shown_facts(state.pointed_at())
            state, diff = update(
                state,
                message,
                self.lexicon,
                turn,
                shown,
                self.resolver,
                recent,
                self.reader,
                people=self.settings.people,
            )
            state.turns_without_progress = len(state.shown_this_epoch()) // max(top_k, 1)
            event.summary = _summarise_diff(diff)
            if diff.resolver:
                event.summary += "; " + _summarise_resolver(diff.resolver)
            if tracer.detailed:
                event.output = diff.to_dict()
        return state, diff

    def _question(self, state: ShoppingState, message: str) -> Question | None:
        """A person's question about the products shown ("how much is the first one?")."""
        if not self.settings.people:
            return None
        # Read as typed ("does it wick sweat?" is no "pick"), or after the spelling fixer ("wats
        # the price": "was").
        question = (
            _follow_up(message, state)  # "and the first?" after a question
            or read_question(message)
            or read_question(self.lexicon.fix_spelling(message))
        )
        if question is None or (not state.last_shown and not question.positions):
            return None  # "which is cheapest?" before any list is a search, not a question
        return of_the_pair(question, _asked_before(state))

    def _asks_more(self, state: ShoppingState, message: str, turn: int, talk: Talk) -> bool:
        """Does a message asking about shown products also ask for something: a budget, a new
        item, a turned-down value, a critique ("anything like #2 but cheaper?")? The values it
        names are what it asks about ("is #1 available in blue?"), not wishes."""
        shown = self._shown_facts(state.last_shown)
        after, diff = update(
            state,
            message,
            self.lexicon,
            turn,
            shown,
            reader=self.reader,
            people=self.settings.people,
        )
        asked = {float(p) for p in talk.question.positions} if talk.question else set()
        # A comparison asked ("which is cheaper, 2 or 3?") is the question, not a critique.
        comparing = talk.question is not None and talk.question.fact in COMPARING
        budgets = [  # "the difference between 1 and 2": places in the list, no budget
            c for c in after.active(Attribute.BUDGET) if c.source_turn == turn
            and not {c.data.get("min"), c.data.get("max"), c.data.get("target")} & asked
            and not (comparing and c.data.get("critique"))
        ]  # fmt: skip
        items = {a["attribute"] for a in diff.added} & {Attribute.CATEGORY}
        if items and _same_or_wider_item(state, after):
            items = set()  # "which hat is the cheapest?" of sun hats asks for no other item
        wants = items | ({Attribute.BUDGET} if budgets else set())
        critiques = [] if comparing else [c for c in diff.critiques if c["kind"] != "pick"]
        return bool(wants or critiques or diff.negated)

    def _asked(self, tracer: Tracer, state: ShoppingState, message: str, turn: int, question):
        """A question changes no requirement: the state records the turn and the products asked
        about (what a later "is it washable?" points at)."""
        with tracer.stage("state", message=message, last_question=state.last_question()) as event:
            new = state.copy()
            new.turn = turn
            new.history.append(Turn(turn=turn, user=message))
            diff = StateDiff()
            asked = [p for p in question.positions if 1 <= p <= len(state.last_shown)]
            diff.read = [{"kind": "question", "value": question.fact, "start": 0,
                          "end": len(message), "words": message}]  # fmt: skip
            if asked:
                diff.references = [{"positions": asked, "kind": "question", "text": message}]
                ids = [state.last_shown[p - 1] for p in asked]
                new.critiques.append(
                    CritiqueRecord("question", turn, new.epoch, asked, ids, message, "asked about")
                )
            event.summary = "a question about the products shown: no requirement changed"
        return new, diff

    def _drop(self, tracer: Tracer, state: ShoppingState, drop: tuple[str, str | None], turn: int):
        facet, value = drop
        with tracer.stage("state", message=f"(remove {facet})", last_question=None) as event:
            new, diff, gone = drop_requirement(state, facet, value, turn)
            event.summary = "removed " + (", ".join(r.label for r in gone) or "nothing")
        return new, diff, gone

    def _having(self, state: ShoppingState, question: Question) -> list[int] | None:
        """The places of the shown products that say what a question about the whole list asks
        ("any of them with a hood?"); None for another question."""
        if question.fact != "has" or not question.every or question.positions:
            return None
        if not question.values or not state.last_shown:
            return None
        shown = self.index.store.get_many(state.last_shown)
        return which_have([shown[a] for a in state.last_shown if a in shown], question.values)

    def _keep_asked_about(self, before: ShoppingState, ranked, talk: Talk):
        """After a question the list the shopper asked about stays as it was, in its order, but
        for the products that say what was asked of the whole list: those first."""
        if talk.question is None or talk.mixed or not before.last_shown:
            return ranked
        order = {asin: i for i, asin in enumerate(before.last_shown)}
        having = talk.having or []
        first = {before.last_shown[n - 1] for n in having if n <= len(before.last_shown)}
        ranked.sort(
            key=lambda s: (s.parent_asin not in first, order.get(s.parent_asin, len(order)))
        )
        return ranked

    def _for_people(self, before, state, diff, ranked, decision, talk: Talk):
        """The reply a person reads: the answer to their question, or what changed and what
        holds, then the question that narrows most."""
        count = min(decision.width, len(ranked))
        if talk.question is not None:
            shown = self.index.store.get_many(before.last_shown)
            products = [shown[a] for a in before.last_shown if a in shown]
            pointed = [a for a in before.pointed_at() if a in before.last_shown]
            # "what's it made of?": the product spoken of last, else the first of the list.
            position = before.last_shown.index(pointed[0]) + 1 if pointed else 1
            talk.answers = [answer(talk.question, products, position)]
            said = " ".join(a.text for a in talk.answers)
            having = talk.having or []
            if not talk.mixed and having != list(range(1, len(having) + 1)):
                # "any with a hood?": those come first, so their places are said anew
                said = _moved_up(state.turn, len(having), talk.question.values)
                places = tuple(range(1, len(having) + 1))
                talk.answers = [replace(talk.answers[0], positions=places, text=said)]
            if not talk.mixed:
                decision.message = said
                decision.ask_attribute, decision.options = None, []
                return decision
        if ranked.spread:
            return decision  # the spread's own invitation: "Which one comes closest?"
        now, earlier = unrelaxed(requirements(state), ranked.relaxed), requirements(before)
        new_item = bool(before.history) and _item_changed(before, state)
        left_out = [_said(r) for r in diff.replaced if _bound_to_item(r, state)] if new_item else []
        named = talk.nearest[1] if talk.nearest else None
        lead = change_lead(state.turn, state, now, earlier, count, new_item, left_out, named)
        if talk.nearest:
            said, _, who = talk.nearest
            lead = f"{say('nearest_kind', state.turn, item=said, who=who)} {lead}"
        if talk.dropped is not None:
            labels = ", ".join(spoken(r) for r in talk.dropped)
            said = say("dropped", state.turn, dropped=labels) if labels else ""
            lead = (said or say("none_held", state.turn, dropped="such requirement")) + " " + lead
        elif not new_item and (gone := taken_back(earlier, requirements(state))):
            lead = say("dropped", state.turn, dropped=", ".join(map(spoken, gone))) + " " + lead
        shaped = [c["kind"] for c in diff.critiques if c["kind"] in RESHAPED]
        if shaped and not new_item:  # "these are too bulky": said, not only ranked
            lead = f"{say(shaped[-1], state.turn)} {lead}"
        liked = [c for c in diff.critiques if c["kind"] == "more_like" and c["positions"]]
        if liked:
            lead = f"{say('more_like', state.turn, position=liked[-1]['positions'][0])} {lead}"
        elif picked := self._picked(before, diff):
            lead = picked  # "I'll take #2": the choice, not the list, is the news
        if ranked.relaxed and count:
            lead = f"{relaxed_text(state, ranked.relaxed)} {lead}"
        if count and (note := unsaid(state.turn, diff.added, ranked.naming)):
            lead = f"{lead} {note}"
        if count and (note := unmet(state.turn, self._unmet_wishes(state, ranked, count))):
            lead = f"{lead} {note}"
        question = question_text(state, decision.ask_attribute, decision.options)
        answered = " ".join(a.text for a in talk.answers)
        decision.message = " ".join(part for part in (answered, lead, question) if part)
        return decision

    def _nearest_kind(self, state: ShoppingState, ranked) -> tuple[ShoppingState, tuple] | None:
        """For people, when a child's department was given up because no product of the item is
        for it: the state searched for the department's nearest kind instead (a girl's raincoat
        is a girls' coat, not a woman's raincoat), and what the reply says of it (the item as
        said, the kind shown, who for)."""
        if not self.settings.people or not ranked.relaxed:
            return None
        young = [r for r in hard_requirements(state) if r.young and r.label in ranked.relaxed]
        items = state.active(Attribute.CATEGORY)
        if not young or not items:
            return None
        item = max(items, key=lambda c: c.source_turn)
        words = tuple(item.data.get("words", {}))
        near = nearest_kind(self.features, words, self._departments(state), self._path_of)
        if near is None or set(words) <= WHO_WORDS:
            return None
        searched = state.copy()
        kind = searched.constraints[state.constraints.index(item)]
        name = near.leaf.lower()
        stems = dict.fromkeys([*(stem(t) for t in tokens(name) if t not in STOPWORDS), *near.words])
        kind.value = kind.text = name
        kind.data = {**kind.data, "words": dict.fromkeys(stems, 1.0), "node": near.leaf}
        kind.data["node_p"] = 1.0
        return searched, (plural(item.text or item.value), plural(name), young[0].label)

    def _path_of(self, row: int) -> tuple[str, ...]:
        asin = self.features.asins[row]
        product = self.index.store.get_many([asin]).get(asin)
        return tuple(product.categories) if product is not None else ()

    def _picked(self, before: ShoppingState, diff) -> str:
        """'Good choice: #2, Women's Trail Running Shoes…, $70.99. It's first below, with
        others like it.' for a pick that changes nothing else; '' otherwise."""
        picks = [c for c in diff.critiques if c["kind"] == "pick" and len(c["positions"]) == 1]
        if not picks or diff.added or diff.replaced or diff.negated:
            return ""
        position = picks[-1]["positions"][0]
        if not 1 <= position <= len(before.last_shown):
            return ""
        asin = before.last_shown[position - 1]
        product = self.index.store.get_many([asin]).get(asin)
        if product is None:
            return ""
        price = f", ${product.price:.2f}" if product.price else ""
        return say("picked", before.turn + 1, position=position, title=short(product), price=price)

    def _unmet_wishes(self, state: ShoppingState, ranked, count: int) -> list[str]:
        """The wishes said this turn in free words ("something with unicorns") that no product
        shown names: the reply owns up rather than showing the same list as if it had."""
        held = requirements(state)
        refused = {stem(t) for r in held if r.negated for t in tokens(r.value)}
        wishes = [
            r.label for r in held if r.facet == "feature" and r.turn == state.turn and not r.negated
        ]
        words = {w: [stem(t) for t in tokens(w) if t not in STOPWORDS] for w in wishes}
        # Only a wish of one word products use, naming no kind of item and nothing turned down:
        # a chip of talk ("keeps stealing mine car", "he got a wallet") is no wish to own up to.
        said = {w: ws[0] for w, ws in words.items() if len(ws) == 1}
        said = {
            w: one
            for w, one in said.items()
            if self._product_word(one) and not self.lexicon.is_head_noun(one) and one not in refused
        }
        if not said:
            return []
        rows = self.features.rows(s.parent_asin for s in ranked[:count])
        batch = Batch(self.features, rows, set(said.values()), ())
        return [wish for wish, one in said.items() if not batch.has[one].any()]

    def _product_word(self, stemmed: str) -> bool:
        """Does some product's text use the word, in any of its forms (not a typo or talk the
        catalog never says)?"""
        return any(self.features.word_id.get(f) is not None for f in word_forms(stemmed))

    def _meaning(self, state: ShoppingState) -> np.ndarray | None:
        """The shopper's words as a vector, when the index has product vectors."""
        if self.vectors is None or not _uses_meaning(self.settings):
            return None
        text = meaning_text(state)
        words = self.vectors.query(text) if text else None
        rows = self.features.rows(self._anchored_on(state))
        if not len(rows):
            return words
        # "More like that one": stay near the product pointed at, and near what was said.
        liked = self.vectors.mean(rows)
        return liked if words is None else self.vectors.mean_of(words, liked)

    def _anchored_on(self, state: ShoppingState) -> list[str]:
        """The products the ranking stays near: a pick (when the settings follow picks), else
        the latest "more like that one"."""
        pick = picked(state) if self.settings.ranking.spread_after else None
        if pick:
            return [pick[0]]
        anchor = state.anchor()
        return anchor.products if anchor else []

    def _retrieve(self, tracer: Tracer, state: ShoppingState, meaning: np.ndarray | None):
        with tracer.stage("retrieve") as event:
            candidates = retrieve(state, self.index, self.settings.retrieval, self.features)
            if not len(candidates) and self.settings.ranking.spread_after:
                candidates = _popular(self.features)  # "show me something nice": nothing to search
            by_words = len(candidates)
            window = self.settings.retrieval.dense_window
            departments = self._departments(state)
            if departments:  # the whole catalog asked for the department, not just the window
                held = retrieve(
                    state, self.index, self.settings.retrieval, self.features, departments
                )
                candidates = with_found(candidates, held)
            if meaning is not None and window and self.vectors is not None:
                nearest = self.vectors.nearest(meaning, window) + 1  # feature rows -> store rows
                candidates = with_nearest(candidates, nearest)
            more = len(candidates) - by_words
            by_meaning = f", {more} more by meaning" if more else ""
            event.summary = f"{len(candidates)} candidates (window {candidates.window}{by_meaning})"
            if tracer.detailed:
                event.output = {
                    "query": candidates.query_text,
                    "count": len(candidates),
                    "window": candidates.window,
                    "top_ids": self.index.store.asins_for_rows(candidates.best_rows(EXPLAINED)),
                }
        return candidates

    def _rank(
        self,
        tracer: Tracer,
        state: ShoppingState,
        candidates,
        top_k: int,
        meaning: np.ndarray | None,
    ):
        with tracer.stage("rank") as event:
            # People see what is still best again (new matches are marked), but for a spread
            # after blank answers and for a product said to cost too much or too little; the
            # benchmark's protocol never shows a product twice in an epoch.
            shown = state.shown_this_epoch()
            priced_out = state.priced_out() if self.settings.people else []
            if self.settings.people and blank_streak(state) < self.settings.ranking.spread_after:
                shown = priced_out
            seen = set(shown) | set(state.turned_down())
            # Only the products a question, a reply or the trace can use are kept.
            keep = max(self.settings.dialogue.pool, top_k, EXPLAINED)
            rows = self.features.of_store_rows(candidates.rows)
            semantic = (
                self.vectors.similarity(meaning, rows)
                if meaning is not None and self.vectors is not None
                else None
            )

            def ranked_without(exclude: set[str]):
                return rerank(
                    state,
                    self.features,
                    rows,
                    candidates.scores,
                    weights,
                    exclude=exclude,
                    limit=keep,
                    explain_top=EXPLAINED if tracer.detailed else 0,
                    semantic=semantic,
                    kind=kind,
                )

            kind, decisive = self._kind(state)
            weights = self.settings.ranking
            if decisive:
                weights = replace(weights, kind=weights.kind * DECISIVE)

            ranked = ranked_without(seen)
            if not len(ranked) and priced_out:
                # Nothing else at that price: the one said to cost too much is still the best.
                ranked = ranked_without(seen - set(priced_out))
            if tracer.detailed:
                lexical_order = self.index.store.asins_for_rows(
                    candidates.best_rows(len(candidates))
                )
                event.output = _rerank_output(lexical_order, ranked)
            event.summary = f"best {len(ranked)} kept, {len(seen)} already shown this epoch"
        return ranked

    def _departments(self, state: ShoppingState) -> tuple[str, ...]:
        """For people: the department the shopper asked for, as the index files it."""
        if not self.settings.people:
            return ()
        wanted = [c for c in state.active() if c.data.get("facet") == "department"]
        if not wanted:
            return ()
        held = (wanted[-1].value, wanted[-1].data.get("also") or wanted[-1].value)
        return tuple(sorted({d for value in held for d in accepted_departments(value)}))

    def _kind(self, state: ShoppingState) -> tuple[frozenset[str], bool]:
        """The leaves of the node the categoriser surely read in the item said last, and whether
        words of the item's name that no category uses decided it ("nose stud": the piercing
        studs, where "stud" alone reads earrings)."""
        categoriser = self.lexicon.categoriser
        if not self.settings.ranking.kind or categoriser is None:
            return frozenset(), False
        items = [c for c in state.active() if c.attribute == Attribute.CATEGORY]
        item = max(items, key=lambda c: c.source_turn, default=None)
        if item is None or not item.data.get("node") or item.data.get("node_p", 0) < KIND_SURE:
            return frozenset(), False
        words = item.data.get("words", {})
        if set(words) <= WHO_WORDS:
            return frozenset(), False  # "something for women" names who, not what
        leaves = categoriser.leaves_under(item.data["node"])
        if departments := self._departments(state):
            # The node read may be another department's name for the kind: women's down jackets
            # are "Down Jackets & Parkas", men's "Down & Down Alternative".
            held = department_leaves(self.features, departments)
            if not leaves & held and (same := same_kind(held, tuple(words))):
                leaves = same
        return leaves, self._decided_by_other_words(item.value, words, leaves)

    def _decided_by_other_words(self, name: str, words, leaves: frozenset[str]) -> bool:
        """Do words of `name` beside its category `words` move the categoriser off what those
        words alone read?"""
        others = [t for t in tokens(name) if t not in STOPWORDS and stem(t) not in words]
        if not others or not words:
            return False
        alone = self.lexicon.read_item(" ".join(words))
        categoriser = self.lexicon.categoriser
        if alone is None or alone.node is None or alone.node_p < KIND_SURE or not categoriser:
            return False
        return not categoriser.leaves_under(alone.node) & leaves

    def _decide(self, tracer: Tracer, state: ShoppingState, ranked, turn: int, top_k: int):
        with tracer.stage("dialogue") as event:
            decision = decide(
                state,
                ranked,
                self.features,
                turn,
                top_k,
                self.settings.dialogue,
                alternatives=tracer.detailed,
                relaxed=ranked.relaxed,
                spread=ranked.spread,
            )
            event.output = {
                "relaxed": list(ranked.relaxed),
                "spread": ranked.spread,
                "ask_attribute": decision.ask_attribute,
                "options": decision.options,
                "alternatives": decision.alternatives,
                "width": decision.width,
            }
            event.summary = f"ask {decision.ask_attribute or 'nothing'}, show {decision.width}"
        return decision

    def _respond(
        self,
        tracer: Tracer,
        state: ShoppingState,
        ranked,
        decision,
        turn: int,
        resolver: dict[str, Any],
    ) -> dict[str, Any]:
        with tracer.stage("respond") as event:
            shown = ranked.explain(decision.width)[: decision.width]
            earlier = {
                asin for epoch, ids in state.shown.items() if epoch != state.epoch for asin in ids
            }
            response = {
                "message": decision.message,
                "ask_attribute": decision.ask_attribute,
                "recommendations": [
                    {
                        "parent_asin": s.parent_asin,
                        "score": round(s.score, 4),
                        "reason": reason(s, self.settings.people),
                        "shown_before": s.parent_asin in earlier,
                    }
                    for s in shown
                ],
                "usage": {  # what the model resolver cost this turn (0: not asked)
                    "prompt_tokens": resolver.get("prompt_tokens", 0),
                    "completion_tokens": resolver.get("completion_tokens", 0),
                },
            }
            _record_turn(state, turn, decision, [s.parent_asin for s in shown])
            event.output, event.summary = (
                {"recommendations": len(shown)},
                f"{len(shown)} recommendations",
            )
        return response

    def _shown_facts(self, ids: list[str]) -> list[Shown]:
        """The facts a reference or critique of the products shown last needs, by position."""
        known = [(position, asin) for position, asin in enumerate(ids, 1)]
        rows = [self.features.row_of(asin) for _, asin in known]
        present = [(p, a, r) for (p, a), r in zip(known, rows, strict=True) if r is not None]
        facets = self.features.facets([r for _, _, r in present])
        titles = [_title(self.features, row) for _, _, row in present]
        return [
            Shown(
                position=position,
                parent_asin=asin,
                price=f.price,
                brand=f.brand,
                colors=f.colors,
                materials=f.materials,
                styles=f.styles,
                leaf=f.leaf,
                words=_stems(title) | _stems(f.brand or "") | _stems(f.leaf),
                title=title,
            )
            for (position, asin, _), f, title in zip(present, facets, titles, strict=True)
        ]

    def forget(self, session_id: str) -> None:
        """Drop a session from memory (the web store keeps its own copy)."""
        with self._lock:
            self._sessions.pop(session_id, None)

    def export_session(self, session_id: str) -> dict[str, Any]:
        """The session's shopper state as plain JSON data (what `import_session` takes back)."""
        return self._session(session_id).to_dict()

    def import_session(self, session_id: str, data: dict[str, Any]) -> None:
        with self._lock:
            self._sessions[session_id] = ShoppingState.from_dict(data)

    def _session(self, session_id: str) -> ShoppingState:
        with self._lock:
            if session_id not in self._sessions:
                self._sessions[session_id] = ShoppingState()
            return self._sessions[session_id]


EXPLAINED = 10  # top products whose evidence the trace shows
RESHAPED = ("smaller", "bigger", "shorter", "longer")  # critiques the reply names (replies.json)
COMPARING = frozenset(OF_A_PAIR) | frozenset(OF_THE_LIST)


def _lexicon(index: CatalogIndex) -> Lexicon:
    """What the words of this catalog mean: its category paths, usable store names and words, and
    the categoriser learnt from its titles."""
    counts = catalog_counts(index.store, index.path)
    brands = counts.remembered(
        "usable_brands", usable_brands_version(), lambda: usable_brands(counts.brands, counts.paths)
    )
    return Lexicon(counts.paths, brands, counts.words, load_or_train(index.store, index.path))


def _vectors(index: CatalogIndex, settings: AgentSettings, progress: bool) -> ProductVectors | None:
    """The index's product vectors when the settings use them (or SHOPCOPILOT_DENSE=1) and the
    model loads."""
    if not dense_enabled(used=_uses_meaning(settings)):
        return None
    return load_vectors(index.store, index.path, load_encoder(), progress=progress)


def _same_or_wider_item(before: ShoppingState, after: ShoppingState) -> bool:
    """Does the item now asked for name no word the one before did not ("hat" after "sun hat")?"""
    was, now = before.active(Attribute.CATEGORY), after.active(Attribute.CATEGORY)
    if not was or not now:
        return False
    return set(now[-1].data.get("words", {})) <= set(was[-1].data.get("words", {}))


def _wished(state: ShoppingState, diff, values: tuple[str, ...]) -> None:
    """What "do any of these have a hood?" asked of a list none of which has it, held as a wish
    where the message's reading holds it in no other way."""
    said = " ".join(
        [c.value for c in state.active()]
        + [f.text for f in state.active_fragments() if not f.covered]
    ).lower()
    for value in values:
        if value.lower() not in said:
            state.fragments.append(Fragment(value, state.turn, state.epoch, Level.HARD))
            diff.fragments.append(value)


def _moved_up(turn: int, count: int, values: tuple[str, ...]) -> str:
    value = " or ".join(as_listed(v) for v in values)
    if count == 1:
        return say("moved_up_one", turn, value=value)
    return say("moved_up", turn, count=count, value=value, places=f"#1 to #{count}")


def _asked_before(state: ShoppingState) -> Question | None:
    """The question the last turn asked, if it asked one."""
    return read_question(state.history[-1].user) if state.history else None


def _follow_up(message: str, state: ShoppingState) -> Question | None:
    """ "and the first?": the question the last turns asked (through earlier "and #2?"s), of
    other products; only a short message can be one, so only then are they read again."""
    if len(words_with_spans(message)) > FOLLOW_UP_WORDS:
        return None
    asked = None
    for said in state.history[-3:]:
        asked = follow_up(said.user, asked) or read_question(said.user)
    if asked is not None and asked.every:
        return None  # "which of these have a hood?" answered for all; "the second one" picks
    return follow_up(message, asked)


def _uses_meaning(settings: AgentSettings) -> bool:
    return bool(settings.ranking.semantic or settings.retrieval.dense_window)


def _out_of_gc_reach() -> None:
    """Move everything loaded so far (index, lexicon, dictionary: millions of objects that live as
    long as the process) out of the cyclic garbage collector's full passes, which would otherwise
    stall a turn for 100 ms every so often."""
    gc.freeze()


POPULAR = 300  # the candidates a person who has said nothing searchable gets


def _popular(features) -> Candidates:
    """The catalog's most popular products, for a shopper who has given nothing to search by
    (the list they see, and a spread once they keep drawing a blank)."""
    count = min(POPULAR, len(features))
    if not count:
        return Candidates()
    rows = np.argpartition(-features.popularity, count - 1)[:count]
    store_rows = np.sort(rows.astype(np.int64)) + 1  # feature rows -> store rows
    return Candidates(rows=store_rows, scores=np.zeros(len(store_rows)), query_text="popular")


def _title(features, row: int) -> str:
    """A product's title as tokenised: the first field of its token text in the feature store."""
    start, end = int(features.text_ptr[row]), int(features.text_ptr[row + 1])
    return features.text[start:end].split(b"|", 1)[0].decode("ascii", "replace")


def _stems(text: str) -> frozenset[str]:
    return frozenset(stem(t) for t in tokens(text) if t not in STOPWORDS)


def _record_turn(state: ShoppingState, turn: int, decision, shown_ids: list[str]) -> None:
    state.shown.setdefault(state.epoch, []).extend(shown_ids)
    if shown_ids:
        state.last_shown = list(shown_ids)
    if decision.ask_attribute:
        state.questions.append((turn, decision.ask_attribute))
    if state.history:
        state.history[-1].agent = decision.message
        state.history[-1].ask_attribute = decision.ask_attribute


def _summarise_diff(diff) -> str:
    parts = []
    if diff.new_epoch:
        parts.append("new epoch")
    for key in ("added", "replaced", "negated"):
        items = getattr(diff, key)
        if items:
            parts.append(f"{key} " + ", ".join(f"{i['attribute']}={i['value']}" for i in items))
    if diff.unconstrained:
        parts.append("no preference: " + ", ".join(diff.unconstrained))
    if diff.fragments:
        parts.append(f"{len(diff.fragments)} requirement fragment(s)")
    parts.extend(
        f"{c['kind']} of #{','.join(map(str, c['positions']))} ({c['text']!r}): {c['effect']}"
        for c in diff.critiques
    )
    return "; ".join(parts) or "nothing new"


def _summarise_resolver(record: dict[str, Any]) -> str:
    unsure = "rules unsure (" + ", ".join(record["reasons"]) + "): model asked"
    if record["error"]:
        return f"{unsure}, failed ({record['error']}); rules only"
    if record["used"]:
        return f"{unsure}, used " + ", ".join(record["used"])
    return f"{unsure}, nothing used"


def _rerank_output(lexical_order: list[str], ranked) -> dict[str, Any]:
    before = {asin: i for i, asin in enumerate(lexical_order)}
    top = ranked[:EXPLAINED]
    return {
        "moves": [
            {"parent_asin": s.parent_asin, "from": before.get(s.parent_asin, -1) + 1, "to": i + 1}
            for i, s in enumerate(top)
        ],
        "top": [
            {
                "parent_asin": s.parent_asin,
                "score": round(s.score, 3),
                "evidence": {k: round(v, 3) for k, v in s.parts.items()},
            }
            for s in top
        ],
    }


@dataclass(slots=True)
class Talk:
    """What a person's turn asked of the copilot besides a search."""

    question: Question | None = None
    answers: list[Answer] = field(default_factory=list)
    dropped: list[Any] | None = None  # the requirements a chip's × took back
    mixed: bool = False  # the question came with a request ("is #2 waterproof? under 50 pls")
    nearest: tuple[str, str, str] | None = None  # (item said, nearest kind shown, who it is for)
    # The places of the shown products that say what a question of the whole list asks ("any
    # with a hood?"); None for another question.
    having: list[int] | None = None


def _mark_new(response: dict[str, Any], last_shown: list[str]) -> None:
    before = set(last_shown)
    for recommendation in response["recommendations"]:
        recommendation["new"] = bool(before) and recommendation["parent_asin"] not in before


def _item_changed(before: ShoppingState, after: ShoppingState) -> bool:
    def item(state: ShoppingState) -> tuple[str, int]:
        items = state.active(Attribute.CATEGORY)
        newest = max(items, key=lambda c: c.source_turn) if items else None
        return (newest.value, newest.source_turn) if newest else ("", 0)

    (was, _), (now, said_in) = item(before), item(after)
    # "leather doesn't matter" after "a leather wallet" leaves the same item, in fewer words
    fewer_words = said_in < after.turn and set(now.split()) < set(was.split())
    return bool(was) and was != now and not fewer_words


def _said(replaced: dict[str, Any]) -> str:
    """A requirement set aside, as a person would name it ("size 8", not "8")."""
    value = str(replaced.get("value", ""))
    return f"size {value}" if replaced.get("attribute") == Attribute.SIZE else value


def _bound_to_item(replaced: dict[str, Any], state: ShoppingState) -> bool:
    """A requirement this turn set aside because the item changed (a size of the old item), not
    one a new value of this turn replaced ("whatever is cheaper": a lower budget)."""
    attribute = replaced.get("attribute")
    return (
        attribute != Attribute.CATEGORY
        and replaced.get("turn", state.turn) < state.turn
        and not any(c.value == replaced.get("value") for c in state.active())
        and not any(
            c.attribute == attribute and c.source_turn == state.turn for c in state.active()
        )
    )
