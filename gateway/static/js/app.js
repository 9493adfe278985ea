// The page: routes, home, lobby, the game shell (header, players, countdown, rejoin link, game over)
// and the game screens of the registry js/games.js (archipelago, salvo, arcmage), with no branch on a
// game kind here. The community pages — Play now on the home page, /watch, /leaderboard, /profile,
// /players/<handle> (js/community.js), /watch/<id> (js/spectate.js), /replay/<id> (js/replay.js) —
// get the parts of this shell they use as `env`. Talks to the JSON + WebSocket door only.
import { call, randomId, Watch } from './api.js';
import * as community from './community.js';
import { fill, h, s } from './dom.js';
import { errorNode } from './errors.js';
import { applyPresence, clockText, GAMES, gameOf, screenHost, viewLoader } from './games.js';
import * as i18n from './i18n.js';
import { notifyPanel } from './notify.js';
import { seatColor } from './seats.js';

const { t } = i18n;
const main = document.getElementById('main');
const net = document.getElementById('net');
let current = null; // the screen on show: {destroy()}

// ------------------------------------------------------------------ what this browser remembers
// Per game: the player's secret and how it got it. Secrets never leave this browser except in
// the Authorization header and the rejoin link the player copies.
const seats = {
  all() {
    try { return JSON.parse(localStorage.getItem('archipelago.seats') || '{}'); } catch { return {}; }
  },
  get(gameId) { return this.all()[gameId] || null; },
  put(gameId, record) {
    const all = this.all();
    all[gameId] = { ...(all[gameId] || {}), ...record, saved: Date.now() };
    const ids = Object.keys(all).sort((a, b) => all[b].saved - all[a].saved);
    for (const old of ids.slice(50)) { // bounded: the 50 latest games, with their drafts and outbox
      delete all[old];
      forget(`archipelago.draft.${old}.`);
      forget(`archipelago.outbox.${old}`);
      forget(`archipelago.screen.${old}.`); // what a game screen keeps (js/arcmage.js: its log)
    }
    localStorage.setItem('archipelago.seats', JSON.stringify(all));
  },
};

// Remove every stored key that starts with `prefix` (except `keep`).
function forget(prefix, keep = '') {
  for (let i = localStorage.length - 1; i >= 0; i -= 1) {
    const k = localStorage.key(i);
    if (k && k.startsWith(prefix) && k !== keep) localStorage.removeItem(k);
  }
}

function stored(key, fallback) {
  try { return JSON.parse(localStorage.getItem(key)) ?? fallback; } catch { return fallback; }
}

// ------------------------------------------------------------------ errors and network state
// A sentence in the player's words (js/errors.js), next to what the player pressed. `env` (a game
// page's): {describe(field, request), nameId(id)} name the player's own units, cards, squares.
// The box keeps the error: a change of language says it again in the new one.
function showError(anchor, err, env = {}) {
  if (!anchor) return;
  let box = anchor.nextElementSibling;
  if (!box || !box.classList.contains('error')) {
    box = h('p', { class: 'error', role: 'alert' });
    anchor.after(box);
  }
  box.dataset.code = err && err.code ? err.code : '';
  box.shownError = { err, env };
  fill(box, errorNode(err, env));
  if (err && err.offline) setNet('offline');
}

i18n.onLang(() => {
  for (const box of document.querySelectorAll('.error')) {
    if (box.shownError) fill(box, errorNode(box.shownError.err, box.shownError.env));
  }
});

// rebuild() redraws `root` from scratch (a change of language): the errors on show inside it are
// shown again next to the same places of the new tree (found by their position, errors aside).
function keepErrors(root, rebuild) {
  const pathOf = (el) => {
    const path = [];
    for (let n = el; n && n !== root; n = n.parentElement) {
      path.unshift([...n.parentElement.children].filter((c) => !c.classList.contains('error')).indexOf(n));
    }
    return path;
  };
  const kept = [...root.querySelectorAll('.error')]
    .filter((b) => b.shownError && b.previousElementSibling)
    .map((b) => [pathOf(b.previousElementSibling), b.shownError]);
  rebuild();
  for (const [path, shown] of kept) {
    let n = root;
    for (const i of path) n = n && [...n.children].filter((c) => !c.classList.contains('error'))[i];
    if (n && n !== root) showError(n, shown.err, shown.env);
  }
}

function clearError(anchor) {
  const box = anchor && anchor.nextElementSibling;
  if (box && box.classList.contains('error')) box.remove();
}

function setNet(state) {
  net.dataset.state = state;
  net.textContent = state === 'offline' ? t('net.offline') : state === 'connecting' ? t('net.connecting') : '';
}

function navigate(path) {
  history.pushState({}, '', path);
  route();
}

document.addEventListener('click', (ev) => {
  const a = ev.target.closest && ev.target.closest('a[data-nav]');
  if (a && !ev.ctrlKey && !ev.metaKey && !ev.shiftKey) {
    ev.preventDefault();
    // (the header's links are there before the page's words: a click that early waits for them)
    ready.then(() => navigate(a.getAttribute('href')));
  }
});

async function copy(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const area = h('textarea', { class: 'sr' }, text);
    document.body.append(area);
    area.select();
    document.execCommand('copy');
    area.remove();
  }
  const label = button.textContent;
  button.textContent = t('common.copied');
  setTimeout(() => { button.textContent = label; }, 1500);
}

// A player's name as the page shows it: an autopilot seat's "autopilot-4" in the page's language.
function playerName(p) {
  const m = p && p.autopilot ? /^autopilot-(\d+)$/.exec(String(p.nickname || '')) : null;
  return m ? t('players.autopilot_name', { n: m[1] }) : (p ? p.nickname : '');
}

