"""Text utilities of answer assembly: question words and their weights, the kind of thing a
question asks for (a date, a place, a name, a definition), whether a sentence holds it, and a
passage's whole sentences. One place for the patterns the selector's features and the checks share.
"""

from __future__ import annotations

import math
import re

from agent.assembly.units import MIN_ANSWER_SENTENCE, passage_units, split_code
from agent.llm.answers import cited_numbers, is_question
from agent.llm.prompts import CITATION_MARKER
from agent.steps.ambiguity_signals import title_years, years_named
from agent.steps.grounding import STOPWORDS, content_tokens, passage_words, said_words, stem, tokens
from agent.steps.interpretations import sentences

__all__ = ["MIN_ANSWER_SENTENCE", "STOPWORDS", "content_tokens", "passage_words", "stem", "tokens", "sentences"]

SENTENCE_END = '.!?"\')'  # a text ending in none of these was cut mid-sentence (a chunk boundary)


def cited_sentence(body: str, citation: str) -> str:
    """`body` with its citation (" [n]") before the closing mark, as every stated sentence ends:
    "... in 1939 [1].", "... is it? [2]", an excerpt cut by its passage "... [3]", and a lead-in
    before its code block "To run the tests, type [4]:"."""
    body = body.strip()
    if body.endswith(":"):
        return f"{body[:-1].rstrip()}{citation}:"
    excerpt = body.endswith("...")
    body = body if excerpt else body.rstrip(".")
    end = "" if excerpt or body.endswith(("?", "!")) else "."
    return f"{body}{citation}{end}"


# wiki or HTML markup a passage carried ('!colspan=9 style="background:#013974"| Exhibition', "<nowiki>"):
# a closing tag, a tag with attributes, or one of the tags wiki and web pages leave in their text. A
# word in angle brackets alone is a manual's placeholder ("-A, --user-agent <name>"), not markup
_TAGS = ("a|abbr|b|big|blockquote|br|center|code|div|em|font|gallery|h[1-6]|hr|i|img|includeonly|li|math|noinclude"
         "|nowiki|ol|onlyinclude|p|poem|pre"
         "|ref|references|s|small|span|strong|sub|sup|table|td|th|tr|u|ul")
_MARKUP = re.compile(rf"\b(?:colspan|rowspan|style|class|align|width|bgcolor)\s*=|</[A-Za-z]\w*\s*>"
                     rf"|<(?:{_TAGS})\s*/?>|<[A-Za-z]\w*\s+[\w-]+\s*=[^<>]*>|\{{\{{|\}}\}}", re.IGNORECASE)
_INLINE_CODE = re.compile(r"`[^`\n]+`")
TABLE_RUN = 4  # tokens in a row without a letter: a table row flattened into the text (".500 || 1.8 || 0.8 || 2.0")


def markup_residue(sentence: str) -> bool:
    """Whether the sentence holds markup from its passage's source: read aloud it is not prose
    (a code unit's code is not read aloud: only its lead-in counts, less its inline code)."""
    return bool(_MARKUP.search(_INLINE_CODE.sub("", split_code(sentence)[0])))


def table_residue(sentence: str) -> bool:
    """Whether the sentence holds a flattened table row (Wikipedia statistics boxes chunked as
    text): read aloud it is a string of numbers and bars, not a reading."""
    run = 0
    for token in split_code(sentence)[0].split():
        run = 0 if any(ch.isalpha() for ch in token) else run + 1
        if run >= TABLE_RUN:
            return True
    return False


# a question word named by this share of the pool's passages is its topic, and a reading's passage
# names every such word: 0.67 keeps "Northwind Rental Car Policy" out of "What is the renewal
# policy?" (topic: renewal, policy); any one word of a 0.5 share let it in (same sense recall and ASQA)
TOPIC_SHARE = 0.67
# when no word reaches it, the most named word is the topic if half the pool names it: "Where are
# Jaguars found?" over 10 jaguar passages of 15 read "Pythons ... found in Africa" (ASQA and sense recall unchanged)
FALLBACK_TOPIC_SHARE = 0.5


def about_other_years(cited: list[dict], question: str) -> bool:
    """Whether the question names a year and the cited passages' titles name only other ones."""
    asked = years_named(question)
    years = set().union(*(title_years(p) for p in cited)) if cited else set()
    return bool(asked and years and not years & asked)


