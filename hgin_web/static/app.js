// The web table's page. It draws what the server sends and sends back action ids taken
// from the server's legal_actions: no game logic lives here. The seat token a new game
// answers is kept in localStorage (sessionStorage where that is refused), under the game's
// id, so a reload keeps the seat; without it the page shows the game's public view. The
// viewer's speed and hand-end setting are kept there too.
"use strict";

const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
const RANKS = { T: "10" };
const HAND_KEYS = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "0", "-"];
const CARD_CODE = /(^|[^A-Za-z0-9])([A2-9TJQK])([CDHS])(?![A-Za-z0-9])/g;
const LONG_NAME = 22;    // agent labels longer than this are shortened (the full one on hover)
const POLICY_ROWS = 8;   // moves the policy panel lists

const state = {
  mode: "play",     // play | watch | replay
  meta: null,
  view: null,       // the last view the server sent
  knockMode: false,
  running: false,   // watch: auto-play on
  timer: null,
};

// ------------------------------------------------------------------ helpers
function $(id) { return document.getElementById(id); }

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k.startsWith("data-") || k === "list" || k === "style") node.setAttribute(k, v);
    else node[k] = v;
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

// Replace a node's children (arrays are flattened, null skipped).
function put(node, ...children) { node.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined)); }

function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }

// Each drawing (and the end of the start-up) counts up data-version: a test waits on it.
function bump() { document.body.dataset.version = String(Number(document.body.dataset.version) + 1); }

function setBusy(busy) { document.body.dataset.busy = busy ? "1" : "0"; }

function showError(text) {
  const box = $("error");
  box.textContent = text || "";
  box.hidden = !text;
}

// ------------------------------------------------------------------ seat tokens and the viewer's settings
function pageStore() {
  try { localStorage.setItem("hgin_probe", "1"); localStorage.removeItem("hgin_probe"); return localStorage; } catch (e) { /* refused */ }
  try { return sessionStorage; } catch (e) { return null; }
}

function seatToken(id) {
  const store = pageStore();
  return store ? store.getItem(`hgin_seat_${id}`) : null;
}

function keepToken(id, token) {
  const store = pageStore();
  if (store && token) store.setItem(`hgin_seat_${id}`, token);
}

// The viewer's own settings (the agents' speed, what a hand's end does) outlive a reload, as
// the seat does: they belong to this browser, not to the game.
const VIEWER_SETTINGS = ["speed", "hand-end-setting"];

function keepViewerSettings() {
  const store = pageStore();
  for (const id of VIEWER_SETTINGS) {
    const saved = store ? store.getItem(`hgin_${id}`) : null;
    if (saved !== null && [...$(id).options].some((o) => o.value === saved)) $(id).value = saved;
    $(id).addEventListener("change", () => { if (store) store.setItem(`hgin_${id}`, $(id).value); });
  }
}

// A request to the server; ``token`` (a game's seat token) goes as Authorization: Bearer.
async function api(method, path, body, token) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  if (token) opts.headers.Authorization = `Bearer ${token}`;
  const res = await fetch(path, opts);
  let data = null;
  try { data = await res.json(); } catch (e) { data = { error: `HTTP ${res.status}` }; }
  if (!res.ok) throw new Error(data && data.error ? data.error : `HTTP ${res.status}`);
  return data;
}

function cardText(card) { return (RANKS[card[0]] || card[0]) + SUITS[card[1]]; }

// The server's texts name cards by code (TC, KH); the page writes them as it draws them (10♣, K♥).
function cardsInText(text) { return String(text).replace(CARD_CODE, (m, before, r, s) => before + (RANKS[r] || r) + SUITS[s]); }

// A long agent label (a checkpoint path) shortened in the middle; the full label goes in a title.
function shortLabel(label) {
  if (label.length <= LONG_NAME) return label;
  const keep = LONG_NAME - 1;
  return label.slice(0, Math.ceil(keep / 2)) + "…" + label.slice(label.length - Math.floor(keep / 2));
}

// A server text as the page writes it: seats named (namesIn), cards as 10♣, long labels shortened.
function shortNames(view, text) {
  let out = cardsInText(namesIn(view, text));
  for (const p of view.players) if (p.label.length > LONG_NAME) out = out.split(p.label).join(shortLabel(p.label));
  return out;
}

// A seat as the page names it: "You" (your seat), "Partner" (yours in a partnership), else
// its agent ("Expert", "PPO", a checkpoint's short name), with the seat's number when two
// seats have the same agent. The engine's name (player_1 (expert)) goes in the hover title.
const AGENT_NAMES = { ppo: "PPO", rllib: "RLlib" };
function agentName(label) {
  if (AGENT_NAMES[label]) return AGENT_NAMES[label];
  if (label.includes(":")) return shortLabel(label);
  return label.charAt(0).toUpperCase() + label.slice(1);
}

function displayName(view, seat) {
  if (view.view === "seat" && seat === view.seat) return "You";
  if (view.view === "seat" && view.table && view.table.partner === seat) return "Partner";
  const label = view.players[seat].label;
  const same = view.players.filter((p) => p.label === label && !(view.view === "seat" && p.seat === view.seat)).length;
  return agentName(label) + (same > 1 ? ` (seat ${seat})` : "");
}

// "You draws" -> "You draw": the server's texts say every move in the third person.
const YOU_VERBS = { draws: "draw", takes: "take", passes: "pass", discards: "discard", knocks: "knock", goes: "go",
  lays: "lay", scores: "score", wins: "win" };

