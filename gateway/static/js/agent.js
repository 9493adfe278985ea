// The personal AI agent panel (W7 bottom; rule A90): the MCP endpoint an AI agent connects to, the
// player's agent tokens (create, list, revoke) and, right after creating one, the token itself with
// a ready-to-paste MCP client configuration. Mounted at the bottom of the Archipelago Standing tab
// (js/archipelago_tabs.js) and under the Salvo screen's lists (js/salvo.js):
//   agentPanel(ctx) → {el, render(view), relabel(), destroy()}
// The server keeps only a hash of a token: its string is on this page once, in memory only (never in
// storage), until the player hides it or leaves. The list is read when the panel is first seen and
// after each change, not on every view.

import { words } from './dom.js';

let MAX_TOKENS = 5; // live tokens per player, until ListAgentTokens says (its max_tokens)
const MAX_LABEL = 40;

export function agentPanel(ctx) {
  const { h } = ctx;
  const t = (key, params) => ctx.t(key, params);

  let tokens = null; // the live tokens as last listed (null: not read yet)
  let mcpUrl = ''; // from the server's answers; until then this page's own origin
  let fresh = null; // the token just created: {token_id, label, token, mcp_url}
  let loads = 0; // numbers list reads, so that an older answer never overwrites a newer one
  let loaded = false; // the first read was asked for
  let destroyed = false;
  const endpoint = () => mcpUrl || `${location.origin}/mcp`;

  // ---------------------------------------------------------------- the elements (built once)
  const title = h('h3', { id: 'agent-title' });
  const intro = h('p', { class: 'agent-intro' });
  const privacy = h('p', { class: 'muted agent-private' });

  // The MCP endpoint, with a copy button.
  const urlLabel = h('label', { for: 'agent-url', class: 'agent-field-name' });
  const url = h('input', { id: 'agent-url', readonly: true, dir: 'ltr', class: 'ltr', spellcheck: 'false',
    autocomplete: 'off', onfocus: () => url.select() });
  const urlCopy = h('button', { type: 'button', class: 'small', id: 'agent-url-copy',
    onclick: () => ctx.copy(endpoint(), urlCopy) });
  const urlHelp = h('p', { class: 'muted hint agent-url-help' });

  // Create a token: an optional label, then the button (its errors appear after the row).
  const labelName = h('label', { for: 'agent-label', class: 'agent-field-name' });
  const label = h('input', { id: 'agent-label', maxlength: MAX_LABEL, autocomplete: 'off', enterkeyhint: 'done' });
  const create = h('button', { type: 'submit', id: 'agent-create', class: 'primary' });
  const createRow = h('div', { class: 'row agent-create-row' }, label, create);
  const fullNote = h('p', { class: 'muted hint', id: 'agent-full', hidden: true });
  const createForm = h('form', { class: 'agent-create', novalidate: true,
    onsubmit: (ev) => { ev.preventDefault(); onCreate(); } }, labelName, createRow, fullNote);

  // The new token, shown once.
  const newTitle = h('h4', { id: 'agent-new-title' });
  const newWarning = h('p', { class: 'warning agent-new-warning', id: 'agent-new-warning' });
  const tokenLabel = h('label', { for: 'agent-new-token', class: 'agent-field-name' });
  const tokenInput = h('input', { id: 'agent-new-token', readonly: true, dir: 'ltr', class: 'ltr',
    spellcheck: 'false', autocomplete: 'off', 'aria-describedby': 'agent-new-warning',
    onfocus: () => tokenInput.select() });
  const tokenCopy = h('button', { type: 'button', class: 'small', id: 'agent-token-copy',
    onclick: () => fresh && ctx.copy(fresh.token, tokenCopy) });
  const configHelp = h('p', { class: 'agent-field-name', id: 'agent-config-help' });
  const config = h('pre', { id: 'agent-config', dir: 'ltr', class: 'ltr', tabindex: 0,
    'aria-labelledby': 'agent-config-help' });
  const configCopy = h('button', { type: 'button', class: 'small', id: 'agent-config-copy',
    onclick: () => fresh && ctx.copy(config.textContent, configCopy) });
  const hide = h('button', { type: 'button', class: 'small', id: 'agent-new-hide', onclick: hideFresh });
  const freshBox = h('div', { id: 'agent-new', class: 'agent-new', hidden: true },
    newTitle, newWarning,
    tokenLabel, h('div', { class: 'row agent-copy-row' }, tokenInput, tokenCopy),
    configHelp, config,
    h('div', { class: 'row agent-new-buttons' }, configCopy, hide));

  // The live tokens.
  const listTitle = h('h4', { id: 'agent-tokens-title' });
  const count = h('span', { class: 'tag', id: 'agent-count' });
  const listHead = h('div', { class: 'agent-list-head' }, listTitle, count);
  const list = h('ul', { id: 'agent-tokens', class: 'plain agent-tokens', 'aria-labelledby': 'agent-tokens-title' });
  const empty = h('p', { class: 'muted agent-empty', id: 'agent-empty', hidden: true });
  const said = h('p', { class: 'muted agent-said', id: 'agent-status', role: 'status' });

  const el = h('section', { id: 'agent', class: 'agent agent-panel', 'aria-labelledby': 'agent-title' },
    title, intro, privacy,
    urlLabel, h('div', { class: 'row agent-copy-row' }, url, urlCopy), urlHelp,
    createForm, freshBox,
    listHead, list, empty, said);

  // ---------------------------------------------------------------- words
  function labels() {
    words(t, [[title, 'agent.title'], [intro, 'agent.intro'], [privacy, 'agent.private'], [urlLabel, 'agent.url'],
      [urlCopy, 'common.copy'], [urlHelp, 'agent.url_help'], [labelName, 'agent.label'], [create, 'agent.create'],
      [newTitle, 'agent.new_title'], [newWarning, 'agent.new_warning'], [tokenLabel, 'agent.token'],
      [tokenCopy, 'common.copy'], [configHelp, 'agent.config'], [configCopy, 'agent.config_copy'],
      [hide, 'agent.hide'], [listTitle, 'agent.tokens'], [empty, 'agent.none']]);
    urlCopy.setAttribute('aria-label', t('agent.url_copy'));
    label.placeholder = t('agent.label_placeholder');
    tokenCopy.setAttribute('aria-label', t('agent.token_copy'));
    fullNote.textContent = t('agent.full', { max: MAX_TOKENS });
  }

  // The endpoint, the new token's box and the list, from the model.
  function draw() {
    if (url.value !== endpoint()) url.value = endpoint();
    freshBox.hidden = !fresh;
    if (fresh) {
      tokenInput.value = fresh.token;
      config.textContent = JSON.stringify({ mcpServers: { archipelago: {
        url: fresh.mcp_url || endpoint(), headers: { Authorization: `Bearer ${fresh.token}` } } } }, null, 2);
    } else {
      tokenInput.value = '';
      config.textContent = '';
    }
    const n = tokens ? tokens.length : 0;
    count.textContent = t('agent.count', { n, max: MAX_TOKENS });
    count.hidden = !tokens;
    empty.hidden = !tokens || n > 0;
    create.disabled = Boolean(tokens && n >= MAX_TOKENS);
    fullNote.hidden = !create.disabled;
    list.replaceChildren(...(tokens || []).map(tokenRow));
  }

  function tokenRow(tok) {
    const name = tok.label || t('agent.unlabelled');
    const when = new Date(Number(tok.created_unix_ms) || 0);
    const revoke = h('button', { type: 'button', class: 'small revoke',
      'aria-label': t('agent.revoke_named', { label: name }) }, t('agent.revoke'));
    revoke.addEventListener('click', () => onRevoke(tok, revoke));
    return h('li', { 'data-token-id': tok.token_id, class: fresh && fresh.token_id === tok.token_id ? 'new' : '' },
      h('span', { class: tok.label ? 'agent-token-label' : 'agent-token-label muted' }, name),
      h('time', { class: 'muted agent-token-time', datetime: when.toISOString() },
        t('agent.created', { time: formatTime(when) })),
      revoke);
  }

  // A date and time in the player's words: the page's language, with the browser's region when it
  // speaks the same language (en-GB writes dates its own way).
  function formatTime(date) {
    const l = ctx.lang();
    const browser = (navigator.languages || [navigator.language || '']).find((x) => String(x).split('-')[0] === l);
    try {
      return new Intl.DateTimeFormat(browser || l, { dateStyle: 'medium', timeStyle: 'short' }).format(date);
    } catch {
      return date.toLocaleString();
    }
  }

  // ---------------------------------------------------------------- talking to the server
  // Errors the shell would word for another matter (a per-round limit, malformed orders) get the
  // panel's own words; the rest as the shell says them.
  function explain(err) {
    // (all live tokens taken: `lobby/conflict`, revoking one helps — waiting does not)
    if (err && err.code === 'lobby/conflict') return { ...err, text: t('agent.error.full', { max: MAX_TOKENS }) };
    if (err && err.code === 'order/invalid' && err.field === 'label') return { ...err, text: t('agent.error.label', { max: MAX_LABEL }) };
    if (err && err.code === 'lookup/not_found' && err.field === 'token_id') return { ...err, text: t('agent.error.gone') };
    return err;
  }

  function load() {
    loaded = true;
    const mine = ++loads;
    ctx.clearError(listHead); // a failed read's error: this read may go better
    ctx.call('Game/ListAgentTokens', {}).then((resp) => {
      if (destroyed || mine !== loads) return;
      tokens = resp.tokens || [];
      if (resp.max_tokens) MAX_TOKENS = resp.max_tokens;
      const known = tokens.find((x) => x.mcp_url);
      if (known) mcpUrl = known.mcp_url;
      draw();
    }).catch((err) => {
      if (destroyed || mine !== loads) return;
      ctx.showError(listHead, explain(err));
    });
  }

  async function onCreate() {
    ctx.clearError(createRow);
    said.textContent = '';
    const text = label.value.trim();
    if (text.length > MAX_LABEL) {
      ctx.showError(createRow, { text: t('agent.error.label', { max: MAX_LABEL }) });
      return;
    }
    create.disabled = true;
    try {
      const made = await ctx.call('Game/CreateAgentToken', { label: text });
      if (destroyed) return;
      if (made.mcp_url) mcpUrl = made.mcp_url;
      fresh = { token_id: made.token_id, label: made.label, token: made.token, mcp_url: made.mcp_url };
      label.value = '';
      draw();
      said.textContent = t('agent.created_status');
      freshBox.scrollIntoView({ block: 'nearest' });
      tokenInput.focus({ preventScroll: true });
    } catch (err) {
      ctx.showError(createRow, explain(err));
    } finally {
      create.disabled = false;
      if (!destroyed) load(); // the list as the server has it now (and the button's state with it)
    }
  }

  async function onRevoke(tok, button) {
    ctx.clearError(list);
    said.textContent = '';
    button.disabled = true;
    try {
      await ctx.call('Game/RevokeAgentToken', { token_id: tok.token_id });
      if (destroyed) return;
      // Gone at once from the page; a token just shown goes with it.
      if (tokens) tokens = tokens.filter((x) => x.token_id !== tok.token_id);
      if (fresh && fresh.token_id === tok.token_id) fresh = null;
      draw();
      said.textContent = t('agent.revoked', { label: tok.label || t('agent.unlabelled') });
      label.focus({ preventScroll: true });
    } catch (err) {
      button.disabled = false;
      ctx.showError(list, explain(err));
    } finally {
      if (!destroyed) load();
    }
  }

  function hideFresh() {
    fresh = null;
    said.textContent = '';
    draw();
    label.focus({ preventScroll: true });
  }

  // ---------------------------------------------------------------- when to read the list
  // When the panel is first laid out: the Standing tab opened, the Salvo page shown. (A hidden tab
  // has no size; it gets one when it opens, and the observer says so.)
  const shown = () => el.isConnected && el.getClientRects().length > 0;
  const seen = 'ResizeObserver' in window ? new ResizeObserver(() => {
    if (!loaded && shown()) load();
  }) : null;
  if (seen) seen.observe(el);

  labels();
  draw();

  return {
    el,
    render() {
      // Nothing in the view concerns the tokens: only a first read, if the observer has not made it.
      if (!loaded && (!seen || shown())) load();
    },
    relabel() { labels(); draw(); },
    destroy() {
      destroyed = true;
      if (seen) seen.disconnect();
    },
  };
}