def question_words(question: str) -> set[str]:
    """The question's stemmed words that can say what it is about: no stopwords, light verbs or
    quantity words ("how many")."""
    return {stem(w) for w in tokens(question) if w not in STOPWORDS | QUANTITY_WORDS | LIGHT_VERBS}


SAME_ROOT = 5  # letters: a word this long that opens another is its root ("renew" in "renewal", "cover" in "coverage")


def mentions(word: str, words: set[str]) -> bool:
    """Whether the (stemmed) `words` hold the word or one sharing its root: "renew" answers
    "What is the renewal policy?", "covered" asks about "coverage" (the stemmer strips only -s, -ed, -ing)."""
    return word in words or any(len(w) >= SAME_ROOT and len(word) >= SAME_ROOT and (w.startswith(word) or word.startswith(w))
                                for w in words)


def rarity(question: str, passages: list[dict]) -> dict[str, float]:
    """Weight of each content word of the question: rarer among the passages weighs more
    ("potts" tells more than "beast" when every passage is about Beauty and the Beast)."""
    asked = question_words(question)
    texts = [set(content_tokens(p["text"])) for p in passages]
    return {w: math.log(1 + (len(texts) + 1) / (1 + sum(mentions(w, t) for t in texts))) for w in sorted(asked)}


def topic_words(weights: dict[str, float], pool: list[dict]) -> set[str]:
    """The question's words that at least TOPIC_SHARE of the pool's passages name, or else its
    most named word if FALLBACK_TOPIC_SHARE of them do: its topic ("jaguar" when most passages
    are about one of the jaguars). A passage lacking one of them is off the topic however well
    it matches the question's other words."""
    texts = [set(content_tokens(passage_words(p))) for p in pool]
    if not texts or not weights:
        return set()
    shares = {w: sum(w in t for t in texts) / len(texts) for w in weights}
    topic = {w for w, share in shares.items() if share >= TOPIC_SHARE}
    if not topic:
        best = max(shares, key=shares.get)
        topic = {best} if shares[best] >= FALLBACK_TOPIC_SHARE else set()
    return topic



QUANTITY_WORDS = frozenset({"many", "much"})  # "how many" asks for a number; no answer says "many"
# verbs that carry no topic ("Where does Java come from?", "Do I need to buy ..."): rare in a
# pool, they outweighed its subject and picked sentences for saying "come" or "need"
LIGHT_VERBS = frozenset("come comes came coming need needs get gets got go goes went take takes took "
                        "give gives gave put puts keep keeps let lets make makes made making "
                        "known famous noted".split())
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_YEAR = re.compile(rf"\b(1[0-9]{{3}}|20[0-9]{{2}})s?\b|\b\w+\s+century\b|\b({_MONTHS})\b")
_NUMBER = re.compile(r"\b\d[\d,.]*\b|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|dozen|"
                     r"hundred|thousand|million|billion)\b", re.IGNORECASE)
_DATE = re.compile(rf"\b(\d{{1,2}}(\s+to\s+\d{{1,2}})?\s+)?({_MONTHS})\b(\s+\d{{1,2}}\b,?)?|\b(1[0-9]{{3}}|20[0-9]{{2}})\b")
_COUNTED = re.compile(r"(?:\b\d[\d,.]*|\b(?:[a-z]+-)?(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
                      r"twelve|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million)"
                      r"(?:-[a-z]+)?)\s+([a-z]+)(?:\s+([a-z]+))?", re.IGNORECASE)  # "Sixty-three teams", "81 new teams"
# a place: "in Seattle", "spans nine countries: Brazil, Peru"
_MONTH = rf"(?:{_MONTHS}|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b"
_PROPER = re.compile(rf"\b(?:in|at|near|between|across|from|on|to|of|through|throughout|around|along|within|outside)\s+"
                     rf"(?:the\s+)?(?:(?:north|south|east|west|central|northern|southern|eastern|western|upper|lower)\w*\s+)?"
                     rf"(?!{_MONTH})[A-Z][a-z]{{2,}}|"
                     rf":\s+(?!{_MONTH})[A-Z][a-z]{{2,}},")  # "in Seattle", not "in January"
_DURATION = re.compile(r"\b(within|by|before|after)\s+(\S+\s+){0,2}(hours?|days?|weeks?|months?|years?)\b|"
                       r"\bdeadline\b", re.IGNORECASE)
