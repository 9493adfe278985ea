// The Archipelago screen (W3, W4, W5, W8, W10, W11 of shared/spec/web-client.md; the rules are
// shared/spec/archipelago.md). The board is one SVG inside a clipping box (#arch-board): pan by
// dragging, zoom with the corner buttons, the wheel or a pinch. Beside it (below it on a phone) the
// stock, the selected unit and the tabs: Units, Build, Trade, Standing (js/archipelago_tabs.js),
// Enemy; under the board the last round's events; a sticky bar holds "Done with my turn".
//
// What the player enters (placements, unit orders, builds, bonus) lives here across renders, is
// saved to ctx.draft on every change and restored from it (or from the server's pending orders) when
// a round's first view arrives. The board's terrain layers are rebuilt only when the game's state
// changes; selection, highlights, planned paths and own units are redrawn on every interaction.
// Read-only (`ctx.readOnly`: a spectator, a replay): no orders, builds, trade, standing orders or Done
// bar; the stock only for a seat's view (a spectator's, `player` -1, has none); the Units and Enemy
// tabs only when the view lists some (a finished game's spectator sees every unit, in its owner's
// colour).
import { has } from './i18n.js';

const T = 40; // one tile, in SVG units
const RUNNING = 'GAME_STATUS_RUNNING';
const OVER = 'GAME_STATUS_OVER';
// A28: ties break by direction N, E, S, W (the server plans `to` the same way).
const DIRS = [[0, -1], [1, 0], [0, 1], [-1, 0]];
const RES_ICON = { wood: '🌲', food: '🌾', iron: '⛏', fuel: '🛢' };
const TABS = ['units', 'build', 'trade', 'standing', 'enemy'];
const ACTIONS = ['outpost', 'bombard', 'strike', 'reveal'];
// Marks of the last round's events on the board (W10).
const EVENT_MARK = {
  fight: '⚔', bombard: '💥', strike: '💥', reveal: '👁', held: '✋', board: '⤵', raft: '≈', raft_lost: '≈',
  crashed: '✖', outpost: '⛺', outpost_captured: '⛺', outpost_skipped: '⛺', build: '✚',
  flag_taken: '⚑', flag_home: '⚑', flag_recovered: '⚑', flag_scored: '⚑',
};

const key = (tile) => `${tile.x},${tile.y}`;
const tileOfKey = (k) => { const [x, y] = k.split(',').map(Number); return { x, y }; };
const dist = (p, q) => Math.abs(p.x - q.x) + Math.abs(p.y - q.y);
const sameTile = (p, q) => Boolean(p && q && p.x === q.x && p.y === q.y);
const asTile = (tile) => ({ x: Number(tile.x || 0), y: Number(tile.y || 0) });
// Coordinates stay left-to-right inside Hebrew text (Unicode isolates).
const coord = (tile) => (tile ? `\u2066(${tile.x}, ${tile.y})\u2069` : '');
const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));

