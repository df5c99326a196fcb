"""Extractive readings: a cited sentence per sense of the passages that a model's answer missed.

Small models write one reading; the others sit in the passages. After the model's answer, the
passages it did not cite are read in code: each one's best sentence for the question
(`SentenceScorer`: the question's rarity-weighted words, the sentence's cosine to the question,
whether it holds what is asked, whether it opens its passage), chosen greedily like MMR so a
sense the answer missed goes before a second reading of one it has (`extra_readings`).
Each reading is the passage's own sentence, so it is grounded by construction.
"""

from __future__ import annotations

import math
import re

from langgraph.runtime import Runtime

from agent.context import Context
from agent.llm.answers import cited_numbers
from agent.llm.prompts import CITATION_MARKER
from agent.retrieval.retriever import get_retriever, passage_vectors
from agent.steps.ambiguity_signals import title_years, years_named
from agent.steps.coherence import cosine
from agent.steps.grounding import STOPWORDS, answer_support, content_tokens, passage_words, stem, tokens
from agent.steps.interpretations import NOT_IN_DOCUMENTS, is_readings_intro, marker, not_silent, sentences
from agent.steps.nodes import answer_update, synthesize_answer

EXTRA_READINGS = 3  # extractive readings added at most (4 on the ASQA sample: ROUGE-Lsum 29.1, below vanilla's 30.0)
# "What is X?" asks for every meaning: one reading more (demo sense recall 0.667 -> 0.686; ASQA unchanged)
DEFINITION_READINGS = 1
# a sentence holding what the question asks for (a year for "when"): 0.3 scored 27.3 STR-EM on ASQA, 0.5 27.9
ANSWER_TYPE_BONUS = 0.5
MIN_MATCH = 0.4  # share of the question's (rarity-weighted) content words a reading's sentence must carry ...
MIN_COSINE = 0.4  # ... or its cosine to the question (packaged MiniLM encoder)
FLOOR_COSINE = 0.2  # and at least this cosine: one rare shared word ("entered") does not make a sentence on topic
WORD_WEIGHT = 1.0  # weight of the word match against the cosine in a sentence's score
LEAD_BONUS = 0.1  # a passage's opening sentence usually defines its subject
ACRONYM_BONUS = 0.1  # a sentence spelling out an acronym of the question ("Hit points" for HP)
CITED_SUPPORT = 0.67  # share of a model sentence's content words its citations must hold (0.5 and 0.67 scored alike on ASQA)
REPEAT_OVERLAP = 0.8  # share of a model sentence's content words already said that makes it a repeat
NOVELTY_PENALTY = 1.0  # weight of a candidate's closeness to passages already stated (MMR's 1 - lambda)
# a sentence cannot end on these: it was cut off ("market his", "words meaning", "known as")
DANGLING = frozenset("a an the of to for by with and or but from into his her their its our my your which that "
                     "whose meaning called named including such as than is are was were".split())
SENTENCE_END = '.!?"\')'  # a text ending in none of these was cut mid-sentence (a chunk boundary)
# a question word named by this share of the pool's passages is its topic, and a reading's passage
# names every such word: 0.67 keeps "Northwind Rental Car Policy" out of "What is the renewal
# policy?" (topic: renewal, policy); any one word of a 0.5 share let it in (same sense recall and ASQA)
TOPIC_SHARE = 0.67
# when no word reaches it, the most named word is the topic if half the pool names it: "Where are
# Jaguars found?" over 10 jaguar passages of 15 read "Pythons ... found in Africa" (ASQA and sense recall unchanged)
FALLBACK_TOPIC_SHARE = 0.5
# a passage the model's prose cites but its interpretations do not may give a reading when the
# sentence is mostly new (its prose said another fact of it: "Python was created in the late 1980s"
# for "When did Python first appear?"); the passage counts as this close to itself. Demo sense
# recall 0.637 -> 0.667 with 0.5 (0.7: 0.657; 0, as any new passage: ASQA auto 29.4 -> 25.6)
RESTATE_NEW = 0.5
RESTATE_SELF = 0.5
READ_WEIGHT = 0.5  # closeness to a reading already added counts this much: the model's cited sense is sure,
# a reading's sense only likely (river and rainforest passages are closer than two of a company's)


