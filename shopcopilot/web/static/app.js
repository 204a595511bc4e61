// Shopping Copilot page: plain DOM, no build step.
// Every piece of catalog or agent text goes through textContent (see el()); never innerHTML,
// because catalog titles and features can carry markup.
"use strict";

const SESSION_KEY = "shopcopilot.session";
const AUTOPLAY_PAUSE_MS = 700;
const STAGE_ORDER = ["state", "retrieve", "rank", "dialogue", "respond"];

const page = {
  sessionId: null,
  demo: null,          // the demo run of the current session, when it is one
  busy: false,
  autoplay: false,
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

function addAgentMessage(turn, interactive) {
  const item = el("li", {class: "msg agent", dataset: {turn: turn.turn}},
    el("span", {class: "who"}, "Copilot · turn " + turn.turn),
    el("p", {}, turn.message || "(no message)"));
  if (turn.ask_attribute) {
    item.append(el("p", {class: "asks"}, "Asks about ", el("strong", {}, turn.ask_attribute)));
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

// ---- recommendations ----------------------------------------------------------------------------

function renderRecommendations(recommendations) {
  const list = clear($("recs"));
  if (!recommendations.length) {
    list.append(el("li", {class: "empty"}, "No recommendations this turn."));
    return;
  }
  recommendations.forEach((rec, index) => list.append(recommendationCard(rec, index + 1)));
  markTarget();
}

function recommendationCard(rec, rank) {
  const product = rec.product;
  const card = el("li", {class: "card", dataset: {asin: rec.parent_asin}});
  const header = el("div", {class: "card-head"},
    el("span", {class: "rank"}, "#" + rank),
    rec.shown_before ? el("span", {class: "tag seen", title: "Shown in an earlier turn"}, "shown before") : null,
    el("span", {class: "score", title: "Ranking score"}, formatScore(rec.score)));
  card.append(header);
  if (!product) {
    card.append(el("p", {class: "title"}, rec.parent_asin + " (not in the catalog)"));
    return card;
  }
  card.append(
    el("button", {type: "button", class: "title link", onclick: () => showProduct(rec.parent_asin)}, product.title),
    el("p", {class: "meta"},
      el("span", {class: "price"}, formatPrice(product.price)),
      product.store ? el("span", {class: "store"}, product.store) : null,
      el("span", {class: "rating"}, ratingText(product))),
    product.categories.length ? el("p", {class: "path"}, product.categories.join(" › ")) : null,
    product.features.length ? el("ul", {class: "features"}, product.features.map((f) => el("li", {}, f))) : null,
    rec.reason ? el("p", {class: "reason"}, el("strong", {}, "Why: "), rec.reason) : null,
    el("p", {class: "asin muted"}, rec.parent_asin),
  );
  return card;
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
      product.features.length ? el("ul", {class: "features"}, product.features.map((f) => el("li", {}, f))) : null,
      ...product.description.map((d) => el("p", {class: "description"}, d)),
      detailsTable(product.details),
      rawJson("Derived attributes", product.attributes),
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
  renderRecommendations(turn.recommendations);
  renderState(turn.state);
  renderPipeline(turn);
  if (turn.demo) setDemo(turn.demo);
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
    renderRecommendations(turn.recommendations);
    renderState(turn.state);
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
    renderRecommendations(last.recommendations);
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

  api("GET", "/api/health")
    .then((health) => { $("catalog-name").textContent = health.catalog.split("/").pop(); })
    .catch(() => {});
  loadDemoSessions();
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
