// disambig chat page: plain JS over the standard LangGraph server API (same origin).
// A turn is a run of the "chat" graph streamed with stream_mode ["updates", "custom"]:
// custom events carry stages and answer tokens, an update with __interrupt__ carries a
// clarification request; the thread's state then gives the answer's passages and interpretations.
"use strict";

const $ = (id) => document.getElementById(id);
const STAGES = {
  read_message: null, ask_clarification: null, deliver_answer: null, answer_chosen: null, focus_passages_on_choice: null,
  classify_ambiguity: "classifying ambiguity", rewrite_query: "rewriting the message from the conversation",
  run_method: "answering with {method}", retrieve: "retrieving passages", synthesize_answer: "writing the answer",
  // auto, the default method
  retrieve_for_gate: "retrieving passages", assess_ambiguity: "deciding whether the question is ambiguous",
  select_readings: "choosing readings from the passages", check_sentences: null, compose_answer: null,
  diva: "answering with DIVA",
};
const page = { threadId: null, busy: false, methods: null };

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function showBanner(text) {
  $("banner").textContent = text;
  $("banner").hidden = !text;
}

function scrollDown() { $("log").scrollTop = $("log").scrollHeight; }

function messageText(content) {
  if (typeof content === "string") return content;
  return (content || []).filter((block) => block.type === "text").map((block) => block.text).join(" ");
}

async function connect(path, options = {}) {
  let response;
  try {
    response = await fetch(path, { headers: { "Content-Type": "application/json" }, ...options });
  } catch (error) {
    throw new Error(`cannot reach the disambig server (${error.message})`);
  }
  if (!response.ok) throw new Error(await failure(response));
  return response;
}

async function api(path, options = {}) {
  const response = await connect(path, options);
  return response.status === 204 ? null : response.json();
}

async function failure(response) {
  const text = await response.text();
  try {
    const body = JSON.parse(text);
    return `${response.status}: ${body.detail || body.message || text}`;
  } catch (_) {
    return `${response.status}: ${text || response.statusText}`;
  }
}

async function* serverEvents(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer = (buffer + decoder.decode(value, { stream: true })).replace(/\r\n/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).trim();
      }
      if (data) yield { name, data: JSON.parse(data) };
    }
  }
}

// ---- rendering ----

function addMessage(kind, text) {
  const bubble = element("div", `msg ${kind}`, text);
  $("log").append(bubble);
  scrollDown();
  return bubble;
}

// Where a passage stands: "manual.pdf, p. 12, Installation > Linux" for one read by structure, else its title
function citeLabel(passage) {
  if (!passage.document) return passage.title;
  return [passage.document, passage.page ? `p. ${passage.page}` : "", passage.section].filter(Boolean).join(", ");
}

function citationButton(passages, number) {
  const passage = passages[number - 1];
  const button = element("button", "cite", `[${number}]`);
  button.type = "button";
  if (passage) {
    button.title = passage.text ? `${citeLabel(passage)}: ${passage.text.slice(0, 300)}` : citeLabel(passage);
    button.addEventListener("click", () => showPassage(number, passage));
  }
  return button;
}

function showPassage(number, passage) {
  $("passage-title").textContent = `[${number}] ${citeLabel(passage)}`;
  $("passage-text").textContent = passage.text;
  $("passage").hidden = false;
}

// A fenced code block (a reading's code, after the sentence leading into it) shows as code
const FENCED = /\n?```[^\n]*\n([\s\S]*?)\n```\n?/;

function withCitations(target, text, passages) {
  target.textContent = "";
  const blocks = text.split(FENCED);  // prose, code, prose, ...
  blocks.forEach((block, index) => {
    if (index % 2) {
      const pre = element("pre", "code");
      pre.append(element("code", null, block));
      target.append(pre);
      return;
    }
    for (const part of block.split(/(\[\d+\])/)) {
      const match = part.match(/^\[(\d+)\]$/);
      target.append(match && passages[Number(match[1]) - 1] ? citationButton(passages, Number(match[1])) : part);
    }
  });
}

// The answer's sentences; a lead-in with its code block is one (its code is never split at a period)
function answerSentences(answer) {
  return (answer || "").split(/\n\n/).flatMap((part) => FENCED.test(part) ? [part]
    : part.match(/[^.!?]+[.!?]+(\s*\[[\d,\s]+\]\.?)?|\S[^.!?]*$/g) || []);
}

