// agentenv view: the episode list (filters), one episode as a conversation, two runs side by side.
"use strict";

const $ = (selector) => document.querySelector(selector);
const state = { runs: [], key: null };
// Filters and clicks can overlap; only the newest list and the newest episode request may draw.
const latest = { list: 0, episode: 0 };

async function api(path, params = {}) {
  const url = new URL(path, location.href);
  for (const [name, value] of Object.entries(params)) {
    if (value !== "" && value !== null && value !== undefined) url.searchParams.set(name, value);
  }
  const answer = await fetch(url);
  const text = await answer.text();
  let body = null;
  try {
    body = JSON.parse(text);
  } catch {
    // a plain-text error page: its text is the message
  }
  if (!answer.ok || body === null) throw new Error((body && body.detail) || text.slice(0, 300) || answer.statusText);
  return body;
}

// a reward with two decimals, or a dash where there is no number
const fixed = (value) => (typeof value === "number" && Number.isFinite(value) ? value.toFixed(2) : "–");

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value);
  }
  for (const child of children) node.append(child instanceof Node ? child : String(child));
  return node;
}

function mark(success) {
  if (success === null || success === undefined) return element("span", { class: "note" }, "–");
  return element("span", { class: success ? "ok" : "fail" }, success ? "✓" : "✗");
}

function fillSelect(select, values, labels = values) {
  values.forEach((value, i) => select.append(element("option", { value }, labels[i])));
}

async function init() {
  const info = await api("/api/runs");
  state.runs = info.runs;
  fillSelect($("#run"), info.runs.map((r) => r.id), info.runs.map((r) => `${r.label} (${r.episodes})`));
  fillSelect($("#compare"), info.runs.map((r) => r.id), info.runs.map((r) => r.label));
  fillSelect($("#env"), info.envs);
  fillSelect($("#task-type"), info.task_types);
  if (info.runs.length < 2) $("#compare").disabled = true;
  for (const id of ["#run", "#env", "#task-type", "#success", "#compare"]) {
    $(id).addEventListener("change", () => loadList().catch(showError));
  }
  await loadList();
}

async function loadList() {
  const request = ++latest.list;
  const compare = $("#compare").value;
  const rows = await api("/api/episodes", {
    run: $("#run").value, env: $("#env").value, task_type: $("#task-type").value,
    success: $("#success").value, other: compare,
  });
  if (request !== latest.list) return;
  $("#other-head").hidden = compare === "";
  if (compare !== "") $("#other-head").title = `how ${state.runs[compare].label} did on the task`;
  const body = $("#episodes tbody");
  body.replaceChildren();
  const selected = state.key ? rows.findIndex((r) => r.key === state.key) : -1;
  showRows(body, rows, 0, compare, selected + 1);  // down to the open episode's row, wherever it lies
  $("#count").textContent = `${rows.length} episode${rows.length === 1 ? "" : "s"}`;
  if (selected >= 0) await openEpisode(state.key);
}

// rows drawn at a time: a page of 100,000 rows took seconds, and spreading 130,000 into one call overflowed
// the stack (the list never drew)
const PAGE_ROWS = 1000;

function showRows(body, rows, from, compare, atLeast = 0) {
  const rest = document.createDocumentFragment();
  const end = Math.max(from + PAGE_ROWS, Math.ceil(atLeast / PAGE_ROWS) * PAGE_ROWS);
  for (const row of rows.slice(from, end)) {
    const tr = element("tr", { "data-key": row.key, onclick: () => openEpisode(row.key) },
      element("td", {}, row.item_id), element("td", {}, row.env), element("td", {}, row.task_type),
      element("td", {}, mark(row.success)), element("td", {}, fixed(row.reward)),
      element("td", {}, row.rounds));
    if (compare !== "") tr.append(element("td", { class: "other" }, mark(row.other_success)));
    if (row.key === state.key) tr.classList.add("selected");
    rest.append(tr);
  }
  const left = rows.length - end;
  if (left > 0) {
    const more = element("tr", { class: "more" }, element("td", { colspan: "7" },
      element("button", { type: "button", onclick: () => { more.remove(); showRows(body, rows, end, compare); } },
        `show ${Math.min(left, PAGE_ROWS)} more of ${left} (or filter the list)`)));
    rest.append(more);
  }
  body.append(rest);
}

function showError(error) {
  $("#panes").replaceChildren(element("div", { class: "empty" }, `error: ${error.message}`));
}

async function openEpisode(key) {
  const request = ++latest.episode;
  state.key = key;
  for (const tr of document.querySelectorAll("#episodes tbody tr")) {
    tr.classList.toggle("selected", tr.dataset.key === key);
  }
  const runs = [$("#run").value];
  if ($("#compare").value !== "") runs.push($("#compare").value);
  const panes = await Promise.all(runs.map((run) => pane(run, key)));
  if (request !== latest.episode) return;
  $("#panes").replaceChildren(...panes);
}

async function pane(run, key) {
  const label = state.runs[run].label;
  let episode;
  try {
    episode = await api("/api/episode", { run, key });
  } catch (error) {
    return element("article", { class: "pane", "data-run": run },
      element("h2", {}, label), element("p", { class: "note" }, `no episode of this task: ${error.message}`));
  }
  const article = element("article", { class: "pane", "data-run": run },
    element("h2", {}, `${label}: ${episode.item_id}`),
    element("div", { class: "facts" }, mark(episode.success),
      ` reward ${fixed(episode.reward)} · ${episode.rounds} rounds · ${episode.task_type}` +
      (episode.stop_reason ? ` · ended: ${episode.stop_reason}` : "")));
  const picture = element("div", { class: "picture" });
  article.append(picture);
  const show = episode.picture === null ? (round) => showPicture(picture, run, key, round, episode.rounds) : null;
  if (show) show(episode.rounds);
  else picture.append(element("p", { class: "note" }, episode.picture));
  article.append(...episode.turns.map((turn, i) => turnView(turn, i, show)));
  return article;
}

function showPicture(container, run, key, round, rounds) {
  const image = element("img", { alt: `the env after round ${round}`, src: `/api/picture?run=${run}&key=${encodeURIComponent(key)}&round=${round}` });
  const slider = element("input", { type: "range", min: 0, max: rounds, value: round });
  const caption = element("span", {}, ` after round ${round} of ${rounds}`);
  slider.addEventListener("change", () => showPicture(container, run, key, Number(slider.value), rounds));
  container.replaceChildren(image, element("div", {}, slider, caption));
}

function turnView(turn, index, showPicture) {
  const who = element("div", { class: "who" }, turn.role === "gpt" ? "agent" : (turn.final ? "env (final)" : "env"));
  if (turn.role === "gpt" && index >= 2) who.append(element("span", {}, `round ${turn.round}`));
  if (turn.reward !== undefined) {
    const reward = `reward ${fixed(turn.reward)}`;
    who.append(element("span", { class: `reward${turn.reward > 0 ? " positive" : ""}` }, reward));
  }
  const view = element("div", { class: `turn ${turn.role}${turn.final ? " final" : ""}` }, who);
  if (index === 0) view.append(element("details", {}, element("summary", {}, "instruction"), turn.value));
  else view.append(turn.value);
  if (turn.role === "gpt" && index >= 2 && showPicture) {
    view.title = "show the env after this round";
    view.addEventListener("click", () => showPicture(turn.round));
  }
  return view;
}

init().catch(showError);