// A server text with its seats named as the page names them (player_1 (expert) -> Expert).
function namesIn(view, text) {
  return String(text).replace(/player_(\d+)(?: \((?:[^()]|\([^()]*\))*\))?/g, (m, s) => {
    const seat = Number(s);
    return seat < view.players.length ? displayName(view, seat) : m;
  }).replace(/\bYou (\w+)/g, (m, verb) => `You ${YOU_VERBS[verb] || verb}`);
}

function nameEl(view, seat, suffix) {
  const p = view.players[seat];
  return el("span", { class: "name", title: p.name, text: displayName(view, seat) + (suffix || "") });
}

// One card drawn in CSS: rank over suit, hearts and diamonds in red.
function cardEl(card, opts = {}) {
  const red = card[1] === "H" || card[1] === "D";
  const node = el("span", {
    class: "card" + (red ? " red" : "") + (opts.small ? " small" : "") + (opts.cls ? " " + opts.cls : ""),
    "data-card": card, title: cardText(card),
  }, el("span", { class: "rank", text: RANKS[card[0]] || card[0] }), el("span", { class: "suit", text: SUITS[card[1]] }));
  return node;
}

function backEl(small) { return el("span", { class: "card back" + (small ? " small" : ""), title: "face down" }); }

function cardsEl(cards, small) { return el("span", { class: "cards" }, cards.map((c) => cardEl(c, { small }))); }

function playerName(view, seat) { return displayName(view, seat); }

// ------------------------------------------------------------------ drawing a hand
// A grouped hand (melds, then loose cards). ``playable`` maps a card to the action a click
// sends (from the legal actions), ``dw`` the deadwood after discarding it.
function handEl(hand, opts = {}) {
  const wrap = el("div", { class: "hand" });
  let index = 0;
  const order = [];
  const groups = hand.melds.map((m) => ["meld", m]);
  if (hand.loose.length) groups.push(["loose", hand.loose]);
  for (const [kind, cards] of groups) {
    const g = el("span", { class: "group " + kind });
    for (const card of cards) {
      const action = opts.playable ? opts.playable[card] : undefined;
      const cls = [action !== undefined ? "playable" + (state.knockMode ? " knocking" : "") : "",
        card === opts.drawn ? "drawn" : ""].filter(Boolean).join(" ");
      const c = cardEl(card, { small: opts.small, cls });
      if (card === opts.drawn) c.title += " (just drawn)";
      if (action !== undefined) {
        c.setAttribute("data-action", action);
        c.addEventListener("click", () => sendAction(action));
      }
      if (opts.dw && opts.dw[card] !== undefined) {
        c.setAttribute("data-dw", opts.dw[card]);
        c.append(el("span", { class: "dw", text: `dw ${opts.dw[card]}`, title: "deadwood after discarding it" }));
      }
      if (opts.keys && index < HAND_KEYS.length) c.title += ` (key ${HAND_KEYS[index]})`;
      order.push(card);
      index += 1;
      g.append(c);
    }
    wrap.append(g);
  }
  wrap.append(el("span", { class: "muted" }, "deadwood ", el("span", { class: "deadwood", text: hand.deadwood })));
  state.handOrder = opts.keys ? order : state.handOrder;
  return wrap;
}

// ------------------------------------------------------------------ the seat's table
function seatTableEl(view) {
  const t = view.table;
  const box = el("div", { class: "table" });
  // One table (duel, three-hand): no table number; a partnership's two are numbered.
  const title = t.index === null ? "You sit this hand out (you dealt) \u00b7 hand" : view.format === "partnership" ? `Table ${t.index} \u00b7 hand` : "Hand";
  box.append(el("h4", { id: "table-title", text: `${title} ${view.hand_number} \u00b7 knock limit ${t.knock_limit}`
    + (t.doubled ? " \u00b7 doubled" : "") + (t.partner !== null ? ` \u00b7 your partner: ${view.players[t.partner].label}` : "") }));
  if (t.opponent !== null) {
    const opp = el("div", { class: "seat" + (view.to_act === t.opponent ? " acting" : "") });
    const count = view.to_act === t.opponent && t.phase === "discard" ? 11 : 10;
    opp.append(el("div", { class: "who" }, nameEl(view, t.opponent)));
    const backs = el("span", { class: "cards" });
    for (let i = 0; i < count - t.opponent_known.length; i += 1) backs.append(backEl(true));
    opp.append(backs);
    if (t.opponent_known.length) opp.append(el("span", { class: "muted" }, " picked up: "), cardsEl(t.opponent_known, true));
    if (t.opponent_discards.length) opp.append(el("div", { class: "muted" }, "discarded: ", cardsEl(t.opponent_discards, true)));
    box.append(opp);
  }
  const center = el("div", { class: "center" });
  center.append(el("div", { class: "pile" }, backEl(false), el("span", { text: `stock ${t.stock}` })));
  center.append(el("div", { class: "pile", id: "discard-top" },
    t.discard_top ? cardEl(t.discard_top) : el("span", { class: "muted", text: "empty" }),
    el("span", { text: `discard pile (${t.discard_pile_size})` })));
  box.append(center);
  const me = el("div", { class: "seat" + (view.your_turn ? " acting" : "") });
  me.append(el("div", { class: "who" }, nameEl(view, view.seat)));
  const playable = {};
  if (view.your_turn) {
    for (const a of view.legal_actions) {
      if (a.kind === (state.knockMode ? "knock" : "discard")) playable[a.card] = a.id;
    }
  }
  me.append(handEl(t.hand, { playable, dw: t.discard_deadwood, keys: true, drawn: t.drawn }));
  if (t.drawn) me.append(el("div", { class: "muted", id: "drawn-note" }, "you drew ", cardEl(t.drawn, { small: true, cls: "drawn" })));
  if (t.own_discards.length) me.append(el("div", { class: "muted" }, "you discarded: ", cardsEl(t.own_discards, true)));
  box.append(me);
  return box;
}