def synthesize_with_readings(state: dict, runtime: Runtime[Context]) -> dict:
    """The shared synthesis over `passages`, then extractive readings from those passages and
    the `detection_passages` (a method's wider first search) that the answer does not cite.
    Not tracked itself: the route and usage are the synthesis's, the readings cost no call."""
    shown = state.get("passages") or []
    update = synthesize_answer(state, runtime)
    pool = list({p["id"]: p for p in [*shown, *(state.get("detection_passages") or [])]}.values())
    return add_missed_readings(update, state["question"], shown, pool, runtime.context)


def synthesize_checked(state: dict, runtime: Runtime[Context]) -> dict:
    """The shared synthesis for a question judged clear: the model's sentences pass the same
    checks as with readings (held by their citations, not about another year's edition, not a
    list of passage titles), and no second sense is added; only when none of them survives
    does the passages' best sentence for the question answer instead."""
    shown = state.get("passages") or []
    update = synthesize_answer(state, runtime)
    return add_missed_readings(update, state["question"], shown, shown, runtime.context, limit=0)


def add_missed_readings(update: dict, question: str, shown: list[dict], pool: list[dict], context: Context,
                        limit: int = EXTRA_READINGS) -> dict:
    """A synthesizing node's `update` (over the `shown` passages) with up to `limit` (one more
    for "What is X?"; 0: none unless no model sentence survives, then one) extractive readings
    from the `pool` passages neither its interpretations nor its sentences cite: the model's
    sentences stay, less silence claims, fragments, lists of passage titles, sentences their
    citations do not hold or that cite another edition than the question's year, and each one
    citing nothing gets the passage holding it; each reading follows as "Title: sentence [n]";
    `passages` becomes what the markers number. A failed call is left as it is (nothing to add to)."""
    if update["decision"].get("abstained") and update["answer"] != NOT_IN_DOCUMENTS:
        return {**update, "passages": shown}
    retriever = get_retriever(context)
    lead = model_sentences(update["answer"], shown, question, retriever.embed_queries)
    by_id = {p["id"]: p for p in pool}
    kept = [item for item in update["interpretations"] if not other_edition_reading(item, by_id, question)]
    cited = {c for item in kept for c in item["citations"]}
    in_prose = {shown[n - 1]["id"] for sentence in lead for n in cited_numbers(sentence) if 1 <= n <= len(shown)}
    said = {w for sentence in lead for w in content_tokens(CITATION_MARKER.sub(" ", sentence))}
    if limit and defined_subject(question):
        limit += DEFINITION_READINGS
    wanted = limit or (0 if lead else 1)
    vectors = passage_vectors(retriever, pool) if pool and wanted else []
    added = extra_readings(question, pool, vectors, cited | in_prose, retriever.embed_queries, limit=wanted,
                           restatable=in_prose - cited, said=said) if wanted else []
    if not added:
        if not lead and not kept and off_question_only(update["answer"], question, shown):
            return {**update, **answer_update(NOT_IN_DOCUMENTS, [], **{**update["decision"], "abstained": True}),
                    "passages": shown}
        if not lead:
            return {**update, "passages": shown}
        return {**update, **answer_update(" ".join(lead), kept, **update["decision"]), "passages": shown}
    passages = list(shown) + [passage for _, passage in added if passage not in shown]
    answer = " ".join(lead + [f"{passage['title']}: {reading['answer']}{marker(reading['citations'], passages)}."
                              for reading, passage in added])
    decision = {**update["decision"], "abstained": False, "extractive_readings": len(added)}
    interpretations = kept + [reading for reading, _ in added]
    return {**update, **answer_update(answer, interpretations, **decision), "passages": passages}


def model_sentences(answer: str, shown: list[dict], question: str = "", embed=None) -> list[str]:
    """The model's sentences worth keeping: complete, not claiming silence, held by what they
    cite, about the year the question names, in the passages' script, and not a near repeat
    of what the earlier ones said (the 1.5B loops on a sentence with small changes, "founded in
    1939", then "in 1949"); a list of passage titles loses its titles; each one citing nothing
    gets the passage holding it. (Dropping sentences with a number no passage has cost 0.6 STR-EM on ASQA.)"""
    kept: list[str] = []
    said: set[str] = set()
    asked = ""  # a question the model wrote before its answer ("Which team ...? The team ... [4].")
    for sentence in not_silent(answer):
        sentence = without_title_clauses(sentence, shown)
        if is_readings_intro(sentence):  # its count goes stale once readings are added
            continue
        if sentence.rstrip().endswith("?"):
            asked = sentence  # it stays only with the answer that follows it
            continue
        words = set(content_tokens(CITATION_MARKER.sub(" ", sentence)))
        if (not words or not supported_by_citation(sentence, shown) or len(words & said) >= REPEAT_OVERLAP * len(words)
                or foreign_script(sentence, shown) or other_edition(sentence, shown, question)
                or ends_at_cut(sentence, shown) or bare_and_off_question(sentence, question, shown)):
            asked = ""
            continue
        kept += [asked, cite_holding_passage(sentence, shown)] if asked else [cite_holding_passage(sentence, shown)]
        said |= words
        asked = ""
    if embed is not None and question and kept:
        kept = on_question(kept, question, embed)
    return kept


