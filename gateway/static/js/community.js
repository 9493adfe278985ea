// The community screens (issue 26; community.proto): the home page's "Play now" card, the list of
// public games being played (/watch), the leaderboard (/leaderboard), the player's own profile
// (/profile, and /profile#<secret>: the profile link that moves a profile to another device) and a
// player's public page (/players/<handle>: ratings and history). The spectator screen is
// js/spectate.js, the replay js/replay.js. Talks to the JSON door only.
//
// `env` (from js/app.js): {main, navigate, showError, clearError, copy, seats} — the shell's parts.
import { call, randomId } from './api.js';
import { fill, h } from './dom.js';
import { errorNode } from './errors.js';
import { GAMES } from './games.js';
import * as i18n from './i18n.js';
import { seatColor } from './seats.js';

const { t } = i18n;
const SPEEDS = ['SPEED_FAST', 'SPEED_SLOW'];
const DEFAULT_SEATS = { archipelago: 4 }; // QuickPlayRequest.seats' defaults (the others: the fewest)

// ------------------------------------------------------------------ the profile this browser holds
// {secret, handle}: the secret goes only in the Authorization header and the profile link the
// player copies (as a player secret and its rejoin link).
export const profile = {
  get() {
    try {
      const p = JSON.parse(localStorage.getItem('archipelago.profile') || 'null');
      return p && typeof p.secret === 'string' && p.secret ? p : null;
    } catch { return null; }
  },
  put(secret, handle) { localStorage.setItem('archipelago.profile', JSON.stringify({ secret, handle, saved: Date.now() })); },
  forget() { localStorage.removeItem('archipelago.profile'); },
  secret() { const p = this.get(); return p ? p.secret : ''; },
};

