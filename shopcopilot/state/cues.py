"""The conversation's cue words, read from data/conversation.json and checked at import: how
shoppers say they have no preference, are not sure, change their mind, seek something, reject
something, open a sentence ("ok so"), and the chatter that says nothing of the product.

The code keeps only the clause structure (where in a sentence a cue may stand); the wordings
are data, so a new one is a one-line change to the file. A cue is a phrase template:

    don't|do_not [really] care|mind    choices with |, [optional] slots, * = any one word,
                                        _ joins the words of one choice
    it's|it is {item} i'm after         {item}: the words a frame captures (frames only)

An apostrophe in a word may be left out or typed curly ("dont", "don’t"). A malformed file
fails the import with an error naming the file and the entry.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..datafile import read_json_object

DATA_FILE = Path(__file__).with_name("data") / "conversation.json"

# The phrase lists, by role; each must be present (see the file's _about for what each is).
PHRASE_LISTS = (
    "no_preference",
    "retractions",
    "not_sure",
    "change_of_mind",
    "leading_change_of_mind",
    "interjections",
    "browsing",
    "small_talk",
    "subjects",
    "seeking",
    "named_with_a_negator",
    "negators",
    "contrast_negators",
    "all_but",
    "lifts",
    "self_statements",
    "requirement_leads",
    "reasons",
    "fond_of",
    "worn_out",
    "value_negators",
    "rejections_after",
    "rejects_shown",
    "about_the_use",
    "about_the_item",
    "gift_requests",
    "gift_talk",
    "description_starts",
    "before_a_verb",
    "before_a_bare_verb",
    "verb_particles",
    "brand_cues",
    "contrasts",
    "comparisons",
)
FRAME_LISTS = ("item_frames", "from_to_frames")
WORD_LISTS = (
    "chatter",
    "not_wishes",
    "wishes_too",
    "cheap_words",
    "cheap_turned_down",
    "texted_for_before",
    "counted_before",
    "phrase_stop",
    "not_a_thing",
    "opinions",
    "someone",
    "degree_words",
    "not_items",
    "not_free_of",
    "clause_links",
    "item_leads",
    "brings_in",
    "correcting",
    "no_then_a_correction",
    "suited_after",
    "lifts_after",
    "lift_fillers",
    "be_forms",
    "told_after_a_negator",
    "needed_without",
    "start_over",
    "occasions",
)
# Word lists matched only at one place (right after a value, after a negator, after a form of
# "be"): their words may still be wishes elsewhere ("not needed" and "needed for work").
READ_IN_PLACE = frozenset(
    {
        "lifts_after",
        "lift_fillers",
        "told_after_a_negator",
        "needed_without",
        "be_forms",
        "start_over",
        "occasions",
    }
)
_CHOICES = r"(?:[a-z0-9'’,.:#&_-]+(?:\|[a-z0-9'’,.:#&_-]+)*|\*)"
_SLOT = re.compile(rf"{_CHOICES}|\[{_CHOICES}\]|\{{item\}}|\{{any\}}")


class CueDataError(ValueError):
    """conversation.json is malformed; the message names the file and the entry."""


@dataclass(frozen=True, slots=True)
class ConversationCues:
    phrases: Mapping[str, tuple[str, ...]]  # role -> phrase templates
    frames: Mapping[str, tuple[str, ...]]  # role -> templates with an {item}
    words: Mapping[str, frozenset[str]]  # role -> plain words
    attribute_names: Mapping[str, str]  # "colour" -> color: what a no-preference is about

    def pattern(self, role: str) -> str:
        """One role's phrases as a regex alternation, the template of most words first: at one
        place in a message the longest phrase wins ("nothing made of" over "nothing")."""
        templates = sorted(self.phrases[role], key=lambda t: (len(t.split()), len(t)), reverse=True)
        return "(?:" + "|".join(template_pattern(t) for t in templates) + ")"

    def compiled(self, role: str) -> re.Pattern[str]:
        """One role's phrases, compiled to match case-insensitively anywhere."""
        return re.compile(self.pattern(role), re.IGNORECASE)

    def frame_patterns(self, role: str) -> list[str]:
        return [template_pattern(t) for t in self.frames[role]]

    def vocabulary(self) -> frozenset[str]:
        """Every word the file uses, but small talk's: the spelling fixer leaves them alone, and
        they are no wish of the product. Small talk is matched only as a whole clause; its words
        ("real", "machine", "day", "ta") shielded that way changed how product words were read."""
        found: set[str] = set()
        phrases = {k: v for k, v in self.phrases.items() if k != "small_talk"}
        for template in (*_flat(phrases), *_flat(self.frames)):
            for slot in template.split():
                found.update(re.split(r"[|_]", slot.strip("[]").replace("’", "'")))
        for role, words in self.words.items():
            if role not in READ_IN_PLACE:
                found.update(words)
        found.update(self.attribute_names)
        return frozenset(w for w in found if w.isalpha())


