// The replay of a finished game (/replay/<game_id>; issue 26, community.proto GetReplay and
// ExportGame): frame by frame — frame 0 the game as it started, then one per round (Archipelago,
// Salvo) or per action (Arcmage) — from the whole game's view or from one seat's, drawn by the
// game's own screen module read-only (js/spectate.js readOnlyCtx). First / previous / next / last, a
// slider, the seat picker; the keyboard: the buttons and the slider, and ← → Home End anywhere on
// the page outside a field (in Hebrew the arrows point the way the page reads). The game's journal
// downloads as a .jsonl file (one JSON record a line, docs/replay-format.md).
import { call } from './api.js';
import { fill, h } from './dom.js';
import { errorNode } from './errors.js';
import { screenHost } from './games.js';
import * as i18n from './i18n.js';
import { outcomeBox, playersCard, readOnlyCtx, roundText } from './spectate.js';

const { t } = i18n;
const GAME_ID = /^[0-9a-f]{16}$/;

export function replayScreen(env, gameId) {
  if (!GAME_ID.test(gameId)) return env.notFound('game');
  // A private game's replay needs the secret of one of its players (A3): this device's seat, if any.
  const record = env.seats.get(gameId);
  const secret = record && record.secret ? record.secret : '';
  let frame = null; // the ReplayFrame on show
  let want = { frame: 0, seat: -1 };
  let loadingNow = false;
  let destroyed = false;
  const screen = screenHost(() => destroyed); // the game's screen module (js/games.js)
  let sliderTimer = null;

  const title = h('h2', { id: 'replay-title' }, t('community.replay.title'));
  const where = h('p', { id: 'replay-where', class: 'replay-where', 'aria-live': 'polite' });
  const first = h('button', { type: 'button', id: 'replay-first', class: 'small' });
  const prev = h('button', { type: 'button', id: 'replay-prev', class: 'small' });
  const next = h('button', { type: 'button', id: 'replay-next', class: 'small primary' });
  const last = h('button', { type: 'button', id: 'replay-last', class: 'small' });
  const slider = h('input', { type: 'range', id: 'replay-slider', min: 0, max: 0, step: 1, value: 0 });
  const seatPick = h('select', { id: 'replay-seat' });
  const seatLabel = h('label', { class: 'row replay-seat' }, h('span', {}), seatPick);
  const download = h('button', { type: 'button', id: 'replay-download', class: 'small' });
  const help = h('p', { class: 'muted small', id: 'replay-help' });
  const controls = h('div', { class: 'replay-controls', role: 'group', 'aria-labelledby': 'replay-title' },
    h('div', { class: 'replay-buttons' }, first, prev, next, last), slider);
  const eventsCard = h('section', { class: 'card', id: 'replay-events-card', hidden: true });
  const overSlot = h('div', { id: 'over-slot' });
  const area = h('div', { id: 'game-area' });
  const side = h('aside', { id: 'side' });
  const head = h('section', { class: 'card replay-head', id: 'replay-head' }, title, where, controls,
    h('div', { class: 'row replay-tools' }, seatLabel, download), help);
  fill(env.main, h('div', { class: 'game replay' }, head,
    h('div', { class: 'game-body' }, h('div', { class: 'game-main' }, eventsCard, overSlot, area), side)));

  const ctx = readOnlyCtx({ gameId, env, getView: () => (frame ? frame.view : null) });

  function labels() {
    const rtl = i18n.dir() === 'rtl';
    first.textContent = `${rtl ? '⏭' : '⏮'} ${t('community.replay.first')}`;
    prev.textContent = `${rtl ? '▶' : '◀'} ${t('community.replay.prev')}`;
    next.textContent = `${t('community.replay.next')} ${rtl ? '◀' : '▶'}`;
    last.textContent = `${t('community.replay.last')} ${rtl ? '⏮' : '⏭'}`;
    slider.setAttribute('aria-label', t('community.replay.slider'));
    seatLabel.firstChild.textContent = t('community.replay.view');
    download.textContent = t('community.replay.download');
    help.textContent = t('community.replay.keys');
  }
  labels();

  async function go(to, seat = want.seat) {
    const max = frame ? Number(frame.frames) : Infinity;
    want = { frame: Math.max(0, Math.min(Number(to) || 0, max)), seat };
    if (loadingNow) return; // the frame asked for last is loaded when this one is in
    loadingNow = true;
    try {
      while (!destroyed && (!frame || Number(frame.frame) !== want.frame || Number(frame.seat) !== want.seat)) {
        const asked = { ...want };
        const got = await call('Community/GetReplay', { game_id: gameId, frame: asked.frame, seat: asked.seat }, secret);
        if (destroyed) return;
        frame = got;
        render();
        if (Number(got.frame) !== asked.frame || Number(got.seat) !== asked.seat) break; // (the server's own bounds)
      }
    } catch (err) {
      if (!destroyed) failed(err);
    } finally {
      loadingNow = false;
    }
  }

  function failed(err) {
    if (frame) { env.showError(controls, err); return; }
    const code = err && err.code;
    const key = code === 'game/not_over' ? 'not_over' : code === 'lookup/not_found' ? 'not_found'
      : code === 'auth/permission_denied' ? 'private' : '';
    fill(env.main, h('section', { class: 'card', id: 'replay-unavailable', 'data-code': code || '' },
      h('h2', {}, t('community.replay.title')),
      key ? h('p', {}, t(`community.replay.${key}`)) : h('p', { class: 'error', role: 'alert' }, errorNode(err)),
      h('p', { class: 'row' },
        key === 'not_over' ? h('a', { href: `/watch/${gameId}`, 'data-nav': true, class: 'button' }, t('community.replay.watch_live')) : null,
        h('a', { href: '/', 'data-nav': true }, t('common.home')))));
  }

  function seatOptions() {
    const players = (frame.view && frame.view.players) || [];
    const options = [[-1, t('community.replay.whole')],
      ...players.map((p) => [p.seat, t('community.replay.seat', { n: p.seat + 1, name: env.playerName(p) })])];
    const sig = JSON.stringify([i18n.lang(), options]);
    if (seatPick.dataset.sig !== sig) {
      seatPick.dataset.sig = sig;
      fill(seatPick, options.map(([v, label]) => h('option', { value: v }, label)));
    }
    seatPick.value = String(frame.seat);
  }

  function eventLines(view) {
    const kind = view.game;
    const events = ((view[kind] || {}).events) || [];
    if (!events.length || (screen.current && screen.current.showsEvents)) return null;
    const say = (e) => (screen.call('describeEvent', e) || '') || t('community.replay.event', { kind: e.kind || '?' });
    return events.map((e) => h('li', { 'data-kind': e.kind || '' }, say(e)));
  }

  async function render() {
    if (!frame || destroyed) return;
    const view = frame.view || {};
    const frames = Number(frame.frames);
    const n = Number(frame.frame);
    title.textContent = t('community.replay.title_game', { game: t(`game.${frame.game || view.game}`) });
    const turnWord = (frame.game || view.game) === 'arcmage' ? 'turn' : 'round';
    where.dataset.frame = String(n);
    where.dataset.frames = String(frames);
    where.dataset.round = String(frame.round);
    fill(where,
      h('strong', { id: 'replay-round' }, n === 0 ? t('community.replay.start') : t(`community.replay.${turnWord}`, { n: frame.round })),
      ' · ',
      h('span', { id: 'replay-frame' }, t('community.replay.frame', { n, total: frames })));
    slider.max = String(frames);
    slider.value = String(n);
    slider.setAttribute('aria-valuetext', where.textContent);
    first.disabled = n <= 0;
    prev.disabled = n <= 0;
    next.disabled = n >= frames;
    last.disabled = n >= frames;
    seatOptions();
    fill(side, playersCard({ ...view, status: n >= frames ? 'GAME_STATUS_OVER' : view.status }, env));
    fill(overSlot, n >= frames ? outcomeBox(view, ctx.nameOf) : null);
    document.title = `${t('community.replay.title')} · ${t(`game.${view.game}`)}`;
    await screen.show(view, area, ctx);
    if (destroyed) return;
    const lines = eventLines(view);
    eventsCard.hidden = !lines;
    if (lines) fill(eventsCard, h('h3', {}, t('community.replay.events')), h('ul', { id: 'replay-events', class: 'plain' }, lines));
  }

  first.addEventListener('click', () => go(0));
  prev.addEventListener('click', () => go(Number(frame ? frame.frame : 0) - 1));
  next.addEventListener('click', () => go(Number(frame ? frame.frame : 0) + 1));
  last.addEventListener('click', () => go(frame ? Number(frame.frames) : 0));
  slider.addEventListener('input', () => { // (dragging: the frame under the thumb once it rests a moment)
    clearTimeout(sliderTimer);
    sliderTimer = setTimeout(() => go(Number(slider.value)), 120);
  });
  seatPick.addEventListener('change', () => go(frame ? Number(frame.frame) : 0, Number(seatPick.value)));
  download.addEventListener('click', async () => {
    env.clearError(download);
    download.disabled = true;
    try {
      const got = await call('Community/ExportGame', { game_id: gameId }, secret);
      const blob = new Blob([(got.records || []).map((r) => `${r}\n`).join('')], { type: 'application/x-ndjson' });
      const url = URL.createObjectURL(blob);
      const a = h('a', { href: url, download: `${frame ? frame.game : 'game'}-${gameId}.jsonl`, hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
    } catch (err) {
      env.showError(download, err);
    } finally {
      download.disabled = false;
    }
  });
  const onKey = (ev) => {
    if (!frame || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const tag = ev.target && ev.target.tagName;
    if (['INPUT', 'SELECT', 'TEXTAREA'].includes(tag) || (ev.target && ev.target.isContentEditable)) return;
    const rtl = i18n.dir() === 'rtl';
    const forward = rtl ? 'ArrowLeft' : 'ArrowRight';
    const back = rtl ? 'ArrowRight' : 'ArrowLeft';
    const n = Number(frame.frame);
    let to = null;
    if (ev.key === forward) to = n + 1;
    else if (ev.key === back) to = n - 1;
    else if (ev.key === 'Home') to = 0;
    else if (ev.key === 'End') to = Number(frame.frames);
    if (to === null) return;
    if (ev.target && ev.target.closest && ev.target.closest('#game-area')) return; // (a board's own keys)
    ev.preventDefault();
    go(to);
  };
  document.addEventListener('keydown', onKey);
  const offLang = i18n.onLang(() => { labels(); screen.call('relabel'); render(); });
  go(0, -1);

  return {
    destroy() {
      destroyed = true;
      offLang();
      clearTimeout(sliderTimer);
      document.removeEventListener('keydown', onKey);
      screen.destroy();
    },
  };
}
