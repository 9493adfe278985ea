// The Salvo screen (W12; rules S1–S9 of shared/spec/salvo.md): my grid with my fleet and the enemy's
// shots on it, the enemy grid with my shots numbered by round, placement in round 0, choosing the
// squares of each salvo, the per-salvo reports, my ships' state, the enemy ships sunk and a small chat.
// Under them, the personal AI agent panel (js/agent.js).
// The grids are built once and updated in place on every render, so focus and scrolling survive.
// Read-only (`ctx.readOnly`: a spectator, a replay): both sides by their players' names — "my" grid is
// the seat's of the view (a spectator's: seat 0's, with seat 1's shots on it, whose hits only the
// target learns before the end: those shots show as fired, not as hit or miss) — and no placement
// tools, Done bar, chat form or agent panel.
import { agentPanel } from './agent.js';

const COLS = 'ABCDEFGHIJ';
const SIZE = 10;

const sqName = (col, row) => `${COLS[col]}${row + 1}`;
function parseSq(sq) {
  const m = /^([A-J])(10|[1-9])$/.exec(String(sq || '').toUpperCase());
  return m ? { col: COLS.indexOf(m[1]), row: Number(m[2]) - 1 } : null;
}

// The squares a ship covers from its bow (its top-left end): rightwards, or downwards when vertical.
// null when it runs off the grid.
function shipSquares(bow, vertical, size) {
  const at = parseSq(bow);
  if (!at) return null;
  const out = [];
  for (let i = 0; i < size; i += 1) {
    const col = at.col + (vertical ? 0 : i);
    const row = at.row + (vertical ? i : 0);
    if (col >= SIZE || row >= SIZE) return null;
    out.push(sqName(col, row));
  }
  return out;
}