def _flat(table: Mapping[str, tuple[str, ...]]) -> list[str]:
    return [t for templates in table.values() for t in templates]


def template_pattern(template: str) -> str:
    """A phrase template as a regex, at word edges: slots are joined by whitespace, an optional
    slot takes its whitespace with it."""
    slots = template.split()
    required = [i for i, slot in enumerate(slots) if not slot.startswith("[")]
    out, need_gap = "", False
    for index, slot in enumerate(slots):
        optional = slot.startswith("[")
        # Edges: every slot up to the first required one may start the match, and so on.
        first, last = index <= required[0], index >= required[-1]
        body = _slot_pattern(slot.strip("[]"), first, last)
        gap = r"\s+" if need_gap and not slot.lstrip("[").startswith("'") else ""
        if optional and need_gap:
            out += f"(?:{gap}{body})?"
        elif optional:
            out += rf"(?:{body}\s+)?"
        else:
            out += gap + body
            need_gap = True
    return out


def _slot_pattern(slot: str, first: bool, last: bool) -> str:
    if slot == "*":
        slot = "_any_word_"
    if slot in ("{item}", "{any}"):
        return r"(?P<item>.+?)" if slot == "{item}" else r".+?"
    choices = sorted(slot.split("|"), key=len, reverse=True)  # longest first, as above
    return "(?:" + "|".join(_choice_pattern(c, first, last) for c in choices) + ")"


def _choice_pattern(choice: str, first: bool, last: bool) -> str:
    """One choice of a slot; "'s" keeps its apostrophe, other apostrophes may be left out.
    A choice that starts or ends a template with a letter must not be part of a longer word
    ("whatever's" still says "whatever")."""
    if choice == "_any_word_":
        body = r"[\w'’-]+"
    elif choice.startswith("'"):
        body = "['’]" + re.escape(choice[1:])
    else:
        body = r"\s+".join(
            "['’]?".join(re.escape(part) for part in re.split(r"['’]", word))
            for word in choice.split("_")
        )
    before = r"(?<![\w'’])" if first and choice[0].isalnum() or choice[0] == "_" else ""
    after = r"(?!\w)" if last and choice[-1].isalnum() or choice[-1] == "_" else ""
    return before + body + after


def load_cues(path: Path = DATA_FILE) -> ConversationCues:
    raw = read_json_object(path, CueDataError, "the conversation cues")
    known = {*PHRASE_LISTS, *FRAME_LISTS, *WORD_LISTS, "attribute_names"}
    if unknown := sorted(k for k in raw if not k.startswith("_") and k not in known):
        raise CueDataError(f"{path}: unknown entries {', '.join(unknown)}")
    return ConversationCues(
        phrases={role: _templates(raw, role, path, frame=False) for role in PHRASE_LISTS},
        frames={role: _templates(raw, role, path, frame=True) for role in FRAME_LISTS},
        words={role: frozenset(_list(raw, role, path)) for role in WORD_LISTS},
        attribute_names=_attribute_names(raw, path),
    )


def _list(raw: Mapping[str, Any], role: str, path: Path) -> list[str]:
    values = raw.get(role)
    if not isinstance(values, list) or not values:
        raise CueDataError(f"{path}: {role} must be a non-empty list of phrases")
    for value in values:
        if not isinstance(value, str) or not value.strip() or value != value.lower():
            raise CueDataError(f"{path}: {role}: {value!r} must be a lower-case phrase")
    return values


def _templates(raw: Mapping[str, Any], role: str, path: Path, frame: bool) -> tuple[str, ...]:
    templates = _list(raw, role, path)
    for template in templates:
        slots = template.split()
        where = f"{path}: {role}: {template!r}"
        if not all(_SLOT.fullmatch(slot) for slot in slots):
            raise CueDataError(f"{where}: a slot is not words, [optional], | choices or *")
        if all(slot.startswith("[") for slot in slots):
            raise CueDataError(f"{where}: every slot is optional")
        if frame != ("{item}" in slots):
            raise CueDataError(f"{where}: " + ("a frame needs" if frame else "only frames take"))
        try:
            re.compile(template_pattern(template))
        except re.error as error:  # pragma: no cover - the slot check above rules this out
            raise CueDataError(f"{where}: {error}") from error
    return tuple(templates)


def _attribute_names(raw: Mapping[str, Any], path: Path) -> dict[str, str]:
    table = raw.get("attribute_names")
    if not isinstance(table, dict) or not table:
        raise CueDataError(f"{path}: attribute_names must map attributes to lists of words")
    names: dict[str, str] = {}
    for attribute in table:
        for word in _list(table, attribute, path):
            if names.setdefault(word, attribute) != attribute:
                raise CueDataError(f"{path}: attribute_names: {word!r} names two attributes")
    return names


CONVERSATION = load_cues()