// ------------------------------------------------------------------ words shared by the screens
const locale = () => (i18n.lang() === 'he' ? 'he-IL' : 'en-GB');
const dateTime = (ms) => (Number(ms) ? new Intl.DateTimeFormat(locale(), { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(Number(ms))) : '');
const clockTime = (ms) => new Intl.DateTimeFormat(locale(), { hour: '2-digit', minute: '2-digit' }).format(new Date(Number(ms)));
const num = (x, digits = 1) => new Intl.NumberFormat(locale(), { minimumFractionDigits: digits, maximumFractionDigits: digits })
  .format(Number(x) || 0);
const signed = (x) => `${Number(x) > 0 ? '+' : Number(x) < 0 ? '−' : '±'}${num(Math.abs(Number(x) || 0))}`;
// A number inside a sentence stays left to right, its sign with it, in Hebrew too (Unicode isolates).
const iso = (text) => `\u2066${text}\u2069`;
export const gameName = (kind) => (i18n.has(`game.${kind}`) ? t(`game.${kind}`) : String(kind || ''));
export const speedName = (speed) => t(`community.speed.${SPEEDS.includes(speed) ? speed : 'SPEED_FAST'}`);
// A profile's handle as a link to its public page (a handle may hold any printable character).
const handleLink = (handle, attrs = {}) => h('a', { href: `/players/${encodeURIComponent(handle)}`, 'data-nav': true,
  class: 'handle', dir: 'auto', ...attrs }, handle);
// Text direction isolated (a Hebrew name in an English sentence and the reverse).
const bdi = (text) => h('bdi', {}, text);

function loading(box) { fill(box, h('p', { class: 'muted', role: 'status' }, t('community.loading'))); }

function failed(box, err, retry) {
  fill(box, h('p', { class: 'error', role: 'alert' }, errorNode(err)),
    retry ? h('button', { type: 'button', class: 'small', onclick: retry }, t('community.retry')) : null);
}

// ------------------------------------------------------------------ home: "Play now"
// The card of the home page: game, speed, size, "fill with computer players", the button. The
// nickname is the home page's own field (`nickname()` → the name, or null after showing why not).
export function playNowCard(env, nickname) {
  const kind = h('select', { id: 'quick-game' },
    Object.keys(GAMES).map((k) => h('option', { value: k }, gameName(k))));
  const speed = h('select', { id: 'quick-speed' }, SPEEDS.map((v) => h('option', { value: v })));
  const size = h('select', { id: 'quick-seats' });
  const sizeRow = h('label', { class: 'row' }, h('span', {}, t('community.quick.size')), size);
  const autopilot = h('input', { type: 'checkbox', id: 'quick-autopilot', checked: true });
  // Each game's seat choices (the registry's joinOptions: Arcmage's deck), for the chosen kind.
  const extras = Object.fromEntries(Object.entries(GAMES).filter(([, g]) => g.joinOptions)
    .map(([k, g]) => [k, g.joinOptions(h, t, `quick-${k}-options`)]));
  const extraBox = h('div', { class: 'game-options' }, Object.values(extras).map((x) => x.el));
  const button = h('button', { type: 'button', id: 'play-now', class: 'primary' }, t('community.quick.button'));
  const how = h('p', { class: 'muted', id: 'quick-how' });

  function kindChanged() {
    const game = GAMES[kind.value];
    const [min, max] = game.seats;
    const want = Math.min(Math.max(DEFAULT_SEATS[kind.value] || min, min), max);
    fill(size, Array.from({ length: max - min + 1 }, (_, i) => min + i)
      .map((n) => h('option', { value: n, selected: n === want }, String(n))));
    sizeRow.hidden = min === max;
    for (const [k, x] of Object.entries(extras)) x.el.hidden = k !== kind.value;
    const names = game.speeds || { SPEED_FAST: 'home.fast', SPEED_SLOW: 'home.slow' };
    for (const option of speed.options) option.textContent = t(names[option.value]);
    how.textContent = t('community.quick.how', { n: min === max ? min : Number(size.value) });
  }
  kind.addEventListener('change', kindChanged);
  size.addEventListener('change', () => { how.textContent = t('community.quick.how', { n: Number(size.value) }); });
  kindChanged();

  let requestId = randomId(); // one per attempt until it succeeds: a retry gets the same seat
  for (const el of [kind, speed, size, autopilot]) el.addEventListener('change', () => { requestId = randomId(); });
  button.addEventListener('click', async () => {
    env.clearError(button);
    const held = profile.get();
    const name = nickname(button, Boolean(held)); // (with a profile an empty nickname is its handle)
    if (name === null) return;
    const game = kind.value;
    button.disabled = true;
    try {
      const got = await call('Community/QuickPlay', { game, speed: speed.value, seats: Number(size.value),
        nickname: name, request_id: requestId, allow_autopilot: autopilot.checked,
        ...(extras[game] ? extras[game].body() : {}) }, held ? held.secret : '');
      env.seats.put(got.game_id, { secret: got.secret, seat: got.seat, code: got.code, game: got.game || game,
        nickname: name || (held ? held.handle : ''), quick: { starts: Number(got.starts_unix_ms || 0), opened: Boolean(got.opened) } });
      requestId = randomId();
      env.navigate(`/game/${got.game_id}`);
    } catch (err) {
      if (err && err.code === 'auth/unauthenticated' && held) profileGone();
      env.showError(button, { ...err, kind: 'lobby' });
    } finally {
      button.disabled = false;
    }
  });

  return h('section', { class: 'card', id: 'quick-card' },
    h('h2', {}, t('community.quick.title')),
    how,
    h('label', { class: 'row' }, h('span', {}, t('home.game')), kind),
    h('label', { class: 'row' }, h('span', {}, t('home.speed')), speed),
    sizeRow,
    extraBox,
    h('label', { class: 'row check' }, autopilot, h('span', {}, t('community.quick.autopilot'))),
    button);
}

// The lobby of a quick-play game (js/app.js, renderLobby): how many came, and when computer
// players fill the rest (QuickPlayResponse.starts_unix_ms; 0: it waits for players only).
export function quickLobbyNote(quick, view) {
  const taken = (view.players || []).length;
  const starts = Number(quick.starts || 0);
  const text = starts
    ? t('community.quick.waiting_until', { taken, seats: view.seats, time: clockTime(starts) })
    : t('community.quick.waiting', { taken, seats: view.seats });
  return h('p', { id: 'quick-waiting', class: 'notice', role: 'status' }, text);
}

// A profile secret the server no longer knows (reset on another device): this browser forgets it.
function profileGone() { profile.forget(); }

// ------------------------------------------------------------------ /watch: games being played
export function watchListScreen(env) {
  const kind = h('select', { id: 'watch-game' }, h('option', { value: '' }, t('community.watch.all')),
    Object.keys(GAMES).map((k) => h('option', { value: k }, gameName(k))));
  kind.value = new URLSearchParams(location.search).get('game') || '';
  const refresh = h('button', { type: 'button', class: 'small', id: 'watch-refresh' }, t('community.watch.refresh'));
  const list = h('ul', { id: 'live-games', class: 'plain live-games', 'aria-live': 'polite' });
  fill(env.main, h('section', { class: 'card community' },
    h('h2', {}, t('community.watch.title')),
    h('p', { class: 'muted' }, t('community.watch.intro')),
    h('div', { class: 'row' }, h('label', { class: 'row' }, h('span', {}, t('home.game')), kind), refresh),
    list));
  document.title = t('community.watch.title');
  let destroyed = false;
  let timer = null;
  let first = true;

  async function load() {
    clearTimeout(timer);
    if (first) loading(list);
    try {
      const got = await call('Community/ListLiveGames', { game: kind.value });
      if (destroyed) return;
      first = false;
      const games = got.games || [];
      fill(list, games.length ? games.map(row) : h('li', { class: 'muted', id: 'live-none' }, t('community.watch.none')));
    } catch (err) {
      if (!destroyed) failed(list, err, load);
    }
    if (!destroyed) timer = setTimeout(load, 10000); // the rounds move on: read again now and then
  }

  function row(g) {
    const s = g.summary || {};
    const over = s.status === 'GAME_STATUS_OVER';
    const players = (g.players || []).map((p) => h('span', { class: 'who' },
      h('span', { class: 'dot', 'aria-hidden': 'true', style: { background: seatColor(p.seat) } }),
      bdi(p.autopilot ? t('players.autopilot_name', { n: p.seat }) : p.nickname),
      p.handle && p.handle !== p.nickname ? h('span', { class: 'muted' }, ' (', bdi(p.handle), ')') : null));
    return h('li', { 'data-game': s.game_id, 'data-kind': s.game, class: over ? 'over' : '' },
      h('a', { href: `/watch/${s.game_id}`, 'data-nav': true, class: 'live-game' },
        h('span', { class: 'live-head' }, h('strong', {}, gameName(s.game)), ' · ',
          over ? h('span', { class: 'tag over-tag' }, t('community.watch.finished')) : h('span', { class: 'tag live-tag' }, t('community.watch.live'))),
        h('span', { class: 'live-players' }, players),
        h('span', { class: 'muted live-meta' },
          t('community.watch.started', { time: dateTime(g.started_unix_ms) }), ' · ',
          t('community.watch.spectators', { n: g.spectators || 0 }))));
  }

  kind.addEventListener('change', () => {
    history.replaceState({}, '', kind.value ? `/watch?game=${kind.value}` : '/watch');
    first = true;
    load();
  });
  refresh.addEventListener('click', () => load());
  load();
  return { destroy() { destroyed = true; clearTimeout(timer); } };
}

// ------------------------------------------------------------------ /leaderboard
export function leaderboardScreen(env) {
  const params = new URLSearchParams(location.search);
  const kind = h('select', { id: 'board-game' }, Object.keys(GAMES).map((k) => h('option', { value: k }, gameName(k))));
  const speed = h('select', { id: 'board-speed' }, SPEEDS.map((v) => h('option', { value: v }, speedName(v))));
  kind.value = GAMES[params.get('game')] ? params.get('game') : Object.keys(GAMES)[0];
  speed.value = SPEEDS.includes(params.get('speed')) ? params.get('speed') : 'SPEED_FAST';
  const body = h('div', { id: 'leaderboard-body' });
  const held = profile.get();
  fill(env.main, h('section', { class: 'card community' },
    h('h2', {}, t('community.board.title')),
    h('p', { class: 'muted' }, t('community.board.intro')),
    h('div', { class: 'row selectors' },
      h('label', { class: 'row' }, h('span', {}, t('home.game')), kind),
      h('label', { class: 'row' }, h('span', {}, t('home.speed')), speed)),
    body,
    held ? null : h('p', { class: 'muted', id: 'board-join' }, t('community.board.get_rated'), ' ',
      h('a', { href: '/profile', 'data-nav': true }, t('community.board.make_profile')))));
  document.title = t('community.board.title');
  let destroyed = false;
  let asked = 0;

  async function load() {
    const mine = ++asked;
    loading(body);
    history.replaceState({}, '', `/leaderboard?game=${kind.value}&speed=${speed.value}`);
    try {
      const got = await call('Community/GetLeaderboard', { game: kind.value, speed: speed.value, limit: 100 });
      if (destroyed || mine !== asked) return;
      const entries = got.entries || [];
      if (!entries.length) {
        fill(body, h('p', { class: 'muted', id: 'board-empty' }, t('community.board.empty', { game: gameName(kind.value), speed: speedName(speed.value) })));
        return;
      }
      const me = held ? held.handle.toLowerCase() : '';
      fill(body,
        h('p', { class: 'muted', id: 'board-total' }, t('community.board.total', { n: got.total || entries.length })),
        h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-labelledby': 'board-caption' },
          h('table', { id: 'leaderboard', class: 'ratings' },
            h('caption', { id: 'board-caption', class: 'sr' }, t('community.board.caption', { game: gameName(kind.value), speed: speedName(speed.value) })),
            h('thead', {}, h('tr', {},
              h('th', { scope: 'col' }, t('community.col.rank')),
              h('th', { scope: 'col' }, t('community.col.player')),
              h('th', { scope: 'col', title: t('community.col.rating_help') }, t('community.col.rating')),
              h('th', { scope: 'col', title: t('community.col.mu_help') }, t('community.col.mu')),
              h('th', { scope: 'col', title: t('community.col.sigma_help') }, t('community.col.sigma')),
              h('th', { scope: 'col' }, t('community.col.games')))),
            h('tbody', {}, entries.map((e) => h('tr', { 'data-handle': e.handle, class: e.handle.toLowerCase() === me ? 'me' : '' },
              h('td', { class: 'num' }, String(e.rank)),
              h('td', { class: 'name' }, handleLink(e.handle)),
              h('td', { class: 'num' }, num(e.ordinal)),
              h('td', { class: 'num' }, num(e.mu)),
              h('td', { class: 'num' }, num(e.sigma, 2)),
              h('td', { class: 'num' }, String(e.games || 0))))))),
        h('p', { class: 'muted small' }, t('community.board.how')));
    } catch (err) {
      if (!destroyed && mine === asked) failed(body, err, load);
    }
  }
  kind.addEventListener('change', load);
  speed.addEventListener('change', load);
  load();
  return { destroy() { destroyed = true; } };
}

