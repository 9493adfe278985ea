// The page: routes, home, lobby, the game shell (header, players, countdown, rejoin link, game over)
// and the game screens of the registry js/games.js (archipelago, salvo, arcmage), with no branch on a
// game kind here. Talks to the JSON + WebSocket door only.
import { call, randomId, Watch } from './api.js';
import { fill, h, s } from './dom.js';
import { GAMES, gameOf } from './games.js';
import * as i18n from './i18n.js';
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
function showError(anchor, err) {
  if (!anchor) return;
  let box = anchor.nextElementSibling;
  if (!box || !box.classList.contains('error')) {
    box = h('p', { class: 'error', role: 'alert' });
    anchor.after(box);
  }
  box.dataset.code = err && err.code ? err.code : '';
  box.textContent = i18n.errorText(err);
  if (err && err.offline) setNet('offline');
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
    navigate(a.getAttribute('href'));
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

// ------------------------------------------------------------------ home (W1)
function homeScreen(code = '') {
  const nickname = h('input', { id: 'nickname', maxlength: 24, autocomplete: 'nickname',
    value: localStorage.getItem('archipelago.nickname') || '', required: true });
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

  function nick(anchor) {
    const name = nickname.value.trim();
    localStorage.setItem('archipelago.nickname', name);
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
        ...(createExtras[game] ? createExtras[game].body() : {}) });
      seats.put(made.game_id, { secret: made.secret, seat: made.seat, code: made.code, game,
        invite: made.invite_link, nickname: name });
      createId = randomId();
      navigate(`/game/${made.game_id}`);
    } catch (err) {
      showError(openButton, err);
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
        request_id: joinId, ...extras });
      seats.put(joined.game_id, { secret: joined.secret, seat: joined.seat, code: codeValue.trim().toUpperCase(),
        game: joined.game, nickname: name });
      joinId = randomId();
      navigate(`/game/${joined.game_id}`);
    } catch (err) {
      showError(anchor, err);
    } finally {
      anchor.disabled = false;
    }
  }
  joinButton.addEventListener('click', () => join(codeInput.value, joinButton));

  const list = h('ul', { id: 'public-games', class: 'plain' });
  const mine = Object.entries(seats.all()).sort((a, b) => b[1].saved - a[1].saved).slice(0, 5);
  const root = h('div', { class: 'home' },
    h('section', { class: 'card' },
      h('label', { class: 'row' }, h('span', {}, t('home.nickname')), nickname)),
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
    fill(box, h('p', { class: 'error', role: 'alert' }, i18n.errorText(err)),
      h('a', { href: '/', 'data-nav': true }, t('common.home')));
    return { destroy() {} };
  }
}