// the words a sentence is compared by: case, punctuation and citation markers aside
function sentenceKey(text) {
  return (text || "").replace(/\[[\d,\s]+\]/g, " ").toLowerCase().match(/\w+/g)?.join(" ") || "";
}

// The final answer replaces the early readings and the prose in the same bubble; a reading
// shown early that the checked answer no longer holds gets a short note saying so (and why).
function renderAnswer(bubble, values, readings = []) {
  const passages = values.passages || [];
  const interpretations = values.interpretations || [];
  if (interpretations.length > 1) bubble.replaceChildren(...senseBlocks(values, passages));
  else withCitations(bubble, values.answer || bubble.textContent, passages);
  if (interpretations.length === 1) bubble.append(sourcesLine(interpretations[0].citations || [], passages));
  const final = sentenceKey(values.answer);
  const reasons = Object.fromEntries(((values.decision || {}).dropped_readings || []).map((d) => [d.sense, d.reason]));
  for (const reading of readings) {
    if (final.includes(sentenceKey(reading.text))) continue;
    const reason = reasons[reading.sense];
    bubble.append(element("div", "dropped", `dropped: ${reading.sense || reading.text}` + (reason ? ` (${reason})` : "")));
  }
  bubble.classList.add("final");  // the checked answer is in: nothing in this bubble changes any more
  scrollDown();
}

// The sense a passage stands for, in plain words: its title less a section after a colon
function senseName(passage) {
  const title = (passage && passage.title) || "";
  const cut = title.indexOf(": ");
  return cut > 0 ? title.slice(0, cut) : title;
}

function sourcesLine(ids, passages) {
  const titles = [...new Set(ids.map((id) => passages.find((p) => p.id === id)).filter(Boolean).map(citeLabel))];
  return element("div", "sources", titles.length ? `Sources: ${titles.join("; ")}` : "");
}

// An answer to an ambiguous question reads as one block per sense: the sense named, its cited
// sentence from the answer (or its short answer), and its sources by title. Sentences citing no
// sense's passage (an opening line) stay above the blocks.
function senseBlocks(values, passages) {
  const sentences = answerSentences(values.answer);
  const numbersOf = (ids) => ids.map((id) => passages.findIndex((p) => p.id === id) + 1).filter(Boolean);
  const cited = (sentence) => [...sentence.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1]));
  const used = new Set();
  const blocks = (values.interpretations || []).map((item) => {
    const numbers = numbersOf(item.citations || []);
    const own = sentences.filter((s) => cited(s).some((n) => numbers.includes(n)));
    own.forEach((s) => used.add(s));
    const block = element("section", "sense");
    block.append(element("h3", null, senseName(passages[numbers[0] - 1]) || item.question));
    const line = element("p");
    withCitations(line, own.length ? own.join(" ").trim() : `${item.answer} ${numbers.map((n) => `[${n}]`).join("")}`,
                  passages);
    block.append(line, sourcesLine(item.citations || [], passages));
    return block;
  });
  const opening = element("p", "opening");
  withCitations(opening, sentences.filter((s) => !used.has(s)).join(" ").trim(), passages);
  return opening.textContent ? [opening, ...blocks] : blocks;
}

// "Which of these did you mean?": one button per sense, named in plain words, with its cited
// sentence and source; "All of them" answers every sense; typing a message answers too
// ("none of these, ..." with what was meant).
function renderClarification(bubble, request) {
  bubble.textContent = request.error ? `${request.error}\n${request.prompt}` : request.prompt;
  bubble.classList.add("clarification");
  const buttons = element("div", "options");
  const choices = request.options.map((option) => [option.option, option.label || option.question, option]);
  choices.push([0, "All of them", null]);
  for (const [number, label, option] of choices) {
    const button = element("button", number ? "option" : "option all");
    button.type = "button";
    button.dataset.option = number;
    button.append(element("span", "label", number ? `${number}. ${label}` : label));
    if (option) {
      const source = option.source || {};
      button.append(element("span", "quote", `“${source.quote || option.answer}”`));
      if (source.title) button.append(element("span", "source", source.title));
    }
    button.addEventListener("click", () => choose(number, label, buttons));
    buttons.append(button);
  }
  bubble.append(buttons, element("div", "hint", "None of these? Type what you meant."));
  scrollDown();
}

