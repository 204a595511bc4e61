// Shopping Copilot page: plain DOM, no build step.
// Every piece of catalog or agent text goes through textContent (see el()); never innerHTML,
// because catalog titles and features can carry markup.
"use strict";

const SESSION_KEY = "shopcopilot.session";
const DETAILS_KEY = "shopcopilot.details";
const AUTOPLAY_PAUSE_MS = 700;
const EXAMPLES_SHOWN = 4;
const COMPARED_AT_MOST = 3;
const FEATURES_ON_CARD = 3;
const GREETING = "Hi! Tell me what you are shopping for: what it is, who it is for, your budget, " +
  "anything you would like or would rather avoid. I will show the best matches and keep to what you said.";
// Feature lines that say nothing (some catalogs write a missing one as "null").
const EMPTY_TEXT = new Set(["", "null", "none", "n/a", "na", "-", "nan", "undefined"]);

const page = {
  sessionId: null,
  demo: null,          // the demo run of the current session, when it is one
  busy: false,
  autoplay: false,
  examples: [],        // example requests for the greeting (GET /api/examples)
  compared: new Map(), // parent_asin -> product, the cards chosen for the side-by-side table
};

// ---- small helpers ------------------------------------------------------------------------

function $(id) {
  return document.getElementById(id);
}

// el("li", {class: "x", title: "..."}, child, "text", ...): text children become text nodes.
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function clear(node) {
  node.replaceChildren();
  return node;
}

function showStatus(text, kind) {
  const status = $("status");
  status.textContent = text || "";
  status.className = "status " + (kind || "");
  status.hidden = !text;
}

function formatPrice(price) {
  return typeof price === "number" ? "$" + price.toFixed(2) : "price unknown";
}

function formatScore(value) {
  return typeof value === "number" ? value.toFixed(3) : String(value ?? "");
}

function hasText(value) {
  return typeof value === "string" && !EMPTY_TEXT.has(value.trim().toLowerCase());
}

function rawJson(label, value) {
  return el("details", {class: "raw"}, el("summary", {}, label), el("pre", {}, JSON.stringify(value, null, 2)));
}

// ---- talking to the server -----------------------------------------------------------------

async function api(method, path, body) {
  const options = {method, headers: {Accept: "application/json"}};
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new ApiError(response.status, describeError(data));
  return data;
}

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function describeError(data) {
  const detail = data && data.detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) return detail.map((d) => d.msg || JSON.stringify(d)).join("; ");
  return "request failed";
}