// ------------------------------------------------------------------ home (W1)
function homeScreen(code = '') {
  const held = community.profile.get(); // a profile on this device: its handle is the nickname at first
  const nickname = h('input', { id: 'nickname', maxlength: 24, autocomplete: 'nickname',
    value: (held && held.handle) || localStorage.getItem('archipelago.nickname') || '', required: true });
  const kind = h('select', { id: 'game-kind' },
    Object.keys(GAMES).map((k) => h('option', { value: k }, t(`game.${k}`))));
  const players = h('select', { id: 'players' });
  const speed = h('select', { id: 'speed' },
    h('option', { value: 'SPEED_FAST' }, t('home.fast')), h('option', { value: 'SPEED_SLOW' }, t('home.slow')));
  const isPublic = h('input', { type: 'checkbox', id: 'public' });
  const playersRow = h('label', { class: 'row' }, h('span', {}, t('home.players')), players);
  // Each game's own fields (registry: createOptions / joinOptions), shown for the chosen kind.
  const createExtras = Object.fromEntries(Object.entries(GAMES).filter(([, g]) => g.createOptions)
    .map(([k, g]) => [k, g.createOptions(h, t)]));
  const joinExtras = Object.fromEntries(Object.entries(GAMES).filter(([, g]) => g.joinOptions)
    .map(([k, g]) => [k, g.joinOptions(h, t)]));
  const createExtraBox = h('div', { class: 'game-options' }, Object.values(createExtras).map((x) => x.el));
  function kindChanged() {
    const [min, max] = GAMES[kind.value].seats;
    const was = Number(players.value) || min;
    fill(players, Array.from({ length: max - min + 1 }, (_, i) => min + i)
      .map((n) => h('option', { value: n, selected: n === Math.min(Math.max(was, min), max) }, String(n))));
    playersRow.hidden = min === max;
    for (const [k, x] of Object.entries(createExtras)) x.el.hidden = k !== kind.value;
    const speeds = GAMES[kind.value].speeds || { SPEED_FAST: 'home.fast', SPEED_SLOW: 'home.slow' };
    for (const option of speed.options) option.textContent = t(speeds[option.value]);
  }
  kind.addEventListener('change', kindChanged);
  kindChanged();
  const codeInput = h('input', { id: 'code', maxlength: 6, value: code, autocomplete: 'off',
    autocapitalize: 'characters', spellcheck: 'false', placeholder: 'ABC234' });
  // One request id per attempt until it succeeds: pressing again after a lost answer gets the
  // same game and seat, never a second one.
  let createId = randomId();
  let joinId = randomId();
  codeInput.addEventListener('input', () => { joinId = randomId(); });

  const openButton = h('button', { id: 'open', class: 'primary', type: 'button' }, t('home.open'));
  const joinButton = h('button', { id: 'join', class: code ? 'primary' : '', type: 'button' }, t('home.join'));

  function nick(anchor, emptyIsFine = false) {
    const name = nickname.value.trim();
    localStorage.setItem('archipelago.nickname', name);
    if (!name && emptyIsFine) return '';
    if (!name) {
      showError(anchor, { code: 'input/nickname', field: 'nickname', rule: 'A2' });
      nickname.focus();
      return null;
    }
    return name;
  }

  openButton.addEventListener('click', async () => {
    clearError(openButton);
    const name = nick(openButton);
    if (!name) return;
    openButton.disabled = true;
    const game = kind.value;
    try {
      const made = await call('Lobby/CreateGame', { game, seats: Number(players.value),
        speed: speed.value, public: isPublic.checked, nickname: name, request_id: createId,
        ...(createExtras[game] ? createExtras[game].body() : {}) }, community.profile.secret());
      seats.put(made.game_id, { secret: made.secret, seat: made.seat, code: made.code, game,
        invite: made.invite_link, nickname: name });
      createId = randomId();
      navigate(`/game/${made.game_id}`);
    } catch (err) {
      showError(openButton, { ...err, kind: 'lobby' });
    } finally {
      openButton.disabled = false;
    }
  });

  // `game`: the kind when known (a listed public game); by code it is not, and every game's join
  // fields apply (the server refuses another game's member, naming the field).
  async function join(codeValue, anchor, game = '') {
    clearError(anchor);
    const name = nick(anchor);
    if (!name) return;
    anchor.disabled = true;
    const extras = Object.entries(joinExtras).filter(([k]) => !game || k === game)
      .reduce((acc, [, x]) => ({ ...acc, ...x.body() }), {});
    try {
      const joined = await call('Lobby/JoinGame', { code: codeValue.trim().toUpperCase(), nickname: name,
        request_id: joinId, ...extras }, community.profile.secret());
      seats.put(joined.game_id, { secret: joined.secret, seat: joined.seat, code: codeValue.trim().toUpperCase(),
        game: joined.game, nickname: name });
      joinId = randomId();
      navigate(`/game/${joined.game_id}`);
    } catch (err) {
      showError(anchor, { ...err, kind: 'lobby' });
    } finally {
      anchor.disabled = false;
    }
  }
  joinButton.addEventListener('click', () => join(codeInput.value, joinButton));

  const list = h('ul', { id: 'public-games', class: 'plain' });
  const mine = Object.entries(seats.all()).sort((a, b) => b[1].saved - a[1].saved).slice(0, 5);
  const root = h('div', { class: 'home' },
    h('section', { class: 'card' },
      h('label', { class: 'row' }, h('span', {}, t('home.nickname')), nickname),
      held ? h('p', { class: 'muted small', id: 'home-profile' }, t('community.home.as_profile'), ' ',
        h('a', { href: '/profile', 'data-nav': true, dir: 'auto' }, held.handle)) : null),
    community.playNowCard(env, nick),
    h('div', { class: 'cards' },
      h('section', { class: 'card', id: 'open-card' },
        h('h2', {}, t('home.open_title')),
        h('label', { class: 'row' }, h('span', {}, t('home.game')), kind),
        playersRow,
        createExtraBox,
        h('label', { class: 'row' }, h('span', {}, t('home.speed')), speed),
        h('label', { class: 'row check' }, isPublic, h('span', {}, t('home.public'))),
        openButton),
      h('section', { class: 'card', id: 'join-card' },
        h('h2', {}, t('home.join_title')),
        h('label', { class: 'row' }, h('span', {}, t('home.code')), codeInput),
        Object.values(joinExtras).map((x) => x.el),
        joinButton,
        h('h3', {}, t('home.public_games')), list)),
    mine.length ? h('section', { class: 'card' }, h('h2', {}, t('home.my_games')),
      h('ul', { class: 'plain', id: 'my-games' }, mine.map(([id, rec]) => h('li', {},
        h('a', { href: `/game/${id}`, 'data-nav': true }, `${rec.game ? t(`game.${rec.game}`) : ''} · ${rec.code || id}`))))) : null);
  fill(main, root);
  (code ? nickname.value ? joinButton : nickname : nickname).focus();

  call('Lobby/ListGames', {}).then((resp) => {
    fill(list, (resp.games || []).slice(0, 20).map((g) => {
      const button = h('button', { type: 'button', class: 'small' }, t('home.join'));
      button.addEventListener('click', () => join(g.code, button, g.game));
      return h('li', {}, `${t(`game.${g.game}`)} · ${g.host} · ${g.taken}/${g.seats} `, button);
    }));
    if (!list.children.length) fill(list, h('li', { class: 'muted' }, t('home.no_public_games')));
  }).catch((err) => showError(list, err));
  return { destroy() {} };
}

