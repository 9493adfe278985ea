// The Arcmage table (issue 21; shared/spec/arcmage.md, rules M1–M58; docs/rules/arcmage.md): every
// seat's kingdom (cities with residents and defense), army, resource piles, graveyard and unbuilt
// cities; my hand; the stack with whose priority and the window's countdown; the combat; the pending
// decision; a log of what happened and what the autopilot did for me.
//
// The page computes no rule: what may be done now is the server's list (ArcmageView.legal, one
// ArcmageAction each). A card with a legal action is highlighted; clicking it offers its actions;
// an action's targets, the attackers and their city, the interceptors and the attackers they block
// are chosen by clicking cards on the table, always among the listed actions. Card faces are drawn
// from ArcmageView.faces; Arcmage and its card texts are CC BY-SA 4.0 (ArcmageView.attribution is
// shown under the table).
//
// Read-only (`ctx.readOnly`: a spectator, a replay): every seat's side by its player's name (a
// spectator's view, `you` -1, has no hand and no side of its own), no legal action, no action bar,
// no autopilot notice, no agent panel, nothing kept in this browser's storage.
import { agentPanel } from './agent.js';
import { fill } from './dom.js';
import { clockText } from './games.js';
import { has } from './i18n.js';

const FACTIONS = ['Gaian', 'Dark Legion', 'Red Banner', 'House of Nobles', 'The Empire'];
const slug = (text) => String(text || '').toLowerCase().replace(/[^a-z]+/g, '-');
// Events that are a seat's own choice: made by the autopilot when this page did not send them.
const CHOICES = new Set(['passed', 'draw_option', 'resource', 'devoted', 'ability', 'moved', 'salvaged', 'attack',
  'cast', 'built', 'discarded', 'intercept']);
const LOG_KEEP = 80;