// ------------------------------------------------------------------ the game page (W2, W4, W9, W11)
function gameScreen(gameId) {
  const record = seats.get(gameId);
  if (!record || !record.secret) {
    fill(main, h('section', { class: 'card' }, h('p', {}, t('game.no_seat')),
      h('a', { href: '/', 'data-nav': true }, t('common.home'))));
    return { destroy() {} };
  }
  const secret = record.secret;
  let view = null;
  let watch = null;
  let module = null;
  let moduleKind = '';
  let destroyed = false;
  let refreshing = null;
  let again = false;
  const chats = [];
  const outboxKey = `archipelago.outbox.${gameId}`;
  const area = h('div', { id: 'game-area' });
  const header = h('div', { id: 'game-header', class: 'bar' });
  const side = h('aside', { id: 'side' });
  const over = h('section', { id: 'game-over', class: 'card', hidden: true });
  const lobby = h('section', { id: 'lobby', class: 'card', hidden: true });
  fill(main, h('div', { class: 'game' }, header, lobby, over, h('div', { class: 'game-body' }, area, side)));

  const api = (rpc, body) => call(rpc, { game_id: gameId, ...body }, secret);

  async function refresh() {
    if (refreshing) { again = true; return refreshing; }
    refreshing = (async () => {
      do {
        again = false;
        try {
          view = await api('Game/GetView', {});
          render();
        } catch (err) {
          if (err.offline) setNet('offline');
          else showError(header, err);
        }
      } while (again && !destroyed);
    })();
    try { await refreshing; } finally { refreshing = null; }
  }

  let pending = null; // coalesce bursts of updates into one GetView
  function refreshSoon() {
    if (pending) return;
    pending = setTimeout(() => { pending = null; if (!destroyed) refresh(); }, 30);
  }

  function onUpdate(u) {
    if (module && module.update) module.update(u); // (a screen may show updates itself, e.g. a log)
    if (u.kind === 'connected' || u.kind === 'disconnected') {
      const p = view && (view.players || []).find((x) => x.seat === u.seat);
      if (p) { p.connected = u.kind === 'connected'; renderSide(); }
      return;
    }
    if (u.kind === 'chat' && u.chat) {
      chats.push({ ...u.chat, round: u.round });
      if (chats.length > 200) chats.shift();
    }
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
      onFatal: (err) => showError(header, err) });
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
        showError(header, err);
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
    },
    clear() { localStorage.removeItem(this.key()); },
  };

  function doneButton(getOrders) {
    const button = h('button', { type: 'button', class: 'primary done', id: 'done' });
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
        showError(button, err);
        return;
      }
      button.disabled = true;
      try {
        const resp = await submit(orders);
        if (resp && !resp.queued && view) view.submitted = true;
        label();
      } catch (err) {
        showError(button, err);
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
    showError, clearError, doneButton, draft, refresh, copy,
  };

  // ---------------------------------------------------------------- rendering
  function nameOf(seat) {
    const p = view && (view.players || []).find((x) => x.seat === seat);
    return p ? p.nickname : `#${seat}`;
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
    const hh = Math.floor(secs / 3600);
    const mm = Math.floor((secs % 3600) / 60);
    const ss = String(secs % 60).padStart(2, '0');
    el.textContent = hh ? `${hh}:${String(mm).padStart(2, '0')}:${ss}` : `${mm}:${ss}`;
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
    fill(header,
      h('span', { class: 'kind' }, t(`game.${view.game}`)),
      h('span', { id: 'round' }, roundText),
      h('span', { id: 'countdown', class: 'countdown', title: t('game.deadline') }),
      status === 'GAME_STATUS_RUNNING' && turnBased()
        ? h('span', { id: 'my-status', class: toAct(view.you) ? 'todo' : 'ok' }, toAct(view.you) ? t('game.your_move') : '')
        : status === 'GAME_STATUS_RUNNING'
          ? h('span', { id: 'my-status', class: view.submitted ? 'ok' : 'todo' },
            view.submitted ? t('game.submitted') : view.expected ? t('game.waiting_for_you') : '')
          : null);
    countdown();
  }

  function renderSide() {
    if (!view) return;
    const game = gameOf(view.game);
    const playersList = h('ul', { id: 'players', class: 'plain players' }, (view.players || []).map((p) => {
      const f = game && game.figures ? game.figures(view, p.seat) : null;
      return h('li', { 'data-seat': p.seat, class: p.seat === view.you ? 'me' : '' },
        h('span', { class: 'dot', style: { background: seatColor(p.seat) } }),
        h('span', { class: 'nick' }, p.nickname),
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
    const linkInput = h('input', { id: 'rejoin-link', readonly: true, value: link, type: 'password' });
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
        p ? p.nickname : t('lobby.free_seat'), p && p.host ? h('span', { class: 'tag' }, t('players.host')) : null));
    }
    let controls;
    if (host) {
      const start = h('button', { type: 'button', class: 'primary', id: 'start', disabled: taken < view.seats }, t('lobby.start'));
      const autopilot = h('button', { type: 'button', id: 'fill' }, t('lobby.fill'));
      const go = async (button, fillWithAutopilot) => {
        clearError(controls);
        button.disabled = true;
        try {
          await api('Lobby/StartGame', { fill_with_autopilot: fillWithAutopilot });
          refreshSoon();
        } catch (err) {
          showError(controls, err);
        } finally {
          button.disabled = fillWithAutopilot ? false : taken < view.seats;
        }
      };
      start.addEventListener('click', () => go(start, false));
      autopilot.addEventListener('click', () => go(autopilot, true));
      controls = h('div', { class: 'row actions' }, start, autopilot);
    } else {
      controls = h('p', { class: 'muted', id: 'wait-host' }, t('lobby.waiting_for_host'));
    }
    fill(lobby,
      h('h2', {}, t('lobby.title')),
      h('div', { class: 'row' }, h('span', {}, t('lobby.code')), h('code', { id: 'game-code', class: 'code' }, view.code), copyCode),
      h('div', { class: 'row' }, h('span', {}, t('lobby.invite')), h('input', { id: 'invite-link', readonly: true, value: invite }), copyInvite),
      h('p', {}, t('lobby.seats', { taken, seats: view.seats })),
      seatList, controls);
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
      h('a', { href: '/', 'data-nav': true, class: 'button' }, t('over.new_game')));
  }

  async function renderModule() {
    if (view.status === 'GAME_STATUS_LOBBY') { area.hidden = true; return; }
    area.hidden = false;
    if (moduleKind !== view.game) {
      moduleKind = view.game;
      const mod = await GAMES[view.game].load();
      if (destroyed) return;
      module = mod.createScreen(area, ctx);
    }
    if (module) module.render(view);
  }

  function render() {
    if (!view || destroyed) return;
    renderHeader();
    renderSide();
    renderQueued();
    if (view.status === 'GAME_STATUS_LOBBY') renderLobby(); else lobby.hidden = true;
    renderOver();
    document.title = `${t(`game.${view.game}`)} · ${view.code}`;
    renderModule().catch((err) => showError(header, { code: 'server/internal', reason: String(err) }));
  }

  const offLang = i18n.onLang(() => { if (module && module.relabel) module.relabel(); render(); });
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
  })();

  return {
    destroy() {
      destroyed = true;
      offLang();
      window.removeEventListener('online', backOnline);
      clearInterval(clock);
      clearTimeout(retryTimer);
      clearTimeout(pending);
      if (watch) watch.stop();
      if (module && module.destroy) module.destroy();
    },
  };
}

// ------------------------------------------------------------------ routing
async function route() {
  if (current) current.destroy();
  current = null;
  setNet('online');
  const path = location.pathname;
  let m;
  if ((m = path.match(/^\/game\/([A-Za-z0-9_-]+)$/))) current = gameScreen(m[1]);
  else if (path === '/rejoin') current = await rejoinScreen();
  else if ((m = path.match(/^\/join\/([A-Za-z0-9]{1,12})$/))) current = homeScreen(m[1].toUpperCase());
  else current = homeScreen();
}

window.addEventListener('popstate', route);
window.addEventListener('offline', () => setNet('offline'));

const picker = document.getElementById('lang');
picker.addEventListener('change', async () => {
  await i18n.setLang(picker.value, { remember: true });
  if (!location.pathname.startsWith('/game/')) route();
});

(async () => {
  await i18n.setLang(i18n.preferredLang());
  picker.value = i18n.lang();
  route();
})();