// An empty thread says what the index holds and offers a few questions to try.
async function showWelcome() {
  const welcome = element("div", "msg ai welcome");
  $("log").replaceChildren(welcome);
  try {
    const overview = await api("/ui/index");
    if (overview.error) {
      welcome.textContent = `The index cannot be read yet: ${overview.error}`;
      return;
    }
    welcome.append(element("p", null, `This index holds ${overview.passages} passages from ${overview.documents} ` +
      `documents, among them: ${overview.topics.join(", ")}. Ask about any of them; when a name means several ` +
      "things, I ask which one you mean."));
    const examples = element("div", "examples");
    for (const question of overview.examples) {
      const button = element("button", "example", question);
      button.type = "button";
      button.addEventListener("click", () => { if (!page.busy) ask(question).catch((e) => addMessage("error", e.message)); });
      examples.append(button);
    }
    welcome.append(examples);
  } catch (error) {
    welcome.textContent = error.message;
  }
}

function stageLine(stages, text) {
  for (const line of stages.children) line.classList.add("done");
  stages.append(element("div", "stage", text));
  scrollDown();
}

function answerBubble(turn) {
  if (!turn.answer) turn.answer = addMessage("ai", "");
  return turn.answer;
}

// Readings chosen before the model call: one cited line per sense, shown at once in the
// answer's bubble; the model's prose then streams under them, in the same bubble.
function showReadings(event, turn) {
  const passages = turn.passages = [];
  for (const passage of event.passages || []) passages[passage.n - 1] = { ...passage, text: "" };
  turn.readings = event.readings || [];
  const list = element("div", "readings");
  for (const reading of turn.readings) {
    const line = element("div", "reading");
    withCitations(line, reading.text, passages);
    list.append(line);
  }
  turn.prose = element("div", "prose");
  answerBubble(turn).replaceChildren(list, turn.prose);
  scrollDown();
}

function describe(event, turn) {
  const method = $("method").value;
  if (event.event === "token") {
    if (!turn.prose) turn.prose = answerBubble(turn).appendChild(element("span", "prose"));
    turn.proseText += event.text;  // whole sentences that stand: shown as they come, never withdrawn
    withCitations(turn.prose, turn.proseText, turn.passages);
    scrollDown();
  } else if (event.event === "readings") {
    showReadings(event, turn);
  } else if (event.event === "stage") {
    const label = event.node in STAGES ? STAGES[event.node] : event.node.replace(/_/g, " ");
    if (label) stageLine(turn.stages, label.replace("{method}", method));
  } else if (event.event === "interpretations_found") {
    stageLine(turn.stages, `interpretations found: ${event.count} (${event.grounded} grounded senses)` +
      (event.asking ? ", asking which one you mean" : "") + (event.reason ? ` (${event.reason})` : ""));
  } else if (event.event === "rewrite") {
    stageLine(turn.stages, `rewritten: ${event.question}`);
  } else if (event.event === "chosen") {
    stageLine(turn.stages, `focusing on: ${event.option.label || event.option.question}`);
  } else if (event.event === "gate") {
    stageLine(turn.stages, `gate: ${event.gate} → ${event.path}`);
  }
}

// ---- runs ----

async function run(payload) {
  const turn = { stages: element("div", "stages"), answer: null, prose: null, proseText: "", passages: [], readings: [] };
  $("log").append(turn.stages);
  page.busy = true;
  $("send").disabled = true;
  let request = null, failed = null;
  try {
    const response = await connect(`/threads/${page.threadId}/runs/stream`, {
      method: "POST",
      body: JSON.stringify({ assistant_id: "chat", context: { downstream: $("method").value },
                             stream_mode: ["updates", "custom"], ...payload }),
    });
    for await (const { name, data } of serverEvents(response)) {
      if (name === "custom") describe(data, turn);
      else if (name === "updates" && data.__interrupt__) request = data.__interrupt__[0].value;
      else if (name === "error") failed = data;
    }
    if (failed) throw new Error(`the run failed: ${failed.error || "error"}: ${failed.message || JSON.stringify(failed)}`);
    if (request) {
      renderClarification(turn.answer || addMessage("ai", ""), request);
    } else {
      const state = await api(`/threads/${page.threadId}/state`);
      renderAnswer(answerBubble(turn), state.values, turn.readings);
    }
  } catch (error) {
    if (turn.answer && !turn.answer.textContent) turn.answer.remove();
    addMessage("error", error.message.replace(/^TypeError: /, ""));
  } finally {
    for (const line of turn.stages.children) line.classList.add("done");
    page.busy = false;
    $("send").disabled = false;
    $("input").focus();
    refreshThreads();
  }
}

