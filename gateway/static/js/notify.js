// Notifications (issue 23; proto/archipelago/v1/notify.proto), the same in every game's screen (the
// shell, js/app.js, mounts it):
//   notifyPanel(ctx) → {button, offer, el, render(view), update(u), relabel(), destroy()}
// - `button` (🔔, in the status strip) opens `el`, the panel: each channel's state as the server
//   says it (GetNotifications) — this browser's Web Push, a webhook, email — and what to change:
//   turn Web Push on (permission → /sw.js → PushManager.subscribe → SetNotifications) or off, set or
//   remove a webhook (its signing secret shown once) or an address, and which kinds each channel
//   brings. Every change carries an idempotency key and the page's language (the notifications' own).
// - `offer`: a card, once (after the first game this browser sees running), "Get notified when it is
//   your turn?" — only where the browser can (Notification + service worker + PushManager).
// - update(u): a page that is open but hidden tells its player itself when its Watch stream makes it
//   the player's turn or decision, with the tag the server's push uses ("<game_id>:<kind>:<round>"),
//   so that the push for the same thing replaces this one rather than doubling it.
// Nothing secret is kept: the signing secret is in memory until hidden, addresses come back masked.
import { randomId } from './api.js';
import { words } from './dom.js';

const OFFER_KEY = 'archipelago.notify.offer'; // "on" | "later": the offer was answered (never again)
const deviceKey = (gameId) => `archipelago.notify.device.${gameId}`; // this browser subscribed to the game
const EMAIL_DEFAULTS = ['game_started', 'your_turn', 'your_decision', 'deadline', 'game_over'];

export const pushSupported = () => 'Notification' in window && 'serviceWorker' in navigator && 'PushManager' in window;