// ------------------------------------------------------------------ a hand's end on the table
// After a hand ends the table shows its showdown (melds, lay-offs, deadwood, what it added
// to each column) until "Next hand" is pressed, or for the pause the setting names.
function handEndPending(view) {
  return !!view && view.mode === "play" && view.view === "seat" && view.results.length > state.ackCount;
}

function seenResults(view) {
  // First sight of a game (a start, a reload): its finished hands were seen, except that a
  // finished match shows its last hand.
  if (state.ackId === view.id) return;
  state.ackId = view.id;
  state.ackCount = view.over ? Math.max(0, view.results.length - (view.format === "partnership" ? 2 : 1)) : view.results.length;
}

function nextHand() {
  const view = state.view;
  if (!handEndPending(view) || view.over) return;
  clearTimeout(state.handEndTimer);
  state.handEndTimer = null;
  state.ackCount = view.results.length;
  render(view);
  guarded(runAgents);
}

function sideEl(view, side, role) {
  return el("div", { class: "showdown-side" },
    el("div", { class: "who" }, nameEl(view, side.seat, ` (${role})`)),
    el("div", { class: "hand" }, meldsEl(side.melds, false),
      side.deadwood_cards.length ? el("span", { class: "group loose" }, side.deadwood_cards.map((c) => cardEl(c))) : null,
      el("span", { class: "muted" }, "deadwood ", el("span", { class: "deadwood", text: side.deadwood }))));
}

function addedEl(view, added) {
  const sh = view.sheet;
  const rows = [];
  added.forEach((cols, r) => {
    const parts = cols.map((v, j) => (v ? `${sh.column_names[j] || ""} ${v > 0 ? "+" : ""}${v}`.trim() : null)).filter(Boolean);
    if (!parts.length) return;
    const seats = view.players.filter((p) => p.row === r);
    const who = view.format === "partnership" ? `${sh.labels[r]} (${seats.map((p) => displayName(view, p.seat)).join(" + ")})` : displayName(view, r);
    rows.push(el("li", {}, el("b", { text: who }), `: ${parts.join(", ")}`));
  });
  return el("div", { id: "hand-end-score" }, el("span", { class: "muted", text: sh.column_names.length > 1 ? "on the sheet:" : "score:" }),
    rows.length ? el("ul", {}, rows) : el("span", { text: " nothing" }));
}

function handEndEl(view) {
  const results = view.results.slice(state.ackCount);
  const box = el("div", { class: "table hand-end", id: "hand-end" });
  for (const r of results) {
    box.append(el("h4", { class: "hand-end-head", text: resultHead(view, r) }));
    if (r.showdown) {
      box.append(sideEl(view, r.showdown.knocker, r.kind === "gin" || r.kind === "big_gin" ? "gin" : "knocked"));
      box.append(sideEl(view, r.showdown.defender, "defends"));
      if (r.showdown.layoffs.length) {
        box.append(el("div", { class: "layoffs" }, el("span", { class: "muted", text: "laid off: " }),
          r.showdown.layoffs.map((l) => el("span", { class: "layoff" }, cardEl(l.card, { cls: "laid" }), el("span", { class: "muted", text: "\u00a0on\u00a0" }), meldsEl([l.meld], true)))));
      }
    } else {
      for (const [seat, cards] of Object.entries(r.final_hands)) {
        box.append(el("div", { class: "showdown-side" }, el("div", { class: "who" }, nameEl(view, Number(seat))), cardsEl(cards, true)));
      }
    }
  }
  const last = results[results.length - 1];
  if (last && last.columns_added) box.append(addedEl(view, last.columns_added));
  if (view.over) box.append(el("div", { class: "banner", text: resultText(view) }));
  return box;
}

// ------------------------------------------------------------------ open tables
function openTableEl(view, t) {
  const box = el("div", { class: "table" });
  const out = t.sitting_out !== null ? ` \u00b7 ${playerName(view, t.sitting_out)} dealt and sits out` : "";
  const where = view.format === "partnership" ? `Table ${t.index} \u00b7 hand` : "Hand";
  box.append(el("h4", { text: `${where} ${view.hand_number} \u00b7 ${t.phase.replace("_", " ")} \u00b7 knock limit ${t.knock_limit}`
    + (t.multiplier > 1 ? ` \u00b7 x${t.multiplier}` : "") + out }));
  t.seats.forEach((seat, i) => {
    const s = el("div", { class: "seat" + (t.to_act === seat ? " acting" : "") });
    s.append(el("div", { class: "who" }, nameEl(view, seat, t.dealer === seat ? " (dealer)" : "")));
    s.append(handEl(t.hands[String(seat)], { small: true }));
    if (t.known[String(seat)].length) s.append(el("div", { class: "muted" }, "picked up: ", cardsEl(t.known[String(seat)], true)));
    box.append(s);
    if (i === 0) {
      const pile = t.discard_pile.slice(-8);
      box.append(el("div", { class: "center" },
        el("div", { class: "pile" }, backEl(true), el("span", { text: `stock ${t.stock}` })),
        el("div", { class: "pile" }, el("span", { class: "muted", text: `discard pile (${t.discard_pile.length}):` }),
          pile.map((c, j) => cardEl(c, { small: j < pile.length - 1 })))));
    }
  });
  return box;
}

