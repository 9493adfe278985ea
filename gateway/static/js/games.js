// The registry of game modules: everything the shell (js/app.js) knows of a game kind. The shell has
// no branch on a kind; a new game is one entry here plus its screen module. An entry:
//   load()                 → the screen module, loaded on first use; it exports createScreen(el, ctx)
//                            → {render(view), update?(u), relabel?(), destroy?()}
//   seats: [min, max]      the numbers of players the home page offers (one value: no choice)
//   createOptions?(h, t)   → {el, body()}: extra fields of the "Open a game" card (el: a block the
//                            shell hides while another kind is chosen); body() is merged
//                            into CreateGameRequest (e.g. {arcmage: {decks: [...]}})
//   joinOptions?(h, t, id?) → {el, body()}: extra fields of the "Join" card, merged into
//                            JoinGameRequest when the joined game is of this kind (or unknown); the
//                            "Play now" card (js/community.js) uses them too, for QuickPlayRequest
//                            (`id`: its field's own element id)
//   figures?(view, seat)   → [i18n key, params] | null: a short line beside a player in the side bar
//   speeds?: {SPEED_FAST, SPEED_SLOW} → i18n keys of the speed choices (default: home.fast / home.slow)
export const GAMES = {
  archipelago: {
    load: () => import('./archipelago.js'),
    seats: [2, 8],
    figures(view, seat) {
      const f = ((view.archipelago && view.archipelago.seats) || []).find((x) => x.seat === seat);
      return f ? ['players.figures', { score: f.score, total: f.resource_total }] : null;
    },
  },
  salvo: {
    load: () => import('./salvo.js'),
    seats: [2, 2],
  },
  arcmage: {
    load: () => import('./arcmage.js'),
    seats: [2, 4],
    speeds: { SPEED_FAST: 'arcmage.home.fast', SPEED_SLOW: 'arcmage.home.slow' }, // M25
    createOptions(h, t) {
      const deck = deckSelect(h, t, 'arcmage-deck', false);
      return {
        el: h('div', { class: 'game-option' }, h('label', { class: 'row' }, h('span', {}, t('arcmage.home.deck')), deck)),
        body: () => ({ arcmage: { decks: [{ built_in: deck.value }] } }),
      };
    },
    joinOptions(h, t, id = 'arcmage-join-deck') {
      const deck = deckSelect(h, t, id, true);
      return {
        el: h('div', { class: 'game-option' }, h('label', { class: 'row' }, h('span', {}, t('arcmage.home.join_deck')), deck)),
        body: () => (deck.value ? { arcmage: { deck: { built_in: deck.value } } } : {}),
      };
    },
  },
};

// The two built-in Arcmage decks (M2), by their names as the server knows them.
export const ARCMAGE_DECKS = ['Brothers in Arms', 'Gaian love for life'];

function deckSelect(h, t, id, withDefault) {
  return h('select', { id },
    withDefault ? h('option', { value: '' }, t('arcmage.home.deck_default')) : null,
    ARCMAGE_DECKS.map((name) => h('option', { value: name }, t(`arcmage.deck.${name}`))));
}

export const gameOf = (kind) => GAMES[kind] || null;

// The screen of a game on a page (the game page, a spectator's, a replay's): its kind's screen
// module in `area`, loaded when a view of that kind first comes (load() is awaited: `gone()` says
// whether the page was left meanwhile) and rendered with every view after; a lobby has none (`area`
// hidden). call(name, ...args): the module's optional hook `name` (update, relabel, describeField, …)
// if it has one, else undefined.
export function screenHost(gone) {
  let module = null;
  let kind = '';
  return {
    get current() { return module; },
    async show(view, area, ctx) {
      area.hidden = view.status === 'GAME_STATUS_LOBBY'; // (a lobby has no board yet)
      if (area.hidden) return;
      if (kind !== view.game && GAMES[view.game]) {
        kind = view.game;
        const mod = await GAMES[view.game].load();
        if (gone()) return;
        module = mod.createScreen(area, ctx);
      }
      if (module) module.render(view);
    },
    call(name, ...args) {
      return module && typeof module[name] === 'function' ? module[name](...args) : undefined;
    },
    destroy() {
      if (module && module.destroy) module.destroy();
      module = null;
    },
  };
}

// A game page's view kept fresh: load() fetches and draws it (catching its own errors). now() runs
// it — called while it runs, it runs once more after (never two at once); soon() runs it 30 ms later,
// a burst of updates making one fetch; cancel() drops a soon() not yet run. gone(): the page was left.
export function viewLoader(load, gone) {
  let running = null;
  let again = false;
  let pending = null;
  async function now() {
    if (running) { again = true; return running; }
    running = (async () => {
      do {
        again = false;
        await load();
      } while (again && !gone());
    })();
    try { await running; } finally { running = null; }
  }
  function soon() {
    if (pending) return;
    pending = setTimeout(() => { pending = null; if (!gone()) now(); }, 30);
  }
  function cancel() { clearTimeout(pending); pending = null; }
  return { now, soon, cancel };
}

// A presence update (a seat connected or left) applied to the view's players; false for any other.
export function applyPresence(view, u) {
  if (u.kind !== 'connected' && u.kind !== 'disconnected') return false;
  const p = view && (view.players || []).find((x) => x.seat === u.seat);
  if (p) p.connected = u.kind === 'connected';
  return true;
}

// The time left on a clock: "m:ss", or "h:mm:ss" from an hour.
export function clockText(secs) {
  const hh = Math.floor(secs / 3600);
  const mm = Math.floor((secs % 3600) / 60);
  const ss = String(secs % 60).padStart(2, '0');
  return hh ? `${hh}:${String(mm).padStart(2, '0')}:${ss}` : `${mm}:${ss}`;
}
