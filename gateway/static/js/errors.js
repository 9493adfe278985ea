// Errors in the player's words (issue 22): one sentence per error code in the page's language, about
// the player's own units / cards / squares (the error's `field` read through the request the page
// sent, by the game screen's describeField), the rule's short title with its id linked to
// /rules/<game>#<id>, and the server's own reason — kept in Hebrew too, inside a left-to-right
// isolate — with every internal id (unit, offer, card, game, token ids) replaced or removed.
import { h } from './dom.js';
import { has, lang, t } from './i18n.js';

// A rule id's game: its letter (W: the web client's own spec has no rules page).
const RULE_GAME = { A: 'archipelago', S: 'salvo', M: 'arcmage' };

// Hex strings of 6+ characters with at least one digit and one letter, or 12+ digits: the shape of
// every internal id (unit ids, offer ids, token ids, game ids); words such as "face" never match.
const HEX_ID = /\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{6,}\b|\b[0-9]{12,}\b/g;
const NOUNS = 'unit|units|ship|carrier|offer|card|game|token|seat|target|instance|player';
// after a noun, an id of digits alone counts too (a unit id is 10 hex digits: now and then no letter)
const NOUN_ID = new RegExp(`\\b(${NOUNS})\\s+['"]?((?:${HEX_ID.source}|\\b[0-9]{8,}\\b))['"]?`, 'gi');

// The reason with its ids replaced: `name(id)` gives the player's words for an id it knows ("your
// Sergeant at (3, 4)"), else the id goes (its noun stays, as "the unit").
export function cleanReason(reason, name = () => '') {
  let text = String(reason || '');
  text = text.replace(NOUN_ID, (_m, noun, id) => name(id) || `the ${noun}`);
  text = text.replace(/['"]?\b[0-9a-f]{6,}\b['"]?/g, (m) => {
    const id = m.replace(/['"]/g, '');
    const known = name(id); // (an id this page knows, whatever its digits: "boarding 5388884695")
    if (known) return known;
    if (!new RegExp(`^(?:${HEX_ID.source})$`).test(id)) return m;
    return '…';
  });
  // Arcmage's card instance ids (c12): the card's name where this page knows it
  text = text.replace(/\bcards?\s+['"]?\b(c\d+)\b['"]?/g, (_m, id) => name(id) || 'the card');
  text = text.replace(/['"](c\d+)['"]/g, (_m, id) => name(id) || '…');
  text = text.replace(/\bc\d+\b/g, (m) => name(m) || m);
  text = text.replace(/\b[0-9]{12,}\b/g, '…').replace(/\b([Nn]o) the (\w+)/g, '$1 such $2');
  text = text.replace(/\s+([,:;.])/g, '$1').replace(/\s{2,}/g, ' ').trim();
  return text;
}

export const hasInternalId = (text) => new RegExp(HEX_ID.source).test(String(text || ''));

function sentenceCase(text) {
  const s = String(text || '').trim();
  return s ? s[0].toUpperCase() + s.slice(1) : s;
}

// What was refused, by the code (and, where it says more, by the field or the request it answered:
// `error.<code>@<field>` and `error.<code>#<request kind>` come first).
function whatText(err) {
  const code = err && err.code ? err.code : 'server/internal';
  const field = String((err && err.field) || '').split(/[.[]/)[0];
  const kind = err && err.kind ? err.kind : '';
  if (field && has(`error.${code}@${field}`)) return { text: t(`error.${code}@${field}`), byField: true };
  for (const k of [kind && `error.${code}#${kind}`, `error.${code}`]) {
    if (k && has(k)) return { text: t(k), byField: false };
  }
  return { text: t('error.unknown', { code }), byField: false };
}

// {what, about, rule: {id, title, href} | null, reason}: the parts of the sentence.
export function describeError(err, env = {}) {
  const what = whatText(err);
  const about = err && err.field && env.describe ? env.describe(err.field, err.request || {}) : '';
  const generic = err && err.field && !what.byField ? String(err.field).split(/[.[]/)[0] : '';
  const aboutText = about || (generic && has(`error.about.${generic}`) ? t(`error.about.${generic}`) : '');
  const ruleId = err && err.rule ? String(err.rule) : '';
  const game = RULE_GAME[ruleId[0]] || '';
  const rule = ruleId ? {
    id: ruleId,
    title: has(`rule.${ruleId}`) ? t(`rule.${ruleId}`) : '',
    href: game ? `/rules/${game}#${ruleId}` : '',
  } : null;
  const reason = cleanReason(err && err.reason, env.nameId || (() => ''));
  return { what: what.text, about: aboutText, rule, reason: sentenceCase(reason) };
}

// The sentence as DOM: "<what> (<about>). <reason>. Rule A24 — Boarding" with the rule linked.
export function errorNode(err, env = {}) {
  const box = h('span', { class: 'err-text' });
  if (err && err.text) { // a refusal made in the page, already in the player's words
    box.append(err.text);
    return box;
  }
  const d = describeError(err, env);
  box.append(h('span', { class: 'err-what' }, d.about ? t('error.what_about', { what: d.what, about: d.about }) : d.what),
    t('error.stop'));
  if (d.reason) {
    box.append(' ');
    if (lang() === 'en') {
      box.append(h('span', { class: 'err-reason' }, d.reason.replace(/[.]$/, ''), '.'));
    } else {
      box.append(h('span', { class: 'err-reason' }, t('error.server_says'), ' ',
        h('bdi', { dir: 'ltr', lang: 'en', class: 'ltr' }, d.reason)));
    }
  }
  if (d.rule) {
    const label = d.rule.title ? t('error.rule_titled', { rule: d.rule.id, title: d.rule.title }) : t('error.rule', { rule: d.rule.id });
    box.append(' ', h('span', { class: 'err-rule' }, '(',
      d.rule.href ? h('a', { href: d.rule.href, target: '_blank', rel: 'noopener', class: 'rule-link', 'data-rule': d.rule.id }, label) : label,
      ')'));
  }
  return box;
}

// The same as plain text (a title, a log line, a test).
export function errorString(err, env = {}) {
  return errorNode(err, env).textContent;
}