// ------------------------------------------------------------------ a game seen without its token
function publicEl(view) {
  return el("div", { class: "table", id: "public-note" },
    el("h4", { text: `Hand ${view.hand_number} \u00b7 ${view.over ? "the match is over" : view.to_act === null ? "" : playerName(view, view.to_act) + " to act"}` }),
    el("p", { text: "Someone plays this game: this browser does not hold its seat token, so it shows only what every seat knows "
      + "(the sheet and the finished hands). Its file can be replayed once the match is over." }));
}

// ------------------------------------------------------------------ sheet, results, log
function sheetEl(view) {
  const sh = view.sheet;
  const table = el("table", { class: "sheet" });
  table.append(el("tr", { class: "head" }, el("th", { text: sh.columns.length > 0 && sh.column_names.length > 1 ? "Hollywood" : `game to ${sh.target}` }),
    sh.column_names.map((n) => el("th", { text: n })), el("th", { text: "hands" }), el("th", { text: "games" })));
  sh.labels.forEach((label, r) => {
    const seats = view.players.filter((p) => p.row === r);
    const name = view.format === "partnership" ? `${label} (${seats.map((p) => displayName(view, p.seat)).join(" + ")})` : playerName(view, r);
    const full = view.format === "partnership" ? `${label} (${seats.map((p) => p.name).join(" + ")})` : view.players[r].name;
    const row = el("tr", {}, el("th", { text: name, title: full }));
    sh.column_names.forEach((_, j) => {
      const opened = j < sh.wins[r];
      const won = sh.column_winners[j] === r;
      const closed = sh.column_winners[j] !== null && !won;
      const cell = el("td", { class: won ? "won" : closed ? "closed" : "" }, opened ? String(sh.columns[r][j]) : "-");
      if (sh.boxes[r][j] > 0) cell.append(el("span", { class: "boxes", title: "boxes (hands won in this column)", text: "\u25a1".repeat(Math.min(sh.boxes[r][j], 12)) }));
      row.append(cell);
    });
    row.append(el("td", { text: sh.wins[r] }), el("td", { text: sh.columns_won[r] }));
    table.append(row);
  });
  const box = el("div", {}, el("h3", { text: `Sheet (to ${sh.target})` }), table);
  const cols = sh.column_names.length > 1
    ? `${sh.column_names.join(", ")}: ${sh.column_names.length} games to ${sh.target} at once (a player's 1st win scores in I, the 2nd in I and II, then in all) \u00b7 \u25a1 a box: a hand won in that column \u00b7 `
    : "";
  box.append(el("p", { class: "muted legend", id: "sheet-legend",
    text: `${cols}hands: hands won \u00b7 games: ${sh.column_names.length > 1 ? "columns" : "games"} won \u00b7 a dash: nothing scored there yet` }));
  if (sh.is_settled) box.append(el("p", { class: "muted", text: sh.settlement_text }));
  return box;
}

function resultText(view) {
  if (!view.over) return "";
  if (view.truncated) return "Match stopped at the rules' hand cap: no winner.";
  if (view.format === "partnership") {
    if (view.match_winner_team === null) return "Match over: a draw.";
    return `Match over: team_${view.match_winner_team} (${view.winning_seats.map((s) => playerName(view, s)).join(" and ")}) wins${scoreText(view, view.match_winner_team)}.`;
  }
  if (view.match_winner_seat === null) return `Match over: a draw${scoreText(view, null)}.`;
  const who = playerName(view, view.match_winner_seat);
  return `Match over: ${who} ${who === "You" ? "win" : "wins"}${scoreText(view, view.match_winner_seat)}.`;
}

// The final score, as the terminal says it: ", 343 to 6" (points over every column), and
// the columns won where there are several ("2 columns to 1, 343 to 206 points").
function scoreText(view, row) {
  const sh = view.sheet;
  const first = row === null ? 0 : row;
  const order = [first, ...sh.totals.map((_, r) => r).filter((r) => r !== first)];
  const points = order.map((r) => sh.totals[r]).join(" to ");
  // A short session (and a one-column game) is won on points: the terminal says only them.
  if (sh.column_names.length > 1 && !view.rules_options.short_session) {
    return `, ${order.map((r) => sh.columns_won[r]).join(" to ")} columns, ${points} points`;
  }
  return `, ${points}`;
}

function meldsEl(melds, small = true) { return melds.map((m) => el("span", { class: "group meld" }, m.map((c) => cardEl(c, { small })))); }

// "Hand 3: Expert knocks; You score 25" (seats as the page names them).
function resultHead(view, r) {
  if (r.kind === "dead") return `${r.label}: dead hand, no score`;
  const k = playerName(view, r.knocker), w = playerName(view, r.winner);
  const kinds = k === "You" ? { gin: "go gin", big_gin: "go big gin", undercut: "knock and are undercut", knock: "knock" }
    : { gin: "goes gin", big_gin: "goes big gin", undercut: "knocks and is undercut", knock: "knocks" };
  return `${r.label}: ${k} ${kinds[r.kind] || kinds.knock}; ${w} ${w === "You" ? "score" : "scores"} ${r.points}`;
}

function showdownEl(view, r) {
  const box = el("div", { class: "showdown" });
  box.append(el("div", { text: resultHead(view, r) }));
  if (r.showdown) {
    for (const role of ["knocker", "defender"]) {
      const side = r.showdown[role];
      box.append(el("div", {}, el("span", { class: "muted", text: `${playerName(view, side.seat)} (${role}): ` }),
        meldsEl(side.melds), side.deadwood_cards.length ? el("span", { class: "group loose" }, side.deadwood_cards.map((c) => cardEl(c, { small: true }))) : null,
        el("span", { class: "muted", text: ` deadwood ${side.deadwood}` })));
    }
    if (r.showdown.layoffs.length) {
      box.append(el("div", { class: "muted" }, "laid off: ",
        r.showdown.layoffs.map((l) => el("span", {}, cardEl(l.card, { small: true }), " on ", meldsEl([l.meld])))));
    }
  }
  return box;
}