// base64url → bytes (PushManager.subscribe's applicationServerKey)
function keyBytes(b64) {
  const s = String(b64).replace(/-/g, '+').replace(/_/g, '/');
  const raw = atob(s + '='.repeat((4 - (s.length % 4)) % 4));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

// "HH:MM UTC" as the server's words write a deadline (services/notify/kinds.py hhmm_utc)
function hhmmUtc(ms) {
  if (!Number(ms)) return '—';
  const d = new Date(Number(ms));
  return `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')} UTC`;
}

export function notifyPanel(ctx) {
  const { h, gameId } = ctx;
  const t = (key, params) => ctx.t(key, params);
  let settings = null; // NotificationSettings as last answered
  let secret = ''; // a new webhook's signing secret: shown once, in memory only
  let loading = null;
  let loadError = null; // why the last read failed
  let destroyed = false;
  let view = null;
  const shownTags = new Set(); // what this page already told its player itself

  // ---------------------------------------------------------------- the elements (built once)
  const button = h('button', { type: 'button', class: 'small notify-open', id: 'notify-open',
    'aria-controls': 'notify', 'aria-expanded': 'false', onclick: () => toggle() });
  const title = h('h3', { id: 'notify-title', tabindex: '-1' });
  const close = h('button', { type: 'button', class: 'small notify-close', id: 'notify-close', onclick: () => toggle(false) });
  const intro = h('p', { class: 'muted notify-intro' });
  const langLine = h('p', { class: 'muted hint notify-lang', id: 'notify-lang' });
  const langSwitch = h('button', { type: 'button', class: 'small', id: 'notify-lang-switch', hidden: true,
    onclick: () => save(langSwitch, {}) });
  const loadingLine = h('p', { class: 'muted', id: 'notify-loading', role: 'status' });
  const said = h('p', { class: 'muted notify-said', id: 'notify-status', role: 'status' });

  // Web Push (this browser)
  const pushTitle = h('h4', { id: 'notify-push-title' });
  const pushHelp = h('p', { class: 'muted hint' });
  const pushState = h('p', { class: 'notify-state', id: 'notify-push-state' });
  const pushNote = h('p', { class: 'hint notify-note', id: 'notify-push-note', hidden: true });
  const pushOn = h('button', { type: 'button', class: 'primary', id: 'notify-push-on', onclick: () => turnOn(pushActions) });
  const pushOff = h('button', { type: 'button', id: 'notify-push-off', onclick: () => turnOff() });
  const pushActions = h('div', { class: 'row notify-actions' }, pushOn, pushOff);
  const pushKinds = h('fieldset', { class: 'notify-kinds', id: 'notify-push-kinds' });
  const pushBox = h('section', { class: 'notify-channel', id: 'notify-push', 'data-channel': 'web_push',
    'aria-labelledby': 'notify-push-title' }, pushTitle, pushHelp, pushState, pushNote, pushActions, pushKinds);

  // Webhook
  const hookTitle = h('h4', { id: 'notify-webhook-title' });
  const hookHelp = h('p', { class: 'muted hint' });
  const hookState = h('p', { class: 'notify-state', id: 'notify-webhook-state' });
  const hookLabel = h('label', { for: 'notify-webhook-url', class: 'notify-field-name' });
  const hookUrl = h('input', { id: 'notify-webhook-url', type: 'url', inputmode: 'url', dir: 'ltr', class: 'ltr',
    maxlength: 2048, autocomplete: 'off', spellcheck: 'false', placeholder: 'https://discord.com/api/webhooks/…' });
  const hookSame = h('p', { class: 'muted hint', id: 'notify-webhook-same', hidden: true });
  const hookSet = h('button', { type: 'submit', class: 'primary', id: 'notify-webhook-set' });
  const hookRemove = h('button', { type: 'button', id: 'notify-webhook-remove', onclick: () => save(hookActions, { webhook: { kinds: [], url: '' } }) });
  const hookActions = h('div', { class: 'row notify-actions' }, hookSet, hookRemove);
  const hookKinds = h('fieldset', { class: 'notify-kinds', id: 'notify-webhook-kinds' });
  const secretTitle = h('h5', { id: 'notify-secret-title' });
  const secretHint = h('p', { class: 'warning', id: 'notify-secret-hint' });
  const secretInput = h('input', { id: 'notify-secret', readonly: true, dir: 'ltr', class: 'ltr', spellcheck: 'false',
    autocomplete: 'off', 'aria-labelledby': 'notify-secret-title', 'aria-describedby': 'notify-secret-hint',
    onfocus: () => secretInput.select() });
  const secretCopy = h('button', { type: 'button', class: 'small', id: 'notify-secret-copy', onclick: () => ctx.copy(secret, secretCopy) });
  const secretHide = h('button', { type: 'button', class: 'small', id: 'notify-secret-hide', onclick: () => { secret = ''; draw(); } });
  const secretBox = h('div', { class: 'notify-secret', id: 'notify-secret-box', hidden: true },
    secretTitle, secretHint, h('div', { class: 'row' }, secretInput, secretCopy), secretHide);
  const hookForm = h('form', { class: 'notify-form', novalidate: true, onsubmit: (ev) => { ev.preventDefault(); setWebhook(); } },
    hookLabel, hookUrl, hookSame, hookKinds, hookActions);
  const hookBox = h('section', { class: 'notify-channel', id: 'notify-webhook', 'data-channel': 'webhook',
    'aria-labelledby': 'notify-webhook-title' }, hookTitle, hookHelp, hookState, secretBox, hookForm);

  // Email
  const mailTitle = h('h4', { id: 'notify-email-title' });
  const mailHelp = h('p', { class: 'muted hint' });
  const mailState = h('p', { class: 'notify-state', id: 'notify-email-state' });
  const mailLabel = h('label', { for: 'notify-email-address', class: 'notify-field-name' });
  const mailAddress = h('input', { id: 'notify-email-address', type: 'email', inputmode: 'email', dir: 'ltr', class: 'ltr',
    maxlength: 254, autocomplete: 'email', spellcheck: 'false', placeholder: 'you@example.com' });
  const mailSame = h('p', { class: 'muted hint', id: 'notify-email-same', hidden: true });
  const mailSet = h('button', { type: 'submit', class: 'primary', id: 'notify-email-set' });
  const mailRemove = h('button', { type: 'button', id: 'notify-email-remove', onclick: () => save(mailActions, { email: { kinds: [], address: '' } }) });
  const mailActions = h('div', { class: 'row notify-actions' }, mailSet, mailRemove);
  const mailKinds = h('fieldset', { class: 'notify-kinds', id: 'notify-email-kinds' });
  const mailForm = h('form', { class: 'notify-form', novalidate: true, onsubmit: (ev) => { ev.preventDefault(); setEmail(); } },
    mailLabel, mailAddress, mailSame, mailKinds, mailActions);
  const mailBox = h('section', { class: 'notify-channel', id: 'notify-email', 'data-channel': 'email',
    'aria-labelledby': 'notify-email-title' }, mailTitle, mailHelp, mailState, mailForm);

  const channels = h('div', { class: 'notify-channels', hidden: true }, pushBox, hookBox, mailBox);
  const el = h('section', { id: 'notify', class: 'card notify-panel', hidden: true, 'aria-labelledby': 'notify-title' },
    h('div', { class: 'notify-head' }, title, close), intro, loadingLine,
    h('div', { class: 'notify-lang-row' }, langLine, langSwitch), channels, said);

  // The offer (once)
  const offerTitle = h('h3', { id: 'notify-offer-title' });
  const offerBody = h('p', {});
  const offerHint = h('p', { class: 'muted hint' });
  const offerOn = h('button', { type: 'button', class: 'primary', id: 'notify-offer-on', onclick: () => acceptOffer() });
  const offerLater = h('button', { type: 'button', id: 'notify-offer-later', onclick: () => answerOffer('later') });
  const offerActions = h('div', { class: 'row notify-actions' }, offerOn, offerLater);
  const offer = h('section', { id: 'notify-offer', class: 'card notice notify-offer', hidden: true, role: 'region',
    'aria-labelledby': 'notify-offer-title' }, offerTitle, offerBody, offerActions, offerHint);

  // ---------------------------------------------------------------- words
  function labels() {
    words(t, [[title, 'notify.title'], [intro, 'notify.intro'], [loadingLine, 'notify.loading'],
      [pushTitle, 'notify.push.title'], [pushHelp, 'notify.push.help'], [pushOn, 'notify.push.on'],
      [pushOff, 'notify.push.off'], [hookTitle, 'notify.webhook.title'], [hookHelp, 'notify.webhook.help'],
      [hookLabel, 'notify.webhook.url'], [hookSame, 'notify.webhook.same_url'], [hookSet, 'notify.webhook.set'],
      [hookRemove, 'notify.webhook.remove'], [secretTitle, 'notify.webhook.secret_title'],
      [secretHint, 'notify.webhook.secret_hint'], [secretCopy, 'common.copy'],
      [secretHide, 'notify.webhook.secret_hide'], [mailTitle, 'notify.email.title'], [mailHelp, 'notify.email.help'],
      [mailLabel, 'notify.email.address'], [mailSame, 'notify.email.same_address'], [mailSet, 'notify.email.set'],
      [mailRemove, 'notify.email.remove'], [offerTitle, 'notify.offer.title'], [offerBody, 'notify.offer.body'],
      [offerHint, 'notify.offer.later_hint'], [offerOn, 'notify.offer.on'], [offerLater, 'notify.offer.later']]);
    button.textContent = `🔔 ${t('notify.open')}`;
    button.setAttribute('aria-label', t('notify.open_label'));
    button.title = t('notify.open_label');
    close.textContent = '✕';
    close.setAttribute('aria-label', t('notify.close'));
  }

  // ---------------------------------------------------------------- drawing the model
  const available = () => (settings && settings.kinds_available) || [];
  // The kinds a channel brings: its own list, or (empty) the defaults
  function kindsOf(channel) {
    const c = settings && settings[channel];
    if (c && c.kinds && c.kinds.length) return c.kinds;
    return channel === 'email' ? available().filter((k) => EMAIL_DEFAULTS.includes(k)) : available();
  }
  // Checkboxes of the available kinds (the last checked one cannot be unchecked: none is not a choice)
  function drawKinds(box, channel, onChange) {
    const on = new Set(kindsOf(channel));
    const legend = h('legend', {}, t('notify.kinds'));
    const boxes = available().map((k) => {
      const input = h('input', { type: 'checkbox', value: k, checked: on.has(k), 'data-kind': k });
      if (onChange) input.addEventListener('change', () => onChange(box));
      return h('label', { class: 'row check notify-kind' }, input, h('span', {}, t(`notify.kind.${k}`)));
    });
    box.replaceChildren(legend, ...boxes);
    guardLast(box);
  }
  function guardLast(box) {
    const inputs = [...box.querySelectorAll('input[type=checkbox]')];
    const checked = inputs.filter((i) => i.checked);
    for (const i of inputs) i.disabled = checked.length === 1 && i.checked;
  }
  const checkedKinds = (box) => [...box.querySelectorAll('input[type=checkbox]:checked')].map((i) => i.value);

  hookKinds.addEventListener('change', () => guardLast(hookKinds));
  mailKinds.addEventListener('change', () => guardLast(mailKinds));
  let kindsDrawn = null; // [settings, language] the checkboxes were drawn for (a redraw keeps a choice not yet saved)

  const stateWord = (c) => t(`notify.state.${(c && c.state) || 'off'}`);
  const thisBrowser = () => localStorage.getItem(deviceKey(gameId)) === '1';

  function draw() {
    if (destroyed) return;
    loadingLine.hidden = Boolean(settings);
    channels.hidden = !settings;
    langLine.hidden = !settings;
    if (!settings) { langSwitch.hidden = true; return; }
    const page = ctx.lang();
    const differs = Boolean(settings.language) && settings.language !== page && anyOn();
    langLine.textContent = t(differs ? 'notify.language_other' : 'notify.language');
    langSwitch.hidden = !differs;
    langSwitch.textContent = t('notify.language_switch');

    // Web Push
    const wp = settings.web_push || { state: 'off' };
    const devices = (settings.web_push_devices || []).length;
    pushBox.dataset.state = wp.state || 'off';
    if (wp.state === 'active') {
      pushState.textContent = devices === 1 ? t('notify.push.on_device_one') : t('notify.push.on_devices', { n: devices });
    } else if (wp.state === 'disabled') {
      pushState.textContent = `${stateWord(wp)}: ${wp.reason || ''}`;
    } else {
      pushState.textContent = stateWord(wp);
    }
    let note = '';
    if (!pushSupported()) note = t('notify.push.unsupported');
    else if (Notification.permission === 'denied') note = t('notify.push.blocked');
    pushNote.textContent = note;
    pushNote.hidden = !note;
    pushOn.hidden = !pushSupported() || (wp.state === 'active' && thisBrowser());
    pushOff.hidden = (wp.state || 'off') === 'off';
    const redrawKinds = !kindsDrawn || kindsDrawn[0] !== settings || kindsDrawn[1] !== page;
    if (redrawKinds) drawKinds(pushKinds, 'web_push', (box) => save(box, { web_push: { kinds: checkedKinds(box) } }));

    // Webhook
    const wh = settings.webhook || { state: 'off' };
    hookBox.dataset.state = wh.state || 'off';
    if (wh.state === 'active') {
      hookState.textContent = t('notify.webhook.to', { host: settings.webhook_host || '?' });
      if (wh.reason) hookState.textContent += ` ${t('notify.webhook.last_failure', { reason: wh.reason })}`;
    } else if (wh.state === 'disabled') {
      hookState.textContent = t('notify.webhook.stopped', { reason: wh.reason || '?' });
    } else {
      hookState.textContent = stateWord(wh);
    }
    hookSame.hidden = (wh.state || 'off') === 'off';
    hookRemove.hidden = (wh.state || 'off') === 'off';
    if (redrawKinds) drawKinds(hookKinds, 'webhook', null);
    secretBox.hidden = !secret;
    secretInput.value = secret;

    // Email (only where the operator configured SMTP; an address left from before is still shown)
    const em = settings.email || { state: 'off' };
    const emailOn = (em.state || 'off') !== 'off';
    mailBox.dataset.state = em.state || 'off';
    mailBox.dataset.available = settings.email_available ? 'yes' : 'no';
    mailForm.hidden = !settings.email_available && !emailOn;
    mailHelp.hidden = !settings.email_available;
    const address = settings.email_address || '?';
    if (em.state === 'active') mailState.textContent = t('notify.email.to_active', { address });
    else if (em.state === 'pending') mailState.textContent = t('notify.email.to_pending', { address });
    else if (em.state === 'disabled') mailState.textContent = t('notify.email.stopped', { reason: em.reason || '?' });
    else mailState.textContent = settings.email_available ? stateWord(em) : t('notify.email.unavailable');
    mailSame.hidden = !emailOn;
    mailRemove.hidden = !emailOn;
    mailSet.hidden = !settings.email_available;
    if (redrawKinds) drawKinds(mailKinds, 'email', null);
    kindsDrawn = [settings, page];
  }
  const anyOn = () => ['web_push', 'webhook', 'email'].some((c) => settings[c] && settings[c].state && settings[c].state !== 'off');

  function drawOffer() {
    const running = view && view.status === 'GAME_STATUS_RUNNING';
    const wanted = running && pushSupported() && !localStorage.getItem(OFFER_KEY)
      && Notification.permission !== 'denied' && !thisBrowser();
    offer.hidden = !wanted;
    button.classList.toggle('offered', wanted); // (a dot: the offer waits at the end of the page)
  }

  // ---------------------------------------------------------------- talking to the server
  function load() {
    if (loading) return loading;
    ctx.clearError(loadingLine);
    loading = ctx.call('Game/GetNotifications', {}).then((resp) => {
      settings = resp;
      draw();
      return resp;
    }).catch((err) => {
      loadError = err;
      if (!destroyed) { loadingLine.hidden = false; ctx.showError(loadingLine, err); }
      return null;
    }).finally(() => { loading = null; });
    return loading;
  }

  // One change: SetNotifications with a fresh idempotency key and the page's language; the answer is
  // the new state (and, once, a new webhook's secret). Errors go after `anchor`.
  async function save(anchor, change) {
    const channel = ['web_push', 'webhook', 'email'].find((c) => c in change) || '';
    ctx.clearError(anchor);
    said.textContent = '';
    const buttons = [...el.querySelectorAll('button, input, select')].filter((b) => !b.disabled);
    for (const b of buttons) b.disabled = true;
    try {
      const resp = await ctx.call('Game/SetNotifications', { idempotency_key: randomId(20), language: ctx.lang(), ...change });
      if (destroyed) return null;
      settings = resp;
      if (resp.webhook_signing_secret) secret = resp.webhook_signing_secret;
      for (const b of buttons) b.disabled = false;
      draw();
      said.textContent = t('notify.saved');
      return resp;
    } catch (err) {
      for (const b of buttons) b.disabled = false;
      if (!destroyed) { draw(); ctx.showError(anchor, explain(err, channel)); }
      return null;
    }
  }

  // A conflict the shell would word for a lobby (full, started) gets the channel's own words: the
  // server sends no email, or five devices already get the notifications.
  function explain(err, channel) {
    if (err && err.code === 'lobby/conflict' && channel && channel !== 'webhook') {
      return { ...err, text: t(`error.lobby/conflict@${channel}`) };
    }
    return err;
  }

  async function setWebhook() {
    const url = hookUrl.value.trim();
    const isSet = settings.webhook && settings.webhook.state && settings.webhook.state !== 'off';
    if (!url && !isSet) { ctx.clearError(hookActions); ctx.showError(hookActions, { text: t('notify.error.url') }); hookUrl.focus(); return; }
    // no URL typed and a webhook set: only its kinds change (the URL and its secret stay)
    const resp = await save(hookActions, { webhook: url ? { kinds: checkedKinds(hookKinds), url } : { kinds: checkedKinds(hookKinds) } });
    if (resp) {
      hookUrl.value = '';
      if (secret) secretInput.focus({ preventScroll: true });
    }
  }

  async function setEmail() {
    const address = mailAddress.value.trim();
    const isSet = settings.email && settings.email.state && settings.email.state !== 'off';
    if (!address && !isSet) { ctx.clearError(mailActions); ctx.showError(mailActions, { text: t('notify.error.address') }); mailAddress.focus(); return; }
    // no address typed and one set: only its kinds change
    const resp = await save(mailActions, { email: address ? { kinds: checkedKinds(mailKinds), address } : { kinds: checkedKinds(mailKinds) } });
    if (resp) mailAddress.value = '';
  }

  // Web Push on: the browser's permission, the service worker, a subscription to the server's VAPID
  // key, then the server. Errors (in words) after `anchor`; true when it is on.
  async function turnOn(anchor) {
    ctx.clearError(anchor);
    if (!pushSupported()) { ctx.showError(anchor, { text: t('notify.push.unsupported') }); return false; }
    pushOn.disabled = true;
    said.textContent = t('notify.push.turning_on');
    try {
      let permission = Notification.permission;
      if (permission !== 'granted') permission = await Notification.requestPermission();
      if (permission !== 'granted') {
        said.textContent = '';
        ctx.showError(anchor, { text: t(permission === 'denied' ? 'notify.push.blocked' : 'notify.push.denied') });
        draw();
        return false;
      }
      if (!settings) await load();
      if (!settings) { said.textContent = ''; ctx.showError(anchor, loadError); return false; }
      let sub;
      try {
        await navigator.serviceWorker.register('/sw.js');
        const reg = await navigator.serviceWorker.ready;
        sub = await reg.pushManager.getSubscription();
        const key = keyBytes(settings.vapid_public_key || '');
        const had = sub && sub.options && sub.options.applicationServerKey
          ? new Uint8Array(sub.options.applicationServerKey) : null;
        if (sub && (!had || had.length !== key.length || had.some((b, i) => b !== key[i]))) {
          await sub.unsubscribe(); // made for another server's key: it would be refused
          sub = null;
        }
        if (!sub) sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
      } catch (e) {
        said.textContent = '';
        ctx.showError(anchor, { text: t('notify.push.failed', { reason: (e && (e.message || e.name)) || '?' }) });
        return false;
      }
      const json = sub.toJSON();
      const keys = json.keys || {};
      const resp = await save(anchor, { web_push: { kinds: settings ? checkedKinds(pushKinds) : [],
        subscription: { endpoint: json.endpoint, p256dh: keys.p256dh || '', auth: keys.auth || '' } } });
      if (!resp) return false;
      localStorage.setItem(deviceKey(gameId), '1');
      draw();
      drawOffer();
      return true;
    } finally {
      pushOn.disabled = false;
    }
  }

  async function turnOff() {
    const resp = await save(pushActions, { web_push: { off: true } });
    if (resp) { localStorage.removeItem(deviceKey(gameId)); draw(); }
  }

  function answerOffer(answer) {
    localStorage.setItem(OFFER_KEY, answer);
    drawOffer();
  }

  async function acceptOffer() {
    offerOn.disabled = true;
    try {
      const on = await turnOn(offerActions);
      if (on) answerOffer('on');
    } finally {
      offerOn.disabled = false;
    }
  }

  // ---------------------------------------------------------------- the panel opens and closes
  function toggle(open = el.hidden) {
    el.hidden = !open;
    button.setAttribute('aria-expanded', String(open));
    button.classList.toggle('on', open);
    if (open) {
      draw();
      load();
      title.focus({ preventScroll: true });
      el.scrollIntoView({ block: 'nearest' });
    } else {
      button.focus({ preventScroll: true });
    }
  }

  // ---------------------------------------------------------------- a hidden page tells its player
  // The kind of notification this update makes for this player (or ''), as the server decides it
  // (services/actor_notify.py): a round opened in a round game (or a turn game's simultaneous round);
  // a step whose turn is this player's (your_turn) or whose window waits on it (your_decision).
  // (A round_opened is judged by the view read after it: the game's step then, and whether this
  // player is expected to play in the round.)
  function kindOf(u) {
    if (!view) return '';
    const me = Number(view.you);
    if (u.kind === 'round_opened') {
      const stepKind = view.step && view.step.kind;
      return stepKind === 'turn' || stepKind === 'window' || !view.expected ? '' : 'your_turn';
    }
    if (u.kind === 'step') {
      const d = u.data || {};
      if (d.kind === 'turn') return Number(d.active) === me ? 'your_turn' : '';
      if (d.kind === 'window') return (d.players || []).map(Number).includes(me) ? 'your_decision' : '';
    }
    return '';
  }

  let opened = null; // a round_opened waiting for the view of its round
  async function tell(u) {
    const kind = kindOf(u);
    if (!kind || document.visibilityState !== 'hidden') return;
    if (!('Notification' in window) || Notification.permission !== 'granted') return;
    const round = Number(u.round || 0);
    const tag = `${gameId}:${kind}:${round}`;
    if (shownTags.has(tag)) return;
    shownTags.add(tag);
    const deadline = (u.data && u.data.deadline_unix_ms) || (view && view.deadline_unix_ms) || 0;
    const game = view ? view.game : '';
    const params = { game: t(`notify.game.${game}`), round, when: hhmmUtc(deadline) };
    const lang = ctx.lang();
    const title = t(`notify.push.${kind}.title`, params);
    const options = { body: t(`notify.push.${kind}.body`, params), tag, lang, dir: lang === 'he' ? 'rtl' : 'ltr',
      icon: '/static/img/icon.svg', data: { url: `${location.origin}/game/${gameId}` } };
    // Through the service worker when there is one (the same place a push shows, so the tag replaces
    // across both; and a phone's browser has no page notifications), else the page's own.
    // A worker registered but not yet active (just installed: Web Push turned on a moment ago, a slow
    // phone) is waited for, at most 10 s: falling back to a page notification would show nothing on a
    // phone and would not be replaced by the push for the same thing.
    let reg = 'serviceWorker' in navigator ? await navigator.serviceWorker.getRegistration().catch(() => null) : null;
    if (reg && !reg.active) {
      reg = await Promise.race([navigator.serviceWorker.ready.catch(() => null),
        new Promise((resolve) => { setTimeout(() => resolve(null), 10000); })]);
    }
    if (reg && reg.active) {
      await reg.showNotification(title, options).catch(() => {});
      return;
    }
    try {
      const n = new Notification(title, options);
      n.onclick = () => { window.focus(); n.close(); };
    } catch {
      // (a browser that allows only the service worker's notifications and has none registered)
    }
  }

  labels();
  draw();

  return {
    button, el, offer,
    render(v) {
      view = v;
      drawOffer();
      if (opened && Number(v.round) >= Number(opened.round)) {
        const u = opened;
        opened = null;
        if (Number(v.round) === Number(u.round) && v.status === 'GAME_STATUS_RUNNING') tell(u);
      }
    },
    update(u) {
      if (u.kind === 'round_opened') opened = u; else tell(u);
    },
    relabel() { labels(); draw(); },
    open: () => toggle(true),
    destroy() { destroyed = true; },
  };
}