BARE_ANSWER = 5  # content words: fewer is a bare answer ("Carly Fiorina [1].")
OFF_QUESTION_COSINE = 0.2  # under this cosine to the question, with none of its words, a sentence answers another
# share of the question's words a bare answer's cited passages must name: "The Bills won their
# division in 1991 [4]." names 2 of 5 ("last", "time" are not in its passage), "Jaguar [1]." for the
# 2030 World Cup 1 of 5
BARE_SUPPORT = 0.34


def bare_and_off_question(sentence: str, question: str, passages: list[dict]) -> bool:
    """Whether a bare answer cites passages naming under BARE_SUPPORT of the question's words:
    "Jaguar [1]." citing "Jaguar at Le Mans" for "Who won the 2030 FIFA World Cup?" (the 1.5B
    answers what its passages do not hold, and a bare answer's own words are all in its passage)."""
    words = content_tokens(CITATION_MARKER.sub(" ", sentence))
    cited = [passages[n - 1] for n in cited_numbers(sentence) if 1 <= n <= len(passages)]
    asked = question_words(question)
    if len(words) >= BARE_ANSWER or not cited or not asked:
        return False
    named = set(content_tokens(" ".join(passage_words(p) for p in cited)))
    if any(spells_out(question, p.get("title", "")) for p in cited):  # "Hewlett-Packard" names HP
        named |= {stem(w.lower()) for w in _ACRONYM.findall(question)}
    return sum(mentions(word, named) for word in asked) < BARE_SUPPORT * len(asked)


def off_question_only(answer: str, question: str, passages: list[dict]) -> bool:
    """Whether the answer is nothing but bare answers citing passages off the question: the model
    answered what its passages do not hold, so the documents do not answer it. (An answer whose
    sentences failed other checks, such as "as stated in passage [1]", stays as it was.)"""
    said = not_silent(answer)
    return bool(said) and all(bare_and_off_question(sentence, question, passages) for sentence in said)


def on_question(kept: list[str], question: str, embed) -> list[str]:
    """The kept sentences less those about something else: a whole clause (BARE_ANSWER content
    words or more: "Hey Jude [1]." answers by its form) with none of the question's content
    words and a cosine to it under OFF_QUESTION_COSINE ("Marie Curie [2] conducted pioneering
    research on radioactivity" for "Who made the first ascent of Mount Everest?": the 1.5B walks
    its passages). A question the model wrote goes or stays with its answer; all off: all stay."""
    units: list[list[str]] = []  # [sentence] or [its question, sentence]
    for sentence in kept:
        if units and len(units[-1]) == 1 and units[-1][0].rstrip().endswith("?"):
            units[-1].append(sentence)
        else:
            units.append([sentence])
    asked = question_words(question)
    answers = [content_tokens(CITATION_MARKER.sub(" ", unit[-1])) for unit in units]
    vectors = embed([question] + [" ".join(unit) for unit in units])
    off = [len(words) >= BARE_ANSWER and not asked & set(words) and float(cosine(vectors[0], v)) < OFF_QUESTION_COSINE
           for words, v in zip(answers, vectors[1:])]
    if all(off):
        return kept
    return [sentence for unit, o in zip(units, off) if not o for sentence in unit]


def ends_at_cut(sentence: str, passages: list[dict]) -> bool:
    """Whether the sentence stops mid-way: on a word that needs what follows ("... to market
    his [5].", "... derived from Greek words meaning [1]."), or where a cited passage is cut off
    mid-sentence (a chunk boundary) and the model copied the fragment."""
    tail = tokens(CITATION_MARKER.sub(" ", sentence))[-3:]
    if tail and tail[-1] in DANGLING and not sentence.rstrip().endswith("?"):
        return True
    if len(tail) < 3:
        return False
    for n in cited_numbers(sentence):
        text = passages[n - 1]["text"].rstrip() if 1 <= n <= len(passages) else ""
        if text and text[-1] not in SENTENCE_END and tokens(text)[-3:] == tail:
            return True
    return False