function renderSide(view) {
  const result = $("result");
  put(result);
  if (view.over) {
    result.append(el("div", { class: "banner", id: "match-result", text: resultText(view) + (view.sheet.is_settled ? " " + view.sheet.settlement_text : "") }));
    if (view.mode !== "replay" && view.file) {
      result.append(el("p", {}, el("a", { href: `/api/games/${view.id}/file`, text: "download the match file" }), " \u00b7 ",
        el("button", { type: "button", id: "replay-this", text: "Replay this game", onclick: () => openReplay({ path: view.file }) })));
    }
  }
  put($("sheet"), sheetEl(view));
  const sd = $("showdown");
  put(sd);
  const last = view.results.slice(view.format === "partnership" ? -2 : -1);
  if (last.length && !handEndPending(view)) put(sd, el("h3", { text: last.length > 1 ? "Last showdowns" : "Last showdown" }), last.map((r) => showdownEl(view, r)));
  const log = $("log");
  put(log, view.events.map((e) => el("li", { class: e.seat === null ? "result" : "", text: shortNames(view, e.text), title: cardsInText(e.text) })));
  log.scrollTop = log.scrollHeight;
  const pol = $("policy");
  put(pol);
  if (view.policy) {
    pol.append(el("h3", { text: `Policy of ${playerName(view, view.to_act)}` }));
    for (const p of view.policy.slice(0, POLICY_ROWS)) {
      pol.append(el("div", { class: "policy-row" }, el("span", { text: cardsInText(p.name) }),
        el("span", {}, el("div", { class: "policy-bar", style: `width:${Math.max(1, Math.round(p.p * 100))}%` })),
        el("span", { text: `${(p.p * 100).toFixed(1)}%` })));
    }
    const rest = view.policy.slice(POLICY_ROWS);
    if (rest.length) {
      const mass = rest.reduce((sum, p) => sum + p.p, 0);
      pol.append(el("p", { class: "muted", id: "policy-more",
        text: `${POLICY_ROWS} of ${view.policy.length} legal moves shown; the other ${rest.length} have ${(mass * 100).toFixed(1)}% together` }));
    }
  }
}

// ------------------------------------------------------------------ controls
function actionLabel(a, view) {
  const key = { draw: " [D]", take: " [T]", pass: " [P]", big_gin: " [G]" }[a.kind] || "";
  if (a.kind === "draw") return "Draw from the stock" + key;
  if (a.kind === "take") return `Take ${cardText(view.table.discard_top)}` + key;
  if (a.kind === "pass") return `Pass on ${cardText(view.table.discard_top)}` + key;
  if (a.kind === "big_gin") return "Big gin!" + key;
  if (a.kind === "knock") return `Knock with ${cardText(a.card)}`;
  return a.name;
}

function renderControls(view) {
  const box = $("controls");
  put(box);
  const keys = $("keys");
  if (view.view === "public") {
    keys.textContent = "";
  } else if (view.mode === "play") {
    if (view.over) { keys.textContent = ""; return; }
    if (handEndPending(view)) {
      box.append(el("button", { type: "button", id: "next-hand", class: "action", text: "Next hand [Enter]", onclick: nextHand }));
      const pause = Number($("hand-end-setting").value);
      if (pause > 0) {
        box.append(el("span", { class: "muted", text: `the next hand is dealt in ${pause / 1000} s` }));
        if (!state.handEndTimer) state.handEndTimer = setTimeout(() => { state.handEndTimer = null; nextHand(); }, pause);
      }
      keys.textContent = "Keys: Enter or N the next hand";
      return;
    }
    if (!view.your_turn) {
      box.append(el("span", { class: "muted", text: `${playerName(view, view.to_act)} is thinking\u2026` }));
      keys.textContent = "";
      return;
    }
    const knocks = view.legal_actions.filter((a) => a.kind === "knock");
    for (const a of view.legal_actions) {
      if (a.kind === "discard") continue;
      box.append(el("button", { type: "button", class: "action " + a.kind, "data-action": a.id, "data-kind": a.kind,
        text: actionLabel(a, view), onclick: () => sendAction(a.id) }));
    }
    if (knocks.length) {
      box.append(el("button", { type: "button", id: "knock-mode", text: state.knockMode ? "Discard instead [K]" : "Knock: pick the card [K]",
        onclick: () => { state.knockMode = !state.knockMode; render(state.view); } }));
    }
    if (view.legal_actions.some((a) => a.kind === "discard")) {
      box.append(el("span", { class: "muted", id: "dw-legend", text: state.knockMode ? "click the card to knock with (face down); dw N under a card: your deadwood after it"
        : "click a card to discard it; dw N under a card: your deadwood after discarding it" }));
    }
    keys.textContent = "Keys: D draw \u00b7 T take \u00b7 P pass \u00b7 1\u20139, 0, - the cards of your hand from the left \u00b7 K knock with the next card \u00b7 G big gin";
  } else if (view.mode === "watch") {
    if (!view.yours) { keys.textContent = "Watching a game another browser started: it moves when that browser plays it"; return; }
    box.append(el("button", { type: "button", id: "pause", text: state.running ? "Pause [space]" : "Play [space]", disabled: view.over, onclick: toggleRun }));
    box.append(el("button", { type: "button", id: "step", text: "Step [N]", disabled: view.over || state.running, onclick: () => watchStep() }));
    keys.textContent = "Keys: space play/pause \u00b7 N one move";
  } else {
    const marks = el("select", { id: "jump", onchange: (e) => replayTo(Number(e.target.value)) },
      view.marks.map((m) => el("option", { value: m.step, text: `${m.label} (move ${m.step})`, selected: currentMark(view) === m.step })));
    box.append(el("button", { type: "button", id: "first", text: "|\u25c0", title: "start [Home]", onclick: () => replayTo(0) }),
      el("button", { type: "button", id: "back", text: "\u25c0", title: "back one move [\u2190]", disabled: view.step === 0, onclick: () => replayTo(view.step - 1) }),
      el("button", { type: "button", id: "forward", text: "\u25b6", title: "forward one move [\u2192]", disabled: view.step === view.steps, onclick: () => replayTo(view.step + 1) }),
      el("button", { type: "button", id: "last", text: "\u25b6|", title: "end [End]", onclick: () => replayTo(view.steps) }),
      el("input", { type: "range", id: "scrub", min: 0, max: view.steps, value: view.step, onchange: (e) => replayTo(Number(e.target.value)) }),
      el("span", { id: "step-count", text: `move ${view.step} / ${view.steps}` }), marks);
    keys.textContent = `${shortNames(view, view.name)} \u00b7 keys: \u2190 \u2192 one move \u00b7 PgUp PgDn one hand \u00b7 Home End`;
  }
}