// A profile's ratings as a table (its own page and the public page).
function ratingsTable(ratings) {
  if (!ratings.length) return h('p', { class: 'muted', id: 'ratings-none' }, t('community.profile.no_ratings'));
  return h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-labelledby': 'ratings-caption' },
    h('table', { id: 'ratings', class: 'ratings' },
      h('caption', { id: 'ratings-caption', class: 'sr' }, t('community.profile.ratings')),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, t('community.col.game_speed')),
        h('th', { scope: 'col', title: t('community.col.rating_help') }, t('community.col.rating')),
        h('th', { scope: 'col', title: t('community.col.mu_help') }, t('community.col.mu')),
        h('th', { scope: 'col', title: t('community.col.sigma_help') }, t('community.col.sigma')),
        h('th', { scope: 'col' }, t('community.col.games')),
        h('th', { scope: 'col' }, t('community.col.rank')))),
      h('tbody', {}, ratings.map((r) => h('tr', { 'data-game': r.game, 'data-speed': r.speed },
        h('td', { class: 'name' }, h('a', { href: `/leaderboard?game=${r.game}&speed=${r.speed}`, 'data-nav': true },
          gameName(r.game)), h('span', { class: 'muted speed' }, speedName(r.speed))),
        h('td', { class: 'num' }, num(r.ordinal)),
        h('td', { class: 'num' }, num(r.mu)),
        h('td', { class: 'num' }, num(r.sigma, 2)),
        h('td', { class: 'num' }, String(r.games || 0)),
        h('td', { class: 'num' }, r.rank ? String(r.rank) : '–'))))));
}