export function createScreen(el, ctx) {
  const { t, h } = ctx;
  let view = null; // the latest GetViewResponse
  let sv = null; // its salvo member

  // ---------------------------------------------------------------- what the player is entering
  // Kept across renders; reset when the round changes; saved to ctx.draft on every change.
  let round = null; // the round this state belongs to
  let phase = '';
  let placed = {}; // placement: ship name -> {bow, vertical}
  let selected = ''; // placement: the ship the next click on my grid puts down
  let vertical = false; // placement: orientation for the next ship
  let random = false; // placement: let the server place the fleet
  let chosen = []; // firing: squares chosen for this round, in click order
  let refusal = null; // the local refusal on show: {key, params, rule}
  let chatLast = null; // the last chat message shown

  const ship = (name) => t(`salvo.ship.${name}`);
  // Live regions are re-announced when their text is rewritten: touch them only on a change.
  const setText = (node, text) => { if (node.textContent !== text) node.textContent = text; };
  const spec = () => (sv && sv.fleet_spec) || [];
  const specOf = (name) => spec().find((x) => x.name === name);
  const classic = () => sv && sv.mode === 'classic';
  const readOnly = Boolean(ctx.readOnly);
  const side = () => (sv && sv.you >= 0 ? sv.you : 0); // whose waters "my" grid shows
  const sideName = (seat) => ctx.nameOf(seat);
  const myTurn = () => !classic() || sv.active_player === sv.you;

  // ---------------------------------------------------------------- the elements (built once)
  const own = makeGrid('salvo-own', onOwnCell);
  const enemy = makeGrid('salvo-enemy', onEnemyCell);
  own.grid.addEventListener('pointerover', (ev) => preview(ev.target.closest('[data-sq]')));
  own.grid.addEventListener('focusin', (ev) => preview(ev.target.closest('[data-sq]')));
  own.grid.addEventListener('pointerleave', () => preview(null));
  own.grid.addEventListener('focusout', () => preview(null));

  const ownTitle = h('h3', { id: 'salvo-own-title' });
  const enemyTitle = h('h3', { id: 'salvo-enemy-title' });
  const incomingNote = h('p', { id: 'salvo-incoming', class: 'muted salvo-note' });
  const shotsLeft = h('p', { id: 'shots-left', class: 'salvo-left', 'aria-live': 'polite' });
  own.grid.setAttribute('aria-labelledby', 'salvo-own-title');
  enemy.grid.setAttribute('aria-labelledby', 'salvo-enemy-title');

  // Placement tools: the ships to place, rotate, random, clear.
  const shipList = h('ul', { id: 'salvo-ships', class: 'plain salvo-ships' });
  const rotate = h('button', { type: 'button', id: 'rotate', class: 'small', onclick: onRotate });
  const randomButton = h('button', { type: 'button', id: 'random-placement', class: 'small', onclick: onRandom });
  const clearButton = h('button', { type: 'button', id: 'clear-placement', class: 'small', onclick: onClear });
  const placeTools = h('div', { id: 'salvo-place', class: 'salvo-place' },
    shipList, h('div', { class: 'row salvo-tools' }, rotate, randomButton, clearButton));

  const legend = h('p', { class: 'salvo-legend muted', 'aria-hidden': 'true' });

  const ownBoard = h('section', { class: 'card salvo-board own' },
    h('div', { class: 'salvo-board-head' }, ownTitle), own.grid, incomingNote, placeTools);
  const enemyBoard = h('section', { class: 'card salvo-board enemy' },
    h('div', { class: 'salvo-board-head' }, enemyTitle, shotsLeft), enemy.grid, legend);

  // The action bar: what to do now, the Done button (errors appear right after it).
  const status = h('p', { id: 'salvo-status', role: 'status' });
  const unsent = h('p', { id: 'salvo-unsent', class: 'notice', hidden: true });
  const done = ctx.doneButton(getOrders, { draftOf: draftOrders });
  const bar = h('div', { class: 'salvo-bar card' }, h('div', { class: 'salvo-bar-text' }, status, unsent),
    h('div', { class: 'salvo-done' }, done));

  // Below: my ships, my salvos' reports, enemy ships sunk, chat.
  const fleetTitle = h('h3', {});
  const fleetList = h('ul', { id: 'salvo-fleet', class: 'plain salvo-fleet' });
  const reportsTitle = h('h3', {});
  const reportsList = h('ul', { id: 'salvo-reports', class: 'plain salvo-reports' });
  const sunkTitle = h('h3', {});
  const sunkList = h('ul', { id: 'salvo-enemy-sunk', class: 'plain salvo-sunk' });
  const chatTitle = h('h3', {});
  const chatLog = h('ul', { id: 'salvo-chat-log', class: 'plain salvo-chat-log', 'aria-live': 'polite' });
  const chatLabel = h('label', { for: 'salvo-chat-text', class: 'sr' });
  const chatText = h('input', { id: 'salvo-chat-text', maxlength: 500, autocomplete: 'off' });
  const chatSend = h('button', { type: 'submit', id: 'salvo-chat-send', class: 'small' });
  const chatForm = h('form', { class: 'row salvo-chat-form', onsubmit: onChat }, chatLabel, chatText, chatSend);
  const info = h('div', { class: 'salvo-info' },
    h('section', { class: 'card' }, fleetTitle, fleetList),
    h('section', { class: 'card' }, reportsTitle, reportsList, sunkTitle, sunkList),
    h('section', { class: 'card salvo-chat' }, chatTitle, chatLog, chatForm));
  // Last, a whole row: the personal AI agent (A90), which may play this seat too.
  const agent = readOnly ? null : agentPanel(ctx);
  if (agent) {
    agent.el.classList.add('card');
    info.append(agent.el);
  }
  if (readOnly) { // (a spectator's page shows the chat itself)
    bar.hidden = true;
    info.querySelector('.salvo-chat').hidden = true;
  }

  const root = h('div', { class: 'salvo' }, h('div', { class: 'salvo-boards' }, ownBoard, enemyBoard), bar, info);
  el.replaceChildren(root);

  // ---------------------------------------------------------------- grids
  function makeGrid(id, onCell) {
    const grid = h('div', { id, class: 'salvo-grid', role: 'group' });
    const cells = new Map();
    grid.append(h('span', { class: 'corner', 'aria-hidden': 'true' }));
    for (const c of COLS) grid.append(h('span', { class: 'col-label', 'aria-hidden': 'true' }, c));
    for (let row = 0; row < SIZE; row += 1) {
      grid.append(h('span', { class: 'row-label', 'aria-hidden': 'true' }, String(row + 1)));
      for (let col = 0; col < SIZE; col += 1) {
        const sq = sqName(col, row);
        const cell = h('button', { type: 'button', class: 'cell', 'data-sq': sq, onclick: () => onCell(sq) });
        cells.set(sq, cell);
        grid.append(cell);
      }
    }
    // Arrow keys move between cells (the grid is always A–J left to right, also in Hebrew).
    grid.addEventListener('keydown', (ev) => {
      const at = parseSq(ev.target.dataset && ev.target.dataset.sq);
      const step = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[ev.key];
      if (!at || !step) return;
      ev.preventDefault();
      for (let col = at.col + step[0], row = at.row + step[1];
        col >= 0 && col < SIZE && row >= 0 && row < SIZE; col += step[0], row += step[1]) {
        const next = cells.get(sqName(col, row));
        if (!next.disabled) { next.focus(); break; }
      }
    });
    // One Tab stop per grid (the square last focused, else the first one that can be pressed); the
    // arrows move inside it.
    let current = '';
    function rove() {
      let keep = cells.get(current);
      if (!keep || keep.disabled) keep = [...cells.values()].find((c) => !c.disabled) || null;
      for (const c of cells.values()) c.tabIndex = c === keep ? 0 : -1;
    }
    grid.addEventListener('focusin', (ev) => {
      if (ev.target.dataset && ev.target.dataset.sq) { current = ev.target.dataset.sq; rove(); }
    });
    return { grid, cells, rove };
  }

  // One cell's look and words: classes, text, label, the ship on it, clickable or not.
  function setCell(cell, { cls = [], text = '', label, vessel = '', disabled = false, pressed = null }) {
    const className = ['cell', ...cls].join(' ');
    if (cell.className !== className) cell.className = className;
    if (cell.textContent !== text) cell.textContent = text;
    cell.setAttribute('aria-label', label);
    cell.title = label;
    if (vessel) cell.dataset.vessel = vessel; else delete cell.dataset.vessel;
    cell.disabled = disabled;
    if (pressed === null) cell.removeAttribute('aria-pressed'); else cell.setAttribute('aria-pressed', String(pressed));
  }

  // ---------------------------------------------------------------- local state per round
  function startRound() {
    round = view.round;
    phase = sv.phase;
    const d = view.status === 'GAME_STATUS_RUNNING' ? ctx.draft.load() : null;
    const mine = d && d.round === round && d.phase === phase ? d : null;
    const pending = view.salvo_pending || null;
    placed = {};
    random = false;
    vertical = false;
    chosen = [];
    clearRefusal();
    if (phase === 'placement') {
      if (mine) {
        placed = { ...(mine.placed || {}) };
        random = Boolean(mine.random);
        vertical = Boolean(mine.vertical);
        selected = mine.selected || '';
      } else if (pending) {
        random = Boolean(pending.random_placement);
        for (const p of pending.placement || []) placed[p.ship] = { bow: p.bow, vertical: Boolean(p.vertical) };
      }
      for (const name of Object.keys(placed)) if (!specOf(name)) delete placed[name];
      if (!specOf(selected)) selected = nextUnplaced() || (spec()[0] || {}).name || '';
    } else if (phase === 'firing') {
      const shot = new Set((sv.shots || []).map((x) => x.square));
      const from = mine ? mine.shots || [] : pending ? pending.shots || [] : [];
      chosen = [...new Set(from)].filter((sq) => parseSq(sq) && !shot.has(sq)).slice(0, sv.shots_allowed);
    }
  }

  function save() {
    if (!view || view.status !== 'GAME_STATUS_RUNNING') return;
    ctx.draft.save(phase === 'placement'
      ? { round, phase, placed, random, vertical, selected }
      : { round, phase, shots: chosen });
  }

  const nextUnplaced = () => (spec().find((x) => !placed[x.name]) || {}).name || '';
  function occupant(sq) {
    for (const [name, p] of Object.entries(placed)) {
      const squares = shipSquares(p.bow, p.vertical, specOf(name).size);
      if (squares && squares.includes(sq)) return name;
    }
    return '';
  }

  // ---------------------------------------------------------------- refusals (shown next to Done)
  // A refusal found here carries its own translated sentence (`text`), which the shell shows as is.
  const asError = (r) => ({ code: r.code, field: r.field, rule: r.rule,
    text: t('salvo.err.with_rule', { text: t(r.key, r.params), rule: r.rule }) });
  function refusalError(field, rule, key, params = {}, code = 'order/illegal') {
    refusal = { field, rule, key, params, code };
    return asError(refusal);
  }
  function showRefusalText() { // again, in the language now chosen
    const box = done.nextElementSibling;
    if (refusal && box && box.classList.contains('error')) ctx.showError(done, asError(refusal));
  }
  function refuse(field, rule, key, params, code) {
    ctx.showError(done, refusalError(field, rule, key, params, code));
    showRefusalText();
  }
  function clearRefusal() {
    if (refusal) ctx.clearError(done);
    refusal = null;
  }

  // ---------------------------------------------------------------- placement (round 0, S3)
  function tryPlace(name, bow, vert) {
    const size = specOf(name).size;
    const squares = shipSquares(bow, vert, size);
    if (!squares) {
      refuse('placement', 'S3', 'salvo.err.off_grid', { ship: ship(name), size, sq: bow });
      return false;
    }
    for (const [other, p] of Object.entries(placed)) {
      if (other === name) continue;
      const theirs = shipSquares(p.bow, p.vertical, specOf(other).size);
      const common = squares.find((sq) => theirs.includes(sq));
      if (common) {
        refuse('placement', 'S3', 'salvo.err.overlap', { ship: ship(name), other: ship(other), sq: common });
        return false;
      }
    }
    placed[name] = { bow, vertical: vert };
    random = false;
    clearRefusal();
    return true;
  }

  function onOwnCell(sq) {
    if (!sv || sv.phase !== 'placement' || !selected) return;
    const here = occupant(sq);
    if (here && here !== selected && placed[selected]) {
      // Every ship in hand is down: a click on a placed ship picks that one up.
      selected = here;
      vertical = placed[here].vertical;
    } else if (tryPlace(selected, sq, vertical)) {
      selected = nextUnplaced() || selected; // the orientation stays for the next ship
    }
    save();
    update();
  }

  function onPick(name) {
    selected = name;
    if (placed[name]) vertical = placed[name].vertical;
    clearRefusal();
    save();
    update();
  }

  function onRotate() {
    vertical = !vertical;
    // A selected ship already on the grid turns in place (if it fits).
    if (placed[selected] && !tryPlace(selected, placed[selected].bow, vertical)) vertical = !vertical;
    else clearRefusal();
    save();
    update();
  }

  function onRandom() {
    random = true;
    placed = {};
    selected = (spec()[0] || {}).name || '';
    clearRefusal();
    save();
    update();
  }

  function onClear() {
    random = false;
    placed = {};
    selected = (spec()[0] || {}).name || '';
    clearRefusal();
    save();
    update();
  }

  // Hovering (or focusing) my grid during placement shows where the selected ship would go.
  function preview(cell) {
    for (const c of own.cells.values()) c.classList.remove('preview', 'preview-bad');
    if (readOnly || !cell || !sv || sv.phase !== 'placement' || !selected || random) return;
    const size = specOf(selected).size;
    let squares = shipSquares(cell.dataset.sq, vertical, size);
    let bad = !squares;
    if (!squares) {
      // Show the part that fits, in red.
      const at = parseSq(cell.dataset.sq);
      squares = [];
      for (let i = 0; i < size; i += 1) {
        const col = at.col + (vertical ? 0 : i);
        const row = at.row + (vertical ? i : 0);
        if (col < SIZE && row < SIZE) squares.push(sqName(col, row));
      }
    }
    const here = occupant(cell.dataset.sq);
    if (here && here !== selected && placed[selected]) return; // a click would pick that ship up
    bad = bad || squares.some((sq) => { const o = occupant(sq); return o && o !== selected; });
    for (const sq of squares) own.cells.get(sq).classList.add(bad ? 'preview-bad' : 'preview');
  }

  // ---------------------------------------------------------------- firing (S4, S5)
  function onEnemyCell(sq) {
    if (!sv || sv.phase !== 'firing') return;
    if (!myTurn()) {
      refuse('shots', 'S4', 'salvo.err.not_your_turn', {}, 'order/not_your_turn');
      return;
    }
    const earlier = (sv.shots || []).find((x) => x.square === sq);
    const i = chosen.indexOf(sq);
    if (i >= 0) {
      chosen.splice(i, 1);
    } else if (earlier) {
      refuse('shots', 'S5', 'salvo.err.already_shot', { sq, n: earlier.round });
      return;
    } else if (chosen.length >= sv.shots_allowed) {
      if (sv.shots_allowed === 1) {
        chosen = [sq]; // one shot: the new choice replaces the old one
      } else {
        refuse('shots', 'S4', 'salvo.err.too_many', { n: sv.shots_allowed });
        return;
      }
    } else {
      chosen.push(sq);
    }
    clearRefusal();
    save();
    update();
  }

  // ---------------------------------------------------------------- the orders for the Done button
  function getOrders() {
    refusal = null;
    if (!sv || sv.phase === 'over') throw { code: 'game/over', rule: 'S7' };
    if (sv.phase === 'placement') {
      if (random) return { random_placement: true };
      const missing = spec().filter((x) => !placed[x.name]);
      if (missing.length) {
        throw refusalError('placement', 'S3', 'salvo.err.unplaced', { ships: missing.map((x) => ship(x.name)).join(', ') });
      }
      return { placement: spec().map((x) => ({ ship: x.name, bow: placed[x.name].bow, vertical: placed[x.name].vertical })) };
    }
    if (!myTurn()) throw refusalError('shots', 'S4', 'salvo.err.not_your_turn', {}, 'order/not_your_turn');
    if (!chosen.length) throw refusalError('shots', 'S4', 'salvo.err.no_shots');
    return { shots: [...chosen] };
  }

  // What Done would send, or null (nothing complete yet): no refusal shown, nothing changed.
  function draftOrders() {
    if (!sv || sv.phase === 'over' || round === null) return null;
    if (sv.phase === 'placement') {
      if (random) return { random_placement: true };
      if (spec().some((x) => !placed[x.name])) return null;
      return { placement: spec().map((x) => ({ ship: x.name, bow: placed[x.name].bow, vertical: placed[x.name].vertical })) };
    }
    return myTurn() && chosen.length ? { shots: [...chosen] } : null;
  }

  // ---------------------------------------------------------------- errors and the autopilot in words
  // shots[2] -> "your shot at C3"; placement[1] -> "your Cruiser with its bow at C1".
  function describeField(field, request) {
    const m = /^(shots|placement)\[(\d+)\]/.exec(String(field || ''));
    if (!m) return '';
    const item = ((request || {})[m[1]] || [])[Number(m[2])];
    if (m[1] === 'shots') return item ? t('salvo.err.your_shot', { sq: String(item) }) : '';
    return item && item.ship ? t('salvo.err.your_ship', { ship: ship(item.ship), sq: String(item.bow || '') }) : '';
  }

  // The rounds the autopilot played for me, by round: their shots on the enemy grid say so.
  const autoRounds = () => new Set(((view && view.autopilot_log) || [])
    .filter((x) => x.source !== 'standing_orders').map((x) => Number(x.round || 0)));

  function describeAutopilot(turn) {
    const o = turn.salvo || {};
    if (o.shots && o.shots.length) return [t('salvo.auto.shots', { shots: o.shots.join(', ') })];
    if (o.random_placement) return [t('salvo.auto.random')];
    if (o.placement && o.placement.length) {
      return [t('salvo.auto.placed', { ships: o.placement.map((x) => t('salvo.auto.ship_at', { ship: ship(x.ship), sq: x.bow })).join(', ') })];
    }
    return [t('autopilot.nothing')];
  }

  // Do the orders entered here differ from the ones the server holds (sent, then changed)?
  function differsFromSent() {
    const p = view.salvo_pending;
    if (!view.submitted || !p) return false;
    if (phase === 'placement') {
      if (random || p.random_placement) return random !== Boolean(p.random_placement);
      const sent = Object.fromEntries((p.placement || []).map((x) => [x.ship, `${x.bow}/${Boolean(x.vertical)}`]));
      const here = Object.fromEntries(Object.entries(placed).map(([n, x]) => [n, `${x.bow}/${x.vertical}`]));
      return JSON.stringify(sent, Object.keys(sent).sort()) !== JSON.stringify(here, Object.keys(here).sort());
    }
    return [...(p.shots || [])].sort().join() !== [...chosen].sort().join();
  }

  // ---------------------------------------------------------------- chat
  async function onChat(ev) {
    ev.preventDefault();
    const text = chatText.value.trim();
    ctx.clearError(chatForm);
    if (!text) return;
    chatSend.disabled = true;
    try {
      await ctx.act({ chat: { text } });
      chatText.value = '';
    } catch (err) {
      ctx.showError(chatForm, err);
    } finally {
      chatSend.disabled = false;
    }
  }

  // ---------------------------------------------------------------- drawing
  function renderOwn() {
    const placing = sv.phase === 'placement';
    const ships = new Map(); // sq -> {name, sunk, selected}
    if (placing) {
      for (const [name, p] of Object.entries(placed)) {
        for (const sq of shipSquares(p.bow, p.vertical, specOf(name).size) || []) {
          ships.set(sq, { name, selected: name === selected });
        }
      }
    } else {
      for (const x of sv.fleet || []) for (const sq of x.squares) ships.set(sq, { name: x.name, sunk: x.sunk });
    }
    const incoming = new Map((sv.incoming || []).map((x) => [x.square, x]));
    const lastRound = Math.max(0, ...(sv.incoming || []).map((x) => x.round));
    for (const [sq, cell] of own.cells) {
      const s = ships.get(sq);
      const shot = incoming.get(sq);
      const cls = [];
      let text = '';
      let label;
      if (s) cls.push('ship', s.sunk ? 'sunk' : '', s.selected ? 'selected' : '');
      const unknown = shot && (shot.hit === undefined || shot.hit === null); // (a spectator: not told)
      if (shot && unknown) {
        cls.push('shot', shot.round === lastRound ? 'recent' : '');
        text = String(shot.round);
      } else if (shot) {
        cls.push(shot.hit ? 'hit' : 'miss', shot.round === lastRound ? 'recent' : '');
        text = shot.hit ? '✕' : '•';
      }
      if (s && shot) label = t('salvo.cell.ship_hit', { sq, ship: ship(s.name), n: shot.round });
      else if (s) label = t('salvo.cell.ship', { sq, ship: ship(s.name) });
      else if (shot && unknown) label = t('salvo.cell.shot', { sq, n: shot.round });
      else if (shot) label = t('salvo.cell.miss_in', { sq, n: shot.round });
      else label = t('salvo.cell.water', { sq });
      setCell(cell, { cls: cls.filter(Boolean), text, label, vessel: s ? s.name : '', disabled: readOnly || !placing });
    }
    own.rove();
    // The enemy's latest salvo at me, in words.
    const last = (sv.incoming || []).filter((x) => x.round === lastRound);
    incomingNote.hidden = !last.length || last.some((x) => x.hit === undefined || x.hit === null);
    if (!incomingNote.hidden) {
      incomingNote.textContent = t('salvo.incoming_last', { n: lastRound, shots: last.length,
        hits: last.filter((x) => x.hit).length });
    }
  }

  function renderEnemy() {
    const firing = sv.phase === 'firing';
    const shots = new Map((sv.shots || []).map((x) => [x.square, x]));
    const lastRound = Math.max(0, ...(sv.shots || []).map((x) => x.round));
    const revealed = new Map(); // game over: the enemy fleet
    for (const x of sv.enemy_fleet || []) for (const sq of x.squares) revealed.set(sq, x);
    const aim = new Set(chosen);
    const autoShots = autoRounds();
    for (const [sq, cell] of enemy.cells) {
      const shot = shots.get(sq);
      const foe = revealed.get(sq);
      const cls = [];
      let text = '';
      let label = t('salvo.cell.water', { sq });
      if (foe) {
        cls.push('enemy-ship', foe.sunk ? 'sunk' : '');
        label = t('salvo.cell.enemy_ship', { sq, ship: ship(foe.name) });
      }
      if (shot) {
        text = String(shot.round);
        cls.push('shot', shot.round === lastRound ? 'recent' : '');
        if (shot.hit === true) cls.push('hit');
        if (shot.hit === false) cls.push('miss');
        const key = shot.hit === true ? 'salvo.cell.shot_hit' : shot.hit === false ? 'salvo.cell.shot_miss' : 'salvo.cell.shot';
        label = t(key, { sq, n: shot.round });
        if (autoShots.has(shot.round)) { cls.push('auto'); label = t('salvo.cell.by_autopilot', { label }); }
        if (foe) label = t('salvo.cell.both', { a: label, b: ship(foe.name) });
      } else if (aim.has(sq)) {
        cls.push('aim');
        label = t('salvo.cell.chosen', { sq });
      }
      setCell(cell, { cls: cls.filter(Boolean), text, label, vessel: foe ? foe.name : '',
        disabled: readOnly || !firing || Boolean(shot), pressed: firing && !shot && !readOnly ? aim.has(sq) : null });
    }
    enemy.rove();
  }

  function renderPlacement() {
    placeTools.hidden = readOnly || sv.phase !== 'placement';
    if (placeTools.hidden) return;
    // One button per ship, made once (a keyboard user keeps focus on it), updated in place.
    if (shipList.dataset.fleet !== spec().map((x) => x.name).join()) {
      shipList.dataset.fleet = spec().map((x) => x.name).join();
      shipList.replaceChildren(...spec().map((x) => h('li', {},
        h('button', { type: 'button', class: 'ship-pick', 'data-ship': x.name, onclick: () => onPick(x.name) },
          h('span', { class: 'name' }), h('span', { class: 'pips', 'aria-hidden': 'true' },
            Array.from({ length: x.size }, () => h('i', {}))), h('span', { class: 'muted where' })))));
    }
    for (const x of spec()) {
      const button = shipList.querySelector(`[data-ship="${x.name}"]`);
      const p = placed[x.name];
      button.classList.toggle('placed', Boolean(p));
      button.setAttribute('aria-pressed', String(x.name === selected));
      button.querySelector('.name').textContent = ship(x.name);
      button.querySelector('.where').textContent = p ? t('salvo.placed_at', { sq: p.bow }) : t('salvo.size', { n: x.size });
    }
    rotate.textContent = t('salvo.rotate', { dir: vertical ? t('salvo.vertical') : t('salvo.horizontal') });
    rotate.setAttribute('aria-pressed', String(vertical));
    randomButton.textContent = t('salvo.random');
    randomButton.setAttribute('aria-pressed', String(random));
    clearButton.textContent = t('salvo.clear');
    clearButton.disabled = !random && !Object.keys(placed).length;
  }

  function renderStatus() {
    const p = sv.phase;
    const allowed = sv.shots_allowed;
    let text;
    if (p === 'placement') {
      const n = Object.keys(placed).length;
      if (view.submitted) text = random ? t('salvo.random_sent') : t('salvo.placement_sent');
      else if (random) text = t('salvo.random_chosen');
      else if (n === spec().length) text = t('salvo.placed_all');
      else text = t('salvo.place_help', { n, total: spec().length });
    } else if (p === 'firing') {
      if (classic()) text = myTurn() ? t('salvo.classic_your_turn') : t('salvo.classic_their_turn', { name: ctx.nameOf(sv.active_player) });
      else if (view.submitted) text = t('salvo.sent_shots');
      else text = allowed === 1 ? t('salvo.fire_help_one') : t('salvo.fire_help', { n: allowed });
    } else {
      text = t('salvo.over');
    }
    setText(status, text);
    unsent.hidden = !differsFromSent();
    setText(unsent, t('salvo.unsent'));
    if (ctx.setChanged) ctx.setChanged(p !== 'over' && differsFromSent());

    const left = Math.max(0, allowed - chosen.length);
    shotsLeft.hidden = readOnly || p !== 'firing' || !allowed;
    shotsLeft.dataset.left = String(left);
    shotsLeft.dataset.allowed = String(allowed);
    setText(shotsLeft, left === 0 ? t('salvo.shots_left_none') : left === 1 ? t('salvo.shots_left_one')
      : t('salvo.shots_left', { n: left }));

    done.hidden = p === 'over' || (p === 'firing' && allowed === 0);
    done.refreshLabel();
  }

  function renderFleet() {
    fleetTitle.textContent = readOnly ? t('salvo.spec.fleet', { name: sideName(side()) }) : t('salvo.fleet_title');
    const fleet = sv.fleet || [];
    if (!fleet.length) {
      fleetList.replaceChildren(h('li', { class: 'muted' }, readOnly ? t('salvo.spec.fleet_none') : t('salvo.fleet_empty')));
      return;
    }
    fleetList.replaceChildren(...fleet.map((x) => {
      const hits = (x.hits || []).length;
      const squares = x.squares || Array.from({ length: x.size || 0 }, () => ''); // (a spectator: where it lay is not told)
      return h('li', { 'data-ship': x.name, 'data-hits': hits, class: x.sunk ? 'sunk' : '' },
        h('span', { class: 'name' }, ship(x.name)),
        h('span', { class: 'pips', 'aria-hidden': 'true' },
          squares.map((sq) => h('i', { class: x.sunk || (sq && (x.hits || []).includes(sq)) ? 'hit' : '' }))),
        h('span', { class: 'state' }, x.sunk ? t('salvo.sunk') : t('salvo.fleet_hits', { hits, size: x.size || squares.length })));
    }));
  }

  function reportText(r) {
    const base = r.hits === 0 ? t('salvo.report_none', { n: r.round })
      : r.hits === 1 ? t('salvo.report_one', { n: r.round }) : t('salvo.report', { n: r.round, hits: r.hits });
    const parts = [];
    if ((r.ships || []).length) {
      parts.push((r.ships || []).map((x) => t('salvo.ship_times', { ship: ship(x.ship), n: x.count })).join(', '));
    }
    if ((r.sunk || []).length) parts.push(t('salvo.report_sunk', { ships: r.sunk.map(ship).join(', ') }));
    return parts.length ? t('salvo.report_detail', { report: base, details: parts.join('; ') }) : base;
  }

  function renderReports() {
    reportsTitle.textContent = readOnly ? t('salvo.spec.reports', { name: sideName(side()) }) : t('salvo.reports_title');
    let items;
    if (classic()) {
      // Classic mode: each shot is reported hit or miss (S6).
      items = [...(sv.shots || [])].reverse().map((x) => h('li', { 'data-round': x.round, class: x.hit ? 'hit' : '' },
        t(x.hit ? 'salvo.classic_hit' : 'salvo.classic_miss', { n: x.round, sq: x.square })));
    } else {
      items = [...(sv.reports || [])].reverse().map((r) => h('li', { 'data-round': r.round, 'data-hits': r.hits,
        class: r.hits ? 'hit' : '' }, reportText(r)));
    }
    reportsList.replaceChildren(...(items.length ? items : [h('li', { class: 'muted empty' }, t('salvo.reports_empty'))]));
    // (each salvo's report is its shooter's own, S6: a spectator sees none)
    reportsTitle.hidden = readOnly && !items.length;
    reportsList.hidden = reportsTitle.hidden;

    sunkTitle.textContent = readOnly ? t('salvo.spec.sunk', { name: sideName(1 - side()) }) : t('salvo.enemy_sunk_title');
    const sunk = sv.enemy_sunk || [];
    sunkList.replaceChildren(...(sunk.length
      ? sunk.map((name) => h('li', { 'data-ship': name }, ship(name)))
      : [h('li', { class: 'muted empty' }, t('salvo.enemy_sunk_none'))]));
  }

  function chatItem(c) {
    return h('li', { class: c.seat === view.you ? 'me' : '' },
      h('span', { class: 'dot', style: { background: ctx.seatColor(c.seat) } }),
      h('strong', { class: 'who' }, c.nickname || ctx.nameOf(c.seat)), ' ',
      h('span', { class: 'text', dir: 'auto' }, c.text));
  }

  // The chat log grows by appending (a screen reader announces only the new lines).
  function renderChat(force) {
    chatTitle.textContent = t('salvo.chat_title');
    chatLabel.textContent = t('salvo.chat_label');
    chatText.placeholder = t('salvo.chat_placeholder');
    chatSend.textContent = t('salvo.chat_send');
    chatForm.hidden = view.status !== 'GAME_STATUS_RUNNING';
    const chats = ctx.chats || [];
    const last = chats[chats.length - 1] || null;
    if (!force && last === chatLast) return;
    const from = force || !chatLast ? -1 : chats.indexOf(chatLast);
    if (from < 0 || !chatLog.querySelector('li:not(.empty)')) {
      chatLog.replaceChildren(...(chats.length ? chats.map(chatItem) : [h('li', { class: 'muted empty' }, t('salvo.chat_empty'))]));
    } else {
      chatLog.append(...chats.slice(from + 1).map(chatItem));
    }
    chatLast = last;
    chatLog.scrollTop = chatLog.scrollHeight;
  }

  function renderLegend() {
    legend.replaceChildren(
      h('span', {}, h('i', { class: 'key ship' }), t('salvo.legend_ship')),
      h('span', {}, h('i', { class: 'key hit' }), t('salvo.legend_hit')),
      h('span', {}, h('i', { class: 'key miss' }), t('salvo.legend_miss')),
      h('span', {}, h('i', { class: 'key aim' }), t('salvo.legend_aim')),
      h('span', {}, h('i', { class: 'key shot' }, '3'), t('salvo.legend_round')));
  }

  // Everything from the current view and the local state.
  function update(force = false) {
    if (!view || !sv) return;
    root.className = `salvo phase-${sv.phase}${classic() ? ' classic' : ''}`;
    root.dataset.phase = sv.phase;
    root.dataset.round = String(view.round);
    ownTitle.textContent = readOnly ? t('salvo.spec.waters', { name: sideName(side()) }) : t('salvo.own_title');
    enemyTitle.textContent = readOnly ? t('salvo.spec.waters', { name: sideName(1 - side()) }) : t('salvo.enemy_title');
    renderOwn();
    renderEnemy();
    renderPlacement();
    renderStatus();
    renderFleet();
    renderReports();
    renderChat(force);
    renderLegend();
    if (refusal) showRefusalText();
  }

  return {
    render(v) {
      view = v;
      sv = v.salvo;
      if (!sv) return;
      if (round !== v.round || phase !== sv.phase) startRound();
      update();
      if (agent) agent.render(v);
    },
    relabel() { update(true); if (agent) agent.relabel(); },
    destroy() { if (agent) agent.destroy(); el.replaceChildren(); },
    describeField,
    describeAutopilot,
  };
}
