// Archipelago: the Trade tab (W6: offers, the bank, chat) and the Standing orders tab (W7: posture,
// per-unit orders, build queue, bonus, automatic trade rules; at the bottom the personal AI agent
// panel of js/agent.js).
// Mounted by js/archipelago.js: tradeTab(ctx, rules) / standingTab(ctx, rules) → {el, render, relabel}.
// Both keep what the player is typing across renders: inputs are built once and only the parts that
// come from the view (lists, counts, rates, player names) are redrawn, and only when they change.
import { agentPanel } from './agent.js';
import { fill } from './dom.js';

const OVER = 'GAME_STATUS_OVER';
const POSTURES = ['hold', 'defensive', 'balanced', 'aggressive'];
const ORDERS = ['stay', 'guard', 'patrol', 'move', 'escort', 'hunt'];

// ------------------------------------------------------------------ small shared helpers

// A translated sentence with elements in it: t('k') keeps its {placeholders}; each is replaced by
// the node (or text) of the same name, so the words stay in the translation's order (rtl or ltr).
function rich(template, parts) {
  const out = [];
  let last = 0;
  for (const m of template.matchAll(/\{(\w+)\}/g)) {
    out.push(template.slice(last, m.index));
    out.push(m[1] in parts ? parts[m[1]] : m[0]);
    last = m.index + m[0].length;
  }
  out.push(template.slice(last));
  return out;
}

// A coordinate pair kept left-to-right inside any text (Unicode isolates work in <option> too).
const coord = (tile) => (tile ? `\u2066(${tile.x}, ${tile.y})\u2069` : '');

// A whole number ≥ 0 from an input; '' counts as 0; anything else is NaN.
function count(value) {
  const v = String(value ?? '').trim();
  if (v === '') return 0;
  return /^\d+$/.test(v) ? Number(v) : NaN;
}

const sameTile = (a, b) => a && b && a.x === b.x && a.y === b.y;

// The bank rate for giving `res` (A52): the port rate when a port of it stands on a tile the player
// controls, else the bank rate.
function bankRate(rules, arch, res) {
  const control = new Set((arch.control || []).map((c) => `${c.x},${c.y}`));
  const port = (arch.ports || []).some((p) => p.resource === res && control.has(`${p.tile.x},${p.tile.y}`));
  return port ? rules.port_rate : rules.bank_rate;
}

// Which control had the focus (by its data-k key or id), to give it back after a redraw.
function keepFocus(root, redraw) {
  const active = document.activeElement;
  let query = null;
  if (active && root.contains(active)) {
    if (active.dataset.k) query = `[data-k="${CSS.escape(active.dataset.k)}"]`;
    else if (active.id) query = `#${CSS.escape(active.id)}`;
  }
  redraw();
  const again = query && root.querySelector(query);
  if (again && !again.disabled) again.focus();
}