_NAME = re.compile(r"\b[A-Z][a-z]+(?:[ -][A-Z][a-z]+)+\b")
_ACRONYM = re.compile(r"\b[A-Z]{2,5}\b")  # "HP"
# "Where does X come from?" is answered by a birthplace, a source, an origin ("born in Stone Town",
# "seedlings brought from the Malabar coast"), not by any place X is in ("died in London")
_ORIGIN_QUESTION = re.compile(r"\b(?:come|comes|came|originated?|originates|from)\b")
_ORIGIN = re.compile(r"\b(?:born|native|origin\w*|derived|sources? of|founded|introduced|brought|descend\w*|"
                     r"mined|extracted|invented|created|developed|grown)\b", re.IGNORECASE)


WHEN = ("when", "what year", "what date", "in what year", "which year")
PRECISE_TYPES = (*WHEN, "how many")
# questions asking for a measure: "How big is Amazon?", "What is the coverage limit ...?", "What
# is the temperature of Mercury?" (a quantity noun after "what is the")
MEASURE_QUESTION = re.compile(r"^\s*how\s+(?:much|long|old|far|big|large|tall|high|deep|wide|heavy|fast|small|"
                              r"expensive|often)\b|^\s*what\s+(?:is|are|was|were)\s+the\s+(?:\w+\s+){0,2}"
                              r"(?:limit|cap|price|cost|fee|amount|size|length|height|depth|area|population|budget|"
                              r"rate|salary|maximum|minimum|total|number|percentage|value|distance|speed|weight|temperature|"
                              r"prize|premium|discharge|capacity|duration|age|mass|volume|diameter|radius|"
                              r"elevation|altitude|density|revenue|income|wage|deductible|threshold)s?\b",
                              re.IGNORECASE)
# questions asking for a reason: "Why is it called Phoenix?", "How come ...?", "What is the reason ...?"
REASON_QUESTION = re.compile(r"^\s*(?:why\b|how\s+come\b|what\s+(?:is|was|are|were)\s+the\s+(?:\w+\s+)?"
                             r"(?:reasons?|origins?)\b|for\s+what\s+reason\b)", re.IGNORECASE)
# a sentence giving a reason or an origin: "named after", "because", "in honour of", "from the Greek"
_REASON = re.compile(r"\b(?:because|since|due\s+to|owing\s+to|as\s+a\s+result|so\s+that|in\s+order\s+to|"
                     r"named\s+(?:after|for)|in\s+hono(?:u)?r\s+of|after\s+the|reasons?|derives?|derived|"
                     r"inspired\s+by|refers?\s+to|from\s+the\s+[A-Z]\w+\s+(?:word|name|term)|"
                     r"(?:Greek|Latin|Arabic|French|Spanish|Sanskrit)\s+(?:word|name|for)|symboli[sz]\w*|"
                     r"chosen\s+(?:to|because|for)|to\s+(?:reflect|suggest|evoke|mark|honou?r|signal)|"
                     r"led\s+to|prompted|after\s+(?:a|an|the|it|its)\b)", re.IGNORECASE)


# a sentence that announces reasons without giving one: "Northwind launched Project Atlas for two reasons."
_ANNOUNCED_REASONS = re.compile(r"\b(?:for|of|had|has|have)\s+(?:two|three|four|five|several|many|various|"
                                r"a\s+few|a\s+number\s+of|these|those|the\s+following)\s+(?:main\s+)?reasons\b",
                                re.IGNORECASE)


def precise_type(question: str) -> bool:
    """Whether the question's answer is of a kind a sentence plainly has or lacks (a date, a
    count, a time limit): then only a sentence that has it is a reading."""
    asked = question.casefold().lstrip()
    return asked.startswith(PRECISE_TYPES) or "deadline" in asked