def other_edition(sentence: str, passages: list[dict], question: str) -> bool:
    """Whether the sentence cites only passages about other years than the question names
    ("Which team was runner-up at NorthHack 2021?" answered from "NorthHack 2022")."""
    return about_other_years([passages[n - 1] for n in cited_numbers(sentence) if 1 <= n <= len(passages)], question)


def other_edition_reading(item: dict, by_id: dict[str, dict], question: str) -> bool:
    """Whether an interpretation cites only passages about other years than the question names."""
    return about_other_years([by_id[c] for c in item["citations"] if c in by_id], question)


def about_other_years(cited: list[dict], question: str) -> bool:
    """Whether the question names a year and the cited passages' titles name only other ones."""
    asked = years_named(question)
    years = set().union(*(title_years(p) for p in cited)) if cited else set()
    return bool(asked and years and not years & asked)


_CLAUSE = re.compile(r"(\[[\d,\s]+\])")


def without_title_clauses(sentence: str, passages: list[dict]) -> str:
    """The sentence less the clauses that only name their cited passage's title: the 1.5B lists
    its sources as answers ("... is PEP 8 [1], Python version history [2], Ball python [4]")."""
    pieces = _CLAUSE.split(sentence)  # text, marker, text, marker, ..., tail
    if len(pieces) < 5:  # one citation: nothing listed
        return sentence
    kept = [pieces[0], pieces[1]]
    for text, citation in zip(pieces[2:-1:2], pieces[3::2]):
        numbers = [n for n in cited_numbers(citation) if 1 <= n <= len(passages)]
        titles = " ".join(passages[n - 1].get("title", "") for n in numbers)
        words = set(content_tokens(re.sub(r"\band\b", " ", text)))
        if numbers and words and words <= set(content_tokens(titles)):
            continue
        kept += [text, citation]
    tail = pieces[-1] if len(pieces) % 2 else ""
    return "".join(kept + [tail])


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def foreign_script(sentence: str, passages: list[dict]) -> bool:
    """Whether the sentence has CJK characters no passage has: the Qwen models slip into
    Chinese mid-sentence ("The partners started the业务 [3].")."""
    return bool(_CJK.search(sentence)) and not any(_CJK.search(p["text"]) for p in passages)


def cite_holding_passage(sentence: str, passages: list[dict]) -> str:
    """A model sentence that cites nothing gets the marker of the passage holding most of its
    content words, when one holds CITED_SUPPORT of them ("...sold to Tata Motors." -> "[3]"):
    an answer's claims carry their source. Sentences that cite, or that no passage holds, stay."""
    if cited_numbers(sentence) or not passages or sentence.rstrip().endswith("?"):
        return sentence  # a question (a templated reading's first half) is not a claim
    support, number = max(((answer_support(sentence, p["text"]), n) for n, p in enumerate(passages, 1)),
                          key=lambda found: (found[0], -found[1]))  # ties: the better-ranked passage
    if support < CITED_SUPPORT:
        return sentence
    body = sentence.rstrip()
    end = body[-1] if body[-1:] in ".!?" else ""
    return f"{body[:len(body) - len(end)].rstrip()} [{number}]{end}"


def extra_readings(question: str, pool: list[dict], vectors, cited: set[str], embed=None,
                   limit: int = EXTRA_READINGS, restatable: set[str] = frozenset(),
                   said: set[str] = frozenset()) -> list[tuple[dict, dict]]:
    """Up to `limit` (reading, passage) pairs from the passages no kept reading cites, chosen
    greedily like MMR: each uncited passage's best sentence scores its relevance, less
    NOVELTY_PENALTY x its passage's highest cosine to the passages already stated (cited or
    read; none to another edition's), so a sense the answer missed goes before a second
    reading of one it has. A `restatable` passage (cited only by the prose) gives a reading
    too when RESTATE_NEW of its sentence's words are not `said` yet.
    `embed` (texts -> vectors) lets a sentence match the question by meaning, not only words."""
    other = {p["id"] for p in pool if about_other_years([p], question)}  # it answers another question
    uncited = [passage for passage in pool if passage["id"] not in (cited - restatable) | other]
    scorer = SentenceScorer(question, pool, embed, candidates=uncited)
    readings = {i: reading for i, passage in enumerate(pool) if passage in uncited
                and (reading := extractive_reading([passage], scorer)) is not None
                and not (passage["id"] in restatable and unsaid_share(reading["answer"], said) < RESTATE_NEW)}
    stated = [i for i, passage in enumerate(pool) if passage["id"] in cited]

    def closeness(i: int, j: int) -> float:
        """Passages about different editions ("NorthHack 2021", "NorthHack 2022") are two
        senses however alike their text: the answer changes with the year."""
        if (years := title_years(pool[i])) and (others := title_years(pool[j])) and not years & others:
            return 0.0
        return cosine(vectors[i], vectors[j])

    read: list[int] = []

    def novelty_adjusted(i: int) -> float:
        overlap = max([closeness(i, j) if j != i else RESTATE_SELF for j in stated]
                      + [READ_WEIGHT * closeness(i, j) for j in read], default=0.0)
        return readings[i]["score"] - NOVELTY_PENALTY * overlap

    added: list[tuple[dict, dict]] = []
    while readings and len(added) < limit:
        best = max(readings, key=novelty_adjusted)
        reading = readings.pop(best)
        added.append(({key: value for key, value in reading.items() if key != "score"}, pool[best]))
        read.append(best)
    return added