function currentMark(view) {
  let best = 0;
  for (const m of view.marks) if (m.step <= view.step) best = m.step;
  return best;
}

// ------------------------------------------------------------------ rendering
function statusText(view) {
  if (view.over) return resultText(view);
  if (handEndPending(view)) return `${resultHead(view, view.results[view.results.length - 1]).split(":")[0]} is over: Next hand deals the next`;
  const who = view.to_act === null ? "" : playerName(view, view.to_act);
  if (view.view === "public") return `Watching: ${who} to act`;
  if (view.mode === "play") return view.your_turn ? `Your move (${view.table.phase.replace("_", " ")})` : `${who} to act`;
  if (view.mode === "watch") return `${who} to act`;
  return `${shortNames(view, view.name)}: move ${view.step} of ${view.steps}`;
}

function render(view) {
  state.view = view;
  $("board").hidden = false;
  $("welcome").hidden = true;  // the start page's hints, until a game is on screen
  $("welcome-seed").hidden = true;
  const tables = $("tables");
  put(tables);
  if (view.view === "seat") seenResults(view);
  if (handEndPending(view)) tables.append(handEndEl(view));
  else if (view.view === "seat") tables.append(seatTableEl(view));
  else if (view.view === "public") tables.append(publicEl(view));
  else view.tables.forEach((t) => tables.append(openTableEl(view, t)));
  showSettings(view);
  renderControls(view);
  renderSide(view);
  $("status").textContent = statusText(view);
  bump();
  document.body.dataset.over = view.over ? "1" : "0";
}

// ------------------------------------------------------------------ play
function speed() { return Number($("speed").value); }

// A request about the game on screen, with its seat token when this browser holds it.
function gameApi(method, suffix, body) {
  const id = state.view.id;
  return api(method, `/api/games/${id}${suffix}`, body, seatToken(id));
}

async function runAgents() {
  // The agents' moves, one at a time at the chosen speed ("instant": as many as the server
  // makes in one request, asked again until it is the human's turn).
  while (state.view && state.view.mode === "play" && state.view.yours && !state.view.over && !state.view.your_turn
         && !handEndPending(state.view)) {
    const ms = speed();
    if (ms > 0) await sleep(ms);
    render(await gameApi("POST", "/step", { moves: ms > 0 ? 1 : state.meta.max_step_moves }));
  }
}

async function guarded(fn) {
  setBusy(true);
  try {
    showError("");
    await fn();
  } catch (e) {
    showError(e.message);
  } finally {
    setBusy(false);
  }
}

function sendAction(id) {
  if (document.body.dataset.busy === "1") return;
  state.knockMode = false;
  guarded(async () => {
    render(await gameApi("POST", "/actions", { action: id }));
    await runAgents();
  });
}

function startGame(ev) {
  ev.preventDefault();
  const rules = $("rules").value;
  const profile = state.meta.profiles.find((p) => p.name === rules);
  const watching = state.mode === "watch";
  const seat = watching ? null : Number($("seat").value);
  const opponents = [];
  for (let s = 0; s < profile.seats; s += 1) {
    opponents.push(s === seat ? null : agentSpec(s));
  }
  const seedText = $("seed").value.trim();
  const body = { rules, seat, opponents, seed: seedText === "" ? null : Number(seedText) };
  state.running = false;
  guarded(async () => {
    const view = await api("POST", "/api/games", body);
    keepToken(view.id, view.seat_token);
    location.hash = `game=${view.id}`;
    render(view);
    await runAgents();
  });
}

// ------------------------------------------------------------------ watch
async function watchStep() {
  render(await gameApi("POST", "/step", { moves: 1 }));
}

async function watchLoop() {
  while (state.running && state.view && !state.view.over) {
    await guarded(watchStep);
    await sleep(Math.max(speed(), 30));
  }
  state.running = false;
  if (state.view) renderControls(state.view);
}

function toggleRun() {
  if (!state.view || state.view.mode !== "watch" || !state.view.yours || state.view.over) return;
  state.running = !state.running;
  renderControls(state.view);
  if (state.running) watchLoop();
}

// ------------------------------------------------------------------ replay
function replayTo(step) {
  const view = state.view;
  if (!view || view.mode !== "replay") return;
  const target = Math.max(0, Math.min(view.steps, step));
  guarded(async () => {
    render(await api("GET", `/api/replays/${view.id}?step=${target}`));
    location.hash = `replay=${view.id}&step=${target}`;
  });
}