// ------------------------------------------------------------------ /players/<handle>
export function playerScreen(env, handle) {
  const head = h('section', { class: 'card community', id: 'player-card' });
  const hist = h('section', { class: 'card community', id: 'history-card' });
  fill(env.main, head, hist);
  document.title = handle;
  let destroyed = false;
  loading(head);

  (async () => {
    try {
      const p = await call('Community/GetProfile', { handle });
      if (destroyed) return;
      document.title = t('community.player.title', { handle: p.handle });
      fill(head,
        h('h2', { id: 'player-handle' }, bdi(p.handle)),
        h('p', { class: 'muted' }, t('community.player.since', { date: dateTime(p.created_unix_ms), n: p.games || 0 })),
        h('h3', {}, t('community.profile.ratings')),
        ratingsTable(p.ratings || []),
        h('p', { class: 'muted small' }, t('community.board.how')));
    } catch (err) {
      if (destroyed) return;
      if (err && err.code === 'lookup/not_found') {
        fill(head, h('h2', {}, t('community.player.unknown_title')), h('p', { id: 'player-unknown' }, t('community.player.unknown', { handle })),
          h('p', {}, h('a', { href: '/leaderboard', 'data-nav': true }, t('community.nav.leaderboard'))));
        hist.hidden = true;
        return;
      }
      failed(head, err);
    }
  })();
  historyList(env, hist, handle, () => destroyed);
  return { destroy() { destroyed = true; } };
}