async function ask(text) {
  if (!page.threadId) {
    const thread = await api("/threads", { method: "POST", body: JSON.stringify({ metadata: { graph_id: "chat" } }) });
    selectThread(thread.thread_id);
    refreshThreads();
  }
  $("log").querySelector(".welcome")?.remove();
  addMessage("human", text);  // while a clarification waits, the graph takes this as the reply to it
  for (const button of document.querySelectorAll(".options button")) button.disabled = true;
  await run({ input: { messages: [{ type: "human", content: text }] } });
}

async function choose(number, question, buttons) {
  if (page.busy) return;
  for (const button of buttons.querySelectorAll("button")) button.disabled = true;
  buttons.querySelector(`[data-option="${number}"]`).classList.add("chosen");
  addMessage("human", question);
  await run({ command: { resume: number } });
}

// ---- threads ----

function selectThread(threadId) {
  page.threadId = threadId;
  history.replaceState(null, "", threadId ? `#thread=${threadId}` : location.pathname);
  for (const item of $("threads").children) item.classList.toggle("current", item.dataset.thread === threadId);
}

async function refreshThreads() {
  try {
    const threads = await api("/threads/search", { method: "POST", body: JSON.stringify({
      metadata: { graph_id: "chat" }, limit: 50, sort_by: "updated_at", sort_order: "desc" }) });
    $("threads").replaceChildren(...threads.map((thread) => {
      const first = ((thread.values && thread.values.messages) || []).find((m) => m.type === "human");
      const item = element("li", thread.thread_id === page.threadId ? "current" : "",
                           first ? messageText(first.content) : "(empty thread)");
      item.dataset.thread = thread.thread_id;
      item.title = item.textContent;
      if (thread.status === "interrupted") item.append(element("span", "status", " · waiting"));
      if (thread.status === "error") item.append(element("span", "status", " · failed"));
      item.addEventListener("click", () => openThread(thread.thread_id));
      return item;
    }));
    showBanner("");
  } catch (error) {
    showBanner(error.message);
  }
}

async function openThread(threadId) {
  if (page.busy) return;
  selectThread(threadId);
  $("log").replaceChildren();
  $("passage").hidden = true;
  try {
    const [thread, state] = await Promise.all([api(`/threads/${threadId}`), api(`/threads/${threadId}/state`)]);
    const messages = (state.values && state.values.messages) || [];
    const pending = (state.interrupts || []).concat(...(state.tasks || []).map((task) => task.interrupts || []));
    messages.forEach((message, index) => {
      const bubble = addMessage(message.type === "human" ? "human" : "ai", messageText(message.content));
      const last = index === messages.length - 1;
      if (last && message.type === "ai" && pending.length) renderClarification(bubble, pending[0].value);
      else if (last && message.type === "ai") renderAnswer(bubble, state.values);
    });
    if (thread.status === "error") addMessage("error", "The last run on this thread failed; ask again.");
  } catch (error) {
    addMessage("error", error.message);
  }
  $("input").focus();
}

async function loadMethods() {
  try {
    const { methods, default: chosen } = await api("/ui/methods");
    $("method").replaceChildren(...methods.map(({ name, summary }) => {
      const option = element("option", null, name);
      option.value = name;
      option.title = summary;
      option.selected = name === chosen;
      return option;
    }));
  } catch (error) {
    showBanner(error.message);
  }
}

$("ask").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = $("input").value.trim();
  if (!text || page.busy) return;
  $("input").value = "";
  ask(text).catch((error) => addMessage("error", error.message));
  $("input").focus();
});
$("new-chat").addEventListener("click", () => {
  if (page.busy) return;
  selectThread(null);
  showWelcome();
  $("input").focus();
});
$("passage-close").addEventListener("click", () => { $("passage").hidden = true; $("input").focus(); });
document.addEventListener("keydown", (event) => { if (event.key === "Escape") $("passage").hidden = true; });

(async () => {
  await loadMethods();
  await refreshThreads();
  const match = location.hash.match(/thread=([\w-]+)/);
  if (match) await openThread(match[1]);
  else showWelcome();
  $("input").focus();
})();