def unsaid_share(text: str, said: set[str]) -> float:
    """Share of the text's content words not among those `said`."""
    words = set(content_tokens(text))
    return len(words - said) / len(words) if words else 0.0


def supported_by_citation(sentence: str, passages: list[dict]) -> bool:
    """A sentence citing passages must have most of its content words in them ("The HP Way [4]"
    citing the hit-points passage does not); a sentence citing nothing is the model's own and stays."""
    cited = [passages[n - 1]["text"] for n in cited_numbers(sentence) if 1 <= n <= len(passages)]
    if not cited:
        return True
    return answer_support(CITATION_MARKER.sub(" ", sentence), " ".join(cited)) >= CITED_SUPPORT


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


class SentenceScorer:
    """How well each sentence of the pool answers the question: the share of the question's
    rarity-weighted content words it carries, its cosine to the question (when an encoder is
    given: "How big is Amazon?" shares no word with "about 6,400 kilometres long"), and bonuses
    for holding the kind of thing asked for, for opening its passage (the defining sentence)
    and for spelling out an acronym of the question."""

    def __init__(self, question: str, pool: list[dict], embed=None, candidates: list[dict] | None = None):
        """Word rarity over the whole `pool`; sentence cosines only for the `candidates` (the
        passages that may give a reading; default all), the one costly step."""
        self.question = question
        self.precise = precise_type(question)
        self.weights = rarity(question, pool)
        self.topic = topic_words(self.weights, pool)
        self.on_topic: dict[str, bool] = {}  # passage id -> names every topic word (once per passage)
        self.cosines: dict[tuple[str, str], float] = {}
        candidates = pool if candidates is None else candidates
        if embed is not None and self.weights:
            keys = [(p["id"], sentence) for p in candidates for sentence in passage_sentences(p)]
            titles = {p["id"]: p.get("title", "") for p in candidates}
            if keys:
                vectors = embed([question] + [f"{titles[i]}: {sentence}" for i, sentence in keys])
                self.cosines = {key: float(cosine(vectors[0], v)) for key, v in zip(keys, vectors[1:])}

    def match(self, sentence: str) -> float:
        words = set(content_tokens(sentence))
        return sum(weight for word, weight in self.weights.items() if mentions(word, words)) / sum(self.weights.values())

    def score(self, passage: dict, position: int, sentence: str) -> float | None:
        """None for a sentence too far from the question to be a reading of it, or too short
        to say anything unless it holds what is asked and a word of the question."""
        if passage["id"] not in self.on_topic:
            self.on_topic[passage["id"]] = self.topic <= set(content_tokens(passage_words(passage)))
        if not self.on_topic[passage["id"]]:
            return None  # "Pythons are ... found in Africa" read for "Where are Jaguars found?"
        match = self.match(sentence)
        meaning = self.cosines.get((passage["id"], sentence))
        if match < MIN_MATCH and (meaning is None or meaning < MIN_COSINE):
            return None
        if meaning is not None and meaning < FLOOR_COSINE:
            return None
        typed = answers_type(self.question, sentence, passage.get("title", ""))
        if len(sentence) < MIN_SENTENCE and not (typed and match > 0):
            return None
        if self.precise and not typed:  # "When ...?" read as a sentence without a date answers nothing
            return None
        return (match * WORD_WEIGHT + (meaning or 0.0) + ANSWER_TYPE_BONUS * typed
                + LEAD_BONUS * (position == 0) + ACRONYM_BONUS * spells_out(self.question, sentence))