def answers_type(question: str, sentence: str, title: str = "") -> bool:
    """Whether the sentence holds the kind of thing the question asks for and the question does
    not already say: a year or month for when, a number of the things counted for how many, a
    reason for why, a number for a measure (how much/long/big, what is the limit/cost), a proper noun for where (with a word saying it is an origin for where
    X comes from), a name for who, a time limit for a deadline, a definition of X for what is X
    (`title`: the sentence's passage, see `defines`)."""
    kind = answer_kind(question)
    fresh = sentence
    for word in set(re.findall(r"\w+", question)):
        if len(word) > 2 and word.lower() not in STOPWORDS:  # "from" in "come from" stays
            fresh = re.sub(rf"\b{re.escape(word)}\b", " ", fresh, flags=re.IGNORECASE)
    if kind == "date":
        return bool(_YEAR.search(fresh))
    if kind == "count":  # a number of the things counted: "63 teams"
        noun = stem(_COUNT_QUESTION.match(question.casefold().strip()).group(1))
        return any(stem(word.lower()) == noun for pair in _COUNTED.findall(_DATE.sub(" ", sentence)) for word in pair)
    if kind == "reason":  # a reason or an origin: "named after the constellation", "because"
        return bool(_REASON.search(_ANNOUNCED_REASONS.sub(" ", sentence)))
    if kind == "measure":
        return bool(_NUMBER.search(_DATE.sub(" ", fresh)))  # "63 metres", not "8 to 10 June 2022"
    if kind == "place":  # a proper noun the question does not name ...
        place = bool(_PROPER.search(fresh))  # ... and for where X comes from, the word saying so ("born in")
        return place and (not _ORIGIN_QUESTION.search(question.casefold()) or bool(_ORIGIN.search(sentence)))
    if kind in ("name", "choice"):  # a name, not the asked one's ("Jacksonville Jaguars")
        own = set(content_tokens(question))
        return any(not set(content_tokens(name)) & own for name in _NAME.findall(fresh))
    if kind == "deadline":
        return bool(_DURATION.search(fresh))
    return defines(question, sentence, title)


_COUNT_QUESTION = re.compile(r"how many (\w+)")


def answer_kind(question: str) -> str:
    """What the question asks for: "date" (when, what year), "count" (how many X), "reason"
    (why), "measure" (how big, what is the limit), "place" (where), "name" (who), "choice"
    (which), "deadline", else "other" (a definition of X for "what is X", if anything). One
    place for the question side of `answers_type` and of the gap notes."""
    asked = question.casefold().strip()
    if asked.startswith(WHEN):
        return "date"
    if _COUNT_QUESTION.match(asked):
        return "count"
    if REASON_QUESTION.match(asked):
        return "reason"
    if MEASURE_QUESTION.match(asked):
        return "measure"
    if asked.startswith("where"):
        return "place"
    if asked.startswith(("who", "whom", "whose")):
        return "name"
    if asked.startswith("which"):
        return "choice"
    if "deadline" in asked or asked.startswith(("how soon", "by when")):
        return "deadline"
    return "other"


# questions asking what X is, capturing X: "What are the meanings of X?", "What is X (known for)?",
# "Who was X?", "What does X mean / stand for / refer to?", "Define X", "Tell me about X"
_ARTICLE = r"(?:(?:a|an|the)\s+)?"
_DEFINITION_QUESTIONS = tuple(re.compile(pattern, re.IGNORECASE) for pattern in (
    rf"^\s*what\s+(?:are|is)\s+the\s+(?:meanings?|senses?|definitions?)\s+of\s+{_ARTICLE}([^?]{{1,60}}?)\s*\??\s*$",
    rf"^\s*(?:what|who)\s+(?:is|are|was|were)\s+{_ARTICLE}([^?]{{1,60}}?)"
    r"(?:\s+(?:best\s+)?(?:known|famous|noted)\s+for)?\s*\??\s*$",
    rf"^\s*what\s+(?:does|do|did|can|could|might)\s+{_ARTICLE}([^?]{{1,60}}?)\s+(?:mean|refer\s+to|stand\s+for)\s*\??\s*$",
    rf"^\s*(?:define|explain|describe|tell\s+me\s+about)\s+{_ARTICLE}([^?.]{{1,60}}?)\s*[?.]?\s*$",
))


def defined_subject(question: str) -> str | None:
    """X when the question asks what X is (every meaning of it), else None."""
    for pattern in _DEFINITION_QUESTIONS:
        if asked := pattern.match(question):
            return asked.group(1)
    return None


# "is a/an/the/one", a plural "are"/"were", or an apposition opening with an article ("The Jacksonville
# Jaguars, a professional American football team ..., compete")
_DEFINING_VERB = re.compile(r"\b(?:(?:is|are|was|were)\s+(?:a|an|the|one)|(are|were))\b|,\s+(?:a|an|the)\s",
                            re.IGNORECASE)
DEFINED_HEAD = 8  # words at most before the verb: "Hewlett-Packard, usually shortened to HP, is an ..."
_ASIDE = re.compile(r"\([^)]*\)|,[^,]*,")  # "(Panthera onca)", ", usually shortened to HP,"
# the subject's head noun comes before these: "Mount Merapi in Central Java", "The official mascot of the Java language"
_PREPOSITIONS = frozenset("of in on at from for with by near between under over".split())


