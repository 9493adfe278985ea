// Translations: every string the page shows comes from /static/i18n/<lang>/<namespace>.json.
// Keys are flat ("home.open"); a value may hold {name} placeholders. Hebrew is right-to-left.
export const LANGS = ['en', 'he'];
const RTL = new Set(['he']);
const NAMESPACES = ['common', 'archipelago', 'archipelago_tabs', 'salvo', 'agent', 'arcmage', 'rules', 'notify', 'community'];
let table = {};
let current = 'en';
const listeners = new Set();

export function lang() { return current; }
export function dir() { return RTL.has(current) ? 'rtl' : 'ltr'; }

// The language to start in: the player's choice, else the browser's, else English.
export function preferredLang() {
  const saved = localStorage.getItem('archipelago.lang');
  if (LANGS.includes(saved)) return saved;
  for (const l of navigator.languages || [navigator.language || 'en']) {
    const base = String(l).toLowerCase().split('-')[0];
    if (base === 'iw') return 'he';
    if (LANGS.includes(base)) return base;
  }
  return 'en';
}

// The latest setLang wins: an earlier one that answers later changes nothing, and resolves once the
// latest has (so that whoever awaited it finds the words in).
let asked = 0;
let latest = Promise.resolve();

export function setLang(l, options = {}) {
  const mine = ++asked;
  latest = load(l, options, mine);
  return latest;
}

async function load(l, { remember = false } = {}, mine = asked) {
  if (!LANGS.includes(l)) l = 'en';
  const parts = await Promise.all(NAMESPACES.map(async (ns) => {
    const r = await fetch(`/static/i18n/${l}/${ns}.json`);
    if (!r.ok) throw new Error(`translations ${l}/${ns}: HTTP ${r.status}`);
    return r.json();
  }));
  if (mine !== asked) { await latest; return; }
  table = Object.assign({}, ...parts);
  current = l;
  if (remember) localStorage.setItem('archipelago.lang', l);
  document.documentElement.lang = l;
  document.documentElement.dir = dir();
  translateStatic(document);
  for (const fn of listeners) fn(l);
}

export function onLang(fn) { listeners.add(fn); return () => listeners.delete(fn); }

// t('lobby.seats', {taken: 1, seats: 2}); a missing key shows itself (and a test finds it).
export function t(key, params = {}) {
  let text = table[key];
  if (text === undefined) {
    console.warn(`missing translation: ${current}/${key}`);
    return key;
  }
  for (const [k, v] of Object.entries(params)) text = text.replaceAll(`{${k}}`, String(v));
  return text;
}

export function has(key) { return key in table; }

// Elements written in HTML with data-t="key" get their text from the table.
export function translateStatic(root) {
  for (const el of root.querySelectorAll('[data-t]')) el.textContent = t(el.dataset.t);
}
