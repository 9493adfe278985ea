// The spectator screen (/watch/<game_id>; issue 26, community.proto GetSpectatorView and Spectate):
// a public game as every player knows it, drawn by the game's own screen module (js/games.js) in its
// read-only form (`ctx.readOnly`: no order forms, no own-units panels, no agent panel), a banner
// saying the page only watches, the players with their public figures, the chat to everyone, and at
// the end the outcome with a Replay button. `readOnlyCtx` is the screen modules' context for a page
// that cannot play (this one and the replay, js/replay.js).
import { call, SPECTATE, Watch } from './api.js';
import { fill, h, s } from './dom.js';
import { errorNode } from './errors.js';
import { applyPresence, clockText, gameOf, screenHost, viewLoader } from './games.js';
import * as i18n from './i18n.js';
import { seatColor } from './seats.js';

const { t } = i18n;
const GAME_ID = /^[0-9a-f]{16}$/;
const refused = () => Promise.reject(Object.assign(new Error('read only'), { code: 'auth/permission_denied' }));

// The context a game screen module gets on a page that only shows a game (see js/games.js and the
// game page's own ctx in js/app.js): the same names, nothing that acts.
export function readOnlyCtx({ gameId, env, getView, chats = () => [], history = () => Promise.resolve([]) }) {
  const nameOf = (seat) => {
    const v = getView();
    const p = v && (v.players || []).find((x) => x.seat === seat);
    return p ? env.playerName(p) : `#${Number(seat) + 1}`;
  };
  const button = () => {
    const b = h('button', { type: 'button', class: 'primary done', hidden: true });
    b.refreshLabel = () => { b.hidden = true; };
    return b;
  };
  return {
    gameId, t, h, s, seatColor, readOnly: true,
    get view() { return getView(); },
    get chats() { return chats(); },
    lang: () => i18n.lang(),
    nameOf,
    submit: refused, act: refused, setStanding: refused, call: refused,
    history,
    showError: env.showError, clearError: env.clearError, keepErrors: env.keepErrors, copy: env.copy,
    doneButton: button,
    draft: { key: () => '', load: () => null, save() {}, clear() {} },
    refresh: () => Promise.resolve(),
    setChanged() {},
    renderNotices() {},
  };
}

// A game's outcome in words: headline, reason, scores by seat (the game page's "Game over" box,
// without "you").
export function outcomeBox(view, nameOf, extra = null) {
  const outcome = (view[view.game] || {}).outcome;
  if (view.status !== 'GAME_STATUS_OVER' || !outcome) return null;
  const winners = outcome.winners || [];
  const headline = outcome.draw ? t('over.draw')
    : winners.length ? t('over.winner', { names: winners.map(nameOf).join(', ') }) : t('over.no_winner');
  const scores = outcome.scores || [];
  return h('section', { id: 'game-over', class: 'card' },
    h('h2', {}, t('over.title')),
    h('p', { id: 'winner', class: 'headline' }, headline),
    outcome.reason && i18n.has(`over.reason.${outcome.reason}`) ? h('p', { class: 'muted' }, t(`over.reason.${outcome.reason}`)) : null,
    scores.length ? h('table', { id: 'final-scores' },
      h('thead', {}, h('tr', {}, h('th', {}, t('over.player')), h('th', {}, t('over.score')))),
      h('tbody', {}, scores.map((score, seat) => h('tr', { class: winners.includes(seat) ? 'winner' : '' },
        h('td', {}, h('span', { class: 'dot', style: { background: seatColor(seat) } }), nameOf(seat)),
        h('td', {}, String(score)))))) : null,
    extra);
}

// The players as every spectator sees them: colour, name, handle, connected, done / to act, figures.
export function playersCard(view, env) {
  const game = gameOf(view.game);
  const turnBased = Boolean(view.step && ['turn', 'window'].includes(view.step.kind));
  const running = view.status === 'GAME_STATUS_RUNNING';
  return h('section', { class: 'card', id: 'players-card' }, h('h3', {}, t('players.title')),
    h('ul', { id: 'players', class: 'plain players' }, (view.players || []).map((p) => {
      const f = game && game.figures ? game.figures(view, p.seat) : null;
      const acting = view.step && (view.step.players || []).includes(p.seat);
      return h('li', { 'data-seat': p.seat },
        h('span', { class: 'dot', style: { background: seatColor(p.seat) } }),
        h('span', { class: 'nick' }, env.playerName(p)),
        p.handle ? h('a', { href: `/players/${encodeURIComponent(p.handle)}`, 'data-nav': true, class: 'tag handle', dir: 'auto',
          title: t('community.player.page') }, p.handle) : null,
        p.autopilot ? h('span', { class: 'tag' }, t('players.autopilot')) : null,
        running ? h('span', { class: `conn ${p.connected ? 'on' : 'off'}` }, p.connected ? t('players.connected') : t('players.disconnected')) : null,
        running && turnBased ? (acting ? h('span', { class: 'sub on' }, t('players.to_act')) : null)
          : running ? h('span', { class: `sub ${p.submitted ? 'on' : 'off'}` }, p.submitted ? t('players.submitted') : t('players.thinking')) : null,
        f ? h('span', { class: 'figures' }, t(f[0], f[1])) : null);
    })));
}