export function createScreen(el, ctx) {
  const { t, h } = ctx;
  let view = null; // the latest GetViewResponse
  let av = null; // its arcmage member
  let sel = null; // what the player is choosing: {mode: 'card'|'target'|'attack'|'block', …}
  let split = null; // a damage split being entered: {key, amounts}
  let busy = false; // an action is on its way
  let first = true;
  let seen = 0; // the highest update seq handled
  const store = `archipelago.screen.${ctx.gameId}.`;
  const readOnly = Boolean(ctx.readOnly);
  const load = (k, d) => { if (readOnly) return d; try { return JSON.parse(localStorage.getItem(store + k)) ?? d; } catch { return d; } };
  const save = (k, v) => { if (readOnly) return; try { localStorage.setItem(store + k, JSON.stringify(v)); } catch { /* full: not kept */ } };
  const mine = new Set(load('mine', [])); // versions my own actions produced (from this device)
  let log = load('log', []); // [{seq, version, kind, data, names, auto, away}]
  let ack = load('ack', 0); // autopilot entries up to this seq were acknowledged
  let playedSeen = false; // the autopilot_played notice was dismissed (it stays true until the player acts)
  let pendingClass = []; // log entries not yet known to be mine or the autopilot's
  let myDeadline = 0; // the deadline of the last step in which I was asked to act (Unix ms)
  const logged = new Set(log.map((e) => e.seq)); // the update seqs already handled
  const floor = Number(load('seq', 0)); // … and every one up to this, in an earlier visit

  // ---------------------------------------------------------------- the elements (built once)
  const status = h('div', { id: 'arc-status', class: 'card arc-status', role: 'status' });
  const autopilotBox = h('section', { id: 'arc-autopilot', class: 'notice arc-autopilot', hidden: true });
  const table = h('div', { id: 'arc-table', class: 'arc-table' });
  const handBox = h('section', { id: 'arc-hand-box', class: 'card arc-hand-box' });
  const prompt = h('p', { id: 'arc-prompt', class: 'arc-prompt', 'aria-live': 'polite' });
  const choices = h('div', { id: 'arc-choices', class: 'arc-choices' });
  const passButton = h('button', { type: 'button', id: 'arc-pass', class: 'primary', onclick: () => send({ pass: {} }) });
  const bar = h('section', { id: 'arc-bar', class: 'card arc-bar' }, prompt, choices, h('div', { class: 'arc-pass-row' }, passButton));
  const detail = h('section', { id: 'arc-detail', class: 'card arc-detail', hidden: true });
  const logBox = h('section', { id: 'arc-log-box', class: 'card arc-log-box' });
  const attribution = h('p', { id: 'arc-attribution', class: 'arc-attribution' });
  const agent = readOnly ? null : agentPanel(ctx);
  if (agent) agent.el.classList.add('card', 'arc-agent');
  const main = h('div', { class: 'arc-main' }, status, autopilotBox, table, handBox, bar);
  const aside = h('div', { class: 'arc-aside' }, detail, logBox, attribution);
  const root = h('div', { class: 'arc' }, main, aside);
  fill(el, root);
  // The action bar: under the hand on a phone (sticking to the bottom of the screen), at the top of
  // the side column on a wide screen (always in sight next to the table).
  const wide = window.matchMedia('(min-width: 900px)');
  const placeBar = () => {
    if (wide.matches) aside.prepend(bar); else main.append(bar);
    if (agent) { if (wide.matches) main.append(agent.el); else aside.append(agent.el); }
  };
  if (readOnly) { bar.hidden = true; autopilotBox.hidden = true; }
  placeBar();
  wide.addEventListener('change', placeBar);

  // ---------------------------------------------------------------- reading the view
  const me = () => av.you;
  const card = (id) => (av.cards || {})[id];
  const face = (id) => { const c = card(id); return c ? (av.faces || {})[c.key] || {} : {}; };
  const cardName = (id) => (card(id) ? card(id).name : t('arcmage.a_card'));
  const who = (seat) => (seat === me() ? t('arcmage.you') : ctx.nameOf(seat));
  const place = (to) => (to === 'army' ? t('arcmage.army_place') : cardName(to));
  const factionName = (f) => (f ? tOr(`arcmage.faction.${f}`, {}, () => f) : '');
  const legal = () => (readOnly ? [] : av.legal || []);
  const pending = () => av.pending || {};
  const myDecision = () => pending().op === 'decide' && pending().seat === me();
  const step = () => view.step || av.step || {};
  const acting = () => step().players || [];
  const isCard = (v) => typeof v === 'string' && Boolean(card(v));
  const kindOf = (a) => Object.keys(a)[0];
  const subject = (a) => { const k = kindOf(a); const b = a[k] || {}; return k === 'choose' ? (isCard(b.option) ? b.option : null) : b.card || null; };
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

  // The legal actions, indexed for the table.
  function index() {
    const byCard = new Map();
    const attacks = [];
    const draws = [];
    const others = []; // choose options that are not a card
    let pass = false;
    for (const a of legal()) {
      const k = kindOf(a);
      if (k === 'pass') { pass = true; continue; }
      if (k === 'attack') { attacks.push(a); continue; }
      if (k === 'draw') { draws.push(a); continue; }
      const id = subject(a);
      if (id) {
        if (!byCard.has(id)) byCard.set(id, []);
        byCard.get(id).push(a);
      } else {
        others.push(a);
      }
    }
    return { byCard, attacks, draws, others, pass };
  }

  // Pairs of an interception decision (pending kind "intercept": options [blocker, attacker] | null).
  const interceptPairs = () => (myDecision() && pending().kind === 'intercept'
    ? legal().filter((a) => a.choose && Array.isArray(a.choose.option)).map((a) => a.choose.option) : []);

  // The cards to highlight and what a click on each does now.
  function hotCards(ix) {
    const hot = new Set();
    const target = new Set();
    if (sel && sel.mode === 'target') {
      for (const a of sel.actions) { const v = (a[kindOf(a)].targets || [])[sel.i]; if (v) target.add(v); }
      return { hot, target };
    }
    const pairs = interceptPairs();
    if (pairs.length) {
      if (sel && sel.mode === 'block') pairs.filter((p) => p[0] === sel.blocker).forEach((p) => target.add(p[1]));
      else pairs.forEach((p) => hot.add(p[0]));
      return { hot, target };
    }
    if (ix.attacks.length) {
      const chosen = attackSel();
      ix.attacks.forEach((a) => a.attack.attackers.forEach((x) => hot.add(x)));
      if (chosen.size) {
        for (const a of ix.attacks) if (sameSet(a.attack.attackers, chosen)) target.add(a.attack.city);
      }
    }
    for (const id of ix.byCard.keys()) hot.add(id);
    return { hot, target };
  }
  const attackSel = () => (sel && sel.mode === 'attack' ? sel.attackers : new Set());
  const sameSet = (list, set) => list.length === set.size && list.every((x) => set.has(x));

  // ---------------------------------------------------------------- clicks
  function onCard(id) {
    if (busy) return;
    const ix = index();
    const { target } = hotCards(ix);
    if (sel && sel.mode === 'target') {
      if (target.has(id)) return pickTarget(id);
      sel = null;
    }
    const pairs = interceptPairs();
    if (pairs.length) {
      if (sel && sel.mode === 'block' && target.has(id)) return send({ choose: { option: [sel.blocker, id] } });
      if (pairs.some((p) => p[0] === id)) { sel = { mode: 'block', blocker: id }; return update(); }
    }
    if (ix.attacks.length) {
      const chosen = attackSel();
      if (chosen.size && target.has(id)) {
        const a = ix.attacks.find((x) => x.attack.city === id && sameSet(x.attack.attackers, chosen));
        if (a) return send(a);
      }
      if (ix.attacks.some((a) => a.attack.attackers.includes(id))) {
        const next = new Set(chosen);
        if (next.has(id)) next.delete(id); else next.add(id);
        sel = next.size ? { mode: 'attack', attackers: next } : null;
        return update();
      }
    }
    sel = { mode: 'card', card: id };
    update();
  }

  // The actions of one card, grouped by what is not chosen on the table (targets are).
  function groups(actions) {
    const out = new Map();
    for (const a of actions) {
      const k = kindOf(a);
      const { targets, ...rest } = a[k];
      const key = JSON.stringify([k, rest]);
      if (!out.has(key)) out.set(key, { label: label(a), actions: [] });
      out.get(key).actions.push(a);
    }
    return [...out.values()];
  }

  function runGroup(g) {
    const withTargets = g.actions.filter((a) => (a[kindOf(a)].targets || []).length);
    if (!withTargets.length) return send(g.actions[0]);
    sel = { mode: 'target', actions: withTargets, i: 0, card: subject(withTargets[0]) };
    if (!targetsOnTable()) sel.buttons = true; // targets this page cannot show as cards: offer buttons
    update();
  }
  const targetsOnTable = () => sel.actions.every((a) => isCard((a[kindOf(a)].targets || [])[sel.i]));

  function pickTarget(v) {
    const left = sel.actions.filter((a) => (a[kindOf(a)].targets || [])[sel.i] === v);
    const done = left.filter((a) => a[kindOf(a)].targets.length === sel.i + 1);
    if (done.length && done.length === left.length) return send(done[0]);
    sel = { ...sel, actions: left.filter((a) => a[kindOf(a)].targets.length > sel.i + 1), i: sel.i + 1 };
    if (!targetsOnTable()) sel.buttons = true;
    update();
  }

  // What an action does, in the player's words.
  function label(a) {
    const k = kindOf(a);
    const b = a[k] || {};
    switch (k) {
      case 'play': {
        const parts = [face(b.card).type === 'creature' && b.to ? t('arcmage.act.cast_to', { place: place(b.to) }) : t('arcmage.act.cast')];
        if (b.x !== undefined && b.x !== null) parts.push(`X = ${b.x}`);
        if (b.mode) parts.push(t('arcmage.act.mode', { mode: b.mode }));
        return parts.join(' · ');
      }
      case 'resource': return t('arcmage.act.resource', { faction: factionName(b.faction) });
      case 'devote': return t('arcmage.act.devote');
      case 'ability': return (b.with || []).length
        ? t('arcmage.act.ability_with', { cards: b.with.map(cardName).join(', ') }) : t('arcmage.act.ability');
      case 'move': return t('arcmage.act.move', { place: place(b.to) });
      case 'salvage': return t('arcmage.act.salvage');
      case 'build': return t('arcmage.act.build');
      case 'choose': return pending().kind === 'setup_build' ? t('arcmage.act.build') : t('arcmage.act.choose');
      case 'draw': return t(`arcmage.draw.${b.option}`);
      case 'attack': return t('arcmage.act.attack', { city: cardName(b.city) });
      default: return k;
    }
  }

  function optionText(v) {
    if (v === null || v === undefined) return t('arcmage.option.none');
    if (v === true) return t('arcmage.option.yes');
    if (v === false) return t('arcmage.option.no');
    if (isCard(v)) return cardName(v);
    if (Array.isArray(v)) return v.map(optionText).join(' · ');
    if (typeof v === 'object') return JSON.stringify(v);
    return String(v);
  }

  async function send(action) {
    if (busy || !view) return;
    busy = true;
    ctx.clearError(passButton);
    update();
    try {
      const r = await ctx.act({ version: view.version, arcmage: action });
      if (r && r.version) { mine.add(String(r.version)); save('mine', [...mine].slice(-300)); }
      sel = null;
      split = null;
    } catch (err) {
      ctx.showError(passButton, err);
      sel = null;
    } finally {
      busy = false;
      classify();
      update();
    }
  }

  // ---------------------------------------------------------------- the log and the autopilot
  function namesIn(data) {
    const names = {};
    const visit = (v) => {
      if (typeof v === 'string' && card(v)) names[v] = card(v).name;
      else if (Array.isArray(v)) v.forEach(visit);
      else if (v && typeof v === 'object') Object.values(v).forEach(visit);
    };
    visit(data);
    return names;
  }

  function record(u, away) {
    const seq = Number(u.seq || 0);
    if (seq && (logged.has(seq) || seq <= floor)) return;
    if (seq) { logged.add(seq); seen = Math.max(seen, seq); }
    if (u.kind !== 'event') return;
    const d = u.data || {};
    if (u.event_kind === 'drew' && d.player === me()) return; // my own draw: its cards come in "drew_cards"
    const entry = { seq, version: String(u.version || ''), kind: u.event_kind, data: d, names: namesIn(d), away, auto: false };
    // Live, only a choice made once my step's deadline had passed is the autopilot's (M25); an
    // action sent from another of my devices comes before it.
    const late = away || (myDeadline > 0 && Date.now() >= myDeadline - 250);
    if (CHOICES.has(entry.kind) && actorOf(entry) === me() && late) pendingClass.push(entry);
    log.push(entry);
    if (log.length > LOG_KEEP) log = log.slice(-LOG_KEEP);
  }

  function actorOf(e) {
    if (e.kind === 'intercept') { const c = card(e.data.blocker); return c ? c.owner : -1; }
    return e.data.player;
  }

  // An own choice this page did not send (no answer of mine has its version), made while the page
  // was closed or after my deadline, was the autopilot's. (The updates do not say who acted: a choice
  // from another device of mine while this page was closed is shown so too.)
  function classify() {
    if (busy) return;
    for (const e of pendingClass) e.auto = !mine.has(e.version);
    pendingClass = [];
    save('log', log);
    save('seq', seen);
  }

  function eventText(e) {
    const d = e.data || {};
    const n = (id) => (id && typeof id === 'object' ? id.name : (e.names || {})[id] || (card(id) ? card(id).name : t('arcmage.a_card')));
    const p = (seat) => (seat === undefined || seat === null ? '' : who(Number(seat)));
    const key = `arcmage.ev.${e.kind}`;
    const params = {
      player: p(d.player), card: n(d.card), city: n(d.city), count: d.count, faction: d.faction ? factionName(d.faction) : '',
      option: d.option ? t(`arcmage.draw.${d.option}`) : '', to: d.to ? place(d.to) : '', turn: d.turn,
      attackers: (d.attackers || []).map(n).join(', '), blocker: n(d.blocker), attacker: n(d.attacker),
      source: n(d.source), target: n(d.target), amount: d.amount, name: d.name || n(d.card), owner: p(d.owner),
      cards: (d.cards || []).map((c) => (typeof c === 'object' ? c.name : c)).join(', '),
      window: d.window ? tOr(`arcmage.window.${d.window}`, {}, () => '') : '', level: d.level, devotion: d.devotion,
    };
    if (e.kind === 'drew_cards') params.count = (d.cards || []).length;
    return tOr(key, params, () => t('arcmage.ev.other', { kind: e.kind }));
  }
  const tOr = (key, params, fallback) => (has(key) ? t(key, params) : fallback());

  // What happened while this page was closed: the updates after the last one it handled.
  // On this device's first visit the whole story so far is read, but nothing in it is called the
  // autopilot's: this device cannot know which of the seat's actions another device sent.
  async function catchUp() {
    const last = floor;
    const until = Number(view.seq || 0);
    seen = Math.max(seen, last, until);
    save('seq', seen); // (at once: a page closed before the history is read still knows where it was)
    if (last >= until) return;
    const updates = await ctx.history(last, until);
    for (const u of updates) record(u, Boolean(last));
    if (!last) pendingClass = [];
    log.sort((a, b) => a.seq - b.seq);
    if (log.length > LOG_KEEP) log = log.slice(-LOG_KEEP);
    classify();
    update();
  }

  // ---------------------------------------------------------------- drawing cards
  function pips(n) { return '◆'.repeat(Math.max(0, Math.min(Number(n) || 0, 6))); }

  function tile(id, size = 'mini', { hot, target }) {
    const c = card(id);
    if (!c) return null;
    const f = face(id);
    const inPlay = ['army', 'res', 'city'].includes(c.zone);
    const cls = ['arc-card', `size-${size}`, `fac-${slug(f.faction)}`, `type-${f.type || 'card'}`];
    if (c.marked) cls.push('marked');
    if (hot.has(id)) cls.push('legal');
    if (target.has(id)) cls.push('target');
    if ((sel && sel.mode === 'card' && sel.card === id) || (sel && sel.mode === 'block' && sel.blocker === id)
      || attackSel().has(id)) cls.push('selected');
    const combat = av.combat || null;
    if (combat && (combat.attackers || []).includes(id)) cls.push('attacking');
    let stats = null;
    if (f.type === 'city') {
      const def = inPlay ? c.city_defense : f.defense;
      stats = h('span', { class: 'arc-def', title: t('arcmage.defense') }, `🛡 ${def ?? ''}`);
    } else if (f.type === 'creature') {
      const atk = inPlay ? c.attack : f.attack;
      const def = inPlay ? c.defense : f.defense;
      stats = h('span', { class: 'arc-stats', title: t('arcmage.attack_defense') }, `${atk ?? 0}/${def ?? 0}`);
    }
    const typeLine = [tOr(`arcmage.type.${f.type}`, {}, () => f.type || ''), (f.subtypes || []).join(', ')].filter(Boolean).join(' — ');
    const cost = f.cost === '' || f.cost === undefined ? null
      : h('span', { class: 'arc-cost', title: t('arcmage.cost_title', { cost: f.cost, loyalty: f.loyalty || 0, faction: factionName(f.faction) }) },
        h('b', {}, f.cost), f.loyalty ? h('i', { class: 'arc-loyalty' }, pips(f.loyalty)) : null);
    const tags = [];
    if (c.marked) tags.push(t('arcmage.marked'));
    if (c.damage) tags.push(t('arcmage.damage', { n: c.damage }));
    return h('button', {
      type: 'button', class: cls.join(' '), 'data-card': id, 'data-key': c.key, 'data-zone': c.zone,
      'aria-label': `${f.name || c.name}${tags.length ? ` (${tags.join(', ')})` : ''}`, onclick: () => onCard(id),
    },
    h('span', { class: 'arc-head' }, cost, h('span', { class: 'arc-name' }, f.name || c.name)),
    h('span', { class: 'arc-type' }, typeLine),
    size === 'mini' ? null : h('span', { class: 'arc-text' }, f.text || ''),
    h('span', { class: 'arc-foot' },
      c.marked ? h('span', { class: 'arc-mark', 'aria-hidden': 'true' }, t('arcmage.marked')) : null,
      size === 'mini' || c.marked ? null : h('span', { class: 'arc-artist' }, f.artist ? t('arcmage.artist', { name: f.artist }) : ''),
      c.damage ? h('span', { class: 'arc-damage' }, `-${c.damage}`) : null, stats));
  }

  function seatBox(seat, marks) {
    const s = (av.seats || []).find((x) => x.seat === seat) || {};
    const isMe = seat === me();
    const active = av.active === seat && av.phase !== 'over';
    const piles = FACTIONS.filter((f) => (s.pile_counts || {})[f]).map((f) => h('span', { class: `arc-pile fac-${slug(f)}`, 'data-faction': f },
      t('arcmage.pile', { faction: factionName(f), marked: (s.pile_marked || {})[f] || 0, total: s.pile_counts[f] })));
    const cities = (s.cities || []).map((cid) => h('div', { class: 'arc-city', 'data-city': cid },
      tile(cid, 'mini', marks),
      (card(cid) && card(cid).residents || []).length
        ? h('div', { class: 'arc-residents' }, h('span', { class: 'arc-res-label' }, t('arcmage.residents')),
          h('div', { class: 'arc-res-row' }, card(cid).residents.map((r) => tile(r, 'mini', marks)))) : null));
    const army = (s.army || []).map((a) => tile(a, 'mini', marks));
    const grave = s.grave || [];
    const unbuilt = isMe ? (av.unbuilt || []) : [];
    return h('section', { class: `card arc-seat ${isMe ? 'me' : 'opp'}${active ? ' active' : ''}`, 'data-seat': seat },
      h('div', { class: 'arc-seat-head' },
        h('span', { class: 'dot', style: { background: ctx.seatColor(seat) } }),
        h('strong', {}, isMe ? t('arcmage.your_side', { name: ctx.nameOf(seat) }) : ctx.nameOf(seat)),
        active ? h('span', { class: 'tag arc-turn-tag' }, t('arcmage.their_turn')) : null,
        acting().includes(seat) && view.status === 'GAME_STATUS_RUNNING' ? h('span', { class: 'tag arc-act-tag' }, t('arcmage.to_act')) : null,
        s.out ? h('span', { class: 'tag' }, t('arcmage.out')) : null),
      h('div', { class: 'arc-counts' },
        h('span', { class: 'arc-count', 'data-count': 'hand' }, t('arcmage.count.hand', { n: s.hand_count || 0 })),
        h('span', { class: 'arc-count', 'data-count': 'deck' }, t('arcmage.count.deck', { n: s.deck_count || 0 })),
        h('span', { class: 'arc-count', 'data-count': 'unbuilt' }, t('arcmage.count.unbuilt', { n: s.unbuilt_count || 0 })),
        h('span', { class: 'arc-count', 'data-count': 'grave' }, t('arcmage.count.grave', { n: grave.length }))),
      h('div', { class: 'arc-piles' }, h('span', { class: 'arc-label' }, t('arcmage.resources')),
        piles.length ? piles : h('span', { class: 'muted' }, t('arcmage.none'))),
      h('div', { class: 'arc-zone arc-kingdom' }, h('span', { class: 'arc-label' }, t('arcmage.kingdom')),
        h('div', { class: 'arc-row' }, cities.length ? cities : h('span', { class: 'muted' }, t('arcmage.no_city')))),
      h('div', { class: 'arc-zone arc-army' }, h('span', { class: 'arc-label' }, t('arcmage.army')),
        h('div', { class: 'arc-row' }, army.length ? army : h('span', { class: 'muted' }, t('arcmage.empty')))),
      unbuilt.length ? h('div', { class: 'arc-zone arc-unbuilt' }, h('span', { class: 'arc-label' }, t('arcmage.unbuilt')),
        h('div', { class: 'arc-row' }, unbuilt.map((u) => tile(u, 'mini', marks)))) : null,
      grave.length ? h('details', { class: 'arc-zone arc-grave' }, h('summary', {}, t('arcmage.grave', { n: grave.length })),
        h('div', { class: 'arc-row' }, grave.map((g) => tile(g, 'mini', marks)))) : null);
  }

  function middle(marks) {
    const parts = [];
    const stack = av.stack || [];
    if (stack.length) {
      const items = [...stack].reverse().map((it, i) => h('li', { class: 'arc-stack-item', 'data-card': it.card },
        tile(it.card, 'mini', marks),
        h('div', { class: 'arc-stack-info' },
          i === 0 ? h('strong', { class: 'arc-top' }, t('arcmage.stack_top')) : null,
          h('span', {}, it.player === me() ? t('arcmage.cast_by_you') : t('arcmage.cast_by', { name: ctx.nameOf(it.player) })),
          (it.targets || []).length ? h('span', {}, t('arcmage.targets', { cards: it.targets.map(cardName).join(', ') })) : null,
          it.to ? h('span', {}, t('arcmage.going_to', { place: place(it.to) })) : null)));
      parts.push(h('div', { id: 'arc-stack', class: 'arc-stack' }, h('h3', {}, t('arcmage.stack', { n: stack.length })),
        h('ol', { class: 'plain' }, items)));
    }
    const combat = av.combat;
    if (combat && combat.city) {
      const blocks = combat.blocks || {};
      parts.push(h('div', { id: 'arc-combat', class: 'arc-combat' },
        h('h3', {}, combat.defender === me() ? t('arcmage.combat_you', { city: cardName(combat.city) })
          : t('arcmage.combat', { city: cardName(combat.city), name: ctx.nameOf(combat.defender) })),
        h('ul', { class: 'plain' }, (combat.declared || combat.attackers || []).map((a) => h('li', { class: 'arc-fight', 'data-attacker': a },
          tile(a, 'mini', marks), h('span', { class: 'arc-vs' }, ((blocks[a] || {}).cards || []).length ? t('arcmage.blocked_by') : t('arcmage.unblocked')),
          ((blocks[a] || {}).cards || []).map((b) => tile(b, 'mini', marks)))))));
    }
    return parts.length ? h('section', { id: 'arc-middle', class: 'card arc-middle' }, parts) : null;
  }

  // ---------------------------------------------------------------- the prompt and the buttons
  function phaseName(ph) { return tOr(`arcmage.phase.${ph}`, {}, () => ph); }

  function promptText(ix) {
    const pend = pending();
    if (view.status === 'GAME_STATUS_OVER' || av.phase === 'over') return t('arcmage.prompt.over');
    if (sel && sel.mode === 'target') return t('arcmage.prompt.target', { card: cardName(sel.card), n: sel.i + 1 });
    if (myDecision()) {
      if (pend.kind === 'intercept') {
        return sel && sel.mode === 'block' ? t('arcmage.prompt.intercept_attacker', { card: cardName(sel.blocker) })
          : t('arcmage.prompt.intercept', { name: who(av.active) });
      }
      return tOr(`arcmage.decide.${pend.kind}`, {}, () => t('arcmage.decide.other', { kind: pend.kind }));
    }
    const step0 = step();
    if (step0.kind === 'window') {
      if (acting().includes(me())) {
        const top = (av.stack || []).slice(-1)[0];
        if (pend.kind === 'stack' && top) return t('arcmage.prompt.stack', { name: who(top.player), card: cardName(top.card) });
        return tOr(`arcmage.prompt.window_${pend.kind}`, {}, () => t('arcmage.prompt.window'));
      }
      if (pend.op === 'decide') return t('arcmage.prompt.wait_decide', { name: who(pend.seat) });
      return t('arcmage.prompt.wait_answer', { names: acting().map(who).join(', ') });
    }
    if (av.active !== me()) return t('arcmage.prompt.their_turn', { name: who(av.active), phase: phaseName(av.phase) });
    if (ix.attacks.length) {
      const n = attackSel().size;
      return n ? t('arcmage.prompt.attack_city', { n }) : t('arcmage.prompt.attack');
    }
    return tOr(`arcmage.prompt.${av.phase}`, {}, () => t('arcmage.prompt.your_phase', { phase: phaseName(av.phase) }));
  }

  function passLabel() {
    if (step().kind === 'window' && !myDecision()) {
      return pending().kind === 'stack' ? t('arcmage.pass.resolve') : t('arcmage.pass.window');
    }
    if (myDecision()) return t('arcmage.pass.decline');
    return tOr(`arcmage.pass.${av.phase}`, {}, () => t('arcmage.pass.phase'));
  }

  function choiceButtons(ix) {
    const out = [];
    const pend = pending();
    if (sel && sel.mode === 'target') {
      if (sel.buttons) {
        const seenV = new Set();
        for (const a of sel.actions) {
          const v = a[kindOf(a)].targets[sel.i];
          if (seenV.has(v)) continue;
          seenV.add(v);
          out.push(h('button', { type: 'button', class: 'small', onclick: () => pickTarget(v) }, optionText(v)));
        }
      }
      out.push(h('button', { type: 'button', id: 'arc-cancel', class: 'small', onclick: () => { sel = null; update(); } }, t('arcmage.cancel')));
      return out;
    }
    if (ix.draws.length) {
      for (const a of ix.draws) {
        out.push(h('button', { type: 'button', id: `arc-draw-${a.draw.option}`, class: 'primary', onclick: () => send(a) }, label(a)));
      }
    }
    if (myDecision() && pend.kind === 'intercept') {
      const done = legal().find((a) => a.choose && a.choose.option === null);
      if (sel && sel.mode === 'block') {
        out.push(h('button', { type: 'button', id: 'arc-cancel', class: 'small', onclick: () => { sel = null; update(); } }, t('arcmage.cancel')));
      }
      if (done) out.push(h('button', { type: 'button', id: 'arc-intercept-done', class: 'primary', onclick: () => send(done) }, t('arcmage.intercept_done')));
      return out;
    }
    if (myDecision() && pend.kind === 'split') return splitControls();
    if (attackSel().size) {
      out.push(h('button', { type: 'button', id: 'arc-cancel', class: 'small', onclick: () => { sel = null; update(); } }, t('arcmage.cancel')));
    }
    // A decision's options: cards are highlighted on the table and offered as buttons too.
    if (myDecision()) {
      legal().filter((a) => a.choose).forEach((a, i) => out.push(h('button', {
        type: 'button', class: 'small arc-option', id: `arc-option-${i}`, 'data-option': JSON.stringify(a.choose.option),
        onclick: () => send(a),
      }, optionText(a.choose.option))));
    } else {
      ix.others.forEach((a, i) => out.push(h('button', { type: 'button', class: 'small', id: `arc-other-${i}`, onclick: () => send(a) }, label(a))));
    }
    return out;
  }

  function splitControls() {
    const pend = pending();
    const options = legal().filter((a) => a.choose && Array.isArray(a.choose.option)).map((a) => a.choose.option);
    const key = JSON.stringify([pend.detail || {}, options]);
    if (!split || split.key !== key) split = { key, amounts: [...(options[0] || [])] };
    const blockers = (pend.detail && pend.detail.blockers) || [];
    const total = options.length ? options[0].reduce((x, y) => x + y, 0) : 0;
    const assigned = split.amounts.reduce((x, y) => x + y, 0);
    const ok = options.some((o) => same(o, split.amounts));
    const rows = split.amounts.map((n, i) => h('div', { class: 'arc-split-row', 'data-blocker': blockers[i] || '' },
      h('span', { class: 'arc-split-name' }, cardName(blockers[i])),
      h('button', { type: 'button', class: 'small', id: `arc-split-minus-${i}`, 'aria-label': t('arcmage.split_less'),
        disabled: n <= 0, onclick: () => { split.amounts[i] -= 1; update(); } }, '−'),
      h('output', { id: `arc-split-amount-${i}`, class: 'arc-split-amount' }, String(n)),
      h('button', { type: 'button', class: 'small', id: `arc-split-plus-${i}`, 'aria-label': t('arcmage.split_more'),
        disabled: assigned >= total, onclick: () => { split.amounts[i] += 1; update(); } }, '+')));
    return [h('div', { id: 'arc-split', class: 'arc-split' },
      h('p', {}, t('arcmage.split', { card: cardName(pend.detail && pend.detail.attacker), assigned, total })), rows,
      h('button', { type: 'button', id: 'arc-split-ok', class: 'primary', disabled: !ok,
        onclick: () => send({ choose: { option: [...split.amounts] } }) }, t('arcmage.split_ok')))];
  }

  function renderDetail(ix) {
    const id = sel && (sel.mode === 'card' ? sel.card : null);
    if (!id || !card(id)) { detail.hidden = true; fill(detail); return; }
    const f = face(id);
    const c = card(id);
    const actions = ix.byCard.get(id) || [];
    const buttons = groups(actions).map((g, i) => h('button', {
      type: 'button', class: 'primary arc-action', id: `arc-action-${i}`, 'data-kind': kindOf(g.actions[0]),
      'data-action': JSON.stringify(g.actions[0]),
      onclick: () => runGroup(g),
    }, g.label, g.actions.some((a) => (a[kindOf(a)].targets || []).length) ? ` — ${t('arcmage.then_target')}` : ''));
    const stats = f.type === 'creature' ? t('arcmage.stats', { attack: f.attack ?? 0, defense: f.defense ?? 0 })
      : f.type === 'city' ? t('arcmage.city_def', { defense: f.defense ?? 0 }) : '';
    const now = ['army', 'res', 'city'].includes(c.zone) && f.type === 'creature'
      ? t('arcmage.now', { attack: c.attack, defense: c.defense, damage: c.damage || 0 }) : '';
    detail.hidden = false;
    fill(detail,
      h('div', { class: `arc-face fac-${slug(f.faction)}`, 'data-card': id },
        h('div', { class: 'arc-face-head' },
          h('span', { class: 'arc-face-name' }, f.name || c.name),
          f.cost !== '' && f.cost !== undefined
            ? h('span', { class: 'arc-face-cost' }, t('arcmage.cost_title', { cost: f.cost, loyalty: f.loyalty || 0, faction: factionName(f.faction) })) : null),
        h('div', { class: 'arc-face-type' }, [factionName(f.faction), tOr(`arcmage.type.${f.type}`, {}, () => f.type || ''), (f.subtypes || []).join(', ')].filter(Boolean).join(' · ')),
        h('p', { class: 'arc-face-text', dir: 'ltr' }, f.text || ''),
        h('div', { class: 'arc-face-foot' }, h('span', {}, stats), now ? h('span', {}, now) : null),
        h('div', { class: 'arc-face-artist' }, f.artist ? t('arcmage.artist', { name: f.artist }) : '')),
      buttons.length ? h('div', { id: 'arc-card-actions', class: 'arc-card-actions' }, buttons)
        : h('p', { class: 'muted' }, t('arcmage.no_action')),
      h('button', { type: 'button', class: 'small', id: 'arc-detail-close', onclick: () => { sel = null; update(); } }, t('arcmage.close')));
  }

  function renderLog() {
    const items = [...log].reverse().slice(0, 40).map((e) => h('li', {
      class: `arc-ev${e.auto ? ' auto' : ''}`, 'data-kind': e.kind, 'data-seq': e.seq,
    }, e.auto ? h('span', { class: 'tag arc-auto-tag' }, t('arcmage.autopilot')) : null, eventText(e)));
    fill(logBox, h('h3', {}, t('arcmage.log')),
      items.length ? h('ul', { id: 'arc-log', class: 'plain arc-log' }, items) : h('p', { class: 'muted' }, t('arcmage.log_empty')));
  }

  function renderAutopilot() {
    const autos = log.filter((e) => e.auto && e.seq > ack);
    // autopilot_played stays true until the player acts itself: once dismissed, it shows again only
    // after it has been false in between
    if (!view.autopilot_played) playedSeen = false;
    const played = view.autopilot_played && !playedSeen;
    if (!autos.length && !played) { autopilotBox.hidden = true; return; }
    autopilotBox.hidden = false;
    fill(autopilotBox,
      h('strong', {}, t('arcmage.autopilot_title')),
      played ? h('p', { id: 'arc-autopilot-played' }, t('arcmage.autopilot_played')) : null,
      h('ul', { id: 'arc-autopilot-list', class: 'plain' }, autos.slice(-8).map((e) => h('li', { 'data-kind': e.kind }, eventText(e)))),
      h('button', { type: 'button', class: 'small', id: 'arc-autopilot-ok', onclick: () => {
        ack = Math.max(ack, ...autos.map((e) => e.seq), seen);
        save('ack', ack);
        playedSeen = true;
        update();
      } }, t('arcmage.autopilot_ok')));
  }

  function countdown() {
    const box = document.getElementById('arc-countdown');
    if (!box || !view) return;
    const until = Number(step().deadline_unix_ms || 0);
    if (!until || view.status !== 'GAME_STATUS_RUNNING') { box.textContent = ''; return; }
    const secs = Math.max(0, Math.ceil((until - Date.now()) / 1000));
    const text = clockText(secs);
    if (box.textContent !== text) box.textContent = text;
    box.classList.toggle('urgent', secs <= 5);
    box.dataset.secs = String(secs);
  }
  const clock = setInterval(countdown, 250);

  function renderStatus() {
    const st = step();
    const turnText = av.turn ? t('arcmage.turn', { n: av.turn, name: who(av.active) }) : t('arcmage.setup');
    const windowText = st.kind === 'window'
      ? t(pending().kind === 'stack' ? 'arcmage.priority' : 'arcmage.answering', { names: acting().map(who).join(', ') }) : '';
    fill(status,
      h('span', { id: 'arc-turn', class: 'arc-turn' }, turnText),
      h('span', { id: 'arc-phase', class: 'arc-phase', 'data-phase': av.phase }, t('arcmage.phase_is', { phase: phaseName(av.phase) })),
      windowText ? h('span', { id: 'arc-priority', class: 'arc-priority', 'data-players': acting().join(',') }, windowText) : null,
      h('span', { class: 'arc-clock' }, h('span', { class: 'muted' }, st.kind === 'window' ? t('arcmage.window_left') : t('arcmage.turn_left')),
        ' ', h('span', { id: 'arc-countdown', class: 'countdown' })));
    countdown();
  }

  function update() {
    if (!view || !av) return;
    const ix = index();
    if (sel && sel.mode === 'card' && !card(sel.card)) sel = null;
    const marks = hotCards(ix);
    root.dataset.phase = av.phase || '';
    root.dataset.version = String(view.version);
    root.dataset.you = String(me());
    root.dataset.active = String(av.active);
    root.dataset.step = step().kind || '';
    root.dataset.pending = pending().kind || '';
    root.classList.toggle('busy', busy);
    root.classList.toggle('choosing', Boolean(sel && sel.mode !== 'card'));
    renderStatus();
    if (!readOnly) renderAutopilot();
    const others = (av.seats || []).map((s) => s.seat).filter((q) => q !== me());
    const seated = me() >= 0; // (a spectator has no side of its own)
    fill(table, ...others.map((q) => seatBox(q, marks)), middle(marks), seated ? seatBox(me(), marks) : null);
    handBox.hidden = !seated;
    const hand = av.hand || [];
    fill(handBox, h('h3', {}, t('arcmage.hand', { n: hand.length })),
      h('div', { id: 'arc-hand', class: 'arc-hand' }, hand.length ? hand.map((id) => tile(id, 'hand', marks)) : h('span', { class: 'muted' }, t('arcmage.empty'))));
    prompt.textContent = promptText(ix);
    fill(choices, ...choiceButtons(ix));
    // (in an interception the "Done intercepting" button says it: no second way to stop)
    passButton.hidden = !ix.pass || Boolean(sel && sel.mode === 'target') || (myDecision() && pending().kind === 'intercept');
    passButton.textContent = passLabel();
    passButton.disabled = busy;
    bar.classList.toggle('mine', legal().length > 0);
    renderDetail(ix);
    renderLog();
    attribution.textContent = av.attribution || '';
  }

  return {
    render(v) {
      view = v;
      av = v.arcmage || null;
      if (!av) return;
      if (sel && sel.mode === 'target' && !sel.actions.every((a) => legal().some((b) => same(a, b)))) sel = null;
      if (sel && sel.mode === 'attack' && !index().attacks.length) sel = null;
      if (sel && sel.mode === 'block' && !interceptPairs().some((p) => p[0] === sel.blocker)) sel = null;
      if ((step().players || []).includes(av.you)) myDeadline = Number(step().deadline_unix_ms || 0);
      if (first) { first = false; catchUp().catch(() => {}); }
      classify();
      update();
    },
    update(u) {
      if (!av) return; // (before the first view: the history read at the first render covers it)
      record(u, false);
      classify();
    },
    relabel() { update(); if (agent) agent.relabel(); },
    destroy() { clearInterval(clock); wide.removeEventListener('change', placeBar); if (agent) agent.destroy(); fill(el); },
    // One event of a view's `events` ({kind, data} or flat) in words (a replay's step).
    describeEvent(e) {
      if (!av || !e) return '';
      const data = e.data && typeof e.data === 'object' ? e.data : e;
      return eventText({ kind: e.kind, data, names: namesIn(data) });
    },
    // An error's field (play.x, devote.target, …) as the card the refused action was about.
    describeField(field, request) {
      if (!av) return '';
      const k = String(field || '').split('.')[0];
      const id = request && request[k] && request[k].card;
      return id && card(id) ? t('arcmage.err.your_card', { card: cardName(id) }) : '';
    },
    // A card instance id in a server's reason: the card's name.
    nameId(id) { return av && card(id) ? `"${card(id).name}"` : ''; },
    // One turn the autopilot played for me: its actions, one line each.
    describeAutopilot(turn) {
      if (!av) return null;
      const acts = ((turn.arcmage || {}).actions || []);
      const lines = acts.map((a) => {
        const k = kindOf(a);
        if (k === 'pass') return t('arcmage.auto.pass');
        const id = subject(a);
        const what = k === 'choose' ? t('arcmage.auto.choose', { option: optionText((a.choose || {}).option) }) : label(a);
        return id ? `${cardName(id)}: ${what}` : what;
      });
      return lines.length ? lines : [t('autopilot.nothing')];
    },
  };
}