function openReplay(body) {
  setMode("replay");
  state.replayFrom = body;
  guarded(async () => {
    const view = await api("POST", "/api/replays", body);
    location.hash = `replay=${view.id}&step=0`;
    render(view);
  });
}

async function loadFiles() {
  if (!state.meta.replays) return;
  const files = await api("GET", "/api/files");
  // The lists keep what is chosen (the replay on screen's file or tournament).
  const file = $("replay-file").value, tour = $("tournament").value;
  put($("replay-file"), files.matches.map((f) => el("option", { value: f.path, text: f.path, title: f.path })));
  put($("tournament"), el("option", { value: "", text: "\u2014" }),
    files.tournaments.map((t) => el("option", { value: t.path, text: t.path })));
  if (file) $("replay-file").value = file;
  if (tour && files.tournaments.some((t) => t.path === tour)) $("tournament").value = tour;
}

async function loadTournament(chosen) {
  const path = $("tournament").value;
  const sel = $("tournament-match");
  put(sel);
  if (!path) return;
  const data = await api("GET", `/api/tournament?path=${encodeURIComponent(path)}`);
  put(sel, data.matches.map((m) => el("option", {
    value: JSON.stringify({ path, seed: Number(m.seed), a_seat: Number(m.a_seat), agent_a: m.agent_a, agent_b: m.agent_b }),
    text: `seed ${m.seed} seating ${m.a_seat}: ${shortLabel(m.agent_a)} v ${shortLabel(m.agent_b)}, ${m.winner} (${m.hands} hands)`,
    title: `${m.agent_a} v ${m.agent_b}`,
  })));
  if (chosen) sel.value = chosen;
}

// The settings bar shows the game or replay on screen (its rules, seat, agents and seed;
// the file or tournament match it came from), not what was last typed.
function showSettings(view) {
  const set = view.settings;
  if (!set || !state.meta) return;
  if (view.mode === "replay") {
    const from = state.replayFrom;
    if (from && from.path && from.seed === undefined && [...$("replay-file").options].some((o) => o.value === from.path)) {
      $("replay-file").value = from.path;
    }
    if (from && from.seed !== undefined && $("tournament").value !== from.path
        && [...$("tournament").options].some((o) => o.value === from.path)) {
      $("tournament").value = from.path;
      guarded(() => loadTournament(JSON.stringify(from)));
    }
    return;
  }
  if (state.shown === view.id) return;  // once per game: the player may be typing the next one
  state.shown = view.id;
  $("rules").value = set.rules;
  fillSeats(set.seat);
  set.opponents.forEach((label, s) => { const input = $(`agent-${s}`); if (input) chooseAgent(input, label); });
  $("seed").value = set.seed === null || set.seed === undefined ? "" : String(set.seed);
}

// ------------------------------------------------------------------ setup form
function fillSeats(chosen) {
  const profile = state.meta.profiles.find((p) => p.name === $("rules").value);
  const seat = $("seat");
  const before = typeof chosen === "number" ? String(chosen) : seat.value;
  put(seat, Array.from({ length: profile.seats }, (_, s) => el("option", { value: s, text: seatText(profile, s) })));
  seat.value = before !== "" && Number(before) < profile.seats ? before : "0";
  const box = $("opponents");
  const old = {};
  box.querySelectorAll("select, input").forEach((i) => { old[i.id] = i.value; });
  put(box);
  const me = state.mode === "watch" ? null : Number(seat.value);
  for (let s = 0; s < profile.seats; s += 1) {
    if (s === me) continue;
    const who = me === null ? seatText(profile, s) : profile.seats === 2 ? "Opponent"
      : profile.format === "partnership" && (s - me) % 2 === 0 ? `Partner (seat ${s})` : `Seat ${s}`;
    const select = agentSelect(`agent-${s}`);
    const options = searchOptionsInput(`agent-${s}-options`, old[`agent-${s}-options`]);
    select.addEventListener("change", () => { options.hidden = select.value !== "search"; });
    box.append(el("label", {}, `${who} `, select, options));
    chooseAgent(select, old[`agent-${s}`] || (state.mode === "watch" && s === 0 ? "simple" : "expert"));
  }
}

// The search's options (search:KEY=VALUE,...), typed beside the list when "search" is chosen;
// the server says which it offers and their values (/api/meta).
function searchOptionsInput(id, value) {
  const search = state.meta.agents.find((a) => a.spec === "search");
  const offered = Object.entries((search && search.options) || {}).map(([k, v]) => `${k}=${v.choices ? v.choices.join("|") : `${v.min}..${v.max}`}`);
  return el("input", { id, class: "agent-options", size: 14, placeholder: "options", value: value || "", hidden: true,
    title: `search options, comma-separated: ${offered.join(", ")} (empty: the defaults)` });
}

// A seat's agent spec: the list's choice, with the search's options when typed.
function agentSpec(s) {
  const select = $(`agent-${s}`);
  if (!select) return null;
  const options = $(`agent-${s}-options`);
  return select.value === "search" && options && options.value.trim() ? `search:${options.value.trim()}` : select.value;
}

// "Seat 0 (deals first)": the seats a profile has, by number.
function seatText(profile, s) { return `Seat ${s}` + (profile.format === "partnership" ? ` (team ${s % 2})` : ""); }