// ------------------------------------------------------------------ rejoin link (W9)
async function rejoinScreen() {
  const secret = decodeURIComponent(location.hash.slice(1));
  history.replaceState({}, '', '/rejoin'); // the secret leaves the address bar at once
  const box = h('section', { class: 'card' }, h('p', {}, t('rejoin.checking')));
  fill(main, box);
  if (!secret) {
    fill(box, h('p', { class: 'error' }, t('rejoin.missing')));
    return { destroy() {} };
  }
  try {
    const who = await call('Lobby/Rejoin', {}, secret);
    seats.put(who.game_id, { secret, seat: who.seat, code: who.code, game: who.game, nickname: who.nickname });
    history.replaceState({}, '', `/game/${who.game_id}`);
    return gameScreen(who.game_id);
  } catch (err) {
    // A link the server does not know (mistyped, cut short, or of a game long gone) is told apart
    // from a server that cannot answer now.
    const bad = err && (err.code === 'auth/unauthenticated' || err.code === 'lookup/not_found');
    fill(box, h('h2', {}, t(bad ? 'rejoin.bad_title' : 'rejoin.failed_title')),
      bad ? h('p', { id: 'rejoin-bad', class: 'error', role: 'alert' }, t('rejoin.bad'))
        : h('p', { class: 'error', role: 'alert' }, errorNode(err)),
      h('a', { href: '/', 'data-nav': true }, t('common.home')));
    return { destroy() {} };
  }
}

// ------------------------------------------------------------------ pages that do not exist
const GAME_ID = /^[0-9a-f]{16}$/; // the gateway's game ids: 16 hex digits

function notFoundScreen(kind = 'page') {
  fill(main, h('section', { class: 'card', id: 'not-found', 'data-kind': kind },
    h('h2', {}, t(`notfound.${kind}_title`)),
    h('p', {}, t(`notfound.${kind}`)),
    h('p', {}, h('a', { href: '/', 'data-nav': true, class: 'button' }, t('common.home')))));
  document.title = t(`notfound.${kind}_title`);
  return { destroy() {} };
}

// A game page on a device that holds no seat of it: an address no game can have (not a game id), a
// game that does not exist (or no longer: the gateway answers its page 404 — asked with a HEAD, the
// page holding no seat to ask with), or a game this device has no seat in.
function noSeatScreen(gameId) {
  if (!GAME_ID.test(gameId)) return notFoundScreen('game');
  let destroyed = false;
  const noSeat = () => {
    fill(main, h('section', { class: 'card', id: 'no-seat' },
      h('h2', {}, t('game.no_seat_title')), h('p', {}, t('game.no_seat')),
      h('p', {}, h('a', { href: '/', 'data-nav': true, class: 'button' }, t('common.home')))));
  };
  noSeat();
  fetch(`/game/${gameId}`, { method: 'HEAD', cache: 'no-store' }).then((r) => {
    if (!destroyed && r.status === 404) notFoundScreen('game');
  }).catch(() => {}); // offline: the no-seat words stand (they say a mistyped address leads here too)
  return { destroy() { destroyed = true; } };
}