def defines(question: str, sentence: str, title: str = "") -> bool:
    """For a question asking what X is (`defined_subject`): whether the sentence defines X: its subject is X
    ("Mercury is the smallest planet", "The jaguar (Panthera onca) is the largest cat"), a name
    ending with X ("The Jacksonville Jaguars, a professional American football team"), a name an
    aside says X stands for ("Hit points, abbreviated HP, are a numeric value"), or a name
    opening with X that its passage (`title`) is about ("Apple Records is a record label" in
    "Apple Records"), going on "is a/an/the ...": what such a question asks for. A subject only
    naming X ("The Jaguar I-Pace was the first" in "Jaguar I-Pace and electrification", "Mount
    Merapi in Central Java is one of") is about something else."""
    asked = defined_subject(question)
    verb = _DEFINING_VERB.search(sentence)
    if not asked or not verb:
        return False
    subject = set(content_tokens(asked))
    head = sentence[:verb.start()]
    if not subject or len(tokens(head)) > DEFINED_HEAD:
        return False
    core = tokens(_ASIDE.sub(" ", head))
    core = core[:next((i for i, w in enumerate(core) if w in _PREPOSITIONS), len(core))]
    named = [stem(w) for w in core if w not in STOPWORDS]
    aside = set(content_tokens(" ".join(_ASIDE.findall(head))))
    plural = bool(verb.group(1))  # "Pythons are nonvenomous snakes": a class, named exactly
    if plural:
        return set(named) == subject
    if set(named[-len(subject):]) == subject or (named and subject <= aside):
        return True
    titled = set(content_tokens(re.sub(r"\(.*?\)", " ", title)))
    return set(named[:len(subject)]) == subject and set(named) == titled  # "Apple Records" in its own passage


def spells_out(question: str, sentence: str) -> bool:
    """Whether the sentence opens with capitalized words whose initials spell an acronym of the
    question ("Hit points, abbreviated HP, are ...", "Hewlett-Packard ... is"): it defines that
    sense. One naming the expansion in passing ("The HP Way ... of Hewlett-Packard founders")
    is about something else."""
    words = re.findall(r"[A-Za-z]+", sentence)
    start = 1 if words[:1] == ["The"] else 0
    for acronym in _ACRONYM.findall(question):
        run = words[start:start + len(acronym)]
        if (len(run) == len(acronym) and run[0][:1].isupper() and run[0] != acronym
                and "".join(w[0] for w in run).upper() == acronym):
            return True
    return False


MIN_SENTENCE = 40  # characters: shorter ones are mostly headings, and cost ROUGE-Lsum on the ASQA sample ...
# ... except a short one holding what is asked ("Sixty-three teams competed."): MIN_ANSWER_SENTENCE


def passage_sentences(passage: dict) -> list[str]:
    """The passage's candidate readings (agent/assembly/units.py): whole sentences of prose, not
    the quoted title a chunk starts with, not a chunk's opening fragment (lower-case start); its
    closing one (no end mark) stays, and a reading from it is shown as an excerpt ("... Ewan
    McGregor, Stanley ..."): it holds answers too (dropping such fragments cost 1.3 to 1.8
    STR-EM on the ASQA sample). A passage read by structure gives its code block with the
    sentence leading into it, its table rows and its list items as units of their own. Short
    ones are screened by the scorer."""
    return [text for _, text in passage_units(passage)]


def answer_units(sentences: list[str]) -> list[list[str]]:
    """The model's sentences in units that stand or go together: [sentence], or [a question it
    wrote, the sentence answering it] ("Which team ...? The team ... [4]."); a question with no
    answer after it is a unit of its own."""
    units: list[list[str]] = []
    for sentence in sentences:
        if units and len(units[-1]) == 1 and is_question(units[-1][0]):
            units[-1].append(sentence)
        else:
            units.append([sentence])
    return units


_FORMS = ("what", "who", "when", "where", "why", "how", "which")


def question_form(question: str) -> str:
    """The question's wh-word (what/who/when/where/why/how/which), else "other"; "whom"/"whose"
    count as who, "what year"/"which year" as when."""
    asked = question.casefold().strip()
    if asked.startswith(WHEN):
        return "when"
    first = (re.findall(r"[a-z]+", asked) or ["other"])[0]
    first = "who" if first in ("whom", "whose") else first
    return first if first in _FORMS else "other"