export function createScreen(el, ctx) {
  const { t, h, s } = ctx;
  let view = null; // the latest GetViewResponse
  let a = null; // its archipelago member
  let rules = null; // GET /client/archipelago.json
  let types = new Map(); // unit type id -> its row of the rules table
  let tabs = null; // {trade, standing} from archipelago_tabs.js, once loaded
  let destroyed = false;

  // ---------------------------------------------------------------- what the player is entering
  let round = null; // the round `orders` belongs to
  let orders = emptyOrders();
  let selected = null; // own unit id
  let tileSel = null; // a tile clicked that holds no own unit: its details are shown
  let mode = null; // {kind: 'place'|'move'|'target'|'mine'|'raft', action?, type?}
  let tab = 'units';
  let cam = { k: 1, x: 0, y: 0 };
  let fitted = false; // the camera has been fitted to this board once
  let userMoved = false; // the player zoomed or panned: a resize keeps the view
  let flashId = null; // an enemy (or log entry) the Enemy tab asked to show
  let cursor = null; // keyboard cursor on the board
  let staticKey = '';
  let hl = null; // the current highlights {tiles: Set<key>, risky: Set<key>, enemies: Set<id>}

  function emptyOrders() {
    return { deploy: [], units: new Map(), builds: [], bonus: '' };
  }

  const over = () => view && view.status === OVER;
  // (whether the page may give orders: a read-only page never does)
  const running = () => view && view.status === RUNNING && !ctx.readOnly;
  const me = () => (a ? a.player : view ? view.you : 0);
  const rule = (name) => rules[name]; // numbers of A36–A39 from the rules table (GET /client/archipelago.json)
  const typeOf = (id) => types.get(id) || { id, name: id, domain: 'land', move: 0, sight: 0, cost: {}, capacity: 0 };
  const typeName = (id) => (has(`unit.${id}`) ? t(`unit.${id}`) : typeOf(id).name);
  const abbr = (id) => (has(`arch.abbr.${id}`) ? t(`arch.abbr.${id}`) : String(id).slice(0, 2));
  // "Your home island" / "bob's home island": keys `<base>_you` and `<base>` with {player}.
  const ofPlayer = (base, seat, params = {}) => (seat === me() ? t(`${base}_you`, params)
    : t(base, { ...params, player: ctx.nameOf(seat) }));
  const resources = () => (rules ? rules.resources : Object.keys(RES_ICON));

  // ---------------------------------------------------------------- the elements (built once)
  const svg = s('svg', { class: 'arch-svg', xmlns: 'http://www.w3.org/2000/svg', 'aria-hidden': 'true' });
  const layer = {};
  for (const name of ['tiles', 'marks', 'hl', 'orders', 'log', 'enemies', 'units', 'events', 'cursor']) {
    layer[name] = s('g', { class: `layer-${name}` });
    svg.append(layer[name]);
  }
  const zoomIn = h('button', { type: 'button', id: 'zoom-in', class: 'small', onclick: () => zoomBy(1.5) }, '+');
  const zoomOut = h('button', { type: 'button', id: 'zoom-out', class: 'small', onclick: () => zoomBy(1 / 1.5) }, '−');
  const zoomReset = h('button', { type: 'button', id: 'zoom-reset', class: 'small', onclick: () => { userMoved = false; fit(); } }, '⤢');
  // The zoom buttons sit in a band along the bottom of the board, outside the map's view: they never
  // cover a tile (a start area included), in ltr and rtl alike.
  const zoomBox = h('div', { class: 'zoom' }, zoomIn, zoomOut, zoomReset);
  const board = h('div', { id: 'arch-board', tabindex: '0', role: 'application' }, svg, zoomBox);
  const legend = h('p', { class: 'arch-legend muted' });
  // What the keyboard cursor is on, said by a screen reader (the drawing itself is aria-hidden).
  const cursorSay = h('span', { id: 'board-cursor', class: 'sr', role: 'status', 'aria-live': 'polite' });

  const stockBox = h('section', { id: 'stock', class: 'card arch-stock' });
  const resSpans = {};
  const scoreBox = h('span', { id: 'score', class: 'score' });
  const bonusSelect = h('select', { id: 'bonus', onchange: () => { orders.bonus = bonusSelect.value; changed(); } });
  const bonusLabel = h('label', { class: 'bonus' }, h('span', {}), bonusSelect);

  const unitPanel = h('section', { id: 'unit-panel', class: 'card', hidden: true, 'aria-labelledby': 'unit-name' });
  const tileInfo = h('section', { id: 'tile-info', class: 'card', hidden: true });
  const cardBox = h('section', { id: 'unit-card', class: 'card unit-card', hidden: true, 'aria-labelledby': 'unit-card-name' });
  let cardType = null; // the unit type whose card is open (from a unit or the build list)

  const tabList = h('div', { role: 'tablist', class: 'arch-tabs' });
  const tabButtons = {};
  const panels = {};
  for (const name of TABS) {
    tabButtons[name] = h('button', { type: 'button', role: 'tab', id: `tab-${name}`, 'aria-controls': `panel-${name}`,
      onclick: () => showTab(name), onkeydown: tabKeys });
    panels[name] = h('section', { role: 'tabpanel', id: `panel-${name}`, 'aria-labelledby': `tab-${name}`,
      class: 'arch-panel', hidden: true });
    tabList.append(tabButtons[name]);
  }
  const tabsCard = h('section', { class: 'card arch-tabcard' }, tabList, ...TABS.map((n) => panels[n]));
  const unitList = h('ul', { id: 'unit-list', class: 'plain arch-list' });
  const buildBox = h('div', { class: 'arch-build' });
  const buildList = h('ul', { id: 'build-list', class: 'plain arch-list' });
  const enemyList = h('ul', { id: 'enemy-log', class: 'plain arch-list' });
  const tradeSlot = h('div', { class: 'tab-slot' });
  const standingSlot = h('div', { class: 'tab-slot' });
  panels.units.append(unitList);
  panels.build.append(buildBox);
  panels.trade.append(tradeSlot);
  panels.standing.append(standingSlot);
  panels.enemy.append(enemyList);

  const eventsTitle = h('h3', { id: 'events-title' });
  const eventList = h('ul', { id: 'events', class: 'plain arch-events-list', 'aria-labelledby': 'events-title' });
  const eventsBox = h('section', { class: 'card arch-events' }, eventsTitle, eventList);

  const hint = h('span', { id: 'arch-hint', role: 'status', 'aria-live': 'polite' });
  const cancelMode = h('button', { type: 'button', id: 'cancel-mode', class: 'small', hidden: true,
    onclick: () => { mode = null; update(); } });
  const done = ctx.doneButton(() => buildOrders(), { draftOf: () => (round === null ? null : buildOrders()) });
  const bar = h('div', { class: 'arch-bar' }, h('div', { class: 'arch-hint' }, hint, cancelMode), done);
  const loading = h('p', { class: 'muted arch-loading' });

  const side = h('div', { class: 'arch-side' }, stockBox, unitPanel, cardBox, tileInfo, tabsCard);
  const root = h('div', { class: 'arch' }, h('div', { class: 'arch-boardwrap' }, board, cursorSay, legend), side, eventsBox, bar);
  el.replaceChildren(loading, root);
  root.hidden = true;
  bar.hidden = Boolean(ctx.readOnly);

  // ---------------------------------------------------------------- loading the rules and the tabs
  fetch('/client/archipelago.json')
    .then((r) => { if (!r.ok) throw new Error(`HTTP ${r.status}`); return r.json(); })
    .then((table) => {
      if (destroyed) return;
      rules = table;
      types = new Map(rules.units.map((u) => [u.id, u]));
      if (!ctx.readOnly) loadTabs();
      if (view) render(view);
    })
    .catch((err) => {
      console.error('the Archipelago rules table did not load:', err);
      if (!destroyed) loading.textContent = t('arch.rules_failed');
    });

  function loadTabs() {
    import('./archipelago_tabs.js').then((mod) => {
      if (destroyed) return;
      const trade = mod.tradeTab(ctx, rules);
      const standing = mod.standingTab(ctx, rules);
      tradeSlot.replaceChildren(trade.el);
      standingSlot.replaceChildren(standing.el);
      tabs = { trade, standing };
      if (view) { trade.render(view); standing.render(view); }
    }).catch((err) => { // a bug, not a state of the game: say so (a browser test fails on it)
      tabs = null;
      console.error('the Trade and Standing tabs did not load:', err);
    });
  }

  // ---------------------------------------------------------------- the board's model
  let units = new Map(); // own units by id
  let ownAt = new Map(); // tile key -> own unit id (not cargo), positions after placements in round 0
  let enemyAt = new Map(); // tile key -> enemy in sight
  let explored = null; // rows
  let homeTiles = new Set();
  let control = new Set();
  let deployPos = new Map(); // round 0: unit id -> tile after the placements

  function indexView() {
    units = new Map(a.units.map((u) => [u.id, u]));
    enemyAt = new Map(a.enemies.map((e) => [key(e.tile), e]));
    explored = a.rows;
    control = new Set(a.control.map(key));
    homeTiles = new Set();
    for (const isl of a.islands) {
      if (isl.kind === 'home' && isl.owner === me()) for (const tl of isl.tiles) homeTiles.add(key(tl));
    }
    computePositions();
  }

  const terrain = (x, y) => (y >= 0 && y < a.height && x >= 0 && x < a.width ? explored[y][x] : null);
  const isCargo = (u) => u.carrier !== undefined && u.carrier !== null && u.carrier !== '';
  const posOf = (u) => (round === 0 && deployPos.has(u.id) ? deployPos.get(u.id) : asTile(u.tile));

  // Where the units stand before any placement: unit id -> tile, and tile key -> unit id.
  function startingLayout() {
    const pos = new Map();
    const at = new Map();
    for (const u of a.units) {
      if (isCargo(u)) continue;
      pos.set(u.id, asTile(u.tile));
      at.set(key(u.tile), u.id);
    }
    return [pos, at];
  }

  // Round 0: the placements replayed as the server applies them (engine resolve._deploy): a unit
  // goes to its tile; an own unit of the same domain standing there takes the unit's old tile.
  function replayDeploy(list) {
    const [pos, at] = startingLayout();
    for (const d of list) {
      const from = pos.get(d.unit);
      if (!from || sameTile(from, d.tile)) continue;
      const other = at.get(key(d.tile));
      if (other && typeOf(units.get(other).type).domain !== typeOf(units.get(d.unit).type).domain) continue;
      at.delete(key(from));
      if (other) { pos.set(other, from); at.set(key(from), other); }
      pos.set(d.unit, asTile(d.tile));
      at.set(key(d.tile), d.unit);
    }
    return pos;
  }

  // The shortest list of placements that gives the same final layout: each entry puts one unit
  // on its final tile for good (whoever stood there moves to the unit's old tile).
  function canonicalDeploy(list) {
    const final = replayDeploy(list);
    const [pos, at] = startingLayout();
    const out = [];
    for (const u of a.units) {
      const want = final.get(u.id);
      const from = pos.get(u.id);
      if (!want || !from || sameTile(want, from)) continue;
      out.push({ unit: u.id, tile: { x: want.x, y: want.y } });
      const other = at.get(key(want));
      at.delete(key(from));
      if (other) { pos.set(other, from); at.set(key(from), other); }
      pos.set(u.id, want);
      at.set(key(want), u.id);
    }
    return out;
  }

  function computePositions() {
    deployPos = round === 0 ? replayDeploy(orders.deploy) : new Map();
    ownAt = new Map();
    for (const u of a.units) {
      if (isCargo(u)) continue;
      ownAt.set(key(posOf(u)), u.id);
    }
  }

  // Terrain a unit may cross or end on (A23, A60), over explored tiles only (A18).
  function passable(u, x, y) {
    const ter = terrain(x, y);
    if (ter === null || ter === '?') return false;
    const ty = typeOf(u.type);
    if (u.type === 'flag') return homeTiles.has(`${x},${y}`);
    if (ty.domain === 'air' || u.type === 'navcommando') return true;
    if (ty.domain === 'land') return ter === '#';
    return ter === '.';
  }

  // An own carrier a land unit may board at `k` (A24): free room, and it has no move order.
  function boardable(u, k) {
    const ty = typeOf(u.type);
    if (ty.domain !== 'land' || u.type === 'flag') return false;
    const cid = ownAt.get(k);
    if (!cid || cid === u.carrier) return false;
    const c = units.get(cid);
    const ct = typeOf(c.type);
    if (!(ct.capacity > 0) || c.type === 'raft') return false; // A92: no unit boards a raft
    const order = orders.units.get(cid);
    if (order && (order.to || (order.path && order.path.length))) return false;
    return (c.cargo || []).length < ct.capacity;
  }

  // Tiles a unit can reach this round (BFS within its move), with the boarding tiles.
  function reachable(u) {
    const ty = typeOf(u.type);
    const out = new Set();
    if (!(ty.move > 0)) return out;
    const start = asTile(u.tile);
    const seen = new Set([key(start)]);
    let frontier = [start];
    for (let d = 0; d < ty.move && frontier.length; d += 1) {
      const next = [];
      for (const p of frontier) {
        for (const [dx, dy] of DIRS) {
          const q = { x: p.x + dx, y: p.y + dy };
          const k = key(q);
          if (seen.has(k)) continue;
          if (passable(u, q.x, q.y)) {
            seen.add(k);
            out.add(k);
            next.push(q);
          } else if (boardable(u, k)) {
            seen.add(k);
            out.add(k);
          }
        }
      }
      frontier = next;
    }
    return out;
  }

  // The path the server will plan for `to` (orders.plan_path): distances from the destination
  // over passable explored tiles, then from the start the first step in N, E, S, W order that
  // gets closer; cut to the unit's move.
  function planPath(u, dest) {
    const start = asTile(u.tile);
    if (sameTile(start, dest)) return [start];
    const W = a.width;
    const distTo = new Map([[key(dest), 0]]);
    let frontier = [dest];
    while (frontier.length && !distTo.has(key(start))) {
      const next = [];
      for (const p of frontier) {
        for (const [dx, dy] of DIRS) {
          const q = { x: p.x + dx, y: p.y + dy };
          if (q.x < 0 || q.y < 0 || q.x >= W || q.y >= a.height) continue;
          const k = key(q);
          if (distTo.has(k)) continue;
          if (sameTile(q, start) || passable(u, q.x, q.y)) {
            distTo.set(k, distTo.get(key(p)) + 1);
            next.push(q);
          }
        }
      }
      frontier = next;
    }
    if (!distTo.has(key(start))) return [start, dest];
    const path = [start];
    let cur = start;
    const steps = typeOf(u.type).move;
    while (!sameTile(cur, dest) && path.length <= steps) {
      const want = distTo.get(key(cur)) - 1;
      const nxt = DIRS.map(([dx, dy]) => ({ x: cur.x + dx, y: cur.y + dy })).find((q) => distTo.get(key(q)) === want);
      if (!nxt) break;
      path.push(nxt);
      cur = nxt;
    }
    return path;
  }

  // Where a move order ends (a `path` order from another client is walked step by step).
  function orderEnd(u, order) {
    if (order.to) return planPath(u, order.to).slice(-1)[0];
    if (order.path) {
      let p = asTile(u.tile);
      for (const d of order.path.slice(0, typeOf(u.type).move)) {
        const [dx, dy] = DIRS['NESW'.indexOf(d)] || [0, 0];
        p = { x: p.x + dx, y: p.y + dy };
      }
      return p;
    }
    return null;
  }

  function orderPath(u, order) {
    if (order.to) return planPath(u, order.to);
    const path = [asTile(u.tile)];
    let p = path[0];
    for (const d of (order.path || []).slice(0, typeOf(u.type).move)) {
      const [dx, dy] = DIRS['NESW'.indexOf(d)] || [0, 0];
      p = { x: p.x + dx, y: p.y + dy };
      path.push(p);
    }
    return path;
  }

  // ---------------------------------------------------------------- costs (A20, A36, A38, A40–A42)
  function reserved() {
    const need = Object.fromEntries(resources().map((r) => [r, 0]));
    const add = (cost) => { for (const [r, n] of Object.entries(cost || {})) need[r] = (need[r] || 0) + n; };
    for (const o of orders.units.values()) {
      if (o.action === 'outpost') add(rule('outpost_cost'));
      if (o.action === 'strike') add(rule('strike_cost'));
    }
    for (const b of orders.builds) add(typeOf(b.type).cost);
    return need;
  }

  function available() {
    const need = reserved();
    const stock = a.stock || {}; // (a spectator's view has none)
    return Object.fromEntries(resources().map((r) => [r, (stock[r] || 0) - (need[r] || 0)]));
  }

  const affordable = (cost, left) => Object.entries(cost || {}).every(([r, n]) => (left[r] || 0) >= n);
  const costText = (cost) => resources().filter((r) => (cost || {})[r])
    .map((r) => `${cost[r]}${RES_ICON[r] || r}`).join(' ');

  // Why a unit type cannot be built now ('' when it can).
  function buildBlock(ty, left) {
    if (round === 0) return t('arch.build.round0');
    if (ty.limit !== null && ty.limit !== undefined) {
      const have = a.units.filter((u) => u.type === ty.id).length + orders.builds.filter((b) => b.type === ty.id).length;
      if (have >= ty.limit) return t('arch.build.limit', { n: ty.limit });
    }
    if (!affordable(ty.cost, left)) return t('arch.build.unaffordable');
    if (ty.id === 'raft' && !raftShips().length) return t('arch.build.no_ship');
    if ((ty.id === 'landmine' || ty.id === 'seamine') && !mineTiles(ty.id).size) return t('arch.build.no_tile');
    return '';
  }

  // Own ships a raft can be bought for (A33): a ship with none, and none chosen for it already.
  function raftShips() {
    return a.units.filter((u) => typeOf(u.type).domain === 'sea' && u.type !== 'raft' && u.type !== 'seamine'
      && !u.raft && !orders.builds.some((b) => b.type === 'raft' && b.ship === u.id));
  }

  // Tiles a mine can go on (A42): a land mine on a land tile the player controls, a sea mine on a
  // sea tile next to one; empty of units in sight and of other mines chosen this round.
  function mineTiles(type) {
    const out = new Set();
    const taken = new Set(orders.builds.filter((b) => b.tile).map((b) => key(b.tile)));
    const empty = (k) => !taken.has(k) && !enemyAt.has(k) && !a.units.some((u) => key(u.tile) === k);
    if (type === 'landmine') {
      for (const k of control) if (empty(k)) out.add(k);
    } else {
      for (const k of control) {
        const c = tileOfKey(k);
        for (const [dx, dy] of DIRS) {
          const q = { x: c.x + dx, y: c.y + dy };
          if (terrain(q.x, q.y) === '.' && empty(key(q))) out.add(key(q));
        }
      }
    }
    return out;
  }

  // ---------------------------------------------------------------- what a unit can do
  function canAct(u, action) {
    const ty = typeOf(u.type);
    if (action === 'outpost') return ty.domain === 'land' && !['landmine', 'flag'].includes(u.type);
    if (action === 'bombard') return Boolean(ty.warship);
    if (action === 'strike') return u.type === 'fighter';
    if (action === 'reveal') return u.type === 'spy';
    return false;
  }

  // Enemies in sight an action may aim at (A37–A39, from start-of-round positions).
  function targets(u, action) {
    const at = asTile(u.tile);
    return a.enemies.filter((e) => {
      const d = dist(at, e.tile);
      if (action === 'bombard') return d === 1 && terrain(e.tile.x, e.tile.y) === '#' && e.domain === 'land';
      if (action === 'strike') return d <= rule('strike_range');
      if (action === 'reveal') return d <= rule('reveal_range');
      return false;
    });
  }

  // Why an action cannot be ordered now ('' when it can).
  function actionBlock(u, action) {
    if (isCargo(u)) return t('arch.action.cargo');
    const current = orders.units.get(u.id);
    if (action === 'outpost') {
      const k = key(u.tile);
      if (terrain(u.tile.x, u.tile.y) !== '#') return t('arch.action.not_on_land');
      if (homeTiles.has(k)) return t('arch.action.home');
      if (a.outposts.some((o) => key(o.tile) === k)) return t('arch.action.has_outpost');
      const left = available();
      if (!(current && current.action === 'outpost') && !affordable(rule('outpost_cost'), left)) return t('arch.build.unaffordable');
      return '';
    }
    if (action === 'strike' && !(current && current.action === 'strike') && !affordable(rule('strike_cost'), available())) {
      return t('arch.build.unaffordable');
    }
    if (!targets(u, action).length) return t('arch.action.no_target');
    return '';
  }

  // ---------------------------------------------------------------- highlights of the current mode
  function computeHighlights() {
    if (!mode || !a) return null;
    const out = { tiles: new Set(), risky: new Set(), enemies: new Set() };
    const u = selected && units.get(selected);
    if (mode.kind === 'place' && u) {
      const from = key(posOf(u));
      const dom = typeOf(u.type).domain;
      if (dom === 'sea') {
        for (const k of homeTiles) {
          const c = tileOfKey(k);
          for (const [dx, dy] of DIRS) {
            const q = { x: c.x + dx, y: c.y + dy };
            if (terrain(q.x, q.y) === '.' && key(q) !== from) out.tiles.add(key(q));
          }
        }
      } else {
        for (const k of homeTiles) if (k !== from) out.tiles.add(k);
      }
    } else if (mode.kind === 'move' && u) {
      out.tiles = reachable(u);
      if (typeOf(u.type).domain === 'air') {
        // A34: an aircraft must end on an empty land tile its owner controls.
        for (const k of out.tiles) {
          const other = ownAt.get(k);
          if (!control.has(k) || (other && other !== u.id)) out.risky.add(k);
        }
      }
    } else if (mode.kind === 'target' && u) {
      for (const e of targets(u, mode.action)) out.enemies.add(e.id);
    } else if (mode.kind === 'mine') {
      out.tiles = mineTiles(mode.type);
    } else if (mode.kind === 'raft') {
      for (const sh of raftShips()) out.tiles.add(key(sh.tile));
    }
    return out;
  }

  // ---------------------------------------------------------------- changes the player makes
  function changed() {
    if (round !== null && view) ctx.draft.save({ round, ...buildOrders() });
    update();
  }

  function buildOrders() {
    if (round === 0) return { deploy: canonicalDeploy(orders.deploy) };
    const out = { units: [...orders.units.values()].map((o) => ({ ...o })), builds: orders.builds.map((b) => ({ ...b })) };
    if (orders.bonus) out.bonus = orders.bonus;
    return out;
  }

  function cleanOrder(o) {
    if (!o || !o.unit || !units.has(o.unit)) return null;
    if (o.action) return o.target ? { unit: o.unit, action: o.action, target: o.target } : { unit: o.unit, action: o.action };
    if (o.to && o.to.x !== undefined) return { unit: o.unit, to: asTile(o.to) };
    if (o.path && o.path.length) return { unit: o.unit, path: [...o.path] };
    return null;
  }

  function cleanBuild(b) {
    if (!b || !b.type) return null;
    const out = { type: b.type };
    if (b.tile && b.tile.x !== undefined) out.tile = asTile(b.tile);
    if (b.ship) out.ship = b.ship;
    return out;
  }

  // A round's first view: the draft of this round, else what the server holds, else nothing.
  function restore() {
    orders = emptyOrders();
    let src = ctx.draft.load();
    if (!src || src.round !== view.round) src = view.archipelago_pending || null;
    if (!src) return;
    if (view.round === 0) {
      for (const d of src.deploy || []) {
        if (d && units.has(d.unit) && d.tile) orders.deploy.push({ unit: d.unit, tile: asTile(d.tile) });
      }
      return;
    }
    for (const o of src.units || []) {
      const c = cleanOrder(o);
      if (c) orders.units.set(c.unit, c);
    }
    for (const b of src.builds || []) {
      const c = cleanBuild(b);
      if (c) orders.builds.push(c);
    }
    if (src.bonus) orders.bonus = src.bonus;
  }

  function select(id, { reveal = false } = {}) {
    selected = id;
    tileSel = null;
    mode = null;
    update();
    const u = id && units.get(id);
    if (u && reveal) {
      ensureVisible(posOf(u));
      revealBoard(); // on a phone the list sits below the board: bring the board (and Move) back
    }
  }

  function startMode(kind, extra = {}) {
    if (mode && mode.kind === kind && mode.action === extra.action && mode.type === extra.type) {
      mode = null; // pressing the same button again cancels
    } else {
      mode = { kind, ...extra };
    }
    update();
  }

  function setOrder(id, order) {
    orders.units.set(id, { unit: id, ...order });
    mode = null;
    changed();
  }

  function place(id, tile) {
    orders.deploy.push({ unit: id, tile });
    orders.deploy = canonicalDeploy(orders.deploy);
    computePositions();
    mode = null;
    changed();
  }

  // ---------------------------------------------------------------- clicks on the board
  function onTile(tile, unitId, enemyId) {
    if (!a || !tile) return;
    const k = key(tile);
    if (mode) {
      if (mode.kind === 'target') {
        const target = enemyId || (enemyAt.get(k) || {}).id;
        if (target && hl && hl.enemies.has(target)) {
          setOrder(selected, { action: mode.action, target });
          return;
        }
      } else if (hl && hl.tiles.has(k)) {
        if (mode.kind === 'place') place(selected, tile);
        else if (mode.kind === 'move') setOrder(selected, { to: tile });
        else if (mode.kind === 'mine') { orders.builds.push({ type: mode.type, tile }); mode = null; changed(); }
        else if (mode.kind === 'raft') { orders.builds.push({ type: 'raft', ship: ownAt.get(k) }); mode = null; changed(); }
        return;
      }
      mode = null;
    }
    const own = unitId || ownAt.get(k);
    if (own && units.has(own)) { select(own); return; }
    selected = null;
    tileSel = tile;
    update();
  }

  function tileAt(clientX, clientY) {
    const r = board.getBoundingClientRect();
    const x = Math.floor((clientX - r.left - board.clientLeft - cam.x) / cam.k / T);
    const y = Math.floor((clientY - r.top - board.clientTop - cam.y) / cam.k / T);
    return a && x >= 0 && y >= 0 && x < a.width && y < a.height ? { x, y } : null;
  }

  // ---------------------------------------------------------------- camera: pan and zoom
  // The view is the board minus the zoom band at its bottom.
  const LEGIBLE_K = 0.8; // the first zoom on a phone: a tile 32 px, a unit chip 21 px, labels readable
  const boardW = () => (a ? a.width * T : 1);
  const boardH = () => (a ? a.height * T : 1);
  const viewW = () => board.clientWidth || 1;
  const viewH = () => Math.max(1, board.clientHeight - zoomBox.offsetHeight);
  let fitK = 1; // the first zoom (the one "⤢" comes back to)
  function limits() {
    const cw = viewW();
    const ch = viewH();
    const wholeK = cw / boardW();
    return { min: Math.min(wholeK, ch / boardH(), fitK) * 0.8, max: Math.max(wholeK * 1.5, 96 / T, fitK * 3.2) };
  }

  // Keep some board in the box: an edge may come at most to the middle of the view.
  function setCam(x, y, k) {
    const cw = viewW();
    const ch = viewH();
    const w = boardW() * k;
    const hh = boardH() * k;
    cam = { k, x: clamp(x, Math.min(cw / 2 - w, 0), Math.max(cw / 2, cw - w)),
      y: clamp(y, Math.min(ch / 2 - hh, 0), Math.max(ch / 2, ch - hh)) };
    svg.style.transform = `translate(${cam.x}px, ${cam.y}px) scale(${cam.k})`;
    board.dataset.scale = cam.k.toFixed(4);
  }

  function zoomAt(px, py, factor) {
    const { min, max } = limits();
    const k = clamp(cam.k * factor, min, max);
    const f = k / cam.k;
    setCam(px - (px - cam.x) * f, py - (py - cam.y) * f, k);
  }

  // Where the screen shows a tile's middle.
  const onScreen = (p) => ({ x: (p.x + 0.5) * T * cam.k + cam.x, y: (p.y + 0.5) * T * cam.k + cam.y });
  const inView = (q) => q.x >= 0 && q.y >= 0 && q.x <= viewW() && q.y <= viewH();

  // The buttons (and + / -) zoom around what the player looks at, so that it stays in place: the
  // selected unit, else the keyboard cursor, else the middle of the own units (of those in view),
  // else the middle of the view.
  function zoomBy(factor) {
    userMoved = true;
    const u = selected && units.get(selected);
    const focus = [u ? onScreen(posOf(u)) : null, cursor ? onScreen(cursor) : null].find((q) => q && inView(q));
    if (focus) { zoomAt(focus.x, focus.y, factor); return; }
    const mid = (qs) => (qs.length ? { x: qs.reduce((n, q) => n + q.x, 0) / qs.length, y: qs.reduce((n, q) => n + q.y, 0) / qs.length } : null);
    const all = a ? a.units.filter((x) => !isCargo(x)).map((x) => onScreen(posOf(x))) : [];
    const around = [mid(all), mid(all.filter(inView))].find((q) => q && inView(q));
    if (around) { zoomAt(around.x, around.y, factor); return; }
    zoomAt(viewW() / 2, viewH() / 2, factor);
  }

  // The tiles the first view frames: the player's own units (their home island before they are
  // placed, its base if none), a tile of sea around them. None once the game is over (W11: the
  // whole map).
  function ownFrame() {
    if (!a || over()) return null;
    const pts = a.units.filter((u) => !isCargo(u)).map(posOf);
    if (!pts.length && a.base) pts.push(asTile(a.base));
    if (!pts.length) return null;
    const xs = pts.map((p) => p.x);
    const ys = pts.map((p) => p.y);
    return { x0: Math.min(...xs) - 1, y0: Math.min(...ys) - 1, x1: Math.max(...xs) + 2, y1: Math.max(...ys) + 2 };
  }

  // The first view: the whole width of the map when its units read at that size (a desktop), else
  // (a phone) the player's own units at a legible size in the middle of the view. The box is as
  // tall as the map then, within the screen's room.
  function fit() {
    const cw = board.clientWidth;
    if (!cw || !a) return;
    const band = zoomBox.offsetHeight;
    const wholeK = cw / boardW();
    // the room: what the screen shows below the sticky status strip and above the sticky bar
    const above = ['top', 'game-header'].map((id) => document.getElementById(id)).filter(Boolean)
      .reduce((n, e) => n + e.offsetHeight, 0);
    // (the bar's height as it will be: its text may still wrap anew once the fonts are in)
    const barH = running() ? Math.max(bar.offsetHeight, window.innerWidth < 760 ? 100 : 60) : 0;
    const room = window.innerHeight - above - barH - 28 - band;
    const frame = ownFrame();
    let k = wholeK;
    if (frame && wholeK < LEGIBLE_K) {
      const fk = Math.min(cw / ((frame.x1 - frame.x0) * T), Math.max(260, room) / ((frame.y1 - frame.y0) * T));
      k = clamp(fk, LEGIBLE_K, 1);
    }
    fitK = k;
    const height = Math.round(clamp(boardH() * k, 220 - band, Math.max(260, room)));
    board.style.height = `${height + band}px`;
    fitted = true;
    // centred on the frame, the map's edges kept at the view's edges (no empty band beside the map)
    const w = boardW() * k;
    const hh = boardH() * k;
    const mid = frame ? { x: (frame.x0 + frame.x1) / 2, y: (frame.y0 + frame.y1) / 2 } : { x: a.width / 2, y: a.height / 2 };
    const tight = (want, view, size) => (size <= view ? (view - size) / 2 : clamp(want, view - size, 0));
    cam.k = k;
    setCam(tight(cw / 2 - mid.x * T * k, cw, w), tight(height / 2 - mid.y * T * k, height, hh), k);
  }

  function centreOn(tile) {
    setCam(viewW() / 2 - (tile.x + 0.5) * T * cam.k, viewH() / 2 - (tile.y + 0.5) * T * cam.k, cam.k);
  }

  // Pan just enough for a tile to be in view.
  function ensureVisible(tile) {
    const sx = tile.x * T * cam.k + cam.x;
    const sy = tile.y * T * cam.k + cam.y;
    const size = T * cam.k;
    if (sx < 0 || sy < 0 || sx + size > viewW() || sy + size > viewH()) centreOn(tile);
  }

  const pointers = new Map();
  let drag = null;
  let pinch = null;
  let suppressClick = false;
  const pinchState = () => {
    const [p, q] = [...pointers.values()];
    const r = board.getBoundingClientRect();
    return { d: Math.hypot(p.x - q.x, p.y - q.y) || 1, mx: (p.x + q.x) / 2 - r.left, my: (p.y + q.y) / 2 - r.top };
  };
  board.addEventListener('pointerdown', (ev) => {
    if (ev.target.closest('.zoom') || (ev.pointerType === 'mouse' && ev.button !== 0)) return;
    pointers.set(ev.pointerId, { x: ev.clientX, y: ev.clientY });
    if (pointers.size === 1) {
      suppressClick = false;
      drag = { id: ev.pointerId, x: ev.clientX, y: ev.clientY, camX: cam.x, camY: cam.y, moved: false };
    } else if (pointers.size === 2) {
      pinch = pinchState();
      suppressClick = true;
      for (const id of pointers.keys()) { try { board.setPointerCapture(id); } catch { /* gone */ } }
    }
  });
  board.addEventListener('pointermove', (ev) => {
    if (!pointers.has(ev.pointerId)) return;
    pointers.set(ev.pointerId, { x: ev.clientX, y: ev.clientY });
    if (pointers.size >= 2 && pinch) {
      const now = pinchState();
      userMoved = true;
      zoomAt(now.mx, now.my, now.d / pinch.d);
      setCam(cam.x + now.mx - pinch.mx, cam.y + now.my - pinch.my, cam.k);
      pinch = now;
      return;
    }
    if (!drag || ev.pointerId !== drag.id) return;
    const dx = ev.clientX - drag.x;
    const dy = ev.clientY - drag.y;
    if (!drag.moved) {
      if (Math.hypot(dx, dy) < (ev.pointerType === 'mouse' ? 4 : 8)) return;
      drag.moved = true;
      suppressClick = true;
      board.classList.add('dragging');
      try { board.setPointerCapture(ev.pointerId); } catch { /* gone */ }
    }
    userMoved = true;
    setCam(drag.camX + dx, drag.camY + dy, cam.k);
  });
  const pointerEnd = (ev) => {
    pointers.delete(ev.pointerId);
    if (pointers.size < 2) pinch = null;
    if (pointers.size === 1) {
      const [[id, p]] = [...pointers];
      drag = { id, x: p.x, y: p.y, camX: cam.x, camY: cam.y, moved: true };
    } else if (!pointers.size) {
      drag = null;
      board.classList.remove('dragging');
    }
  };
  board.addEventListener('pointerup', pointerEnd);
  board.addEventListener('pointercancel', pointerEnd);
  board.addEventListener('click', (ev) => {
    if (ev.target.closest('.zoom')) return;
    if (suppressClick) { suppressClick = false; return; }
    const tileEl = ev.target.closest('rect.tile');
    const tile = tileEl ? { x: Number(tileEl.dataset.x), y: Number(tileEl.dataset.y) } : tileAt(ev.clientX, ev.clientY);
    const u = ev.target.closest('[data-unit]');
    const e = ev.target.closest('[data-enemy]');
    onTile(tile, u && u.dataset.unit, e && e.dataset.enemy);
  });
  board.addEventListener('wheel', (ev) => {
    ev.preventDefault();
    const r = board.getBoundingClientRect();
    const unit = ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? 400 : 1;
    userMoved = true;
    zoomAt(ev.clientX - r.left, ev.clientY - r.top, Math.exp(-ev.deltaY * unit * 0.0015));
  }, { passive: false });
  // The keyboard: arrows move a cursor, Enter acts on its tile, + and - zoom, Escape cancels.
  board.addEventListener('keydown', (ev) => {
    if (!a) return;
    const moves = { ArrowUp: [0, -1], ArrowDown: [0, 1], ArrowLeft: [-1, 0], ArrowRight: [1, 0] };
    if (moves[ev.key]) {
      ev.preventDefault();
      const from = cursor || (selected && units.get(selected) ? posOf(units.get(selected)) : asTile(a.base));
      cursor = { x: clamp(from.x + moves[ev.key][0], 0, a.width - 1), y: clamp(from.y + moves[ev.key][1], 0, a.height - 1) };
      ensureVisible(cursor);
      drawCursor();
    } else if ((ev.key === 'Enter' || ev.key === ' ') && cursor) {
      ev.preventDefault();
      onTile(cursor, null, null);
    } else if (ev.key === '+' || ev.key === '=') {
      zoomBy(1.5);
    } else if (ev.key === '-') {
      zoomBy(1 / 1.5);
    }
  });
  board.addEventListener('blur', () => { cursor = null; drawCursor(); });
  const onKey = (ev) => {
    if (ev.key !== 'Escape') return;
    if (mode) { mode = null; update(); } else if (selected || tileSel) { selected = null; tileSel = null; update(); }
  };
  document.addEventListener('keydown', onKey);
  let lastWidth = 0;
  const resize = new ResizeObserver(() => {
    const w = board.clientWidth;
    if (!a || !w || w === lastWidth) return;
    lastWidth = w;
    if (!fitted || !userMoved) fit(); else setCam(cam.x, cam.y, cam.k);
  });
  resize.observe(board);
  // The fonts (Hebrew, emoji) change the heights of the strip and the bar: fit again once they are in.
  if (document.fonts && document.fonts.ready) document.fonts.ready.then(() => { if (fitted && !userMoved && !destroyed) fit(); });

  // ---------------------------------------------------------------- drawing the board
  const title = (text) => s('title', {}, text);
  const cx = (tile) => tile.x * T + T / 2;
  const cy = (tile) => tile.y * T + T / 2;

  // Who an event or a log entry speaks of: "your Samal", "bob's ship", "bob's unit".
  // `start`: the words open a sentence ("Your Samal was held …").
  function unitWords(u, { withDeath = false, start = false } = {}) {
    const own = u.owner === me();
    const known = u.type || (own && units.get(u.id) && units.get(u.id).type);
    const what = known ? typeName(known) : u.domain ? t(`arch.domain.${u.domain}`) : t('arch.unit_word');
    let text = own ? t(start ? 'arch.own_unit_start' : 'arch.own_unit', { unit: what })
      : t('arch.their_unit', { unit: what, player: ctx.nameOf(u.owner) });
    if (withDeath && u.died) text += ` ${t('arch.ev.died')}`;
    return text;
  }

  function enemyWords(e) {
    const what = e.type ? typeName(e.type) : e.domain ? t(`arch.domain.${e.domain}`) : t('arch.unit_word');
    return t('arch.their_unit', { unit: what, player: ctx.nameOf(e.owner) });
  }

  const seenAgo = (n) => (n === 1 ? t('arch.seen_ago_one') : t('arch.seen_ago', { n }));

  function tileTitle(x, y, extra) {
    const ter = terrain(x, y);
    const parts = [coord({ x, y }), ter === '#' ? t('arch.terrain.land') : ter === '.' ? t('arch.terrain.sea') : t('arch.terrain.unknown')];
    for (const p of extra.get(`${x},${y}`) || []) parts.push(p);
    return parts.join(' · ');
  }

  function enemyShape(domain, x0, y0, r) {
    if (domain === 'sea') return s('polygon', { points: `${x0},${y0 - r} ${x0 + r},${y0} ${x0},${y0 + r} ${x0 - r},${y0}` });
    if (domain === 'air') return s('polygon', { points: `${x0},${y0 - r} ${x0 + r},${y0 + r * 0.8} ${x0 - r},${y0 + r * 0.8}` });
    return s('circle', { cx: x0, cy: y0, r: r * 0.85 });
  }

  function unitLabel(text, x0, y0, size = 15) {
    const n = [...text].length;
    return s('text', { x: x0, y: y0, class: 'lbl', 'font-size': n > 3 ? size - 5 : n > 2 ? size - 3 : size }, text);
  }

  // Terrain, resources, ports, bases, control, outposts, the enemy log, enemies and event marks:
  // rebuilt when the game's state (or the language) changes.
  function drawStatic() {
    const W = a.width;
    const H = a.height;
    svg.setAttribute('viewBox', `0 0 ${W * T} ${H * T}`);
    svg.setAttribute('width', W * T);
    svg.setAttribute('height', H * T);
    const all = over();
    const vis = new Set(a.visible.map(key));
    const notes = new Map(); // tile key -> texts for its tooltip
    const note = (tile, text) => { const k = key(tile); if (!notes.has(k)) notes.set(k, []); notes.get(k).push(text); };
    const islandOf = new Map();
    for (const isl of a.islands) for (const tl of isl.tiles) islandOf.set(key(tl), isl);

    const marks = [];
    for (const isl of a.islands) {
      const text = isl.kind === 'home' ? ofPlayer('arch.island.home', isl.owner) : t(`arch.island.${isl.kind}`);
      for (const tl of isl.tiles) note(tl, text);
    }
    for (const rt of a.resource_tiles) {
      note(rt.tile, `${RES_ICON[rt.resource] || ''} ${t(`res.${rt.resource}`)}`);
      marks.push(s('text', { x: rt.tile.x * T + T - 7, y: rt.tile.y * T + T - 7, class: 'icon res-icon', 'data-res': rt.resource }, RES_ICON[rt.resource] || '?'));
    }
    for (const p of a.ports) {
      note(p.tile, t('arch.port', { res: t(`res.${p.resource}`) }));
      marks.push(s('g', { class: 'port' },
        s('circle', { cx: p.tile.x * T + 8, cy: p.tile.y * T + T - 8, r: 6.5 }),
        s('text', { x: p.tile.x * T + 8, y: p.tile.y * T + T - 8, class: 'icon port-icon' }, RES_ICON[p.resource] || '')));
    }
    for (const k of control) {
      const c = tileOfKey(k);
      note(c, t('arch.controlled'));
      marks.push(s('rect', { x: c.x * T + 1, y: c.y * T + T - 5, width: T - 2, height: 4, class: 'ctl', fill: ctx.seatColor(me()) }));
    }
    for (const o of a.outposts) {
      note(o.tile, ofPlayer('arch.outpost_of', o.owner));
      const x0 = o.tile.x * T + 2;
      const y0 = o.tile.y * T + T - 16;
      marks.push(s('polygon', { class: 'outpost', fill: ctx.seatColor(o.owner),
        points: `${x0},${y0 + 6} ${x0 + 6},${y0} ${x0 + 12},${y0 + 6} ${x0 + 12},${y0 + 13} ${x0},${y0 + 13}` }, title(ofPlayer('arch.outpost_of', o.owner))));
    }
    for (const b of a.bases) {
      note(b.tile, ofPlayer('arch.base_of', b.seat));
      marks.push(s('g', { class: 'base', 'data-seat': b.seat },
        s('rect', { x: b.tile.x * T + 1.5, y: b.tile.y * T + 1.5, width: T - 3, height: T - 3, rx: 4, stroke: ctx.seatColor(b.seat) }),
        s('text', { x: b.tile.x * T + 9, y: b.tile.y * T + 10, fill: ctx.seatColor(b.seat), class: 'anchor' }, '⚓'),
        title(ofPlayer('arch.base_of', b.seat))));
    }
    fill(layer.marks, marks);

    // The enemy log: faded marks where units were last seen, with how long ago (A83).
    const logMarks = [];
    for (const e of a.enemy_log) {
      const ago = seenAgo(e.rounds_ago);
      const words = `${enemyWords(e)}: ${ago}`;
      note(e.tile, words);
      logMarks.push(s('g', { class: `log${flashId === e.id ? ' flash' : ''}`, 'data-log': e.id, 'data-rounds-ago': e.rounds_ago },
        s('circle', { cx: cx(e.tile), cy: cy(e.tile), r: 11, stroke: ctx.seatColor(e.owner) }),
        unitLabel(e.type ? abbr(e.type) : '?', cx(e.tile), cy(e.tile), 11),
        s('circle', { cx: e.tile.x * T + T - 7, cy: e.tile.y * T + 7, r: 6.5, class: 'badge' }),
        s('text', { x: e.tile.x * T + T - 7, y: e.tile.y * T + 7, class: 'badge-n' }, String(e.rounds_ago)),
        title(words)));
    }
    fill(layer.log, logMarks);

    // Enemies in sight: owner colour and a shape for the shown domain, the type once revealed (A82).
    const enemyMarks = [];
    for (const e of a.enemies) {
      const words = enemyWords(e);
      note(e.tile, words);
      // a dark halo under a white rim: the owner's colour reads on sea and land alike
      const halo = enemyShape(e.domain, cx(e.tile), cy(e.tile), 13);
      halo.setAttribute('class', 'halo');
      const shape = enemyShape(e.domain, cx(e.tile), cy(e.tile), 13);
      shape.setAttribute('fill', ctx.seatColor(e.owner));
      shape.setAttribute('class', 'body');
      enemyMarks.push(s('g', { class: `en${flashId === e.id ? ' flash' : ''}`, 'data-enemy': e.id, 'data-domain': e.domain },
        halo, shape, e.type ? unitLabel(abbr(e.type), cx(e.tile), cy(e.tile) + (e.domain === 'air' ? 3 : 0), 14) : null,
        title(`${words} ${coord(e.tile)}`)));
    }
    fill(layer.enemies, enemyMarks);

    // The last round's events (W10).
    const evMarks = [];
    const perTile = new Map();
    for (const e of a.events) {
      if (!e.tile || !EVENT_MARK[e.kind]) continue;
      const k = key(e.tile);
      const n = perTile.get(k) || 0;
      perTile.set(k, n + 1);
      const text = eventText(e);
      note(e.tile, text);
      const x0 = e.tile.x * T + T / 2 + n * 5 - 6;
      const y0 = e.tile.y * T + 6;
      evMarks.push(s('g', { class: `evmark ev-${e.kind}`, 'data-kind': e.kind },
        s('circle', { cx: x0, cy: y0, r: 6.5 }),
        s('text', { x: x0, y: y0, class: 'icon ev-icon' }, EVENT_MARK[e.kind]),
        title(text)));
    }
    fill(layer.events, evMarks);

    // The tiles themselves, last: their tooltips carry what the marks above say.
    const rects = [];
    for (let y = 0; y < H; y += 1) {
      const row = a.rows[y] || '';
      for (let x = 0; x < W; x += 1) {
        const ch = row[x];
        let cls = ch === '#' ? 'tile land' : ch === '.' ? 'tile sea' : 'tile unknown';
        if (ch !== '?' && !all && !vis.has(`${x},${y}`)) cls += ' fog';
        rects.push(s('rect', { x: x * T, y: y * T, width: T, height: T, class: cls, 'data-x': x, 'data-y': y },
          title(ch === '?' ? `${coord({ x, y })} · ${t('arch.terrain.unknown')}` : tileTitle(x, y, notes))));
      }
    }
    fill(layer.tiles, rects);
    tileRects = rects;
  }
  let tileRects = [];
  const rectAt = (k) => { const c = tileOfKey(k); return tileRects[c.y * a.width + c.x]; };

  // Own units, planned orders, highlights, selection: redrawn on every change.
  let hlOn = [];
  function drawDynamic() {
    hl = computeHighlights();
    // highlights: a class on the tile (for styles and tests) and an outline above the marks
    for (const r of hlOn) r.classList.remove('hl', 'risky');
    hlOn = [];
    const outlines = [];
    if (hl) {
      for (const k of hl.tiles) {
        const r = rectAt(k);
        if (!r) continue;
        r.classList.add('hl');
        if (hl.risky.has(k)) r.classList.add('risky');
        hlOn.push(r);
        const c = tileOfKey(k);
        outlines.push(s('rect', { x: c.x * T + 2, y: c.y * T + 2, width: T - 4, height: T - 4, rx: 3, class: hl.risky.has(k) ? 'hl-box risky' : 'hl-box' }));
      }
    }
    if (tileSel) outlines.push(s('rect', { x: tileSel.x * T + 1, y: tileSel.y * T + 1, width: T - 2, height: T - 2, class: 'sel-box' }));
    fill(layer.hl, outlines);
    svg.classList.toggle('mode-tile', Boolean(mode && mode.kind !== 'target'));
    svg.classList.toggle('mode-target', Boolean(mode && mode.kind === 'target'));
    for (const g of layer.enemies.children) g.classList.toggle('cand', Boolean(hl && hl.enemies.has(g.dataset.enemy)));

    // planned orders: paths with an arrow, action lines, ghost builds
    const lines = [];
    if (round !== 0) {
      for (const o of orders.units.values()) {
        const u = units.get(o.unit);
        if (!u) continue;
        const mine = o.unit === selected;
        if (o.to || o.path) {
          const path = orderPath(u, o);
          if (path.length < 2) continue;
          const pts = path.map((p) => `${cx(p)},${cy(p)}`).join(' ');
          const end = path[path.length - 1];
          lines.push(s('polyline', { points: pts, class: `path${mine ? ' sel' : ''}`, 'data-path': o.unit, 'marker-end': 'url(#arch-arrow)' }));
          lines.push(s('rect', { x: end.x * T + 6, y: end.y * T + 6, width: T - 12, height: T - 12, rx: 5, class: 'ghost', stroke: ctx.seatColor(me()) }));
        } else if (o.action && o.target) {
          const e = a.enemies.find((x) => x.id === o.target);
          if (!e) continue;
          lines.push(s('line', { x1: cx(u.tile), y1: cy(u.tile), x2: cx(e.tile), y2: cy(e.tile), class: `aim${mine ? ' sel' : ''}`, 'data-aim': o.unit }));
          lines.push(s('circle', { cx: cx(e.tile), cy: cy(e.tile), r: 16, class: 'aim-ring' }));
        } else if (o.action === 'outpost') {
          lines.push(s('text', { x: cx(u.tile), y: u.tile.y * T + 8, class: 'icon ghost-icon' }, '⛺'));
        }
      }
      for (const b of orders.builds) {
        if (!b.tile) continue;
        lines.push(s('g', { class: 'ghost-build' },
          s('rect', { x: b.tile.x * T + 7, y: b.tile.y * T + 7, width: T - 14, height: T - 14, rx: 4, stroke: ctx.seatColor(me()) }),
          unitLabel(abbr(b.type), cx(b.tile), cy(b.tile), 11)));
      }
    }
    fill(layer.orders, s('defs', {}, s('marker', { id: 'arch-arrow', viewBox: '0 0 10 10', refX: 6, refY: 5, markerWidth: 4, markerHeight: 4, orient: 'auto-start-reverse' },
      s('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow' }))), lines);

    // own units (A82: in full): the seat colour and a short label of the type
    const marks = [];
    for (const u of a.units) {
      const colour = ctx.seatColor(ownerOf(u));
      if (isCargo(u)) {
        // the player's own flag carried by an enemy bearer: a small flag where the bearer is
        if (u.type === 'flag' && !units.has(u.carrier)) {
          marks.push(s('text', { x: u.tile.x * T + 8, y: u.tile.y * T + 9, class: 'icon taken-flag', fill: colour }, '⚑',
            title(t('arch.flag_carried'))));
        }
        continue;
      }
      const p = posOf(u);
      const o = orders.units.get(u.id);
      const cls = ['u', typeOf(u.type).domain];
      if (u.id === selected) cls.push('sel');
      if (o && round !== 0) cls.push('has-order');
      const cargo = (u.cargo || []).length;
      marks.push(s('g', { class: cls.join(' '), 'data-unit': u.id, 'data-type': u.type, 'data-x': p.x, 'data-y': p.y },
        s('rect', { x: p.x * T + 7, y: p.y * T + 7, width: T - 14, height: T - 14, rx: typeOf(u.type).domain === 'sea' ? 9 : 4, fill: colour }),
        unitLabel(abbr(u.type), cx(p), cy(p)),
        cargo ? s('g', { class: 'cargo' }, s('circle', { cx: p.x * T + T - 7, cy: p.y * T + T - 8, r: 6 }),
          s('text', { x: p.x * T + T - 7, y: p.y * T + T - 8, class: 'badge-n' }, `+${cargo}`)) : null,
        u.flag ? s('text', { x: p.x * T + 7, y: p.y * T + 8, class: 'icon carried' }, '⚑') : null,
        title(`${typeName(u.type)} ${coord(p)}${o && round !== 0 ? ` · ${orderWords(u, o)}` : ''}`)));
    }
    fill(layer.units, marks);
    drawCursor();
  }

  function drawCursor() {
    fill(layer.cursor, cursor ? s('rect', { x: cursor.x * T + 1, y: cursor.y * T + 1, width: T - 2, height: T - 2, class: 'cursor' }) : null);
    if (!cursor) return;
    const rect = tileRects[cursor.y * a.width + cursor.x];
    const tip = rect && rect.querySelector('title');
    const own = ownAt.get(key(cursor));
    const words = [tip ? tip.textContent : coord(cursor), own && units.get(own) ? typeName(units.get(own).type) : ''];
    cursorSay.textContent = words.filter(Boolean).join(' · ');
  }

  function fill(node, ...children) {
    node.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
  }

  // ---------------------------------------------------------------- words
  // A24: a unit that boards an own carrier needs the carrier to stay; the carriers that both
  // take on boarders and have a move order this round, with who boards them.
  function boardingConflicts() {
    const out = new Map();
    if (round === 0) return out;
    for (const o of orders.units.values()) {
      const u = units.get(o.unit);
      if (!u || !(o.to || o.path) || typeOf(u.type).domain !== 'land') continue;
      const end = orderEnd(u, o);
      const cid = ownAt.get(key(end));
      const c = cid && cid !== u.id ? orders.units.get(cid) : null;
      if (c && (c.to || c.path) && terrain(end.x, end.y) === '.') {
        if (!out.has(cid)) out.set(cid, []);
        out.get(cid).push(u.id);
      }
    }
    return out;
  }

  function orderWords(u, o) {
    if (!o) return round === 0 ? '' : t('arch.order.none');
    if (o.to || o.path) {
      const end = orderEnd(u, o);
      const carrier = ownAt.get(key(end));
      if (carrier && carrier !== u.id && typeOf(u.type).domain === 'land' && terrain(end.x, end.y) === '.') {
        return t('arch.order.board', { unit: unitById(carrier) });
      }
      return t('arch.order.move', { tile: coord(end) });
    }
    if (o.action === 'outpost') return t('arch.order.outpost');
    const e = a.enemies.find((x) => x.id === o.target);
    return t(`arch.order.${o.action}`, { target: e ? `${enemyWords(e)} ${coord(e.tile)}` : t('arch.a_unit') });
  }

  // One event in one sentence (W10), naming units by type and players by nickname.
  function eventText(e) {
    const tile = e.tile ? coord(e.tile) : '';
    const us = e.units || [];
    const byWords = () => {
      if (!e.by) return '';
      const own = units.get(e.by);
      if (own) return t('arch.own_unit_start', { unit: typeName(own.type) });
      const en = a.enemies.find((x) => x.id === e.by) || a.enemy_log.find((x) => x.id === e.by);
      return en ? enemyWords(en) : '';
    };
    const unitById = (id) => {
      const own = units.get(id);
      return own ? t('arch.own_unit', { unit: typeName(own.type) }) : t('arch.a_unit');
    };
    const flagOf = (owner, start = false) => (owner === me() ? t(start ? 'arch.ev.your_flag_start' : 'arch.ev.your_flag')
      : t('arch.ev.flag_of', { player: ctx.nameOf(owner) }));
    const goods = (map) => resources().filter((r) => map && map[r]).map((r) => `+${map[r]} ${RES_ICON[r] || ''} ${t(`res.${r}`)}`).join(', ');
    switch (e.kind) {
      case 'fight': {
        const [p, q] = us;
        if (!p || !q) return t('arch.ev.fight_short', { tile });
        const winner = us.find((x) => x.id === e.winner);
        const result = winner ? t('arch.ev.won', { unit: unitWords(winner, { start: true }) })
          : p.died && q.died ? t('arch.ev.tie') : '';
        return t('arch.ev.fight', { tile, a: unitWords(p), b: unitWords(q), result }).trim();
      }
      case 'bombard':
      case 'strike': {
        const target = us[0] ? unitWords(us[0]) : t('arch.a_unit');
        const result = us[0] && us[0].died ? t('arch.ev.destroyed') : t('arch.ev.unharmed');
        const by = byWords();
        return by ? t(`arch.ev.${e.kind}_by`, { by, target, tile, result }) : t(`arch.ev.${e.kind}`, { target, tile, result });
      }
      case 'reveal':
        return t('arch.ev.reveal', { unit: us[0] ? unitWords(us[0]) : t('arch.a_unit'), tile });
      case 'held':
        return t('arch.ev.held', { unit: us[0] ? unitWords(us[0], { start: true }) : t('arch.a_unit'), tile });
      case 'board':
        return t('arch.ev.board', { unit: us[0] ? unitWords(us[0], { start: true }) : t('arch.a_unit'), carrier: unitById(e.carrier), tile });
      case 'raft':
        if (e.ship) return t('arch.ev.raft', { ship: unitById(e.ship), tile });
        return ofPlayer('arch.ev.raft_seen', us[0] ? us[0].owner : -1, { tile });
      case 'raft_lost':
        return t('arch.ev.raft_lost', { ship: unitById(e.ship), tile });
      case 'crashed':
        return t('arch.ev.crashed', { unit: us[0] ? unitWords(us[0], { start: true }) : t('arch.a_unit'), tile });
      case 'outpost':
        return e.owner === me() ? t('arch.ev.outpost_you', { tile }) : t('arch.ev.outpost', { player: ctx.nameOf(e.owner), tile });
      case 'outpost_captured':
        if (e.owner === me()) return t('arch.ev.outpost_captured_you', { from: ctx.nameOf(e.from), tile });
        if (e.from === me()) return t('arch.ev.outpost_captured_yours', { player: ctx.nameOf(e.owner), tile });
        return t('arch.ev.outpost_captured', { player: ctx.nameOf(e.owner), from: e.from !== undefined ? ctx.nameOf(e.from) : t('arch.someone'), tile });
      case 'outpost_skipped':
        return t('arch.ev.outpost_skipped', { tile });
      case 'build':
        return e.type === 'raft' ? t('arch.ev.build_raft', { ship: unitById(e.ship) }) : t('arch.ev.build', { unit: typeName(e.type), tile });
      case 'build_skipped':
      case 'build_refunded': {
        const reason = String(e.reason || '').replace(/ /g, '_');
        const why = has(`arch.reason.${reason}`) ? t(`arch.reason.${reason}`) : String(e.reason || '');
        return t(`arch.ev.${e.kind}`, { unit: typeName(e.type), reason: why });
      }
      case 'first_big_build':
        return e.player === me() ? t('arch.ev.first_big_build_you', { points: e.points }) : t('arch.ev.first_big_build', { player: ctx.nameOf(e.player), points: e.points });
      case 'flag_taken': {
        const bearer = us.find((x) => x.type !== 'flag') || us[0];
        const flag = us.find((x) => x !== bearer) || { owner: -1 };
        return t('arch.ev.flag_taken', { unit: bearer ? unitWords(bearer, { start: true }) : t('arch.a_unit'), flag: flagOf(flag.owner), tile });
      }
      case 'flag_home':
        return t('arch.ev.flag_home', { flag: flagOf(us[0] ? us[0].owner : -1, true) });
      case 'flag_recovered':
        return t('arch.ev.flag_recovered', { flag: flagOf(us[0] ? us[0].owner : -1, true), tile });
      case 'flag_scored':
        return e.player === me() ? t('arch.ev.flag_scored_you', { flag: flagOf(e.from), points: e.points })
          : t('arch.ev.flag_scored', { player: ctx.nameOf(e.player), flag: flagOf(e.from), points: e.points });
      case 'production':
        return t('arch.ev.production', { goods: goods(e.resources) || '0' });
      case 'bonus':
        return t('arch.ev.bonus', { res: `${RES_ICON[e.resource] || ''} ${t(`res.${e.resource}`)}` });
      case 'game_over':
        return t('arch.ev.game_over');
      default:
        return t('arch.ev.other', { kind: e.kind });
    }
  }

  // ---------------------------------------------------------------- the side: stock, unit, tabs
  function drawStock() {
    if (!stockBox.firstChild) {
      const row = h('div', { class: 'res-row' });
      for (const r of resources()) {
        resSpans[r] = { box: h('span', { class: 'res', 'data-res': r }), n: h('b', { class: 'n' }), after: h('span', { class: 'after' }), name: h('span', { class: 'sr' }) };
        resSpans[r].box.append(h('span', { class: 'icon', 'aria-hidden': 'true' }, RES_ICON[r] || r), resSpans[r].name, resSpans[r].n, resSpans[r].after);
        row.append(resSpans[r].box);
      }
      stockBox.append(row, h('div', { class: 'row score-row' }, scoreBox, bonusLabel));
    }
    const left = round === 0 ? a.stock : available();
    for (const r of resources()) {
      const sp = resSpans[r];
      sp.box.title = t(`res.${r}`);
      sp.name.textContent = `${t(`res.${r}`)} `;
      sp.n.textContent = String(a.stock[r] || 0);
      const differs = left[r] !== (a.stock[r] || 0);
      // the arrow points the way the page reads (Hebrew: right to left)
      sp.after.textContent = differs ? `${document.documentElement.dir === 'rtl' ? '←' : '→'}${left[r]}` : '';
      sp.after.title = differs ? t('arch.after_orders') : '';
      sp.box.classList.toggle('short', left[r] < 0);
    }
    scoreBox.textContent = t('arch.score', { score: a.score, target: a.target });
    bonusLabel.firstChild.textContent = t('arch.bonus');
    bonusLabel.title = t('arch.bonus_help');
    const want = orders.bonus || a.bonus || '';
    const opts = [['', t('arch.bonus_default')], ...resources().map((r) => [r, `${RES_ICON[r] || ''} ${t(`res.${r}`)}`])];
    if (bonusSelect.options.length !== opts.length || bonusSelect.dataset.lang !== ctx.lang()) {
      bonusSelect.replaceChildren(...opts.map(([v, label]) => h('option', { value: v }, label)));
      bonusSelect.dataset.lang = ctx.lang();
    }
    if (document.activeElement !== bonusSelect) bonusSelect.value = want;
    bonusLabel.hidden = round === 0 || !running();
  }

  function statsOf(u) {
    const ty = typeOf(u.type);
    const parts = [
      t('arch.stat.strength', { n: ty.strength === null || ty.strength === undefined ? '–' : ty.strength }),
      t('arch.stat.move', { n: ty.move }), t('arch.stat.sight', { n: ty.sight })];
    if (ty.capacity) parts.push(t('arch.stat.carries', { n: (u.cargo || []).length, cap: ty.capacity }));
    return parts.join(' · ');
  }

  const ownerOf = (u) => (u.owner === undefined || u.owner === null ? me() : u.owner);

  function chip(type, owner) {
    return h('span', { class: 'chip', style: { background: ctx.seatColor(owner) }, 'aria-hidden': 'true' }, abbr(type));
  }

  // The Hebrew rank beside an English name (where the guide names ranks: unit card, build list).
  const rankOf = (id) => (has(`arch.rank.${id}`) && t(`arch.rank.${id}`) ? t(`arch.rank.${id}`) : '');

  function openCard(id) {
    cardType = cardType === id ? null : id;
    drawCard();
    if (cardType) cardBox.scrollIntoView({ block: 'nearest' });
  }

  // A unit type's card: strength, moves, sight, cost, what it can do (A10–A12, A24, A36–A39).
  function drawCard() {
    cardBox.hidden = !cardType;
    if (!cardType) { cardBox.replaceChildren(); return; }
    const ty = typeOf(cardType);
    const rank = rankOf(cardType);
    const can = [t(`arch.card.domain.${ty.domain}`)];
    if (!(ty.move > 0)) can.push(t('arch.card.never_moves'));
    if (ty.capacity) can.push(t('arch.card.act.carry', { n: ty.capacity }));
    if (ty.domain === 'land' && !['landmine', 'flag'].includes(cardType)) can.push(t('arch.card.act.outpost'));
    if (ty.warship) can.push(t('arch.card.act.bombard'));
    if (cardType === 'fighter') can.push(t('arch.card.act.strike'));
    if (cardType === 'spy') can.push(t('arch.card.act.reveal'));
    if (has(`arch.note.${cardType}`)) can.push(t(`arch.note.${cardType}`));
    const row = (label, value) => [h('dt', {}, label), h('dd', {}, value)];
    fill(cardBox,
      h('div', { class: 'unit-head' }, chip(cardType, me()),
        h('h3', { id: 'unit-card-name' }, typeName(cardType)),
        rank ? h('span', { class: 'muted rank', lang: 'he-Latn' }, t('arch.card.rank', { rank })) : null,
        h('button', { type: 'button', class: 'small close', id: 'unit-card-close', 'aria-label': t('arch.close'), title: t('arch.close'),
          onclick: () => { cardType = null; drawCard(); } }, '×')),
      h('dl', { class: 'card-stats' },
        row(t('arch.card.strength'), ty.strength === null || ty.strength === undefined ? t('arch.card.none') : String(ty.strength)),
        row(t('arch.card.move'), String(ty.move || 0)),
        row(t('arch.card.sight'), String(ty.sight || 0)),
        row(t('arch.card.cost'), ty.buildable ? (costText(ty.cost) || '0') : t('arch.card.free')),
        ty.limit !== null && ty.limit !== undefined ? row(t('arch.card.limit'), String(ty.limit)) : null),
      h('h4', {}, t('arch.card.can')),
      h('ul', { class: 'card-can' }, can.map((line) => h('li', {}, line))));
  }

  const cardButton = (id, extra = {}) => h('button', { type: 'button', class: 'small info', 'data-card': id,
    'aria-label': t('arch.card.open', { unit: typeName(id) }), title: t('arch.card.open', { unit: typeName(id) }),
    'aria-expanded': cardType === id ? 'true' : 'false', onclick: () => openCard(id), ...extra }, 'i');

  function drawUnitPanel() {
    const u = selected && units.get(selected);
    unitPanel.hidden = !u;
    if (!u) { unitPanel.replaceChildren(); return; }
    const ty = typeOf(u.type);
    const p = posOf(u);
    const o = orders.units.get(u.id);
    const playing = running();
    const buttons = [];
    const modeBtn = (id, label, kind, extra = {}, block = '') => {
      const on = Boolean(mode && mode.kind === kind && mode.action === extra.action);
      return h('button', { type: 'button', id, class: on ? 'primary' : '', 'aria-pressed': on ? 'true' : 'false',
        disabled: Boolean(block), title: block || false,
        onclick: (ev) => { startMode(kind, extra); if (ev.detail === 0 && mode) focusBoard(); } }, label);
    };
    const carriedByEnemy = isCargo(u) && !units.has(u.carrier);
    if (playing && round === 0) {
      if (!isCargo(u)) buttons.push(modeBtn('place', t('arch.place'), 'place'));
    } else if (playing && !carriedByEnemy) {
      if (ty.move > 0) buttons.push(modeBtn('move', t('arch.move'), 'move'));
      for (const action of ACTIONS) {
        if (!canAct(u, action)) continue;
        const block = actionBlock(u, action);
        if (action === 'outpost') {
          const on = Boolean(o && o.action === 'outpost');
          buttons.push(h('button', { type: 'button', id: 'action-outpost', class: on ? 'primary' : '', 'aria-pressed': on ? 'true' : 'false',
            disabled: Boolean(block), title: block || false, onclick: () => setOrder(u.id, { action: 'outpost' }) }, t('arch.action.outpost')));
        } else {
          buttons.push(modeBtn(`action-${action}`, t(`arch.action.${action}`), 'target', { action }, block));
        }
      }
      buttons.push(h('button', { type: 'button', id: 'clear-order', disabled: !o,
        onclick: () => { orders.units.delete(u.id); mode = null; changed(); } }, t('arch.clear_order')));
    }
    const note = has(`arch.note.${u.type}`) ? h('p', { class: 'muted note' }, t(`arch.note.${u.type}`)) : null;
    let where = coord(p);
    if (isCargo(u)) where += ` · ${carriedByEnemy ? t('arch.flag_carried') : t('arch.aboard', { unit: unitById(u.carrier) })}`;
    const orderLine = !playing ? '' : round === 0
      ? (deployPos.has(u.id) && !sameTile(deployPos.get(u.id), asTile(u.tile)) ? t('arch.placed_at', { tile: coord(p) }) : '')
      : orderWords(u, o);
    fill(unitPanel,
      h('div', { class: 'unit-head' }, chip(u.type, ownerOf(u)),
        h('h3', { id: 'unit-name' }, typeName(u.type)),
        h('span', { class: 'muted where' }, where),
        cardButton(u.type, { id: 'unit-card-open' }),
        h('button', { type: 'button', class: 'small close', id: 'unit-close', 'aria-label': t('arch.close'), title: t('arch.close'),
          onclick: () => select(null) }, '×')),
      h('p', { class: 'stats' }, statsOf(u)),
      note,
      orderLine ? h('p', { id: 'unit-order', class: 'order' }, orderLine) : null,
      conflictNote(u),
      buttons.length ? h('div', { class: 'row unit-actions' }, buttons) : null,
      whyDisabled(buttons));
  }

  // Why each greyed-out button is so, as visible lines (a phone shows no hover tooltip).
  function whyDisabled(buttons) {
    const lines = buttons.filter((b) => b.disabled && b.title).map((b) => h('li', { 'data-for': b.id },
      h('b', {}, b.textContent), ': ', b.title));
    return lines.length ? h('ul', { class: 'plain why-disabled', id: 'why-disabled' }, lines) : null;
  }

  // A warning on a carrier ordered to move while units board it, and on those units.
  function conflictNote(u) {
    const clash = boardingConflicts();
    let text = '';
    if (clash.has(u.id)) text = t('arch.warn.carrier_moves', { units: clash.get(u.id).map((id) => typeName(units.get(id).type)).join(', ') });
    for (const [cid, who] of clash) if (who.includes(u.id)) text = t('arch.warn.boards_moving', { unit: unitById(cid) });
    return text ? h('p', { class: 'warning conflict', role: 'alert' }, `⚠ ${text}`) : null;
  }

  function unitById(id) {
    const u = units.get(id);
    return u ? `${typeName(u.type)} ${coord(u.tile)}` : t('arch.a_unit');
  }

  function drawTileInfo() {
    tileInfo.hidden = !tileSel;
    if (!tileSel) { tileInfo.replaceChildren(); return; }
    const x = tileSel.x;
    const y = tileSel.y;
    const rect = tileRects[y * a.width + x];
    const text = rect && rect.firstChild ? rect.firstChild.textContent : coord(tileSel);
    fill(tileInfo,
      h('div', { class: 'unit-head' }, h('h3', {}, t('arch.tile')),
        h('button', { type: 'button', class: 'small close', 'aria-label': t('arch.close'), title: t('arch.close'),
          onclick: () => { tileSel = null; update(); } }, '×')),
      h('ul', { class: 'plain tile-lines' }, text.split(' · ').map((line) => h('li', {}, line.charAt(0).toUpperCase() + line.slice(1)))));
  }

  function showTab(name) {
    tab = name;
    drawTabs();
  }

  function tabKeys(ev) {
    const list = shownTabs();
    const i = list.indexOf(tab);
    let j = null;
    const rtl = document.documentElement.dir === 'rtl';
    if (ev.key === 'ArrowRight') j = i + (rtl ? -1 : 1);
    if (ev.key === 'ArrowLeft') j = i + (rtl ? 1 : -1);
    if (ev.key === 'Home') j = 0;
    if (ev.key === 'End') j = list.length - 1;
    if (j === null) return;
    ev.preventDefault();
    showTab(list[(j + list.length) % list.length]);
    tabButtons[tab].focus();
  }

  // The tabs on show: all of them, or on a read-only page those that have something to list.
  function shownTabs() {
    if (!ctx.readOnly) return TABS;
    return TABS.filter((name) => (name === 'units' && a.units.length)
      || (name === 'enemy' && (a.enemies.length || a.enemy_log.length)));
  }

  function drawTabs() {
    const shown = shownTabs();
    tabsCard.hidden = !shown.length;
    if (shown.length && !shown.includes(tab)) tab = shown[0];
    for (const name of TABS) {
      const on = name === tab;
      const b = tabButtons[name];
      b.hidden = !shown.includes(name);
      b.textContent = t(`arch.tab.${name}`);
      b.setAttribute('aria-selected', on ? 'true' : 'false');
      b.tabIndex = on ? 0 : -1;
      panels[name].hidden = !on;
    }
    tabList.setAttribute('aria-label', t('arch.tabs'));
  }

  function drawUnitList() {
    const order = { land: 0, sea: 1, air: 2 };
    const clash = boardingConflicts();
    const list = [...a.units].sort((p, q) => (order[typeOf(p.type).domain] - order[typeOf(q.type).domain])
      || ((typeOf(q.type).strength ?? -1) - (typeOf(p.type).strength ?? -1)) || (p.id < q.id ? -1 : 1));
    fill(unitList, list.map((u) => {
      const o = orders.units.get(u.id);
      const p = posOf(u);
      let status = round === 0
        ? (deployPos.has(u.id) && !sameTile(deployPos.get(u.id), asTile(u.tile)) ? t('arch.placed_at', { tile: coord(p) }) : '')
        : orderWords(u, o);
      if (isCargo(u)) status = `${units.has(u.carrier) ? t('arch.aboard', { unit: unitById(u.carrier) }) : t('arch.flag_carried')}${status ? ` · ${status}` : ''}`;
      if (clash.has(u.id) || [...clash.values()].some((who) => who.includes(u.id))) status = `⚠ ${status}`;
      return h('li', { 'data-unit': u.id, class: `${u.id === selected ? 'sel' : ''}${o && round !== 0 ? ' has-order' : ''}` },
        h('button', { type: 'button', class: 'unit-row', 'aria-pressed': u.id === selected ? 'true' : 'false',
          onclick: (ev) => { select(u.id, { reveal: true }); if (ev.detail === 0) focusPanel(); } }, // (detail 0: the keyboard)
        chip(u.type, ownerOf(u)),
        h('span', { class: 'name' }, typeName(u.type)),
        ctx.readOnly && ownerOf(u) !== me() ? h('span', { class: 'owner muted' }, ctx.nameOf(ownerOf(u))) : null,
        h('span', { class: 'where num' }, coord(p)),
        h('span', { class: 'status muted' }, status)));
    }));
    if (!a.units.length) fill(unitList, h('li', { class: 'muted' }, t('arch.no_units')));
  }

  function drawBuild() {
    const playing = running() && round !== 0;
    const left = available();
    const groups = { land: [], sea: [], air: [] };
    for (const ty of rules.units) {
      if (!ty.buildable) continue;
      const block = running() ? buildBlock(ty, left) : t('arch.build.over');
      const on = Boolean(mode && mode.kind === (ty.id === 'raft' ? 'raft' : 'mine') && (ty.id === 'raft' || mode.type === ty.id));
      (groups[ty.domain] || groups.land).push(h('li', {},
        h('button', { type: 'button', class: `build${on ? ' primary' : ''}`, 'data-build': ty.id, disabled: Boolean(block),
          'aria-pressed': on ? 'true' : false, title: block || typeName(ty.id), onclick: () => chooseBuild(ty) },
        chip(ty.id, me()),
        h('span', { class: 'name' }, typeName(ty.id)),
        rankOf(ty.id) ? h('span', { class: 'rank muted', lang: 'he-Latn' }, rankOf(ty.id)) : null,
        h('span', { class: 'cost' }, costText(ty.cost))),
      block ? h('span', { class: 'why muted', 'data-why': ty.id }, block) : null,
      cardButton(ty.id)));
    }
    const head = [];
    if (!running()) head.push(h('p', { class: 'muted' }, t('arch.build.over')));
    else if (round === 0) head.push(h('p', { class: 'muted' }, t('arch.build.round0')));
    else head.push(h('p', { class: 'muted', id: 'build-left' }, t('arch.build.left', { goods: resources().map((r) => `${left[r]}${RES_ICON[r] || r}`).join(' ') })));
    const shipChooser = mode && mode.kind === 'raft'
      ? h('div', { id: 'raft-ships', class: 'row' }, h('span', {}, t('arch.build.raft_for')),
        raftShips().map((sh) => h('button', { type: 'button', class: 'small', 'data-ship': sh.id,
          onclick: () => { orders.builds.push({ type: 'raft', ship: sh.id }); mode = null; changed(); } }, unitById(sh.id))))
      : null;
    const mineHint = mode && mode.kind === 'mine' ? h('p', { class: 'notice' }, t('arch.hint.mine', { unit: typeName(mode.type) })) : null;
    fill(buildList, orders.builds.map((b, i) => h('li', { 'data-build': b.type },
      chip(b.type, me()), h('span', { class: 'name' }, typeName(b.type)),
      b.tile ? h('span', { class: 'where num' }, coord(b.tile)) : null,
      b.ship ? h('span', { class: 'where' }, t('arch.build.for_ship', { unit: unitById(b.ship) })) : null,
      h('span', { class: 'cost muted' }, costText(typeOf(b.type).cost)),
      playing ? h('button', { type: 'button', class: 'small remove', 'aria-label': t('arch.build.remove_named', { unit: typeName(b.type) }),
        onclick: () => { orders.builds.splice(i, 1); changed(); } }, t('arch.build.remove')) : null)));
    fill(buildBox, head, mineHint, shipChooser,
      ['land', 'sea', 'air'].map((d) => (groups[d].length ? [h('h4', {}, t(`arch.domain_group.${d}`)), h('ul', { class: 'plain build-types' }, groups[d])] : null)),
      h('h4', {}, t('arch.build.chosen')),
      orders.builds.length ? buildList : h('p', { class: 'muted', id: 'build-none' }, t('arch.build.none')),
      orders.builds.length ? null : buildList);
    buildList.hidden = !orders.builds.length;
  }

  function chooseBuild(ty) {
    if (ty.id === 'landmine' || ty.id === 'seamine') {
      startMode('mine', { type: ty.id });
      if (mode) revealBoard();
      return;
    }
    if (ty.id === 'raft') {
      startMode('raft');
      return;
    }
    orders.builds.push({ type: ty.id });
    changed();
  }

  // On a phone the board may be scrolled away when a tab asks for a tile.
  function revealBoard() {
    const r = board.getBoundingClientRect();
    if (r.bottom < 60 || r.top > window.innerHeight - 60) {
      const calm = window.matchMedia('(prefers-reduced-motion: reduce)').matches;
      board.scrollIntoView({ block: 'center', behavior: calm ? 'auto' : 'smooth' });
    }
  }

  function drawEnemyList() {
    const rows = [
      ...a.enemies.map((e) => ({ e, now: true, ago: 0 })),
      ...a.enemy_log.map((e) => ({ e, now: false, ago: e.rounds_ago })),
    ].sort((p, q) => p.ago - q.ago || p.e.owner - q.e.owner);
    fill(enemyList, rows.map(({ e, now }) => {
      const what = e.type ? typeName(e.type) : e.domain ? t(`arch.domain.${e.domain}`) : t('arch.type_unknown');
      const when = now ? t('arch.in_sight') : `${t('arch.round_n', { n: e.round })} · ${seenAgo(e.rounds_ago)}`;
      return h('li', { 'data-enemy': e.id, class: now ? 'now' : 'old' },
        h('button', { type: 'button', class: 'unit-row', onclick: () => showEnemy(e) },
          h('span', { class: 'dot', style: { background: ctx.seatColor(e.owner) }, 'aria-hidden': 'true' }),
          h('span', { class: 'owner' }, ctx.nameOf(e.owner)),
          h('span', { class: 'name' }, what),
          h('span', { class: 'where num' }, coord(e.tile)),
          h('span', { class: 'status muted' }, when)));
    }));
    if (!rows.length) fill(enemyList, h('li', { class: 'muted', id: 'enemy-none' }, t('arch.no_enemies')));
  }

  function showEnemy(e) {
    flashId = e.id;
    drawStatic(); // the marks again, with this one flashing
    centreOn(e.tile);
    tileSel = e.tile;
    selected = null;
    mode = null;
    update();
    revealBoard();
  }

  function drawEvents() {
    const list = a.events.filter((e) => e.kind !== 'game_over' || !over());
    eventsTitle.textContent = t('arch.events.title');
    fill(eventList, list.map((e) => {
      const text = eventText(e);
      return h('li', { 'data-kind': e.kind },
        e.tile ? h('button', { type: 'button', class: 'linkish', title: t('arch.events.show'), onclick: () => { centreOn(e.tile); tileSel = e.tile; selected = null; update(); revealBoard(); } },
          h('span', { class: 'ev-sym', 'aria-hidden': 'true' }, EVENT_MARK[e.kind] || '•'), text)
          : [h('span', { class: 'ev-sym', 'aria-hidden': 'true' }, EVENT_MARK[e.kind] || '•'), text]);
    }));
    if (!list.length) fill(eventList, h('li', { class: 'muted' }, t('arch.events.none')));
  }

  function drawBar() {
    bar.hidden = !running();
    done.refreshLabel();
    cancelMode.hidden = !mode;
    cancelMode.textContent = t('arch.cancel');
    let text;
    const u = selected && units.get(selected);
    if (mode && mode.kind === 'place') text = t('arch.hint.place', { unit: u ? typeName(u.type) : '' });
    else if (mode && mode.kind === 'move') text = hl && hl.tiles.size ? t('arch.hint.move', { unit: u ? typeName(u.type) : '' }) : t('arch.hint.no_move');
    else if (mode && mode.kind === 'target') text = t('arch.hint.target', { action: t(`arch.action.${mode.action}`) });
    else if (mode && mode.kind === 'mine') text = t('arch.hint.mine', { unit: typeName(mode.type) });
    else if (mode && mode.kind === 'raft') text = t('arch.hint.raft');
    else if (round === 0) text = t('arch.hint.deploy');
    else text = t('arch.hint.summary', { orders: orders.units.size, builds: orders.builds.length });
    hint.textContent = text;
  }

  function drawLegend() {
    legend.textContent = over() ? t('arch.legend_over') : t('arch.legend');
    board.setAttribute('aria-label', t('arch.board'));
    zoomIn.setAttribute('aria-label', t('arch.zoom_in'));
    zoomIn.title = t('arch.zoom_in');
    zoomOut.setAttribute('aria-label', t('arch.zoom_out'));
    zoomOut.title = t('arch.zoom_out');
    zoomReset.setAttribute('aria-label', t('arch.zoom_reset'));
    zoomReset.title = t('arch.zoom_reset');
  }

  // Everything that follows a change the player made (no new view).
  // Keyboard play: a unit chosen in the list with the keyboard brings the focus to its first action
  // (Place / Move …); an action that wants a tile brings it to the board, its cursor on the unit
  // (arrows move it, Enter chooses the tile).
  function focusPanel() {
    const first = unitPanel.querySelector('#place:not([disabled]), #move:not([disabled])')
      || unitPanel.querySelector('.unit-actions button:not([disabled])');
    if (first) first.focus();
  }
  function focusBoard() {
    const u = selected && units.get(selected);
    cursor = u ? posOf(u) : asTile(a.base);
    board.focus({ preventScroll: true });
    ensureVisible(cursor);
    drawCursor();
    revealBoard();
  }
  // What has the focus survives a redraw (the lists and the panel are rebuilt): the element with the
  // same id, or the same kind of control of the same unit / build row.
  function focusKey(el) {
    if (!el || el === document.body || !root.contains(el)) return null;
    if (el.id) return `#${CSS.escape(el.id)}`;
    const row = el.closest('[data-unit],[data-build],[data-enemy]');
    if (!row) return null;
    const [name] = ['data-unit', 'data-build', 'data-enemy'].filter((n) => row.hasAttribute(n));
    const cls = el.classList.length ? `.${CSS.escape(el.classList[0])}` : '';
    return `${row.tagName.toLowerCase()}[${name}="${CSS.escape(row.getAttribute(name))}"] ${el === row ? '' : `${el.tagName.toLowerCase()}${cls}`}`.trim();
  }

  function update() {
    if (!a || !rules) return;
    const focused = focusKey(document.activeElement);
    redraw();
    if (focused && !root.contains(document.activeElement)) {
      const again = root.querySelector(focused);
      if (again) again.focus({ preventScroll: true });
    }
  }

  function redraw() {
    drawDynamic();
    stockBox.hidden = Boolean(ctx.readOnly) && me() < 0; // (a spectator's view has no stock)
    if (!stockBox.hidden) drawStock();
    drawUnitPanel();
    drawCard();
    drawTileInfo();
    drawTabs();
    drawUnitList();
    if (!ctx.readOnly) drawBuild(); // (a read-only page has no Build tab)
    drawBar();
    if (ctx.setChanged && view) ctx.setChanged(Boolean(view.submitted && running() && !samePending(view.archipelago_pending || {})));
  }

  // ---------------------------------------------------------------- errors and the autopilot in words
  // An error's field (a path into the orders this page sent) as the player's own unit or build:
  // units[1].path[0] -> "your Sergeant at (3, 4), its step 1".
  function describeField(field, request) {
    const m = /^(units|deploy|builds)\[(\d+)\](?:\.(\w+))?(?:\[(\d+)\])?/.exec(String(field || ''));
    if (!m || !a) return '';
    const item = ((request || {})[m[1]] || [])[Number(m[2])];
    if (m[1] === 'builds') {
      return item && item.type ? t('arch.err.your_build', { unit: typeName(item.type), n: Number(m[2]) + 1 }) : '';
    }
    const u = item && units.get(item.unit);
    if (!u) return '';
    let text = t('arch.err.your_unit', { unit: typeName(u.type), tile: coord(posOf(u)) });
    if (m[3] === 'path' && m[4] !== undefined) text += t('arch.err.step', { n: Number(m[4]) + 1 });
    else if (m[3] === 'to' && item.to) text += t('arch.err.dest', { tile: coord(asTile(item.to)) });
    else if (m[3] === 'target') text += t('arch.err.target');
    else if (m[1] === 'deploy' && item.tile) text += t('arch.err.dest', { tile: coord(asTile(item.tile)) });
    return text;
  }

  // An id in a server's reason (which is English): the player's own unit by its English name.
  function nameId(id) {
    const u = a && units.get(id);
    if (!u) return '';
    const tile = asTile(u.tile);
    return `your ${typeOf(u.type).name} at (${tile.x}, ${tile.y})`;
  }

  // One round the autopilot (or the standing orders) played: its orders, one line each.
  function describeAutopilot(turn) {
    if (!a || !rules) return null;
    const o = turn.archipelago || {};
    const who = (id) => {
      const u = units.get(id);
      return u ? `${typeName(u.type)} ${coord(asTile(u.tile))}` : t('arch.log.lost_unit');
    };
    const lines = [];
    for (const d of o.deploy || []) lines.push(t('arch.log.deploy', { unit: who(d.unit), tile: coord(asTile(d.tile || {})) }));
    for (const x of o.units || []) {
      let what;
      if (x.to && (x.to.x !== undefined || x.to.y !== undefined)) what = t('arch.order.move', { tile: coord(asTile(x.to)) });
      else if (x.path && x.path.length) what = t('arch.log.path', { steps: x.path.map((d) => t(`arch.dir.${d}`)).join(' ') });
      else if (x.action === 'outpost') what = t('arch.order.outpost');
      else if (x.action) {
        const e = a.enemies.find((q) => q.id === x.target) || a.enemy_log.find((q) => q.id === x.target);
        what = t(`arch.order.${x.action}`, { target: e ? enemyWords(e) : t('arch.a_unit') });
      } else what = t('arch.order.none');
      lines.push(`${who(x.unit)}: ${what}`);
    }
    for (const b of o.builds || []) lines.push(t('arch.log.build', { unit: typeName(b.type) }));
    if (o.bonus) lines.push(t('arch.log.bonus', { res: `${RES_ICON[o.bonus] || ''} ${t(`res.${o.bonus}`)}` }));
    if (!lines.length) lines.push(t('autopilot.nothing'));
    return lines;
  }

  // ---------------------------------------------------------------- the contract
  function render(v) {
    view = v;
    a = v.archipelago || null;
    if (!a) return;
    if (!rules) { loading.textContent = t('arch.loading'); return; }
    loading.hidden = true;
    root.hidden = false;
    const newRound = round !== v.round;
    if (newRound) {
      round = v.round;
      units = new Map(a.units.map((u) => [u.id, u]));
      restore();
      mode = null;
      flashId = null;
    }
    indexView();
    if (selected && !units.has(selected)) selected = null;
    if (!running()) mode = null;
    const k = `${a.version}|${v.status}|${v.round}|${ctx.lang()}|${a.events.length}`;
    if (k !== staticKey) {
      staticKey = k;
      drawStatic();
    }
    drawLegend();
    drawEnemyList();
    drawEvents();
    update();
    if (!fitted) { fit(); lastWidth = board.clientWidth; } // (after the bar is drawn: the room is measured)
    if (tabs) { tabs.trade.render(v); tabs.standing.render(v); }
    // Once the server holds exactly what is entered, the draft is no longer needed.
    if (v.submitted && v.archipelago_pending && samePending(v.archipelago_pending)) ctx.draft.clear();
    if (ctx.renderNotices) ctx.renderNotices(); // (the autopilot's rounds need the rules table's names)
  }

  function samePending(p) {
    const mine = buildOrders();
    if (round === 0) return JSON.stringify(canonicalDeploy((p.deploy || []).map((d) => ({ unit: d.unit, tile: asTile(d.tile) })))) === JSON.stringify(mine.deploy);
    const norm = (o) => JSON.stringify({
      units: (o.units || []).map(cleanOrder).filter(Boolean),
      builds: (o.builds || []).map(cleanBuild).filter(Boolean),
      bonus: o.bonus || '' });
    return norm(p) === norm(mine);
  }

  function relabel() {
    staticKey = '';
    if (tabs) { tabs.trade.relabel(); tabs.standing.relabel(); }
    if (view) render(view);
  }

  function destroy() {
    destroyed = true;
    resize.disconnect();
    document.removeEventListener('keydown', onKey);
  }

  // (the last round's events are listed by this screen itself: a replay adds no list of its own)
  return { render, relabel, destroy, describeField, nameId, describeAutopilot, showsEvents: true };
}