def extractive_reading(group: list[dict], scorer: SentenceScorer) -> dict | None:
    """The group's best-scoring sentence as a reading named after its passage's title; None
    when no sentence is close enough to the question (an off-topic group, or a question made
    of stopwords only)."""
    if not scorer.weights:
        return None
    best, best_score = None, float("-inf")
    for passage in group:
        for position, sentence in enumerate(passage_sentences(passage)):
            score = scorer.score(passage, position, sentence)
            if score is not None and score > best_score:
                best, best_score = (passage, sentence), score
    if best is None:
        return None
    passage, sentence = best
    sentence = sentence.replace('""', '"')  # the corpus's CSV-doubled quotes
    if len(sentence) > 240:
        sentence = sentence[:240].rsplit(" ", 1)[0] + " ..."
    elif sentence.rstrip()[-1:] not in SENTENCE_END:  # the chunk ends mid-sentence: say it is an excerpt
        sentence = sentence.rstrip(" ,;:") + " ..."
    answer = sentence if sentence.endswith("...") else sentence.rstrip(".")
    return {"question": f"{scorer.question.strip().rstrip('?')} ({passage['title']})?", "answer": answer,
            "citations": [passage["id"]], "score": best_score}


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
_PROPER = re.compile(rf"\b(?:in|at|near|between|across|from|on|to|of)\s+(?:the\s+)?(?!{_MONTH})[A-Z][a-z]{{2,}}|"
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


def precise_type(question: str) -> bool:
    """Whether the question's answer is of a kind a sentence plainly has or lacks (a date, a
    count, a time limit): then only a sentence that has it is a reading."""
    asked = question.casefold().lstrip()
    return asked.startswith(PRECISE_TYPES) or "deadline" in asked


def answers_type(question: str, sentence: str, title: str = "") -> bool:
    """Whether the sentence holds the kind of thing the question asks for and the question does
    not already say: a year or month for when, a number of the things counted for how many, a
    number for how much/long, a proper noun for where (with a word saying it is an origin for where
    X comes from), a name for who, a time limit for a deadline, a definition of X for what is X
    (`title`: the sentence's passage, see `defines`)."""
    asked = question.casefold()
    fresh = sentence
    for word in set(re.findall(r"\w+", question)):
        if len(word) > 2 and word.lower() not in STOPWORDS:  # "from" in "come from" stays
            fresh = re.sub(rf"\b{re.escape(word)}\b", " ", fresh, flags=re.IGNORECASE)
    if asked.startswith(WHEN):
        return bool(_YEAR.search(fresh))
    if counted := re.match(r"how many (\w+)", asked):  # a number of the things counted: "63 teams"
        noun = stem(counted.group(1))
        return any(stem(word.lower()) == noun for pair in _COUNTED.findall(_DATE.sub(" ", sentence)) for word in pair)
    if asked.startswith(("how much", "how long", "how old", "how far")):
        return bool(_NUMBER.search(_DATE.sub(" ", fresh)))  # "63 metres", not "8 to 10 June 2022"
    if asked.startswith("where"):  # a place: a proper noun the question does not name
        place = bool(_PROPER.search(fresh))  # ... and for where X comes from, the word saying so:
        return place and (not _ORIGIN_QUESTION.search(asked) or bool(_ORIGIN.search(sentence)))  # "born in"
    if asked.startswith(("who", "whom", "whose", "which")):  # a name, not the asked one's ("Jacksonville Jaguars")
        own = set(content_tokens(question))
        return any(not set(content_tokens(name)) & own for name in _NAME.findall(fresh))
    if "deadline" in asked or asked.startswith(("how soon", "by when")):
        return bool(_DURATION.search(fresh))
    return defines(question, sentence, title)


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
MIN_ANSWER_SENTENCE = 20  # ... except a short one holding what is asked ("Sixty-three teams competed.")


def passage_sentences(passage: dict) -> list[str]:
    """Whole sentences of the passage: not the quoted title a chunk starts with, not a chunk's
    opening fragment (lower-case start); its closing one (no end mark) stays, and a reading
    from it is shown as an excerpt ("... Ewan McGregor, Stanley ..."): it holds answers too
    (dropping such fragments cost 1.3 to 1.8 STR-EM on the ASQA sample). Short ones are
    screened by the scorer."""
    text = re.sub(r'^\s*"[^"]{1,200}"\s+', "", passage["text"])
    return [s for s in sentences(text) if len(s) >= MIN_ANSWER_SENTENCE and not s[:1].islower()]