// POST that answers with server-sent events: onStage(event) per stage, resolves with the turn.
async function streamTurn(path, body, onStage) {
  const response = await fetch(path, {
    method: "POST",
    headers: {Accept: "text/event-stream", "Content-Type": "application/json"},
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) {
    const data = await response.json().catch(() => ({}));
    throw new ApiError(response.status, describeError(data));
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const {value, done} = await reader.read();
    if (done) throw new Error("the server closed the stream before the turn finished");
    buffer += value.replace(/\r\n?/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const event = parseEvent(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
      if (!event) continue;
      if (event.type === "stage") onStage(event.data);
      else if (event.type === "turn") return event.data;
      else if (event.type === "error") throw new Error(event.data.detail || "the turn failed");
    }
  }
}

function parseEvent(block) {
  let type = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue; // keep-alive comment
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") type = value;
    else if (field === "data") data.push(value);
  }
  return data.length ? {type, data: JSON.parse(data.join("\n"))} : null;
}

// ---- chat -------------------------------------------------------------------------------------

function addShopperMessage(text, simulated) {
  const who = simulated ? "Simulated customer" : "You";
  $("chat").append(el("li", {class: "msg user"}, el("span", {class: "who"}, who), el("p", {}, text)));
  scrollChat();
}

function addGreeting() {
  const item = el("li", {class: "msg agent greeting", id: "greeting"},
    el("span", {class: "who"}, "Copilot"),
    el("p", {}, GREETING));
  if (page.examples.length) {
    item.append(el("p", {class: "examples-intro"}, "For example:"));
    const list = el("ul", {class: "examples", "aria-label": "Example requests"});
    for (const example of page.examples) {
      list.append(el("li", {}, el("button", {
        type: "button", class: "example", onclick: () => sendMessage(example),
      }, example)));
    }
    item.append(list);
  }
  $("chat").append(item);
}

function addAgentMessage(turn, interactive) {
  const item = el("li", {class: "msg agent", dataset: {turn: turn.turn}},
    el("span", {class: "who"}, "Copilot", el("span", {class: "dev"}, " · turn " + turn.turn)),
    el("p", {class: "reply"}, turn.message || "(no message)"));
  if (turn.ask_attribute) {
    item.append(el("p", {class: "asks dev"}, "Asks about ", el("strong", {}, turn.ask_attribute)));
  }
  if (turn.options && turn.options.length) {
    const chips = el("div", {class: "chips", role: "group", "aria-label": "Suggested answers"});
    for (const option of turn.options) {
      chips.append(el("button", {
        type: "button", class: "chip", disabled: !interactive,
        onclick: () => sendMessage(option),
      }, option));
    }
    item.append(chips);
  }
  $("chat").append(item);
  scrollChat();
}

function addPending(text) {
  const item = el("li", {class: "msg pending"}, text);
  $("chat").append(item);
  scrollChat();
  return item;
}

function scrollChat() {
  const chat = $("chat");
  chat.scrollTop = chat.scrollHeight;
}

function disableOldChips() {
  for (const chip of document.querySelectorAll("#chat .chip")) chip.disabled = true;
}

// ---- what the shopper asked for, as removable chips ------------------------------------------------

function renderRequirements(requirements) {
  const list = clear($("requirements"));
  const shown = (requirements || []).filter((r) => hasText(r.label));
  $("requirements-bar").hidden = !shown.length;
  for (const requirement of shown) {
    list.append(el("li", {},
      el("button", {
        type: "button",
        class: "requirement" + (requirement.negated ? " negated" : ""),
        dataset: {facet: requirement.facet, value: requirement.value ?? ""},
        "aria-label": "Remove “" + requirement.label + "”",
        title: "Remove “" + requirement.label + "”",
        disabled: Boolean(page.demo) || page.busy,
        onclick: () => dropRequirement(requirement),
      }, el("span", {class: "requirement-label"}, requirement.label),
      el("span", {class: "requirement-x", "aria-hidden": "true"}, "×"))));
  }
}

async function dropRequirement(requirement) {
  if (page.busy || page.demo) return;
  const query = new URLSearchParams({trace: "true"});
  if (requirement.value !== null && requirement.value !== undefined) query.set("value", requirement.value);
  const path = "/api/sessions/" + encodeURIComponent(page.sessionId) + "/requirements/" +
    encodeURIComponent(requirement.facet) + "?" + query;
  page.busy = true;
  setControls();
  disableOldChips();
  showStatus("");
  const pending = addPending("Updating…");
  try {
    const turn = await api("DELETE", path);
    pending.remove();
    renderTurn(turn, false);
  } catch (error) {
    pending.remove();
    showStatus(error.message, "error");
    if (error.status === 404 || error.status === 410) await newSession().catch(() => {});
  } finally {
    page.busy = false;
    setControls();
  }
}

// ---- recommendations ----------------------------------------------------------------------------

function renderRecommendations(recommendations, answers) {
  const list = clear($("recs"));
  if (!recommendations.length) {
    list.append(el("li", {class: "empty"}, "No recommendations this turn."));
    return;
  }
  // "new" tells what joined a list that kept some cards; on a list all new it says nothing.
  const someStayed = recommendations.some((rec) => !rec.new);
  recommendations.forEach((rec, index) => list.append(recommendationCard(rec, index + 1, someStayed)));
  markTarget();
  markCompared();
  highlightAnswered(answers || []);
}

function recommendationCard(rec, rank, markNew) {
  const product = rec.product;
  const card = el("li", {class: "card", dataset: {asin: rec.parent_asin, rank}});
  const header = el("div", {class: "card-head"},
    el("span", {class: "rank"}, "#" + rank),
    rec.new && markNew ? el("span", {class: "tag new", title: "Not in the previous list"}, "new") : null,
    rec.shown_before ? el("span", {class: "tag seen dev", title: "Shown in an earlier turn"}, "shown before") : null,
    el("span", {class: "score dev", title: "Ranking score"}, formatScore(rec.score)));
  if (!product) {
    card.append(header, el("p", {class: "title"}, rec.parent_asin + " (not in the catalog)"));
    return card;
  }
  const features = (product.features || []).filter(hasText).slice(0, FEATURES_ON_CARD);
  const titleId = "card-title-" + rank;
  card.append(
    productImage(product),
    el("div", {class: "card-body"},
      header,
      el("button", {type: "button", class: "title link", id: titleId, onclick: () => showProduct(rec.parent_asin)},
        product.title),
      el("p", {class: "meta"},
        el("span", {class: "price"}, formatPrice(product.price)),
        el("span", {class: "rating"}, ratingText(product)),
        hasText(product.store) ? el("span", {class: "store"}, product.store) : null),
      product.categories.length ? el("p", {class: "path dev"}, product.categories.join(" › ")) : null,
      features.length ? el("ul", {class: "features"}, features.map((f) => el("li", {}, f))) : null,
      hasText(rec.reason) ? el("p", {class: "reason"}, rec.reason) : null,
      el("label", {class: "compare-toggle"},
        el("input", {
          type: "checkbox", class: "compare-check", "aria-describedby": titleId,
          onchange: (event) => toggleCompared(product, event.target.checked),
        }),
        " Compare"),
      el("p", {class: "asin muted dev"}, rec.parent_asin)),
  );
  return card;
}

// The first image of the record, loaded when it scrolls near; a tinted box with the category's
// initial when there is none or it fails to load (never a broken-image icon).
function productImage(product) {
  const frame = el("div", {class: "card-image"});
  const url = (product.images || []).find((u) => /^https?:\/\//i.test(u));
  if (!url) return placeholderInto(frame, product);
  const image = el("img", {loading: "lazy", decoding: "async", alt: "", referrerpolicy: "no-referrer"});
  image.addEventListener("error", () => placeholderInto(clear(frame), product), {once: true});
  image.src = url;
  frame.append(image);
  return frame;
}

function placeholderInto(frame, product) {
  const kind = (product.categories || []).filter(hasText).at(-1) || product.title || "?";
  let hue = 0;
  for (const char of kind) hue = (hue * 31 + char.codePointAt(0)) % 360;
  frame.classList.add("placeholder");
  frame.style.setProperty("--hue", String(hue));
  frame.append(el("span", {class: "initial", "aria-hidden": "true"}, kind.trim().charAt(0).toUpperCase()));
  return frame;
}

// Cards the reply answered about: marked, and the first brought into view.
function highlightAnswered(answers) {
  const asins = new Set(answers.flatMap((a) => a.parent_asins || []));
  const positions = new Set(answers.flatMap((a) => a.positions || []));
  let first = null;
  for (const card of document.querySelectorAll("#recs .card")) {
    const answered = asins.has(card.dataset.asin) || (!asins.size && positions.has(Number(card.dataset.rank)));
    card.classList.toggle("answered", answered);
    if (answered && !first) first = card;
  }
  if (first) first.scrollIntoView({block: "nearest", behavior: "smooth"});
}

// ---- comparing chosen cards side by side ------------------------------------------------------------

function toggleCompared(product, chosen) {
  if (chosen && page.compared.size < COMPARED_AT_MOST) page.compared.set(product.parent_asin, product);
  else if (!chosen) page.compared.delete(product.parent_asin);
  markCompared();
  renderComparison();
}

function markCompared() {
  const full = page.compared.size >= COMPARED_AT_MOST;
  for (const card of document.querySelectorAll("#recs .card")) {
    const box = card.querySelector(".compare-check");
    if (!box) continue;
    const chosen = page.compared.has(card.dataset.asin);
    box.checked = chosen;
    box.disabled = full && !chosen;
    box.closest("label").title = full && !chosen ? "Up to " + COMPARED_AT_MOST + " products at a time" : "";
    card.classList.toggle("compared", chosen);
  }
  const count = page.compared.size;
  $("compare-bar").hidden = count === 0;
  $("compare-count").textContent = count === 1
    ? "1 product chosen: choose one or two more to compare"
    : count + " products side by side";
}

function detailMatching(product, pattern) {
  const found = Object.entries(product.details || {}).find(([key, value]) => pattern.test(key) && hasText(value));
  return found ? found[1] : "—";
}

function renderComparison() {
  const products = [...page.compared.values()];
  const section = $("compare");
  const table = clear($("compare-table"));
  section.hidden = products.length < 2;
  if (products.length < 2) return;
  const rows = [
    ["Price", (p) => formatPrice(p.price)],
    ["Rating", (p) => ratingText(p)],
    ["Store", (p) => (hasText(p.store) ? p.store : "—")],
    ["Brand", (p) => detailMatching(p, /brand/i)],
    ["Category", (p) => (p.categories || []).filter(hasText).at(-1) || "—"],
    ["Material", (p) => detailMatching(p, /material|fabric/i)],
    ["Colour", (p) => detailMatching(p, /colou?r/i)],
    ["Key features", (p) => {
      const features = (p.features || []).filter(hasText);
      return features.length ? el("ul", {class: "plain"}, features.map((f) => el("li", {}, f))) : "—";
    }],
  ];
  table.append(
    el("thead", {}, el("tr", {}, el("td", {}), products.map((p) => el("th", {scope: "col"}, p.title)))),
    el("tbody", {}, rows
      .filter(([label, value]) => label !== "Brand" || products.some((p) => value(p) !== "—"))
      .map(([label, value]) => el("tr", {}, el("th", {scope: "row"}, label), products.map((p) => el("td", {}, value(p)))))));
}

function clearComparison() {
  page.compared.clear();
  markCompared();
  renderComparison();
}

function ratingText(product) {
  if (typeof product.average_rating !== "number") return "no rating";
  const count = typeof product.rating_number === "number" ? product.rating_number.toLocaleString("en-US") : "?";
  return "★ " + product.average_rating.toFixed(1) + " (" + count + ")";
}

async function showProduct(asin) {
  try {
    const product = await api("GET", "/api/products/" + encodeURIComponent(asin));
    $("product-title").textContent = product.title;
    const body = clear($("product-body"));
    body.append(
      el("p", {class: "meta"}, formatPrice(product.price), " · ", product.store || "unknown store", " · ",
        ratingText(product)),
      el("p", {class: "path"}, product.categories.join(" › ")),
      product.features.some(hasText)
        ? el("ul", {class: "features"}, product.features.filter(hasText).map((f) => el("li", {}, f))) : null,
      ...product.description.filter(hasText).map((d) => el("p", {class: "description"}, d)),
      detailsTable(product.details),
      el("div", {class: "dev"}, el("p", {class: "asin muted"}, product.parent_asin),
        rawJson("Derived attributes", product.attributes)),
    );
    $("product-dialog").showModal();
  } catch (error) {
    showStatus(error.message, "error");
  }
}

function detailsTable(details) {
  const rows = Object.entries(details || {});
  if (!rows.length) return null;
  return el("table", {class: "details"},
    el("tbody", {}, rows.map(([key, value]) => el("tr", {}, el("th", {}, key), el("td", {}, value)))));
}

// ---- state ---------------------------------------------------------------------------------------

const KNOWN_STATE_KEYS = new Set([
  "turn", "epoch", "intent", "constraints", "rejected", "unconstrained", "questions_asked", "questions",
  "fragments", "shown", "history",
]);

function renderState(state) {
  const root = clear($("state"));
  if (!state) return;
  const intent = state.intent || {};
  root.append(el("p", {class: "intent"},
    el("span", {class: "tag intent-" + (intent.mode || "unknown")}, intent.mode || "unknown"),
    typeof intent.confidence === "number" ? " confidence " + intent.confidence.toFixed(2) : "",
    " · turn " + (state.turn ?? 0) + " · epoch " + (state.epoch ?? 0)));

  root.append(el("h3", {}, "Constraints"));
  root.append(constraintGroups(state.constraints || []));

  const rejected = state.rejected || [];
  root.append(el("h3", {}, "Rejected"));
  root.append(rejected.length
    ? el("ul", {class: "plain", id: "state-rejected"}, rejected.map((r) =>
      el("li", {}, el("span", {class: "attr"}, r.attribute), " ", el("s", {}, r.value), turnTag(r.source_turn))))
    : el("p", {class: "muted"}, "nothing rejected"));

  const unconstrained = state.unconstrained || [];
  root.append(el("h3", {}, "Doesn't care about"));
  root.append(unconstrained.length
    ? el("p", {class: "chips", id: "state-unconstrained"}, unconstrained.map((a) => el("span", {class: "tag"}, a)))
    : el("p", {class: "muted"}, "—"));

  const asked = state.questions_asked || state.questions || [];
  root.append(el("h3", {}, "Questions asked"));
  root.append(asked.length
    ? el("ol", {class: "plain", id: "state-questions"}, asked.map((q) => el("li", {}, "turn " + q.turn + ": ", el("strong", {}, q.attribute))))
    : el("p", {class: "muted"}, "none yet"));

  const fragments = (state.fragments || []).filter((f) => f.status !== "replaced");
  if (fragments.length) {
    root.append(el("h3", {}, "Other words kept"));
    // A covered fragment's words were all read above as values: kept for the search only.
    root.append(el("ul", {class: "plain"}, fragments.map((f) => el("li", {}, "“" + f.text + "”", turnTag(f.source_turn),
      f.covered ? el("span", {class: "muted"}, " (read above)") : null))));
  }

  const extra = Object.fromEntries(Object.entries(state).filter(([key]) => !KNOWN_STATE_KEYS.has(key)));
  if (Object.keys(extra).length) root.append(rawJson("More state", extra));
  root.append(rawJson("Raw state", state));
}

function constraintGroups(constraints) {
  if (!constraints.length) return el("p", {class: "muted", id: "state-constraints"}, "no constraints yet");
  const byAttribute = new Map();
  for (const c of constraints) {
    if (!byAttribute.has(c.attribute)) byAttribute.set(c.attribute, []);
    byAttribute.get(c.attribute).push(c);
  }
  const list = el("dl", {class: "constraints", id: "state-constraints"});
  for (const [attribute, items] of byAttribute) {
    list.append(el("dt", {}, attribute));
    for (const c of items) {
      const value = c.status === "replaced" ? el("s", {}, c.value)
        : c.status === "negated" ? el("span", {class: "negated"}, "not " + c.value)
          : el("span", {}, c.value);
      list.append(el("dd", {class: "constraint status-" + c.status, title: c.text ? "from “" + c.text + "”" : null},
        el("span", {class: "value"}, value),
        el("span", {class: "tag level-" + c.level}, c.level),
        c.status !== "active" ? el("span", {class: "tag"}, c.status) : null,
        turnTag(c.source_turn),
        el("span", {class: "muted small"}, " epoch " + c.epoch),
        typeof c.confidence === "number" ? el("span", {class: "muted small"}, " · " + c.confidence.toFixed(2)) : null));
    }
  }
  return list;
}

function turnTag(turn) {
  return el("span", {class: "muted small"}, " turn " + turn);
}

// ---- pipeline ------------------------------------------------------------------------------------

function startPipeline(turnNumber) {
  $("pipeline-title").textContent = "Pipeline · turn " + turnNumber;
  clear($("pipeline"));
}

function renderPipeline(turn) {
  startPipeline(turn.turn);
  for (const event of turn.trace) addStage(event);
}

function addStage(event) {
  const row = el("li", {class: "stage", dataset: {stage: event.stage}},
    el("div", {class: "stage-head"},
      el("strong", {class: "stage-name"}, event.stage),
      el("span", {class: "ms"}, event.ms.toFixed(1) + " ms")),
    el("p", {class: "summary"}, event.summary || ""),
    stageDetail(event),
    rawJson("Input and output", {input: event.input, output: event.output}));
  $("pipeline").append(row);
}

function stageDetail(event) {
  const out = event.output || {};
  switch (event.stage) {
    case "state": return diffDetail(out);
    case "retrieve": return el("div", {class: "detail"},
      el("p", {}, "Query: ", el("code", {}, out.query ?? "")),
      el("p", {}, "Candidates: " + (out.count ?? 0)),
      idList("Top", out.top_ids || []));
    case "rank": return el("div", {class: "detail"},
      (out.moves || []).length
        ? el("ul", {class: "plain"}, out.moves.map((m) =>
          el("li", {}, el("code", {}, m.parent_asin), " " + m.from + " → " + m.to)))
        : el("p", {class: "muted"}, "order unchanged"),
      el("ol", {class: "plain"}, (out.top || []).slice(0, 5).map((t) =>
        el("li", {}, el("code", {}, t.parent_asin), " " + formatScore(t.score),
          t.evidence ? el("span", {class: "muted small"}, " " + evidenceText(t.evidence)) : null))));
    case "dialogue": return el("div", {class: "detail"},
      el("p", {}, "Asks: ", el("strong", {}, out.ask_attribute ?? "nothing"), " · shows " + (out.width ?? "?")),
      (out.alternatives || []).length
        ? el("ul", {class: "plain"}, out.alternatives.map((a) => el("li", {}, a.attribute + " " + formatScore(a.score))))
        : null);
    default: return null;
  }
}

function evidenceText(evidence) {
  if (typeof evidence === "string") return evidence;
  if (Array.isArray(evidence)) return evidence.join(", ");
  return Object.entries(evidence).map(([key, value]) => key + " " + formatScore(value)).join(" · ");
}

// What the message was read as, each reading beside the words it came from.
function readingsDetail(read) {
  if (!read || !read.length) return null;
  return el("ul", {class: "plain readings"}, read.map((r) =>
    el("li", {class: "reading"},
      el("span", {class: "tag reading-kind"}, r.kind),
      r.value ? " " + r.value + " " : " ",
      el("q", {class: "reading-words"}, r.words))));
}

function diffDetail(diff) {
  const parts = el("div", {class: "detail"});
  const read = readingsDetail(diff.read);
  if (read) parts.append(el("p", {class: "muted small"}, "Read as:"), read);
  const describe = (c) => (c.attribute ? c.attribute + "=" : "") + (c.value ?? JSON.stringify(c));
  for (const [key, label] of [["added", "+"], ["replaced", "↺"], ["negated", "¬"]]) {
    for (const item of diff[key] || []) parts.append(el("p", {class: "diff-" + key}, label + " " + describe(item)));
  }
  for (const attribute of diff.unconstrained || []) {
    parts.append(el("p", {class: "diff-unconstrained"}, "∅ " + (attribute.attribute || attribute)));
  }
  for (const fragment of diff.fragments || []) {
    parts.append(el("p", {class: "diff-added"}, "+ words “" + (fragment.text ?? fragment) + "”"));
  }
  for (const critique of diff.critiques || []) {  // what the shopper said of shown products
    const which = "#" + (critique.positions || []).join(", #");
    parts.append(el("p", {class: "diff-added"}, "“" + critique.text + "” → " + critique.kind + " " + which + ": " + critique.effect));
  }
  if (diff.new_epoch) parts.append(el("p", {class: "tag"}, "new epoch: the shopper changed direction"));
  if (diff.resolver) parts.append(resolverDetail(diff.resolver));
  if (parts.childNodes.length === (read ? 2 : 0)) parts.append(el("p", {class: "muted"}, "no change"));
  return parts;
}

// The optional model resolver (asked only where the rules were unsure): why, what it said, what
// of it was used. Its additions also show above as ordinary + lines.
function resolverDetail(record) {
  const box = el("div", {class: "resolver"});
  const why = (record.reasons || []).join(", ");
  const cost = record.prompt_tokens + record.completion_tokens;
  box.append(el("p", {}, el("strong", {}, "Model asked"), " (rules unsure: " + why + ") · " +
    record.attempts + " call(s), " + (record.ms ?? 0) + " ms, " + cost + " tokens"));
  if (record.error) {
    box.append(el("p", {class: "diff-negated"}, "not used: " + record.error + " — the rules' reading stands"));
  } else if ((record.used || []).length) {
    box.append(el("p", {class: "diff-added"}, "used: " + record.used.join("; ")));
  } else {
    box.append(el("p", {class: "muted"}, "nothing used: it added nothing the rules left empty"));
  }
  for (const line of record.dropped || []) box.append(el("p", {class: "muted small"}, "dropped " + line));
  if (record.said) box.append(el("details", {class: "raw"}, el("summary", {}, "What the model said"), el("pre", {}, record.said)));
  return box;
}

function idList(label, ids) {
  return ids.length ? el("p", {class: "ids"}, label + ": ", ids.slice(0, 10).map((id) => el("code", {}, id + " "))) : null;
}

// ---- turns ---------------------------------------------------------------------------------------

function renderTurn(turn, simulated) {
  addShopperMessage(turn.user_message, simulated);
  addAgentMessage(turn, !simulated);
  showResults(turn);
  renderPipeline(turn);
  if (turn.demo) setDemo(turn.demo);
}

function showResults(turn) {
  renderRecommendations(turn.recommendations, turn.answers);
  renderRequirements(turn.requirements);
  renderState(turn.state);
}

async function runTurn(path, body, shopperText, simulated) {
  page.busy = true;
  setControls();
  disableOldChips();
  showStatus("");
  if (shopperText) addShopperMessage(shopperText, simulated);
  const pending = addPending("Thinking…");
  startPipeline("…");
  try {
    const turn = await streamTurn(path, body, (stage) => {
      $("pipeline-title").textContent = "Pipeline · running";
      addStage(stage);
    });
    pending.remove();
    if (!shopperText) addShopperMessage(turn.user_message, simulated);
    addAgentMessage(turn, !simulated);
    showResults(turn);
    $("pipeline-title").textContent = "Pipeline · turn " + turn.turn;
    if (turn.demo) setDemo(turn.demo);
    return turn;
  } catch (error) {
    pending.remove();
    showStatus(error.message, "error");
    if (error.status === 404 || error.status === 410) await newSession();
    throw error;
  } finally {
    page.busy = false;
    setControls();
  }
}

async function sendMessage(text) {
  const message = text.trim();
  if (!message || page.busy || page.demo) return;
  $("message").value = "";
  await runTurn("/api/sessions/" + page.sessionId + "/messages/stream", {message}, message, false).catch(() => {});
}

// ---- sessions ------------------------------------------------------------------------------------

function resetPanels() {
  clear($("chat"));
  clear($("recs"));
  clear($("pipeline"));
  $("pipeline-title").textContent = "Pipeline";
  renderRequirements([]);
  clearComparison();
  addGreeting();
}

async function newSession() {
  stopAutoplay();
  const summary = await api("POST", "/api/sessions", {profile: {}});
  adopt(summary);
}

function adopt(summary) {
  page.sessionId = summary.session_id;
  localStorage.setItem(SESSION_KEY, summary.session_id);
  resetPanels();
  renderState(summary.state);
  setDemo(summary.demo);
}

// A reload continues the stored session: its turns are replayed from the server.
async function restoreSession(sessionId) {
  const summary = await api("GET", "/api/sessions/" + encodeURIComponent(sessionId));
  adopt(summary);
  let last = null;
  for (let n = 1; n <= summary.turns; n++) {
    last = await api("GET", "/api/sessions/" + sessionId + "/turns/" + n);
    addShopperMessage(last.user_message, Boolean(summary.demo));
    addAgentMessage(last, !summary.demo && n === summary.turns);
  }
  if (last) {
    renderRecommendations(last.recommendations, last.answers);
    renderRequirements(last.requirements);
    renderPipeline(last);
  }
  renderState(summary.state);
}

// ---- demo mode -----------------------------------------------------------------------------------

async function loadDemoSessions() {
  const select = clear($("demo-session"));
  try {
    const listing = await api("GET", "/api/demo/sessions");
    for (const s of listing.sessions) {
      select.append(el("option", {value: s.sample_id},
        s.sample_id + " · " + s.scenario_type + " · " + s.source));
    }
    if (!listing.sessions.length) select.append(el("option", {value: ""}, "no demo sessions"));
    if (listing.notes.length) select.title = listing.notes.join("\n");
  } catch (error) {
    select.append(el("option", {value: ""}, "demo sessions unavailable"));
    showStatus("Demo sessions: " + error.message, "error");
  }
  setControls();
}

async function startDemo() {
  const sampleId = $("demo-session").value;
  if (!sampleId) return;
  stopAutoplay();
  try {
    const summary = await api("POST", "/api/demo/runs", {sample_id: sampleId, protocol: $("demo-protocol").value});
    adopt(summary);
    showStatus("");
  } catch (error) {
    showStatus(error.message, "error");
  }
}

async function stepDemo() {
  if (!page.demo || page.demo.done || page.busy) return null;
  return runTurn("/api/demo/runs/" + page.sessionId + "/step/stream", undefined, page.demo.next_message, true);
}

async function toggleAutoplay() {
  if (page.autoplay) {
    stopAutoplay();
    return;
  }
  page.autoplay = true;
  setControls();
  try {
    while (page.autoplay && page.demo && !page.demo.done) {
      await stepDemo();
      if (page.demo && !page.demo.done) await new Promise((r) => setTimeout(r, AUTOPLAY_PAUSE_MS));
    }
  } catch (error) {
    // runTurn already showed it
  } finally {
    stopAutoplay();
  }
}

function stopAutoplay() {
  page.autoplay = false;
  setControls();
}

function setDemo(demo) {
  page.demo = demo || null;
  const info = $("demo-info");
  const badge = $("demo-badge");
  info.hidden = !demo;
  badge.hidden = !demo;
  if (!demo) {
    badge.textContent = "";
    setControls();
    return;
  }
  info.textContent = "Demo run " + demo.sample_id + " (" + demo.scenario_type + ", " + demo.protocol +
    " customer). Target " + demo.target_asin + " is known to this page, never to the agent." +
    (demo.next_message ? " Next the customer says: “" + demo.next_message + "”" : "");
  if (demo.hit) {
    badge.textContent = "Target found at turn " + demo.hit.turn + ", rank " + demo.hit.rank;
    badge.className = "badge hit";
  } else if (demo.done) {
    badge.textContent = "Target not found in " + demo.turns + " turns";
    badge.className = "badge miss";
  } else {
    badge.textContent = demo.last_target_rank
      ? "Target shown at rank " + demo.last_target_rank + " (before the override: not counted)"
      : "Turn " + demo.turns + ": target not shown yet";
    badge.className = "badge";
  }
  markTarget();
  setControls();
}

function markTarget() {
  for (const card of document.querySelectorAll("#recs .card")) {
    card.classList.toggle("target", Boolean(page.demo) && card.dataset.asin === page.demo.target_asin);
  }
}

function setControls() {
  const demo = page.demo;
  const canStep = Boolean(demo) && !demo.done && !page.busy;
  $("demo-step").disabled = !canStep || page.autoplay;
  $("demo-play").disabled = !demo || demo.done;
  $("demo-play").textContent = page.autoplay ? "Pause" : "Auto-play";
  $("demo-start").disabled = page.busy || !$("demo-session").value;
  $("send").disabled = page.busy || Boolean(demo);
  $("message").disabled = Boolean(demo);
  $("message").placeholder = demo ? "Demo mode: the simulated customer is talking (New chat to take over)"
    : "Describe what you are looking for…";
  for (const button of document.querySelectorAll("#requirements .requirement, #chat .example")) {
    button.disabled = page.busy || Boolean(demo);
  }
}

// ---- developer detail, behind one toggle -------------------------------------------------------------

function setDetails(shown) {
  document.body.classList.toggle("show-details", shown);
  $("details-toggle").setAttribute("aria-pressed", String(shown));
  localStorage.setItem(DETAILS_KEY, shown ? "on" : "off");
}

// ---- start ---------------------------------------------------------------------------------------

async function start() {
  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    sendMessage($("message").value);
  });
  $("message").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      sendMessage($("message").value);
    }
  });
  $("new-chat").addEventListener("click", () => newSession().catch((e) => showStatus(e.message, "error")));
  $("demo-start").addEventListener("click", startDemo);
  $("demo-step").addEventListener("click", () => stepDemo().catch(() => {}));
  $("demo-play").addEventListener("click", toggleAutoplay);
  $("demo-session").addEventListener("change", setControls);
  $("compare-clear").addEventListener("click", clearComparison);
  $("details-toggle").addEventListener("click", () => setDetails(!document.body.classList.contains("show-details")));
  setDetails(localStorage.getItem(DETAILS_KEY) === "on");

  api("GET", "/api/health")
    .then((health) => { $("catalog-name").textContent = health.catalog.split("/").pop(); })
    .catch(() => {});
  loadDemoSessions();
  page.examples = await api("GET", "/api/examples?n=" + EXAMPLES_SHOWN)
    .then((body) => body.examples.filter(hasText).slice(0, EXAMPLES_SHOWN))
    .catch(() => []);
  const saved = localStorage.getItem(SESSION_KEY);
  try {
    if (saved) await restoreSession(saved);
    else await newSession();
  } catch (error) {
    await newSession().catch((e) => showStatus(e.message, "error"));
  }
  document.body.dataset.ready = "true";
}

start();