// A profile's finished games, newest first, 20 at a time.
function historyList(env, box, handle, gone) {
  const PAGE = 20;
  const list = h('ol', { id: 'history', class: 'plain history' });
  const more = h('button', { type: 'button', class: 'small', id: 'history-more', hidden: true }, t('community.history.more'));
  fill(box, h('h3', {}, t('community.history.title')), list, more);
  let offset = 0;
  async function page() {
    more.disabled = true;
    try {
      const got = await call('Community/ListProfileGames', { handle, limit: PAGE, offset });
      if (gone()) return;
      const games = got.games || [];
      if (!offset && !games.length) fill(list, h('li', { class: 'muted', id: 'history-none' }, t('community.history.none')));
      else list.append(...games.map(played));
      offset += games.length;
      more.hidden = offset >= (got.total || 0) || !games.length;
    } catch (err) {
      if (!gone()) env.showError(more.hidden ? list : more, err);
    } finally {
      more.disabled = false;
    }
  }
  more.addEventListener('click', page);
  page();
}

function placeText(g) {
  if (g.won) return t('community.history.won', { place: g.place, n: g.seats });
  return t('community.history.place', { place: g.place, n: g.seats });
}

function played(g) {
  const r = g.rating || null;
  const change = r && g.rated ? Number(r.after) - Number(r.before) : null;
  return h('li', { 'data-game': g.game_id, class: g.won ? 'won' : '' },
    h('div', { class: 'hist-head' },
      h('strong', {}, gameName(g.game)), ' · ', speedName(g.speed), ' · ',
      h('span', { class: 'muted' }, dateTime(g.ended_unix_ms))),
    h('div', { class: 'hist-line' },
      h('span', { class: `place${g.won ? ' won' : ''}` }, placeText(g)),
      g.nickname ? h('span', { class: 'muted as' }, t('community.history.as'), ' ', bdi(g.nickname)) : null,
      i18n.has(`over.reason.${g.reason}`) && g.reason ? h('span', { class: 'muted' }, t(`over.reason.${g.reason}`)) : null),
    h('div', { class: 'hist-line' },
      change === null ? h('span', { class: 'muted' }, t('community.history.unrated'))
        : h('span', { class: `change ${change >= 0 ? 'up' : 'down'}`, 'data-change': change.toFixed(3) },
          t('community.history.rating', { before: iso(num(r.before)), after: iso(num(r.after)), change: iso(signed(change)) })),
      h('a', { href: `/replay/${g.game_id}`, 'data-nav': true, class: 'button small replay-link' }, t('community.replay.open'))));
}