export function roundText(view) {
  const turnBased = view.game === 'arcmage' || Boolean(view.step && ['turn', 'window'].includes(view.step.kind));
  if (view.status === 'GAME_STATUS_LOBBY') return t('game.in_lobby');
  if (turnBased) return view.round === 0 ? t('game.turn0') : t('game.turn', { n: view.round });
  return view.round === 0 ? t('game.round0') : t('game.round', { n: view.round });
}

// ------------------------------------------------------------------ /watch/<game_id>
export function spectateScreen(env, gameId) {
  if (!GAME_ID.test(gameId)) return env.notFound('game');
  let view = null;
  let watch = null;
  let destroyed = false;
  const screen = screenHost(() => destroyed); // the game's screen module (js/games.js)
  let chats = [];
  let chatsRead = false;

  const headLine = h('div', { class: 'head-line' });
  const header = h('div', { id: 'game-header', class: 'bar status-strip spectating' }, headLine);
  const banner = h('p', { id: 'spectating', class: 'notice spectator-banner', role: 'note' });
  const lobbyBox = h('section', { id: 'spectate-lobby', class: 'card', hidden: true });
  const overBox = h('div', { id: 'over-slot' });
  const area = h('div', { id: 'game-area' });
  const side = h('aside', { id: 'side' });
  const chatCard = h('section', { class: 'card spectate-chat', id: 'spectate-chat' });
  fill(env.main, h('div', { class: 'game spectate' }, header, banner,
    h('div', { class: 'game-body' }, h('div', { class: 'game-main' }, lobbyBox, overBox, area), side)));

  // The spectator's earlier updates after `afterSeq` up to `untilSeq`, on a stream of its own.
  const history = (afterSeq, untilSeq) => new Promise((resolve) => {
    const got = [];
    let w = null;
    const finish = (list) => { clearTimeout(timer); if (w) w.stop(); resolve(list); };
    const timer = setTimeout(() => finish(got), 10000);
    w = new Watch({ gameId, afterSeq, path: SPECTATE,
      onUpdate: (u) => { if (Number(u.seq) > 0) got.push(u); if (Number(u.seq) >= untilSeq) finish(got); },
      onState: (state) => { if (state === 'ended') finish(got); },
      onResync: () => finish([]),
      onFatal: () => finish([]) });
    if (Number(afterSeq) >= Number(untilSeq)) finish(got); else w.start();
  });
  const ctx = readOnlyCtx({ gameId, env, getView: () => view, chats: () => chats, history });
  const nameOf = ctx.nameOf;

  const loader = viewLoader(async () => {
    try {
      view = await call('Community/GetSpectatorView', { game_id: gameId });
      render();
    } catch (err) {
      if (destroyed) return;
      if (err && err.code === 'lookup/not_found') {
        fill(env.main, h('section', { class: 'card', id: 'not-found', 'data-kind': 'watch' },
          h('h2', {}, t('community.spectate.not_found_title')), h('p', {}, t('community.spectate.not_found')),
          h('p', {}, h('a', { href: '/watch', 'data-nav': true, class: 'button' }, t('community.watch.title')))));
        destroyed = true;
        if (watch) watch.stop();
        return;
      }
      if (err && err.offline) env.setNet('offline'); else env.showError(header, err);
    }
  }, () => destroyed);
  const refresh = loader.now;
  const refreshSoon = loader.soon;

  const addChat = (u) => {
    if (!u.chat || (u.chat.to !== undefined && u.chat.to !== null)) return; // (a spectator gets only the chat to all)
    chats.push({ ...u.chat, round: u.round, seq: Number(u.seq || 0) });
    if (chats.length > 200) chats.shift();
  };

  function onUpdate(u) {
    screen.call('update', u);
    if (applyPresence(view, u)) { renderSide(); return; }
    if (u.kind === 'chat') { addChat(u); renderChat(); }
    refreshSoon();
  }

  function startWatch(afterSeq) {
    if (watch || destroyed) return;
    watch = new Watch({ gameId, afterSeq, path: SPECTATE, onUpdate,
      onState: (state) => {
        env.setNet(state === 'ended' ? 'online' : state);
        if (state === 'online' || state === 'ended') refreshSoon();
      },
      onResync: () => refreshSoon(),
      onFatal: (err) => env.showError(header, err) });
    watch.start();
  }

  // The chat so far (the updates before this page came), read once.
  async function readChats() {
    if (chatsRead || !view || !Number(view.seq)) return;
    chatsRead = true;
    const earlier = [];
    for (const u of await history(0, Number(view.seq))) if (u.kind === 'chat') earlier.push(u);
    if (destroyed) return;
    const live = chats;
    chats = [];
    for (const u of earlier) addChat(u);
    chats.push(...live.filter((c) => !chats.some((e) => e.seq && e.seq === c.seq)));
    renderChat();
    if (view) screen.call('render', view);
  }

  // ---------------------------------------------------------------- rendering
  let clock = null;
  function countdown() {
    const el = document.getElementById('countdown');
    if (!el || !view) return;
    const until = Number(view.deadline_unix_ms || (view.step && view.step.deadline_unix_ms) || 0);
    if (!until || view.status !== 'GAME_STATUS_RUNNING') { el.textContent = ''; return; }
    const secs = Math.max(0, Math.ceil((until - Date.now()) / 1000));
    el.textContent = clockText(secs);
  }

  function renderHeader() {
    fill(headLine,
      h('span', { class: 'kind' }, t(`game.${view.game}`)),
      h('span', { id: 'round' }, roundText(view)),
      h('span', { id: 'countdown', class: 'countdown', title: t('game.deadline') }),
      h('span', { class: 'tag watching-tag' }, t('community.spectate.tag')));
    countdown();
    if (view.status === 'GAME_STATUS_OVER') fill(banner, h('strong', {}, t('community.spectate.banner_over')));
    else fill(banner, h('strong', {}, t('community.spectate.banner')), ' ', h('span', {}, t('community.spectate.banner_hint')));
  }

  function renderSide() {
    if (!view) return;
    fill(side, playersCard(view, env), chatCard);
    renderChat();
  }

  function renderChat() {
    const list = chats.map((c) => h('li', {},
      h('span', { class: 'dot', style: { background: seatColor(c.seat) } }),
      h('strong', { class: 'who' }, c.nickname || nameOf(c.seat)), ' ',
      h('span', { class: 'text', dir: 'auto' }, c.text)));
    fill(chatCard, h('h3', {}, t('community.spectate.chat')),
      h('ul', { id: 'spectate-chat-log', class: 'plain spectate-chat-log', 'aria-live': 'polite' },
        list.length ? list : h('li', { class: 'muted' }, t('community.spectate.chat_empty'))),
      h('p', { class: 'muted small' }, t('community.spectate.chat_note')));
  }

  function renderLobby() {
    lobbyBox.hidden = view.status !== 'GAME_STATUS_LOBBY';
    if (lobbyBox.hidden) return;
    fill(lobbyBox, h('h2', {}, t('lobby.title')),
      h('p', {}, t('lobby.seats', { taken: (view.players || []).length, seats: view.seats })));
  }

  function renderOver() {
    const replay = h('a', { href: `/replay/${gameId}`, 'data-nav': true, class: 'button', id: 'replay-button' }, t('community.replay.open'));
    fill(overBox, outcomeBox(view, nameOf, h('div', { class: 'row actions' }, replay,
      h('a', { href: '/watch', 'data-nav': true }, t('community.spectate.more')))));
  }

  function render() {
    if (!view || destroyed) return;
    renderHeader();
    renderSide();
    renderLobby();
    renderOver();
    document.title = `${t('community.spectate.tag')} · ${t(`game.${view.game}`)}`;
    screen.show(view, area, ctx).catch((err) => env.showError(header, { code: 'server/internal', reason: String(err) }));
  }

  const offLang = i18n.onLang(() => { screen.call('relabel'); render(); });
  (async () => {
    await refresh();
    if (destroyed) return;
    startWatch(view ? view.seq : 0);
    clock = setInterval(countdown, 250);
    readChats().catch(() => {});
  })();

  return {
    destroy() {
      destroyed = true;
      offLang();
      clearInterval(clock);
      loader.cancel();
      if (watch) watch.stop();
      screen.destroy();
    },
  };
}
