// The notifications' service worker (issue 23), served at /sw.js (scope: the whole site). It only shows
// Web Push messages and opens their game on a click: no caching, no fetch handler.
// A push's data is the payload of proto/archipelago/v1/notify.proto: {title, body, url, kind, game_id,
// round, language, …}. Its tag "<game_id>:<kind>:<round>" is the one the page uses for the same thing
// (js/notify.js), so that one replaces the other rather than showing it twice.
const ICON = '/static/img/icon.svg';

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('push', (event) => {
  let p = {};
  try {
    p = event.data ? event.data.json() : {};
  } catch (e) {
    p = { body: event.data ? event.data.text() : '' };
  }
  const lang = p.language === 'he' ? 'he' : 'en';
  const options = {
    body: String(p.body || ''),
    lang,
    dir: lang === 'he' ? 'rtl' : 'ltr',
    icon: ICON,
    data: { url: String(p.url || '/') },
  };
  if (p.game_id) options.tag = `${p.game_id}:${p.kind}:${p.round}`;
  event.waitUntil(self.registration.showNotification(String(p.title || 'Archipelago'), options));
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  let url;
  try {
    url = new URL((event.notification.data && event.notification.data.url) || '/', self.location.origin);
  } catch (e) {
    url = new URL('/', self.location.origin);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') url = new URL('/', self.location.origin);
  event.waitUntil((async () => {
    const open = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
    const same = open.find((c) => c.url.split('#')[0] === url.href.split('#')[0]);
    if (same && 'focus' in same) return same.focus();
    return self.clients.openWindow(url.href);
  })());
});