// ================================================================== Trade (W6)
export function tradeTab(ctx, rules) {
  const { h } = ctx;
  const t = (key, params) => ctx.t(key, params);
  const R = rules.resources;
  let view = null;
  // What the player entered: kept across renders and language changes.
  const form = { to: '', give: {}, get: {}, bankGive: R[0], bankGet: R[1], times: '1', chatTo: '', chatText: '' };
  const el = h('div', { class: 'trade-tab' });
  let ui = {};
  const drawn = {}; // the keys of what is drawn now, to redraw only on change

  // ---------------------------------------------------------------- offers made this round
  // The server counts every offer made this round, also those since accepted or withdrawn (which the
  // view no longer shows); this browser remembers the ids of its own it has seen, per game and round
  // (one stored record: {game_id: {round, ids, full}}, the latest games only).
  const STORE = 'archipelago.offers_made';
  const made = { game: '', round: -1, ids: new Set(), full: false };
  const readMade = () => { try { return JSON.parse(localStorage.getItem(STORE) || '{}') || {}; } catch { return {}; } };
  function loadMade(v) {
    if (made.game === v.game_id && made.round === v.round) return;
    Object.assign(made, { game: v.game_id, round: v.round, ids: new Set(), full: false });
    const saved = readMade()[v.game_id];
    if (saved && saved.round === v.round) {
      made.ids = new Set(saved.ids || []);
      made.full = Boolean(saved.full);
    }
  }
  function noteMade(v) {
    loadMade(v);
    let changed = false;
    for (const o of v.archipelago.offers || []) {
      if (o.from_seat === v.you && !made.ids.has(o.id)) { made.ids.add(o.id); changed = true; }
    }
    if (changed) saveMade();
  }
  function saveMade() {
    const all = readMade();
    delete all[made.game];
    const games = Object.keys(all).slice(-9); // with this one, the 10 latest games
    const kept = Object.fromEntries(games.map((g) => [g, all[g]]));
    kept[made.game] = { round: made.round, ids: [...made.ids], full: made.full };
    localStorage.setItem(STORE, JSON.stringify(kept));
  }
  const offersLeft = () => (made.full ? 0 : Math.max(0, rules.max_offers - made.ids.size));
  const chatsLeft = () => Math.max(0, rules.max_chat
    - (view.archipelago.chat || []).filter((c) => c.from_seat === view.you).length);

  // ---------------------------------------------------------------- building the panel
  function build() {
    ui = {};
    for (const k of Object.keys(drawn)) delete drawn[k];

    // Offers: incoming and my own
    ui.offers = h('ul', { id: 'offers', class: 'plain offer-list', 'aria-live': 'polite' });

    // Make an offer: to whom, then a row per resource (have / give / want)
    ui.offerTo = h('select', { id: 'offer-to', 'data-k': 'offer-to',
      onchange: () => { form.to = ui.offerTo.value; } });
    const rows = R.map((r) => {
      const give = h('input', { id: `offer-give-${r}`, type: 'number', min: 0, step: 1, inputmode: 'numeric',
        placeholder: '0', value: form.give[r] || '', 'aria-label': `${t('tabs.make.give')}: ${t(`res.${r}`)}`,
        oninput: () => { form.give[r] = give.value; updateOffer(); } });
      const get = h('input', { id: `offer-get-${r}`, type: 'number', min: 0, step: 1, inputmode: 'numeric',
        placeholder: '0', value: form.get[r] || '', 'aria-label': `${t('tabs.make.get')}: ${t(`res.${r}`)}`,
        oninput: () => { form.get[r] = get.value; updateOffer(); } });
      return h('tr', { 'data-res': r },
        h('th', { scope: 'row' }, t(`res.${r}`)),
        h('td', { class: 'have num', 'data-have': r }),
        h('td', {}, give), h('td', {}, get));
    });
    ui.offerHint = h('p', { id: 'offer-hint', class: 'muted hint', 'aria-live': 'polite' });
    ui.offerSend = h('button', { id: 'offer-send', type: 'submit', class: 'primary' }, t('tabs.make.send'));
    ui.offersLeft = h('span', { id: 'offers-left', class: 'left' });
    const offerForm = h('form', { class: 'offer-form', novalidate: true, onsubmit: (ev) => { ev.preventDefault(); sendOffer(); } },
      h('label', { class: 'row' }, h('span', {}, t('tabs.make.to')), ui.offerTo),
      h('table', { class: 'goods' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('tabs.make.resource')),
          h('th', { scope: 'col' }, t('tabs.make.have')), h('th', { scope: 'col' }, t('tabs.make.give')),
          h('th', { scope: 'col' }, t('tabs.make.get')))),
        h('tbody', {}, rows)),
      ui.offerHint,
      h('div', { class: 'row send-row' }, ui.offerSend, ui.offersLeft));

    // The bank
    const resOptions = (selected) => R.map((r) => h('option', { value: r, selected: r === selected }, t(`res.${r}`)));
    ui.bankGive = h('select', { id: 'bank-give', 'data-k': 'bank-give',
      onchange: () => { form.bankGive = ui.bankGive.value; updateBank(); } }, resOptions(form.bankGive));
    ui.bankGet = h('select', { id: 'bank-get', 'data-k': 'bank-get',
      onchange: () => { form.bankGet = ui.bankGet.value; updateBank(); } }, resOptions(form.bankGet));
    ui.bankTimes = h('input', { id: 'bank-times', type: 'number', min: 1, step: 1, inputmode: 'numeric', value: form.times,
      oninput: () => { form.times = ui.bankTimes.value; updateBank(); } });
    ui.bankRate = h('strong', { id: 'bank-rate', class: 'num' });
    ui.bankPort = h('span', { id: 'bank-port', class: 'tag' }, t('tabs.bank.port'));
    ui.bankSummary = h('p', { id: 'bank-summary', class: 'hint', 'aria-live': 'polite' });
    ui.bankSend = h('button', { id: 'bank-send', type: 'submit', class: 'primary' }, t('tabs.bank.send'));
    const bankForm = h('form', { class: 'bank-form', novalidate: true, onsubmit: (ev) => { ev.preventDefault(); sendBank(); } },
      h('p', { class: 'muted' }, t('tabs.bank.help', { rate: rules.bank_rate, port: rules.port_rate })),
      h('div', { class: 'row' },
        h('label', { class: 'field' }, h('span', {}, t('tabs.bank.give')), ui.bankGive),
        h('label', { class: 'field' }, h('span', {}, t('tabs.bank.get')), ui.bankGet),
        h('label', { class: 'field' }, h('span', {}, t('tabs.bank.times')), ui.bankTimes)),
      h('p', { class: 'rate' }, t('tabs.bank.rate'), ' ', ui.bankRate, ui.bankPort),
      ui.bankSummary,
      h('div', { class: 'row send-row' }, ui.bankSend));

    // Chat
    ui.chatLog = h('ul', { id: 'chat-log', class: 'plain chat-log', 'aria-live': 'polite' });
    ui.chatTo = h('select', { id: 'chat-to', 'data-k': 'chat-to', onchange: () => { form.chatTo = ui.chatTo.value; } });
    ui.chatText = h('input', { id: 'chat-text', type: 'text', maxlength: 500, autocomplete: 'off', dir: 'auto',
      value: form.chatText, enterkeyhint: 'send',
      oninput: () => { form.chatText = ui.chatText.value; updateChat(); } });
    ui.chatSend = h('button', { id: 'chat-send', type: 'submit', class: 'primary' }, t('tabs.chat.send'));
    ui.chatLeft = h('span', { id: 'chat-left', class: 'left' });
    // A form: Enter in the text field sends (and an IME's composing Enter does not).
    const chatForm = h('form', { class: 'chat-form', novalidate: true, onsubmit: (ev) => { ev.preventDefault(); sendChat(); } },
      h('label', { class: 'field' }, h('span', {}, t('tabs.chat.to')), ui.chatTo),
      h('label', { class: 'field grow' }, h('span', {}, t('tabs.chat.text')), ui.chatText),
      ui.chatSend);

    ui.over = h('p', { class: 'notice', hidden: true }, t('tabs.over'));
    fill(el,
      ui.over,
      h('section', { class: 'tab-section', id: 'offers-section' },
        h('h3', {}, t('tabs.offers.title')), ui.offers),
      h('section', { class: 'tab-section', id: 'offer-section' },
        h('h3', {}, t('tabs.make.title')), h('p', { class: 'muted' }, t('tabs.make.help')), offerForm),
      h('section', { class: 'tab-section', id: 'bank-section' }, h('h3', {}, t('tabs.bank.title')), bankForm),
      h('section', { class: 'tab-section', id: 'chat-section' },
        h('h3', {}, t('tabs.chat.title')), ui.chatLog, chatForm, h('p', { class: 'muted' }, ui.chatLeft)));
  }

  // ---------------------------------------------------------------- drawing what comes from the view
  const nick = (seat) => h('span', { class: 'nick', style: { color: ctx.seatColor(seat) } },
    h('span', { class: 'dot', style: { background: ctx.seatColor(seat) }, 'aria-hidden': 'true' }), ctx.nameOf(seat));
  const goods = (g) => R.filter((r) => g && g[r]).map((r) => t('tabs.goods_item', { n: g[r], res: t(`res.${r}`) })).join(', ');
  const isOver = () => view.status === OVER;

  // "everyone" then each other player by nickname; the selection survives a redraw.
  function playerOptions(select, value) {
    const others = (view.players || []).filter((p) => p.seat !== view.you);
    const key = JSON.stringify([ctx.lang(), others.map((p) => [p.seat, p.nickname])]);
    if (select.dataset.drawn === key) return;
    select.dataset.drawn = key;
    fill(select, h('option', { value: '' }, t('tabs.everyone')),
      others.map((p) => h('option', { value: String(p.seat) }, ctx.nameOf(p.seat))));
    select.value = others.some((p) => String(p.seat) === value) ? value : '';
  }

  function drawOffers() {
    const a = view.archipelago;
    const list = a.offers || [];
    const key = JSON.stringify([list, a.stock, isOver(), (view.players || []).map((p) => p.nickname)]);
    if (drawn.offers === key) return;
    drawn.offers = key;
    if (!list.length) { fill(ui.offers, h('li', { class: 'muted empty' }, t('tabs.offers.none'))); return; }
    // Offers to me first (they ask for an answer), then my own.
    const sorted = [...list].sort((x, y) => (x.from_seat === view.you) - (y.from_seat === view.you));
    fill(ui.offers, sorted.map((o) => {
      const mine = o.from_seat === view.you;
      const toAll = o.to_seat === undefined || o.to_seat === null;
      const parts = { from: nick(o.from_seat), to: toAll ? '' : nick(o.to_seat),
        give: h('strong', { class: 'goods-text' }, goods(o.give)), get: h('strong', { class: 'goods-text' }, goods(o.get)) };
      const text = mine ? (toAll ? 'tabs.offer.mine_all' : 'tabs.offer.mine_to') : (toAll ? 'tabs.offer.to_all' : 'tabs.offer.to_me');
      const buttons = h('span', { class: 'offer-actions' });
      const li = h('li', { 'data-offer': o.id, class: mine ? 'mine' : 'incoming' },
        h('span', { class: 'offer-text' }, rich(t(text), parts)), buttons);
      if (mine) {
        const w = h('button', { type: 'button', class: 'small withdraw', disabled: isOver() }, t('tabs.offer.withdraw'));
        w.addEventListener('click', () => act(w, buttons, { withdraw: { offer: o.id } }));
        buttons.append(w);
      } else {
        // Accept only what I can pay; the maker's side is checked by the server (A53).
        const short = R.filter((r) => (o.get || {})[r] > (a.stock[r] || 0));
        const acc = h('button', { type: 'button', class: 'small primary accept', disabled: isOver() || short.length > 0 },
          t('tabs.offer.accept'));
        acc.addEventListener('click', () => act(acc, buttons, { accept: { offer: o.id } }));
        buttons.append(acc);
        if (!toAll) {
          const dec = h('button', { type: 'button', class: 'small decline', disabled: isOver() }, t('tabs.offer.decline'));
          dec.addEventListener('click', () => act(dec, buttons, { decline: { offer: o.id } }));
          buttons.append(dec);
        }
        if (short.length && !isOver()) {
          li.append(h('span', { class: 'muted short' },
            t('tabs.offer.short', { goods: short.map((r) => t(`res.${r}`)).join(', ') })));
        }
      }
      return li;
    }));
  }

  // The offer form: the stock column, the hint and the send button's state.
  function updateOffer() {
    if (!view) return;
    const stock = view.archipelago.stock || {};
    for (const cell of el.querySelectorAll('[data-have]')) cell.textContent = String(stock[cell.dataset.have] || 0);
    const give = Object.fromEntries(R.map((r) => [r, count(form.give[r])]));
    const get = Object.fromEntries(R.map((r) => [r, count(form.get[r])]));
    const left = offersLeft();
    let hint = '';
    if (left === 0) hint = t('tabs.make.none_left');
    else if ([...Object.values(give), ...Object.values(get)].some(Number.isNaN)) hint = t('tabs.make.bad_number');
    else if (!R.some((r) => give[r] > 0) || !R.some((r) => get[r] > 0)) hint = t('tabs.make.need_both');
    else {
      const over = R.find((r) => give[r] > (stock[r] || 0));
      if (over) hint = t('tabs.make.too_much', { n: stock[over] || 0, res: t(`res.${over}`) });
    }
    ui.offerHint.textContent = hint;
    ui.offerHint.hidden = !hint;
    ui.offerSend.disabled = Boolean(hint) || isOver();
    ui.offersLeft.textContent = t('tabs.offers_left', { n: left, max: rules.max_offers });
    ui.offersLeft.classList.toggle('none', left === 0);
  }

  function updateBank() {
    if (!view) return;
    const a = view.archipelago;
    const rate = bankRate(rules, a, form.bankGive);
    const times = count(form.times);
    const have = (a.stock || {})[form.bankGive] || 0;
    ui.bankRate.textContent = t('tabs.bank.rate_value', { rate });
    ui.bankPort.hidden = rate !== rules.port_rate || rules.port_rate === rules.bank_rate;
    let text;
    let ok = false;
    if (form.bankGive === form.bankGet) text = t('tabs.bank.same');
    else if (!(times >= 1)) text = t('tabs.bank.bad_times');
    else if (have < rate * times) {
      text = t('tabs.bank.short', { pay: rate * times, have, res: t(`res.${form.bankGive}`) });
    } else {
      ok = true;
      text = t('tabs.bank.summary', { pay: rate * times, give: t(`res.${form.bankGive}`), times, get: t(`res.${form.bankGet}`) });
    }
    ui.bankSummary.textContent = text;
    ui.bankSummary.classList.toggle('warn', !ok);
    ui.bankSend.disabled = !ok || isOver();
  }

  function drawChat() {
    const msgs = view.archipelago.chat || [];
    const key = JSON.stringify([msgs, (view.players || []).map((p) => p.nickname), ctx.lang()]);
    if (drawn.chat === key) return;
    drawn.chat = key;
    if (!msgs.length) {
      fill(ui.chatLog, h('li', { class: 'muted empty' }, t('tabs.chat.none')));
    } else {
      fill(ui.chatLog, msgs.map((m) => {
        const priv = m.to_seat !== undefined && m.to_seat !== null;
        const mark = !priv ? null : m.from_seat === view.you
          ? h('span', { class: 'private' }, rich(t('tabs.chat.private_to'), { name: ctx.nameOf(m.to_seat) }))
          : h('span', { class: 'private' }, t('tabs.chat.private'));
        return h('li', { class: priv ? 'priv' : '', 'data-from': m.from_seat },
          nick(m.from_seat), mark, h('span', { class: 'text', dir: 'auto' }, m.text));
      }));
    }
    ui.chatLog.scrollTop = ui.chatLog.scrollHeight; // newest last, in view
  }

  function updateChat() {
    if (!view) return;
    const left = chatsLeft();
    ui.chatLeft.textContent = t('tabs.chat.left', { n: left, max: rules.max_chat });
    ui.chatLeft.classList.toggle('none', left === 0);
    ui.chatSend.disabled = left === 0 || !form.chatText.trim() || isOver();
    ui.chatText.disabled = isOver();
  }

  function update() {
    if (!view || !view.archipelago) return;
    noteMade(view);
    ui.over.hidden = !isOver();
    playerOptions(ui.offerTo, form.to);
    playerOptions(ui.chatTo, form.chatTo);
    form.to = ui.offerTo.value;
    form.chatTo = ui.chatTo.value;
    drawOffers();
    updateOffer();
    updateBank();
    drawChat();
    updateChat();
  }

  // ---------------------------------------------------------------- actions
  // One action through ctx.act: the button waits; an error shows next to `anchor`.
  async function act(button, anchor, action) {
    ctx.clearError(anchor);
    button.disabled = true;
    try {
      await ctx.act(action);
      return true;
    } catch (err) {
      ctx.showError(anchor, err);
      return false;
    } finally {
      button.disabled = false; // the next view redraws what changed
      update();
    }
  }

  async function sendOffer() {
    updateOffer();
    if (ui.offerSend.disabled) return;
    const pick = (g) => Object.fromEntries(R.filter((r) => count(g[r]) > 0).map((r) => [r, count(g[r])]));
    const offer = { give: pick(form.give), get: pick(form.get) };
    if (form.to !== '') offer.to = Number(form.to);
    const anchor = ui.offerSend.parentElement;
    ctx.clearError(anchor);
    ui.offerSend.disabled = true;
    const sent = JSON.stringify([form.give, form.get]);
    try {
      await ctx.act({ offer });
      if (JSON.stringify([form.give, form.get]) === sent) { // not if the player typed the next one meanwhile
        form.give = {};
        form.get = {};
        for (const r of R) {
          el.querySelector(`#offer-give-${r}`).value = '';
          el.querySelector(`#offer-get-${r}`).value = '';
        }
      }
    } catch (err) {
      if (err && err.code === 'action/rate_limited') { made.full = true; saveMade(); }
      ctx.showError(anchor, err);
    } finally {
      update();
    }
  }

  async function sendBank() {
    updateBank();
    if (ui.bankSend.disabled) return;
    const bank = { give: form.bankGive, get: form.bankGet, times: count(form.times) };
    const ok = await act(ui.bankSend, ui.bankSend.parentElement, { bank });
    if (ok) { form.times = '1'; ui.bankTimes.value = '1'; update(); }
  }

  async function sendChat() {
    const text = form.chatText.trim();
    if (!text || ui.chatSend.disabled) return;
    const chat = { text };
    if (form.chatTo !== '') chat.to = Number(form.chatTo);
    const ok = await act(ui.chatSend, ui.chatSend.parentElement, { chat });
    if (ok) {
      form.chatText = '';
      ui.chatText.value = '';
      update();
      ui.chatText.focus();
    }
  }

  build();
  return {
    el,
    render(v) { view = v; update(); },
    relabel() { keepFocus(el, () => { (ctx.keepErrors || ((_r, fn) => fn()))(el, () => { build(); update(); }); }); },
  };
}