// ------------------------------------------------------------------ /profile (and /profile#<secret>)
export async function profileScreen(env) {
  const fromLink = decodeURIComponent(location.hash.slice(1));
  if (location.hash) history.replaceState({}, '', '/profile'); // the secret leaves the address bar at once
  const box = h('section', { class: 'card community', id: 'profile-card' });
  const hist = h('section', { class: 'card community', id: 'history-card', hidden: true });
  fill(env.main, box, hist);
  document.title = t('community.profile.title');
  let destroyed = false;
  const screen = { destroy() { destroyed = true; } };

  if (fromLink) {
    loading(box);
    try {
      const p = await call('Community/GetMyProfile', {}, fromLink);
      if (destroyed) return screen;
      profile.put(fromLink, p.handle);
      show(p, h('p', { class: 'notice', id: 'profile-moved', role: 'status' }, t('community.profile.moved', { handle: p.handle })));
    } catch (err) {
      if (destroyed) return screen;
      const bad = err && (err.code === 'auth/unauthenticated' || err.code === 'order/invalid');
      fill(box, h('h2', {}, t(bad ? 'community.profile.bad_link_title' : 'rejoin.failed_title')),
        bad ? h('p', { id: 'profile-bad', class: 'error', role: 'alert' }, t('community.profile.bad_link'))
          : h('p', { class: 'error', role: 'alert' }, errorNode(err)),
        h('p', {}, h('a', { href: '/profile', 'data-nav': true }, t('community.profile.title'))));
    }
    return screen;
  }

  const held = profile.get();
  if (!held) { createForm(); return screen; }
  loading(box);
  try {
    const p = await call('Community/GetMyProfile', {}, held.secret);
    if (destroyed) return screen;
    if (p.handle !== held.handle) profile.put(held.secret, p.handle);
    show(p);
  } catch (err) {
    if (destroyed) return screen;
    if (err && err.code === 'auth/unauthenticated') {
      profileGone();
      createForm(h('p', { class: 'error', id: 'profile-revoked', role: 'alert' }, t('community.profile.revoked')));
    } else {
      failed(box, err, () => env.navigate('/profile'));
    }
  }
  return screen;

  function createForm(note = null) {
    const handle = h('input', { id: 'handle', maxlength: 24, autocomplete: 'nickname', required: true,
      value: localStorage.getItem('archipelago.nickname') || '' });
    const create = h('button', { type: 'button', class: 'primary', id: 'create-profile' }, t('community.profile.create'));
    let requestId = randomId();
    handle.addEventListener('input', () => { requestId = randomId(); });
    create.addEventListener('click', async () => {
      env.clearError(create);
      const name = handle.value.trim();
      if (!name) { env.showError(create, { code: 'order/invalid', field: 'handle', rule: 'A2' }); handle.focus(); return; }
      create.disabled = true;
      try {
        const made = await call('Community/CreateProfile', { handle: name, request_id: requestId });
        profile.put(made.secret, made.profile.handle);
        if (!localStorage.getItem('archipelago.nickname')) localStorage.setItem('archipelago.nickname', made.profile.handle);
        show(made.profile, h('p', { class: 'notice', id: 'profile-made', role: 'status' }, t('community.profile.made')));
      } catch (err) {
        env.showError(create, { ...err, kind: 'profile' });
      } finally {
        create.disabled = false;
      }
    });
    fill(box,
      h('h2', {}, t('community.profile.create_title')),
      note,
      h('p', {}, t('community.profile.why')),
      h('label', { class: 'row' }, h('span', {}, t('community.profile.handle')), handle),
      h('p', { class: 'muted small' }, t('community.profile.handle_help')),
      create);
    handle.focus();
  }

  // The profile: its handle and ratings, its link (hidden until asked for), reset, its history.
  function show(p, note = null) {
    const secret = profile.secret();
    const link = `${location.origin}/profile#${encodeURIComponent(secret)}`;
    const linkInput = h('input', { id: 'profile-link', readonly: true, value: link, type: 'password',
      'aria-label': t('community.profile.link_title') });
    const showButton = h('button', { type: 'button', class: 'small', id: 'show-profile-link' }, t('rejoin.show'));
    showButton.addEventListener('click', () => {
      linkInput.type = linkInput.type === 'password' ? 'text' : 'password';
      showButton.textContent = linkInput.type === 'password' ? t('rejoin.show') : t('rejoin.hide');
    });
    const copyButton = h('button', { type: 'button', class: 'small', id: 'copy-profile-link' }, t('common.copy'));
    copyButton.addEventListener('click', () => env.copy(link, copyButton));
    const reset = h('button', { type: 'button', id: 'reset-secret' }, t('community.profile.reset'));
    const confirmBox = h('div', { id: 'reset-confirm', class: 'notice', role: 'alertdialog', hidden: true,
      'aria-labelledby': 'reset-confirm-text' });
    reset.addEventListener('click', () => {
      let requestId = randomId();
      const yes = h('button', { type: 'button', class: 'primary', id: 'reset-yes' }, t('community.profile.reset_yes'));
      const no = h('button', { type: 'button', id: 'reset-no' }, t('community.profile.reset_no'));
      no.addEventListener('click', () => { confirmBox.hidden = true; reset.hidden = false; reset.focus(); });
      yes.addEventListener('click', async () => {
        env.clearError(yes);
        yes.disabled = true;
        try {
          const got = await call('Community/ResetProfileSecret', { request_id: requestId }, profile.secret());
          requestId = randomId();
          profile.put(got.secret, got.profile.handle);
          show(got.profile, h('p', { class: 'notice', id: 'profile-reset-done', role: 'status' }, t('community.profile.reset_done')));
        } catch (err) {
          env.showError(yes, err);
        } finally {
          yes.disabled = false;
        }
      });
      fill(confirmBox, h('p', { id: 'reset-confirm-text' }, t('community.profile.reset_confirm')), h('div', { class: 'row' }, yes, no));
      confirmBox.hidden = false;
      reset.hidden = true;
      no.focus();
    });
    fill(box,
      note,
      h('h2', {}, t('community.profile.yours'), ' ', h('span', { id: 'profile-handle', dir: 'auto' }, p.handle)),
      h('p', { class: 'muted' }, t('community.player.since', { date: dateTime(p.created_unix_ms), n: p.games || 0 }), ' ',
        h('a', { href: `/players/${encodeURIComponent(p.handle)}`, 'data-nav': true, id: 'public-page' }, t('community.profile.public_page'))),
      h('p', { class: 'muted small' }, t('community.profile.plays_as')),
      h('h3', {}, t('community.profile.ratings')),
      ratingsTable(p.ratings || []),
      h('section', { class: 'rejoin profile-link' },
        h('h3', {}, t('community.profile.link_title')),
        h('p', { class: 'warning' }, t('community.profile.link_warning')),
        h('div', { class: 'row' }, linkInput, showButton, copyButton)),
      h('section', { class: 'profile-reset' },
        h('h3', {}, t('community.profile.reset_title')),
        h('p', { class: 'muted small' }, t('community.profile.reset_help')),
        reset, confirmBox));
    hist.hidden = false;
    historyList(env, hist, p.handle, () => destroyed);
  }
}