// ------------------------------------------------------------------ the game page (W2, W4, W9, W11)
function gameScreen(gameId) {
  const record = seats.get(gameId);
  if (!record || !record.secret) return noSeatScreen(gameId);
  const secret = record.secret;
  let view = null;
  let watch = null;
  let destroyed = false;
  const screen = screenHost(() => destroyed); // this game's screen module (js/games.js)
  const chats = [];
  const outboxKey = `archipelago.outbox.${gameId}`;
  const leftKey = `archipelago.screen.${gameId}.left`; // when this page was last left mid-game
  const ackKey = `archipelago.screen.${gameId}.autopilot_ack`; // the autopilot's rounds already read
  const leftAt = Number(localStorage.getItem(leftKey) || 0);
  localStorage.removeItem(leftKey);
  let resumeShown = false;
  const area = h('div', { id: 'game-area' });
  // The status strip (sticky at the top of the screen while the game scrolls under it): the game,
  // the round, the countdown, the player's own state, and every player's submitted / connected /
  // score as one compact row (the side list below has the same in full words).
  const headLine = h('div', { class: 'head-line' });
  const strip = h('ul', { id: 'strip', class: 'plain strip', tabindex: '0' }); // (focusable: it may scroll sideways)
  const live = h('span', { id: 'strip-live', class: 'sr', role: 'status', 'aria-live': 'polite' }); // round + own state, said once when it changes
  const header = h('div', { id: 'game-header', class: 'bar status-strip' }, headLine, strip, live);
  const side = h('aside', { id: 'side' });
  const over = h('section', { id: 'game-over', class: 'card', hidden: true });
  const lobby = h('section', { id: 'lobby', class: 'card', hidden: true });
  const resumeBox = h('p', { id: 'resumed', class: 'notice', role: 'status', hidden: true });
  const autoBox = h('section', { id: 'autopilot-log', class: 'card notice autopilot-log', hidden: true, 'aria-labelledby': 'autopilot-title' });
  fill(main, h('div', { class: 'game' }, header, resumeBox, autoBox, h('div', { class: 'game-body' }, h('div', { class: 'game-main' }, lobby, over, area), side)));

  // A refusal keeps the request it answered (the field paths of errors point into it) and its kind.
  const KIND = { 'Game/SubmitOrders': 'orders', 'Game/Act': 'action', 'Game/SetStandingOrders': 'standing' };
  const api = async (rpc, body) => {
    try {
      return await call(rpc, { game_id: gameId, ...body }, secret);
    } catch (err) {
      if (err && typeof err === 'object') {
        const kind = view ? view.game : '';
        err.request = (body && kind && body[kind]) || (body && body.action) || body || {};
        err.kind = KIND[rpc] || '';
      }
      throw err;
    }
  };
  // The player's words for the fields and ids of this game's errors (from its screen module).
  const errorEnv = {
    describe: (field, request) => (screen.call('describeField', field, request) || ''),
    nameId: (id) => (screen.call('nameId', id) || ''),
  };
  const showGameError = (anchor, err) => showError(anchor, err, errorEnv);

  const loader = viewLoader(async () => { // (bursts of updates coalesced into one GetView)
    try {
      view = await api('Game/GetView', {});
      render();
    } catch (err) {
      if (err.offline) setNet('offline');
      else showGameError(header, err);
    }
  }, () => destroyed);
  const refresh = loader.now;
  const refreshSoon = loader.soon;

  function onUpdate(u) {
    notify.update(u); // (a hidden page tells its player of its turn itself)
    screen.call('update', u); // (a screen may show updates itself, e.g. a log)
    if (applyPresence(view, u)) { renderSide(); return; }
    if (u.kind === 'chat' && u.chat) {
      chats.push({ ...u.chat, round: u.round });
      if (chats.length > 200) chats.shift();
    }
    // a rated game's game_over carries each rated seat's change (community.proto RatingChange)
    if (u.kind === 'game_over' && u.data && Array.isArray(u.data.ratings)) ratingChanges = u.data.ratings;
    refreshSoon();
  }

  function startWatch(afterSeq) {
    if (watch) return;
    watch = new Watch({ gameId, secret, afterSeq, onUpdate,
      onState: (state) => {
        setNet(state === 'ended' ? 'online' : state);
        if (state === 'online') { flushOutbox(); refreshSoon(); }
        if (state === 'ended') refreshSoon();
      },
      onResync: () => refreshSoon(),
      onFatal: (err) => showGameError(header, err) });
    watch.start();
  }

  // ---------------------------------------------------------------- orders: never lost
  // A submission waits in this browser's storage until the server has acknowledged it; a network
  // failure keeps it there and it is sent again (same idempotency key) when the stream is back.
  const transient = (err) => Boolean(err.offline || err.code === 'server/unavailable');
  function readOutbox() { return stored(outboxKey, null); }
  async function send(entry) {
    const body = { version: entry.version, idempotency_key: entry.key, draft: entry.draft, [entry.kind]: entry.orders };
    const resp = await api('Game/SubmitOrders', body);
    localStorage.removeItem(outboxKey);
    renderQueued();
    return resp;
  }
  let flushing = false;
  let retryTimer = null;
  let retryDelay = 2000;
  function retryLater() { // while something waits in the outbox, try again: 2 s, 4 s, … 30 s
    clearTimeout(retryTimer);
    if (destroyed || !readOutbox()) return;
    retryTimer = setTimeout(flushOutbox, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 30000);
  }
  async function flushOutbox() {
    const entry = readOutbox();
    if (!entry || flushing) return;
    flushing = true;
    try {
      await send(entry);
      retryDelay = 2000;
      refreshSoon();
    } catch (err) {
      if (transient(err)) {
        retryLater();
      } else {
        localStorage.removeItem(outboxKey);
        renderQueued();
        showGameError(header, err);
      }
    } finally {
      flushing = false;
    }
  }
  async function submit(orders, { draft = false } = {}) {
    const entry = { kind: view.game, orders, draft, version: view.version, round: view.round, key: randomId(20) };
    localStorage.setItem(outboxKey, JSON.stringify(entry));
    try {
      const resp = await send(entry);
      refreshSoon();
      return resp;
    } catch (err) {
      if (transient(err)) {
        renderQueued();
        retryLater();
        return { queued: true };
      }
      localStorage.removeItem(outboxKey);
      renderQueued();
      throw err;
    }
  }

  // Drafts: what the player entered but has not sent, kept across reloads (per game and round).
  const draft = {
    key: () => `archipelago.draft.${gameId}.${view ? view.round : 0}`,
    load() { return stored(this.key(), null); },
    save(value) {
      const keep = this.key();
      forget(`archipelago.draft.${gameId}.`, keep); // earlier rounds' drafts are of no use now
      localStorage.setItem(keep, JSON.stringify(value));
      draftChanged();
    },
    clear() { localStorage.removeItem(this.key()); },
  };

  // ---------------------------------------------------------------- the draft, on the server too
  // While the player has not pressed Done, what it entered goes to the server as a draft (a second
  // after the last change, and at once when the page is hidden or reloaded): if the round closes
  // while it is away, those orders stand and the autopilot only completes them (A70). Never after
  // Done: a draft would withdraw the "done" (A16). At most DRAFT_LIMIT a round (drafts count, A16).
  const DRAFT_LIMIT = 40;
  let draftOrders = null; // the screen's side-effect-free "what would Done send" (or null: none)
  let draftTimer = null;
  let draftSent = { round: -1, json: '', count: 0 };
  function draftToSync() {
    if (!draftOrders || !view || view.status !== 'GAME_STATUS_RUNNING' || view.submitted || !view.expected) return null;
    let orders;
    try { orders = draftOrders(); } catch { return null; }
    if (!orders) return null;
    const json = JSON.stringify(orders);
    if (draftSent.round === view.round && (draftSent.json === json || draftSent.count >= DRAFT_LIMIT)) return null;
    if (draftSent.round !== view.round && !draft.load()) return null; // nothing entered this round
    return { orders, json };
  }
  async function syncDraft({ leaving = false } = {}) {
    clearTimeout(draftTimer);
    draftTimer = null;
    const d = draftToSync();
    if (!d || readOutbox()) return;
    const round = view.round;
    const body = { game_id: gameId, version: view.version, idempotency_key: randomId(20), draft: true, [view.game]: d.orders };
    draftSent = { round, json: d.json, count: (draftSent.round === round ? draftSent.count : 0) + 1 };
    draftFlight = call('Game/SubmitOrders', body, secret, { keepalive: leaving })
      .catch(() => { draftSent.json = ''; }); // refused or lost: Done says why; tried again on a change
    await draftFlight;
    draftFlight = null;
  }
  let draftFlight = null;
  function draftChanged() {
    clearTimeout(draftTimer);
    if (!destroyed) draftTimer = setTimeout(() => syncDraft(), 1000);
  }
  // When the page goes (a reload, a closed tab, a phone that hides it) the next load knows since when.
  const markLeft = () => { if (view && view.status === 'GAME_STATUS_RUNNING') localStorage.setItem(leftKey, String(Date.now())); };
  const onHide = () => {
    if (document.visibilityState === 'hidden') { syncDraft({ leaving: true }); markLeft(); } else localStorage.removeItem(leftKey);
  };
  const onLeave = () => { syncDraft({ leaving: true }); markLeft(); };
  document.addEventListener('visibilitychange', onHide);
  window.addEventListener('pagehide', onLeave);

  // Sent, then changed here: the header says so (not "Orders sent"), until Done is pressed again.
  let changedSinceSent = false;
  function setChanged(on) {
    if (on === changedSinceSent) return;
    changedSinceSent = on;
    renderMyStatus();
  }

  function doneButton(getOrders, { draftOf = null } = {}) {
    const button = h('button', { type: 'button', class: 'primary done', id: 'done' });
    draftOrders = draftOf;
    const label = () => {
      button.textContent = view && view.submitted ? t('game.update_orders') : t('game.done');
    };
    label();
    button.addEventListener('click', async () => {
      clearError(button);
      let orders;
      try {
        orders = getOrders();
      } catch (err) {
        showGameError(button, err);
        return;
      }
      button.disabled = true;
      clearTimeout(draftTimer); // Done sends these orders: no draft after them (it would withdraw "done")
      draftTimer = null;
      if (draftFlight) await draftFlight; // …and none overtaken by them
      try {
        const resp = await submit(orders);
        if (resp && !resp.queued && view) { view.submitted = true; changedSinceSent = false; renderMyStatus(); }
        label();
      } catch (err) {
        showGameError(button, err);
      } finally {
        button.disabled = false;
      }
    });
    button.refreshLabel = label;
    return button;
  }

  const ctx = {
    gameId, t, h, s, seatColor,
    get view() { return view; },
    get chats() { return chats; },
    lang: () => i18n.lang(),
    submit,
    act: async (action) => { const r = await api('Game/Act', { idempotency_key: randomId(20), ...action }); refreshSoon(); return r; },
    setStanding: async (standing) => {
      const r = await api('Game/SetStandingOrders', { idempotency_key: randomId(20), [view.game]: standing });
      refreshSoon();
      return r;
    },
    // Any other call of the player API for this game (game_id filled in), e.g. agent tokens.
    call: (rpc, body = {}) => api(rpc, body),
    // The player's updates after `afterSeq` up to `untilSeq` (what happened while this page was
    // closed), read on a stream of its own that then closes; [] if the server no longer has them.
    history: (afterSeq, untilSeq) => new Promise((resolve) => {
      const got = [];
      let w = null;
      const finish = (list) => { clearTimeout(timer); if (w) w.stop(); resolve(list); };
      const timer = setTimeout(() => finish(got), 10000);
      w = new Watch({ gameId, secret, afterSeq,
        onUpdate: (u) => { if (Number(u.seq) > 0) got.push(u); if (Number(u.seq) >= untilSeq) finish(got); },
        onState: (state) => { if (state === 'ended') finish(got); },
        onResync: () => finish([]),
        onFatal: () => finish([]) });
      if (Number(afterSeq) >= Number(untilSeq)) finish(got); else w.start();
    }),
    showError: showGameError, clearError, keepErrors, doneButton, draft, refresh, copy, setChanged,
  };
  // Notifications (js/notify.js): the 🔔 button in the strip opens its panel; its offer shows once, at
  // the end of the page (it appears as the game starts: above the board it would shift the board as the
  // player looks at it), the button marked meanwhile.
  const notify = notifyPanel(ctx);
  autoBox.after(notify.el);
  autoBox.parentNode.append(notify.offer);

  // ---------------------------------------------------------------- rendering
  function nameOf(seat) {
    const p = view && (view.players || []).find((x) => x.seat === seat);
    return p ? playerName(p) : `#${seat}`;
  }
  ctx.nameOf = nameOf;

  function renderQueued() {
    const entry = readOutbox();
    let box = document.getElementById('queued');
    if (!entry) { if (box) box.remove(); return; }
    if (!box) { box = h('p', { id: 'queued', class: 'notice', role: 'status' }); header.after(box); }
    box.textContent = t('game.queued');
  }

  let clock = null;
  function countdown() {
    const el = document.getElementById('countdown');
    if (!el || !view) return;
    const ms = Number(view.deadline_unix_ms || 0) - Date.now();
    if (!Number(view.deadline_unix_ms) || view.status !== 'GAME_STATUS_RUNNING') { el.textContent = ''; return; }
    const secs = Math.max(0, Math.ceil(ms / 1000));
    el.textContent = clockText(secs);
    el.classList.toggle('urgent', secs <= 10);
  }

  // A turn-based game (its step is a turn or a window) counts turns and asks the seats of the step.
  const turnBased = () => Boolean(view.step && ['turn', 'window'].includes(view.step.kind));
  const toAct = (seat) => Boolean(view.step && (view.step.players || []).includes(seat));

  function renderHeader() {
    const status = view.status;
    const roundText = status === 'GAME_STATUS_LOBBY' ? t('game.in_lobby')
      : turnBased() ? (view.round === 0 ? t('game.turn0') : t('game.turn', { n: view.round }))
        : view.round === 0 ? t('game.round0') : t('game.round', { n: view.round });
    fill(headLine,
      h('span', { class: 'kind' }, t(`game.${view.game}`)),
      h('span', { id: 'round' }, roundText),
      h('span', { id: 'countdown', class: 'countdown', title: t('game.deadline') }),
      status === 'GAME_STATUS_RUNNING' ? h('span', { id: 'my-status' }) : null,
      notify.button);
    renderMyStatus();
    countdown();
    const mine = document.getElementById('my-status');
    const said = [roundText, mine ? mine.textContent : ''].filter(Boolean).join('. ');
    if (live.textContent !== said) live.textContent = said;
  }

  // The player's own state in the header: to act / sent / changed since sent / orders wanted.
  function renderMyStatus() {
    const el = document.getElementById('my-status');
    if (!el || !view) return;
    let cls = 'todo';
    let text = '';
    if (turnBased()) {
      cls = toAct(view.you) ? 'todo' : 'ok';
      text = toAct(view.you) ? t('game.your_move') : '';
    } else if (view.submitted && changedSinceSent) {
      cls = 'changed';
      text = t('game.changed_since_sent');
    } else if (view.submitted) {
      cls = 'ok';
      text = t('game.submitted');
    } else if (view.expected) {
      text = t('game.waiting_for_you');
    }
    el.className = cls;
    el.dataset.state = cls;
    el.textContent = text;
  }

  // One chip per player: colour, name, submitted (✓) / still planning (…) / to act (▸), away (a
  // hollow dot, dimmed) and the score; the whole sentence for screen readers and as a tooltip.
  function renderStrip() {
    if (!view) return;
    const game = gameOf(view.game);
    const running = view.status === 'GAME_STATUS_RUNNING';
    strip.setAttribute('aria-label', t('players.title'));
    fill(strip, (view.players || []).map((p) => {
      const f = game && game.figures ? game.figures(view, p.seat) : null;
      const score = f && f[1] && f[1].score !== undefined ? String(f[1].score) : '';
      let sub = null;
      if (running && turnBased()) sub = toAct(p.seat) ? ['on', '▸', t('players.to_act')] : null;
      else if (running) sub = p.submitted ? ['on', '✓', t('players.submitted')] : ['off', '…', t('players.thinking')];
      const words = [playerName(p), p.seat === view.you ? t('players.you') : null,
        p.connected ? t('players.connected') : t('players.disconnected'),
        sub ? sub[2] : null, f ? t(f[0], f[1]) : null].filter(Boolean).join(' · ');
      const dot = h('span', { class: 'dot', 'aria-hidden': 'true' });
      if (p.connected) dot.style.background = seatColor(p.seat); else dot.style.borderColor = seatColor(p.seat);
      return h('li', { 'data-seat': p.seat, class: ['chip-p', p.seat === view.you ? 'me' : '', p.connected ? 'on' : 'away'].join(' '),
        title: words, 'aria-label': words },
      dot,
      h('span', { class: 'nick', 'aria-hidden': 'true' }, playerName(p)),
      sub ? h('span', { class: `sub ${sub[0]}`, 'aria-hidden': 'true' }, sub[1]) : null,
      score ? h('span', { class: 'score', 'aria-hidden': 'true' }, score) : null);
    }));
  }

  function renderSide() {
    if (!view) return;
    renderStrip();
    const game = gameOf(view.game);
    const playersList = h('ul', { id: 'players', class: 'plain players' }, (view.players || []).map((p) => {
      const f = game && game.figures ? game.figures(view, p.seat) : null;
      return h('li', { 'data-seat': p.seat, class: p.seat === view.you ? 'me' : '' },
        h('span', { class: 'dot', style: { background: seatColor(p.seat) } }),
        h('span', { class: 'nick' }, playerName(p)),
        p.host ? h('span', { class: 'tag' }, t('players.host')) : null,
        p.autopilot ? h('span', { class: 'tag' }, t('players.autopilot')) : null,
        p.seat === view.you ? h('span', { class: 'tag' }, t('players.you')) : null,
        h('span', { class: `conn ${p.connected ? 'on' : 'off'}`, title: p.connected ? t('players.connected') : t('players.disconnected') },
          p.connected ? t('players.connected') : t('players.disconnected')),
        view.status === 'GAME_STATUS_RUNNING' && turnBased()
          ? (toAct(p.seat) ? h('span', { class: 'sub on' }, t('players.to_act')) : null)
          : view.status === 'GAME_STATUS_RUNNING'
            ? h('span', { class: `sub ${p.submitted ? 'on' : 'off'}` }, p.submitted ? t('players.submitted') : t('players.thinking'))
            : null,
        f ? h('span', { class: 'figures' }, t(f[0], f[1])) : null);
    }));
    const link = `${location.origin}/rejoin#${encodeURIComponent(secret)}`;
    const linkInput = h('input', { id: 'rejoin-link', readonly: true, value: link, type: 'password', 'aria-label': t('rejoin.title') });
    const show = h('button', { type: 'button', class: 'small', id: 'show-rejoin' }, t('rejoin.show'));
    show.addEventListener('click', () => {
      linkInput.type = linkInput.type === 'password' ? 'text' : 'password';
      show.textContent = linkInput.type === 'password' ? t('rejoin.show') : t('rejoin.hide');
    });
    const copyLink = h('button', { type: 'button', class: 'small', id: 'copy-rejoin' }, t('common.copy'));
    copyLink.addEventListener('click', () => copy(link, copyLink));
    fill(side,
      h('section', { class: 'card' }, h('h3', {}, t('players.title')), playersList),
      h('section', { class: 'card rejoin' }, h('h3', {}, t('rejoin.title')),
        h('p', { class: 'warning' }, t('rejoin.warning')), h('div', { class: 'row' }, linkInput, show, copyLink)));
  }

  function renderLobby() {
    lobby.hidden = false;
    const taken = (view.players || []).length;
    const host = (view.players || []).find((p) => p.seat === view.you && p.host);
    const invite = record.invite || `${location.origin}/join/${view.code}`;
    const copyCode = h('button', { type: 'button', class: 'small', id: 'copy-code' }, t('common.copy'));
    copyCode.addEventListener('click', () => copy(view.code, copyCode));
    const copyInvite = h('button', { type: 'button', class: 'small', id: 'copy-invite' }, t('common.copy'));
    copyInvite.addEventListener('click', () => copy(invite, copyInvite));
    const seatList = h('ol', { id: 'seats', class: 'seats' });
    for (let i = 0; i < view.seats; i += 1) {
      const p = (view.players || []).find((x) => x.seat === i);
      seatList.append(h('li', { class: p ? 'taken' : 'free', 'data-seat': i },
        h('span', { class: 'dot', style: { background: seatColor(i) } }),
        p ? playerName(p) : t('lobby.free_seat'), p && p.host ? h('span', { class: 'tag' }, t('players.host')) : null));
    }
    let controls;
    if (host) {
      const start = h('button', { type: 'button', class: 'primary', id: 'start', disabled: taken < view.seats }, t('lobby.start'));
      const autopilot = h('button', { type: 'button', id: 'fill' }, t('lobby.fill'));
      // (the lobby may be redrawn while the call is out: the error goes next to the controls on show)
      const shownControls = () => lobby.querySelector('.row.actions') || controls;
      const go = async (button, fillWithAutopilot) => {
        clearError(shownControls());
        button.disabled = true;
        try {
          await api('Lobby/StartGame', { fill_with_autopilot: fillWithAutopilot });
          refreshSoon();
        } catch (err) {
          showGameError(shownControls(), { ...err, kind: 'lobby' });
        } finally {
          button.disabled = fillWithAutopilot ? false : taken < view.seats;
        }
      };
      start.addEventListener('click', () => go(start, false));
      autopilot.addEventListener('click', () => go(autopilot, true));
      // why Start is greyed out, as a visible line (a phone shows no hover tooltip)
      const why = taken < view.seats ? h('p', { class: 'muted why-disabled', id: 'start-why' },
        t('lobby.start_why', { n: view.seats - taken })) : null;
      controls = h('div', { class: 'row actions' }, start, autopilot, why);
    } else {
      controls = h('p', { class: 'muted', id: 'wait-host' }, t('lobby.waiting_for_host'));
    }
    // a quick-play lobby starts by itself once full (or with computer players when its wait is over)
    const quick = record.quick ? community.quickLobbyNote(record.quick, view) : null;
    if (quick && !host) controls = null;
    const shown = lobby.querySelector('.actions + .error');
    const kept = shown && shown.shownError ? shown.shownError.err : null; // (said again below, in the new language)
    fill(lobby,
      h('h2', {}, t('lobby.title')),
      h('div', { class: 'row' }, h('span', {}, t('lobby.code')), h('code', { id: 'game-code', class: 'code' }, view.code), copyCode),
      h('div', { class: 'row' }, h('span', {}, t('lobby.invite')), h('input', { id: 'invite-link', readonly: true, value: invite, 'aria-label': t('lobby.invite') }), copyInvite),
      h('p', {}, t('lobby.seats', { taken, seats: view.seats })),
      seatList, quick, controls);
    if (kept && controls) showGameError(controls, kept);
  }

  let ratingChanges = null; // from the game_over update of a rated game (a page loaded later: the profile page)
  function ratingsTable() {
    if (!ratingChanges || !ratingChanges.length) return null;
    const signed = (x) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(1)}`;
    return h('table', { id: 'rating-changes' },
      h('caption', {}, t('over.ratings')),
      h('thead', {}, h('tr', {}, h('th', {}, t('over.player')), h('th', {}, t('over.rating')), h('th', {}, t('over.change')))),
      h('tbody', {}, ratingChanges.map((c) => h('tr', { 'data-seat': c.seat },
        h('td', {}, h('span', { class: 'dot', style: { background: seatColor(Number(c.seat)) } }),
          h('a', { href: `/players/${encodeURIComponent(c.handle)}`, 'data-nav': true }, c.handle)),
        h('td', { dir: 'ltr' }, `${Number(c.before).toFixed(1)} → ${Number(c.after).toFixed(1)}`),
        h('td', { dir: 'ltr' }, signed(Number(c.after) - Number(c.before)))))));
  }

  function renderOver() {
    const outcome = (view[view.game] || {}).outcome;
    if (view.status !== 'GAME_STATUS_OVER' || !outcome) { over.hidden = true; return; }
    over.hidden = false;
    const winners = outcome.winners || [];
    const youWon = winners.includes(view.you);
    const headline = outcome.draw ? t('over.draw') : youWon ? t('over.you_won')
      : winners.length ? t('over.winner', { names: winners.map(nameOf).join(', ') }) : t('over.no_winner');
    const scores = outcome.scores || [];
    fill(over,
      h('h2', {}, t('over.title')),
      h('p', { id: 'winner', class: 'headline' }, headline),
      h('p', { class: 'muted' }, t(`over.reason.${outcome.reason}`)),
      h('table', { id: 'final-scores' },
        h('thead', {}, h('tr', {}, h('th', {}, t('over.player')), h('th', {}, t('over.score')))),
        h('tbody', {}, scores.map((score, seat) => h('tr', { class: winners.includes(seat) ? 'winner' : '' },
          h('td', {}, h('span', { class: 'dot', style: { background: seatColor(seat) } }), nameOf(seat)),
          h('td', {}, String(score)))))),
      ratingsTable(),
      h('a', { href: '/', 'data-nav': true, class: 'button' }, t('over.new_game')));
  }

  function render() {
    if (!view || destroyed) return;
    renderHeader();
    renderSide();
    renderQueued();
    if (view.status === 'GAME_STATUS_LOBBY') renderLobby(); else lobby.hidden = true;
    renderOver();
    notify.render(view);
    document.title = `${t(`game.${view.game}`)} · ${view.code}`;
    screen.show(view, area, ctx).then(renderNotices).catch((err) => showError(header, { code: 'server/internal', reason: String(err) }));
  }

  // ---------------------------------------------------------------- back after a reload or away
  // The first view after this page was left mid-game: within the presence grace the seat stayed
  // connected (A17) and the round, the turn and the draft are as they were; past it, the others saw
  // the player away, and what the autopilot played meanwhile is listed below (autopilot_log).
  function renderResume() {
    if (resumeShown || !leftAt || !view || view.status !== 'GAME_STATUS_RUNNING') return;
    resumeShown = true;
    const mine = (view.players || []).find((p) => p.seat === view.you);
    const secs = Math.max(1, Math.round((Date.now() - leftAt) / 1000));
    const kept = Boolean(draft.load()) || Boolean(view.submitted);
    const key = mine && mine.connected ? 'game.resumed' : 'game.away';
    resumeBox.dataset.kind = mine && mine.connected ? 'resumed' : 'away';
    resumeBox.textContent = `${t(key, { s: secs })}${kept && mine && mine.connected ? ` ${t('game.resumed_draft')}` : ''}`;
    resumeBox.hidden = false;
  }

  // "What the autopilot did for you": the rounds the autopilot (or the standing orders) played for
  // this player since it last read them, each in the screen's words (its describeAutopilot).
  function renderNotices() {
    if (!view || destroyed) return;
    renderResume();
    const ack = Number(localStorage.getItem(ackKey) || -1);
    const log = (view.autopilot_log || []).filter((turn) => Number(turn.round || 0) > ack);
    // (a server without autopilot_log: its flag alone; a turn game's screen says that itself)
    const played = !log.length && view.autopilot_played && !('autopilot_log' in view) && !turnBased() && ack < view.round - 1;
    if (!log.length && !played) { autoBox.hidden = true; return; }
    const lines = (turn) => {
      const words = screen.call('describeAutopilot', turn) || [];
      return words.map((w) => h('li', {}, w));
    };
    const turnWord = turnBased() ? 'turn' : 'round';
    const ok = h('button', { type: 'button', class: 'small', id: 'autopilot-ok', onclick: () => {
      const last = log.length ? Math.max(...log.map((x) => Number(x.round || 0))) : view.round - 1;
      localStorage.setItem(ackKey, String(last));
      autoBox.hidden = true;
    } }, t('autopilot.ok'));
    fill(autoBox,
      h('h3', { id: 'autopilot-title' }, t('autopilot.title')),
      played ? h('p', {}, t(`autopilot.played_${turnWord}`, { n: Math.max(0, view.round - 1) })) : null,
      h('ul', { class: 'plain autopilot-turns' }, log.map((turn) => h('li', { 'data-round': turn.round || 0, 'data-source': turn.source || 'autopilot' },
        h('strong', {}, t(`autopilot.${turn.source === 'standing_orders' ? 'standing' : 'auto'}_${turnWord}`, { n: turn.round || 0 })),
        h('ul', { class: 'autopilot-lines' }, lines(turn))))),
      ok);
    autoBox.hidden = false;
  }
  ctx.renderNotices = () => renderNotices();

  const offLang = i18n.onLang(() => { screen.call('relabel'); notify.relabel(); render(); });
  const backOnline = () => flushOutbox();
  window.addEventListener('online', backOnline);
  (async () => {
    await refresh();
    if (destroyed || !view) {
      if (!view) startWatch(0);
      return;
    }
    startWatch(view.seq);
    clock = setInterval(countdown, 250);
    flushOutbox();
    draftChanged(); // a draft restored after a reload goes to the server too (if it is not there yet)
  })();

  return {
    destroy() {
      destroyed = true;
      offLang();
      window.removeEventListener('online', backOnline);
      document.removeEventListener('visibilitychange', onHide);
      window.removeEventListener('pagehide', onLeave);
      clearTimeout(draftTimer);
      clearInterval(clock);
      clearTimeout(retryTimer);
      loader.cancel();
      if (watch) watch.stop();
      notify.destroy();
      screen.destroy();
    },
  };
}

// ------------------------------------------------------------------ the community screens' shell
// What js/community.js, js/spectate.js and js/replay.js use of this page.
const env = { main, navigate, showError, clearError, keepErrors, copy, seats, playerName, setNet,
  notFound: (kind) => notFoundScreen(kind) };

// ------------------------------------------------------------------ routing
async function route() {
  if (current) current.destroy();
  current = null;
  setNet('online');
  const path = location.pathname;
  let m;
  if ((m = path.match(/^\/game\/([A-Za-z0-9_-]+)$/))) current = gameScreen(m[1]);
  else if (path === '/rejoin') current = await rejoinScreen();
  else if ((m = path.match(/^\/watch\/([A-Za-z0-9_-]+)$/))) current = (await import('./spectate.js')).spectateScreen(env, m[1]);
  else if ((m = path.match(/^\/replay\/([A-Za-z0-9_-]+)$/))) current = (await import('./replay.js')).replayScreen(env, m[1]);
  else if (path === '/watch') current = community.watchListScreen(env);
  else if (path === '/leaderboard') current = community.leaderboardScreen(env);
  else if (path === '/profile') current = await community.profileScreen(env);
  else if ((m = path.match(/^\/players\/([^/]+)$/))) current = community.playerScreen(env, decodeURIComponent(m[1]));
  else if ((m = path.match(/^\/join\/([A-Za-z0-9]{1,12})$/))) current = homeScreen(m[1].toUpperCase());
  else if (path === '/' || path === '') current = homeScreen();
  else current = notFoundScreen(path.startsWith('/game/') ? 'game' : path.startsWith('/join/') ? 'code' : 'page');
  markNav(path);
}

// The header's links (index.html: Watch, Leaderboard, Profile): the one of the page on show is marked.
const nav = document.getElementById('nav');
i18n.onLang(() => nav.setAttribute('aria-label', t('community.nav.label')));
function markNav(path) {
  for (const a of nav.querySelectorAll('a')) {
    const here = path === a.getAttribute('href') || path.startsWith(`${a.getAttribute('href')}/`);
    if (here) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
}

window.addEventListener('popstate', route);
window.addEventListener('offline', () => setNet('offline'));

const picker = document.getElementById('lang');
picker.addEventListener('change', async () => {
  await i18n.setLang(picker.value, { remember: true });
  // (a game, a spectator's or a replay's screen says everything again itself, where it is)
  if (!['/game/', '/watch/', '/replay/'].some((p) => location.pathname.startsWith(p))) route();
});

const ready = (async () => {
  await i18n.setLang(i18n.preferredLang());
  picker.value = i18n.lang();
})();
ready.then(route);