// ================================================================== Standing orders (W7)
export function standingTab(ctx, rules) {
  const { h } = ctx;
  const t = (key, params) => ctx.t(key, params);
  const R = rules.resources;
  const types = Object.fromEntries(rules.units.map((u) => [u.id, u]));
  const buildable = rules.units.filter((u) => u.buildable);
  const isMine = (type) => (types[type] || {}).move === 0 && type !== 'flag';
  const isShip = (type) => { const u = types[type]; return u && u.domain === 'sea' && u.move > 0 && type !== 'raft'; };
  const canMove = (type) => (types[type] || {}).move > 0;

  let view = null;
  let form = blank();
  let serverKey = null; // the server's standing orders the form was last loaded from (JSON)
  let dirty = false; // edited since loaded or saved
  let edits = 0; // counts edits, so that one made while a save is on its way stays unsaved
  let saved = false; // saved, not edited since
  let drawnKey = null;
  let sentUnits = []; // the unit ids of the last save, by index (to point at a refused entry)
  const el = h('div', { class: 'standing-tab' });
  let ui = {};
  const agent = agentPanel(ctx); // built once: the redraws below move it, never rebuild it

  // ---------------------------------------------------------------- the form's model
  function blank() {
    return { posture: 'hold', units: {}, queue: [], bonus: '', bankRules: [], ratio: '',
      add: { type: buildable[0] ? buildable[0].id : '', x: '', y: '', ship: '' } };
  }

  // The server's (normalised) standing orders as the form's model. Coordinates are kept as text.
  function fromServer(s) {
    const f = blank();
    f.add = form.add; // the "add to queue" choice is not part of the orders
    if (!s) return f;
    f.posture = s.posture || 'hold';
    const str = (tile) => (tile ? { x: String(tile.x ?? 0), y: String(tile.y ?? 0) } : { x: '', y: '' });
    for (const u of s.units || []) {
      f.units[u.unit] = { order: u.order || 'stay', guard: u.target ? 'unit' : 'tile', tile: str(u.tile),
        target: u.target || '', waypoints: (u.waypoints || []).map(str) };
    }
    f.queue = (s.build_queue || []).map((b) => ({ type: b.type, tile: b.tile ? str(b.tile) : null, ship: b.ship || '' }));
    f.bonus = s.bonus || '';
    f.bankRules = (s.bank_rules || []).map((b) => ({ give: b.give, get: b.get, keep: String(b.keep || 0) }));
    const ratios = (s.accept_rules || []).map((a) => a.max_ratio);
    f.ratio = ratios.length ? String(Math.max(...ratios)) : ''; // the engine uses the most generous
    return f;
  }

  // The form as ArchipelagoStandingOrders JSON; throws {text, field} for what the server would refuse.
  function toJson() {
    const mine = ownUnits();
    const bad = (text, field) => { throw { text, field }; };
    const tileOf = (tt, field) => {
      const x = count(tt && tt.x);
      const y = count(tt && tt.y);
      if (!tt || String(tt.x).trim() === '' || String(tt.y).trim() === '' || Number.isNaN(x) || Number.isNaN(y)) {
        bad(t('tabs.invalid.tile'), field);
      }
      return { x, y };
    };
    const units = [];
    sentUnits = [];
    for (const u of mine) {
      const o = form.units[u.id];
      if (!o || !o.order) continue;
      const i = units.length;
      const field = `units[${i}]`;
      const e = { unit: u.id, order: o.order };
      if (o.order === 'move' || (o.order === 'guard' && o.guard === 'tile')) e.tile = tileOf(o.tile, `${field}.tile`);
      if ((o.order === 'guard' && o.guard === 'unit') || o.order === 'escort') {
        if (!o.target) bad(t('tabs.invalid.target'), `${field}.target`);
        e.target = o.target;
      }
      if (o.order === 'hunt' && o.target) e.target = o.target;
      if (o.order === 'patrol') {
        if (o.waypoints.length < rules.min_waypoints || o.waypoints.length > rules.max_waypoints) {
          bad(t('tabs.invalid.waypoints', { min: rules.min_waypoints, max: rules.max_waypoints }), `${field}.waypoints`);
        }
        e.waypoints = o.waypoints.map((w, k) => tileOf(w, `${field}.waypoints[${k}]`));
      }
      units.push(e);
      sentUnits[i] = u.id;
    }
    const queue = form.queue.map((b, i) => {
      const e = { type: b.type };
      if (b.tile) e.tile = tileOf(b.tile, `build_queue[${i}].tile`);
      if (b.type === 'raft') e.ship = b.ship;
      return e;
    });
    const bankRules = form.bankRules.map((b, i) => {
      const keep = count(b.keep);
      if (Number.isNaN(keep)) bad(t('tabs.invalid.keep'), `bank_rules[${i}].keep`);
      if (b.give === b.get) bad(t('tabs.invalid.same'), `bank_rules[${i}].get`);
      return { give: b.give, get: b.get, keep };
    });
    const out = { posture: form.posture, units, build_queue: queue, bank_rules: bankRules, accept_rules: [] };
    if (form.bonus) out.bonus = form.bonus;
    const ratio = String(form.ratio).trim();
    if (ratio !== '') {
      const r = Number(ratio);
      if (!Number.isFinite(r) || r <= 0) bad(t('tabs.invalid.ratio'), 'accept_rules[0].max_ratio');
      out.accept_rules = [{ max_ratio: r }];
    }
    return out;
  }

  const ownUnits = () => (view && view.archipelago ? view.archipelago.units || [] : []);
  const unitName = (u) => `${t(`unit.${u.type}`)} ${coord(u.tile)}`;

  // Every edit: remember it, say "unsaved", and redraw when the shape of the form changed.
  function edited(redraw = false) {
    dirty = true;
    edits += 1;
    saved = false;
    showStatus();
    if (redraw) draw(true);
  }

  // ---------------------------------------------------------------- drawing
  function tileInputs(tile, label, k) {
    const max = view && view.archipelago ? view.archipelago : {};
    const x = h('input', { type: 'number', min: 0, max: (max.width || 1) - 1, step: 1, inputmode: 'numeric', class: 'coord',
      value: tile.x, 'aria-label': `${label}: ${t('tabs.tile.x')}`, 'data-k': `${k}.x`,
      oninput: () => { tile.x = x.value; edited(); } });
    const y = h('input', { type: 'number', min: 0, max: (max.height || 1) - 1, step: 1, inputmode: 'numeric', class: 'coord',
      value: tile.y, 'aria-label': `${label}: ${t('tabs.tile.y')}`, 'data-k': `${k}.y`,
      oninput: () => { tile.y = y.value; edited(); } });
    return h('span', { class: 'tile-in' }, h('span', { 'aria-hidden': 'true' }, t('tabs.tile.x')), x,
      h('span', { 'aria-hidden': 'true' }, t('tabs.tile.y')), y);
  }

  // A select bound to obj[key]; `options` [[value, text]]; a value no longer offered falls to the first.
  // `redraw`: the form's shape depends on it; `then(obj)`: adjust the model before that redraw.
  function bound(obj, key, options, attrs = {}, redraw = false, then = null) {
    if (!options.some(([v]) => v === obj[key]) && options.length) obj[key] = options[0][0];
    const sel = h('select', attrs, options.map(([v, text]) => h('option', { value: v, selected: v === obj[key] }, text)));
    sel.addEventListener('change', () => {
      obj[key] = sel.value;
      if (then) then(obj);
      edited(redraw);
    });
    return sel;
  }

  function unitRow(u) {
    const mine = ownUnits();
    if (!form.units[u.id]) form.units[u.id] = { order: '', guard: 'tile', tile: { x: '', y: '' }, target: '', waypoints: [] };
    const o = form.units[u.id];
    const name = unitName(u);
    // Orders this unit can follow (A72, A61: mines never move, flags never fight).
    const allowed = !canMove(u.type) ? ['stay'] : u.type === 'flag' ? ORDERS.filter((k) => k !== 'guard' && k !== 'hunt') : ORDERS;
    const choice = [['', t('tabs.order.default')], ...allowed.map((k) => [k, t(`tabs.order.${k}`)])];
    const sel = bound(o, 'order', choice, { class: 'order', 'aria-label': t('tabs.order.label', { unit: name }),
      'data-k': `u.${u.id}.order` }, true, () => prefill(u, o));
    const fields = h('div', { class: 'order-fields' });
    const k = `u.${u.id}`;
    const others = mine.filter((x) => x.id !== u.id).map((x) => [x.id, unitName(x)]);
    if (o.order === 'move') {
      fields.append(h('span', { class: 'field' }, h('span', {}, t('tabs.order.to_tile')), tileInputs(o.tile, name, `${k}.tile`)));
    } else if (o.order === 'guard') {
      const what = bound(o, 'guard', [['tile', t('tabs.order.guard_tile')], ['unit', t('tabs.order.guard_unit')]],
        { class: 'guard-what', 'aria-label': t('tabs.order.guard_what'), 'data-k': `${k}.guard` }, true);
      fields.append(what);
      if (o.guard === 'tile') fields.append(tileInputs(o.tile, name, `${k}.tile`));
      else if (others.length) fields.append(bound(o, 'target', others, { class: 'target', 'aria-label': t('tabs.order.target_unit'), 'data-k': `${k}.target` }));
      else fields.append(h('span', { class: 'muted' }, t('tabs.order.no_units')));
    } else if (o.order === 'escort') {
      fields.append(others.length
        ? h('label', { class: 'field' }, h('span', {}, t('tabs.order.escort_whom')),
          bound(o, 'target', others, { class: 'target', 'data-k': `${k}.target` }))
        : h('span', { class: 'muted' }, t('tabs.order.no_units')));
    } else if (o.order === 'hunt') {
      fields.append(h('label', { class: 'field' }, h('span', {}, t('tabs.order.hunt_whom')),
        bound(o, 'target', [['', t('tabs.order.hunt_nearest')], ...enemies()], { class: 'target', 'data-k': `${k}.target` })));
    } else if (o.order === 'patrol') {
      const list = h('ol', { class: 'waypoints' }, o.waypoints.map((w, i) => {
        const rm = h('button', { type: 'button', class: 'small remove-waypoint', 'data-k': `${k}.wp${i}.rm`,
          'aria-label': t('tabs.waypoint.remove', { n: i + 1 }), title: t('tabs.waypoint.remove', { n: i + 1 }) }, '✕');
        rm.addEventListener('click', () => { o.waypoints.splice(i, 1); edited(true); });
        return h('li', {}, tileInputs(w, `${name} ${t('tabs.waypoint.n', { n: i + 1 })}`, `${k}.wp${i}`), rm);
      }));
      const add = h('button', { type: 'button', class: 'small add-waypoint', 'data-k': `${k}.wp.add`,
        disabled: o.waypoints.length >= rules.max_waypoints }, t('tabs.waypoint.add'));
      add.addEventListener('click', () => { o.waypoints.push({ x: '', y: '' }); edited(true); });
      fields.append(h('div', { class: 'patrol' }, h('span', { class: 'muted' },
        t('tabs.waypoint.help', { min: rules.min_waypoints, max: rules.max_waypoints })), list, add));
    }
    return h('li', { 'data-unit': u.id, 'data-type': u.type, class: o.order ? 'has-order' : '' },
      h('span', { class: 'unit-name' }, t(`unit.${u.type}`), ' ', h('span', { class: 'num' }, coord(u.tile))), sel, fields);
  }

  // Sensible first values when an order is chosen: guard here; patrol from here.
  function prefill(u, o) {
    const here = { x: String(u.tile.x), y: String(u.tile.y) };
    if (o.order === 'guard' && o.tile.x === '' && o.tile.y === '') o.tile = here;
    if (o.order === 'patrol' && o.waypoints.length === 0) o.waypoints = [here, { x: '', y: '' }];
    if (o.order === 'hunt' && o.target && !enemies().some(([id]) => id === o.target)) o.target = '';
  }

  // Known enemies (in sight, then the log) for a hunt: owner, type if revealed, where last seen.
  function enemies() {
    const a = view.archipelago;
    const seen = new Set();
    const out = [];
    for (const e of [...(a.enemies || []), ...(a.enemy_log || [])]) {
      if (seen.has(e.id)) continue;
      seen.add(e.id);
      const what = e.type ? t(`unit.${e.type}`) : t(`tabs.domain.${e.domain || 'land'}`);
      out.push([e.id, t('tabs.enemy', { owner: ctx.nameOf(e.owner), what, tile: coord(e.tile) })]);
    }
    return out;
  }

  function queueRow(b, i) {
    const n = form.queue.length;
    const detail = b.type === 'raft'
      ? t('tabs.queue.for_ship', { ship: shipName(b.ship) })
      : b.tile ? t('tabs.queue.on_tile', { tile: coord({ x: b.tile.x, y: b.tile.y }) }) : '';
    const up = h('button', { type: 'button', class: 'small up', disabled: i === 0, 'data-k': `q${i}.up`,
      'aria-label': t('tabs.queue.up'), title: t('tabs.queue.up') }, '▲');
    const down = h('button', { type: 'button', class: 'small down', disabled: i === n - 1, 'data-k': `q${i}.down`,
      'aria-label': t('tabs.queue.down'), title: t('tabs.queue.down') }, '▼');
    const rm = h('button', { type: 'button', class: 'small remove', 'data-k': `q${i}.rm`,
      'aria-label': t('tabs.queue.remove'), title: t('tabs.queue.remove') }, '✕');
    const move = (d) => {
      [form.queue[i], form.queue[i + d]] = [form.queue[i + d], form.queue[i]];
      edited(true);
      // keep the focus on the entry that moved
      const again = el.querySelector(`[data-k="q${i + d}.${d < 0 ? 'up' : 'down'}"]`);
      if (again && !again.disabled) again.focus();
    };
    up.addEventListener('click', () => move(-1));
    down.addEventListener('click', () => move(1));
    rm.addEventListener('click', () => { form.queue.splice(i, 1); edited(true); });
    return h('li', { 'data-type': b.type },
      h('span', { class: 'pos num' }, String(i + 1)),
      h('span', { class: 'q-name' }, t(`unit.${b.type}`), detail ? h('span', { class: 'muted' }, ` ${detail}`) : null),
      h('span', { class: 'q-buttons' }, up, down, rm));
  }

  function shipName(id) {
    const s = ownUnits().find((u) => u.id === id);
    return s ? unitName(s) : t('tabs.queue.gone');
  }

  const costText = (u) => R.filter((r) => (u.cost || {})[r]).map((r) => t('tabs.goods_item', { n: u.cost[r], res: t(`res.${r}`) })).join(', ');
  const typeText = (u) => { const c = costText(u); return c ? `${t(`unit.${u.id}`)} · ${c}` : t(`unit.${u.id}`); };

  function queueAdd() {
    const a = form.add;
    const full = form.queue.length >= rules.max_build_queue;
    const typeSel = bound(a, 'type', buildable.map((u) => [u.id, typeText(u)]),
      { id: 'queue-add-type', 'data-k': 'queue-add-type' }, true);
    const extra = [];
    const ships = ownUnits().filter((u) => isShip(u.type)).map((u) => [u.id, unitName(u)]);
    let blocked = full;
    if (isMine(a.type)) {
      extra.push(h('span', { class: 'field' }, h('span', {}, t('tabs.queue.tile')), tileInputs(a, t('tabs.queue.tile'), 'queue-add')));
    } else if (a.type === 'raft') {
      if (ships.length) {
        extra.push(h('label', { class: 'field' }, h('span', {}, t('tabs.queue.ship')),
          bound(a, 'ship', ships, { id: 'queue-add-ship', 'data-k': 'queue-add-ship' })));
      } else {
        extra.push(h('span', { class: 'muted' }, t('tabs.queue.no_ship')));
        blocked = true;
      }
    }
    const add = h('button', { type: 'button', id: 'queue-add', 'data-k': 'queue-add', disabled: blocked }, t('tabs.queue.add'));
    add.addEventListener('click', () => {
      ctx.clearError(add);
      if (form.queue.length >= rules.max_build_queue) return;
      const entry = { type: a.type, tile: null, ship: '' };
      if (isMine(a.type)) {
        if (String(a.x).trim() === '' || String(a.y).trim() === '' || Number.isNaN(count(a.x)) || Number.isNaN(count(a.y))) {
          ctx.showError(add, { text: t('tabs.invalid.tile') });
          return;
        }
        entry.tile = { x: String(count(a.x)), y: String(count(a.y)) };
      }
      if (a.type === 'raft') entry.ship = a.ship;
      form.queue.push(entry);
      edited(true);
    });
    return h('div', { class: 'row queue-add' },
      h('label', { class: 'field' }, h('span', {}, t('tabs.queue.type')), typeSel), extra, add,
      full ? h('span', { class: 'muted', id: 'queue-full' }, t('tabs.queue.full', { max: rules.max_build_queue })) : null);
  }

  function bankRuleRow(b, i) {
    const res = R.map((r) => [r, t(`res.${r}`)]);
    const keep = h('input', { type: 'number', min: 0, step: 1, inputmode: 'numeric', class: 'keep', value: b.keep,
      'aria-label': t('tabs.bankrule.keep'), 'data-k': `br${i}.keep`, oninput: () => { b.keep = keep.value; edited(); } });
    const give = bound(b, 'give', res, { class: 'give', 'aria-label': t('tabs.bankrule.give'), 'data-k': `br${i}.give` });
    const get = bound(b, 'get', res, { class: 'get', 'aria-label': t('tabs.bankrule.get'), 'data-k': `br${i}.get` });
    const rm = h('button', { type: 'button', class: 'small remove', 'data-k': `br${i}.rm`,
      'aria-label': t('tabs.bankrule.remove'), title: t('tabs.bankrule.remove') }, '✕');
    rm.addEventListener('click', () => { form.bankRules.splice(i, 1); edited(true); });
    return h('li', { class: 'bank-rule' }, h('span', { class: 'rule-text' }, rich(t('tabs.bankrule.text'), { keep, give, get })), rm);
  }

  // The whole form from the model. `force`: the model's shape changed; otherwise only when the units,
  // the enemies known or the language changed (never while nothing did: the player may be typing).
  function draw(force = false) {
    if (!view || !view.archipelago) return;
    const a = view.archipelago;
    const key = JSON.stringify([ctx.lang(), (a.units || []).map((u) => [u.id, u.type, u.tile]),
      (a.enemies || []).map((e) => [e.id, e.type, e.tile]), (a.enemy_log || []).map((e) => [e.id, e.type]),
      (view.players || []).map((p) => p.nickname), view.status]);
    if (!force && key === drawnKey) return;
    drawnKey = key;
    keepFocus(el, build);
  }

  function build() {
    ui = {};
    const a = view.archipelago;
    const over = view.status === OVER;
    ui.posture = bound(form, 'posture', POSTURES.map((p) => [p, t(`tabs.posture.${p}`)]), { id: 'posture', 'data-k': 'posture' }, true);
    const units = a.units || [];
    ui.units = h('ul', { id: 'standing-units', class: 'plain' },
      units.length ? units.map(unitRow) : h('li', { class: 'muted empty' }, t('tabs.units.none')));
    ui.queue = h('ol', { id: 'queue', class: 'plain queue' }, form.queue.map(queueRow));
    ui.bonus = bound(form, 'bonus', [['', t('tabs.bonus.default')], ...R.map((r) => [r, t(`res.${r}`)])],
      { id: 'standing-bonus', 'data-k': 'bonus' });
    ui.bankRules = h('ul', { id: 'bank-rules', class: 'plain' }, form.bankRules.map(bankRuleRow));
    const addRule = h('button', { type: 'button', id: 'bank-rule-add', 'data-k': 'bank-rule-add',
      disabled: form.bankRules.length >= rules.max_bank_rules }, t('tabs.bankrule.add'));
    addRule.addEventListener('click', () => {
      form.bankRules.push({ give: R[0], get: R[2] || R[1], keep: '4' });
      edited(true);
    });
    ui.ratio = h('input', { id: 'accept-ratio', type: 'number', min: 0.1, step: 0.1, inputmode: 'decimal', value: form.ratio,
      placeholder: '—', 'data-k': 'accept-ratio', oninput: () => { form.ratio = ui.ratio.value; edited(); } });
    ui.save = h('button', { type: 'button', id: 'standing-save', class: 'primary', 'data-k': 'save', disabled: over },
      t('tabs.save'));
    ui.save.addEventListener('click', save);
    ui.status = h('span', { id: 'standing-saved', role: 'status' });
    ui.saveRow = h('div', { class: 'row save-row' }, ui.save, ui.status);

    fill(el,
      h('p', { class: 'muted intro' }, t('tabs.standing.intro')),
      over ? h('p', { class: 'notice' }, t('tabs.standing.over')) : null,
      h('section', { class: 'tab-section' },
        h('label', { class: 'row' }, h('span', { class: 'h' }, t('tabs.posture.label')), ui.posture),
        h('p', { class: 'muted hint', id: 'posture-help' }, t(`tabs.posture.help.${form.posture}`))),
      h('section', { class: 'tab-section' }, h('h3', {}, t('tabs.units.title')),
        h('p', { class: 'muted' }, t('tabs.units.help')), ui.units),
      h('section', { class: 'tab-section' },
        h('h3', {}, t('tabs.queue.title'), ' ',
          h('span', { class: 'tag', id: 'queue-count' }, t('tabs.queue.count', { n: form.queue.length, max: rules.max_build_queue }))),
        h('p', { class: 'muted' }, t('tabs.queue.help')),
        form.queue.length ? ui.queue : [ui.queue, h('p', { class: 'muted empty' }, t('tabs.queue.empty'))],
        queueAdd()),
      h('section', { class: 'tab-section' },
        h('label', { class: 'row' }, h('span', { class: 'h' }, t('tabs.bonus.label')), ui.bonus),
        h('p', { class: 'muted hint' }, t('tabs.bonus.help'))),
      h('section', { class: 'tab-section' }, h('h3', {}, t('tabs.rules.title')),
        h('h4', {}, t('tabs.bankrule.title')),
        form.bankRules.length ? null : h('p', { class: 'muted empty' }, t('tabs.bankrule.none')),
        ui.bankRules, addRule,
        h('h4', {}, t('tabs.accept.title')),
        h('label', { class: 'row accept' }, h('span', {}, t('tabs.accept.label')), ui.ratio, h('span', {}, t('tabs.accept.suffix'))),
        h('p', { class: 'muted hint' }, t('tabs.accept.help'))),
      ui.saveRow,
      agent.el);
    showStatus();
  }

  function showStatus() {
    if (!ui.status) return;
    ui.status.textContent = saved ? t('tabs.saved') : dirty ? t('tabs.unsaved') : '';
    ui.status.className = saved ? 'ok' : dirty ? 'dirty' : '';
  }

  // Point at the entry a refusal names (field "units[2].tile", "build_queue[20]", "bank_rules[0].get").
  function markField(field) {
    for (const x of el.querySelectorAll('.bad')) x.classList.remove('bad');
    const m = /^(units|build_queue|bank_rules)\[(\d+)\]/.exec(field || '');
    let li = null;
    if (m && m[1] === 'units' && sentUnits[Number(m[2])]) li = el.querySelector(`#standing-units li[data-unit="${CSS.escape(sentUnits[Number(m[2])])}"]`);
    if (m && m[1] === 'build_queue') li = el.querySelectorAll('#queue li')[Number(m[2])] || null;
    if (m && m[1] === 'bank_rules') li = el.querySelectorAll('#bank-rules li')[Number(m[2])] || null;
    if (!m && /^accept_rules/.test(field || '')) li = ui.ratio;
    if (li) {
      li.classList.add('bad');
      li.scrollIntoView({ block: 'nearest' });
    }
  }

  async function save() {
    ctx.clearError(ui.saveRow);
    markField('');
    let json;
    try {
      json = toJson();
    } catch (e) {
      if (!e || !e.text) throw e;
      markField(e.field);
      ctx.showError(ui.saveRow, e); // a refusal made here: {text, field}
      return;
    }
    const button = ui.save;
    const sent = edits;
    button.disabled = true;
    ui.status.textContent = t('tabs.saving');
    try {
      await ctx.setStanding(json);
      dirty = edits !== sent;
      saved = !dirty;
      serverKey = null; // take the server's normalised copy when it comes
    } catch (err) {
      markField(err && err.field);
      ctx.showError(ui.saveRow, err);
    } finally {
      button.disabled = view.status === OVER;
      showStatus();
    }
  }

  function render(v) {
    view = v;
    if (!v || !v.archipelago) return;
    agent.render(v);
    // Take the server's standing orders when they changed and the player has not edited the form.
    const key = JSON.stringify(v.archipelago_standing || null);
    if (key !== serverKey && !dirty) {
      serverKey = key;
      form = fromServer(v.archipelago_standing);
      draw(true);
      return;
    }
    draw();
  }

  return {
    el,
    render,
    relabel() { agent.relabel(); if (view) (ctx.keepErrors || ((_r, fn) => fn()))(el, () => draw(true)); },
  };
}