// The agents the server offers (/api/meta: the registry's names, the shipped policy, the
// policy folders' checkpoints), grouped.
function agentSelect(id) {
  const plain = state.meta.agents.filter((a) => a.kind !== "ppo");
  const ppo = state.meta.agents.filter((a) => a.kind === "ppo");
  return el("select", { id, class: "agent" },
    el("optgroup", { label: "agents" }, plain.map((a) => el("option", { value: a.spec, text: a.spec }))),
    el("optgroup", { label: "trained policies (ppo: a checkpoint)" }, ppo.map((a) => el("option", { value: a.spec, title: a.spec,
      text: a.spec === "ppo" ? "ppo (the shipped policy)" : shortLabel(a.spec) }))));
}

// Select ``spec`` (search:OPTIONS: search, its options typed beside; a restored game's agent
// the list lacks is added to it).
function chooseAgent(select, spec) {
  const options = $(`${select.id}-options`) || select.parentElement && select.parentElement.querySelector(".agent-options");
  if (spec.startsWith("search:") && options) {
    options.value = spec.slice("search:".length);
    spec = "search";
  }
  if (![...select.options].some((o) => o.value === spec)) select.append(el("option", { value: spec, text: shortLabel(spec), title: spec }));
  select.value = spec;
  select.title = spec;
  if (options) options.hidden = spec !== "search";
}

function setMode(mode) {
  state.mode = mode;
  state.running = false;
  for (const b of document.querySelectorAll(".tab")) b.classList.toggle("active", b.dataset.mode === mode);
  $("new-game").hidden = mode === "replay";
  $("replay-setup").hidden = mode !== "replay";
  $("seat-label").hidden = mode === "watch";
  $("speed-label").hidden = mode === "replay";  // a replay moves when asked
  $("hand-end-label").hidden = mode !== "play";
  $("start").textContent = mode === "watch" ? "Watch" : "Start";
  if (state.meta) fillSeats();
  if (mode === "replay" && state.meta) guarded(loadFiles);
}

// ------------------------------------------------------------------ keyboard
function onKey(ev) {
  if (ev.target.tagName === "INPUT" || ev.target.tagName === "SELECT") return;
  const view = state.view;
  if (!view) return;
  if (handEndPending(view) && !view.over) {
    if (ev.key === "Enter" || ev.key.toLowerCase() === "n") { ev.preventDefault(); nextHand(); }
    return;
  }
  if (view.mode === "play" && view.yours && view.your_turn) {
    const byKind = { d: "draw", t: "take", p: "pass", g: "big_gin" };
    const kind = byKind[ev.key.toLowerCase()];
    if (kind) {
      const a = view.legal_actions.find((x) => x.kind === kind);
      if (a) sendAction(a.id);
      return;
    }
    if (ev.key.toLowerCase() === "k" && view.legal_actions.some((x) => x.kind === "knock")) {
      state.knockMode = !state.knockMode;
      render(view);
      return;
    }
    const i = HAND_KEYS.indexOf(ev.key);
    if (i >= 0 && state.handOrder && i < state.handOrder.length) {
      const card = state.handOrder[i];
      const a = view.legal_actions.find((x) => x.kind === (state.knockMode ? "knock" : "discard") && x.card === card);
      if (a) sendAction(a.id);
    }
  } else if (view.mode === "watch" && view.yours) {
    if (ev.key === " ") { ev.preventDefault(); toggleRun(); }
    if (ev.key.toLowerCase() === "n" && !state.running && !view.over) guarded(watchStep);
  } else if (view.mode === "replay") {
    const marks = view.marks.map((m) => m.step);
    const here = currentMark(view);
    const moves = {
      ArrowRight: view.step + 1, ArrowLeft: view.step - 1, Home: 0, End: view.steps,
      PageDown: marks.find((s) => s > view.step) ?? view.steps,
      PageUp: view.step > here ? here : [...marks].reverse().find((s) => s < view.step) ?? 0,
    };
    if (ev.key in moves) { ev.preventDefault(); replayTo(moves[ev.key]); }
  }
}

// ------------------------------------------------------------------ start
async function resumeFromHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  if (params.get("game")) {
    const id = params.get("game");
    const view = await api("GET", `/api/games/${id}`, undefined, seatToken(id));
    setMode(view.mode);
    render(view);
    await runAgents();
  } else if (params.get("replay")) {
    setMode("replay");
    render(await api("GET", `/api/replays/${params.get("replay")}?step=${Number(params.get("step") || 0)}`));
  }
}

async function init() {
  state.meta = await api("GET", "/api/meta");
  put($("rules"), state.meta.profiles.map((p) => el("option", { value: p.name,
    text: `${p.name} (${p.format.replace("_", "-")}, ${p.seats} seats)` })));
  $("rules").addEventListener("change", () => fillSeats());
  $("seat").addEventListener("change", () => fillSeats());
  $("new-game").addEventListener("submit", startGame);
  keepViewerSettings();
  $("hand-end-setting").addEventListener("change", () => {  // a hand's end on screen follows the new setting
    clearTimeout(state.handEndTimer);
    state.handEndTimer = null;
    if (state.view) renderControls(state.view);
  });
  $("open-file").addEventListener("click", () => { if ($("replay-file").value) openReplay({ path: $("replay-file").value }); });
  $("tournament").addEventListener("change", () => guarded(() => loadTournament()));
  $("open-tournament").addEventListener("click", () => { if ($("tournament-match").value) openReplay(JSON.parse($("tournament-match").value)); });
  $("upload").addEventListener("change", async (e) => {
    const file = e.target.files[0];
    if (file) openReplay({ upload: await file.text(), name: file.name });
  });
  for (const b of document.querySelectorAll(".tab")) b.addEventListener("click", () => setMode(b.dataset.mode));
  document.addEventListener("keydown", onKey);
  setMode("play");
  await resumeFromHash();
  bump();  // the page is ready (tests wait for this)
}

guarded(init);
