// The JSON + WebSocket door (README, "The JSON + WebSocket door"): the same messages as gRPC.
// call('Lobby/CreateGame', {...}) → response message; errors are ApiError with the server's code,
// field and rule. Watch keeps one update stream open across network drops and gateway restarts.

export class ApiError extends Error {
  constructor(body) {
    super(body.message || body.code);
    this.code = body.code;
    this.field = body.field || '';
    this.rule = body.rule || '';
    this.status = body.status || '';
    this.httpStatus = body.http_status || 0;
    this.retry = Boolean(body.retry);
    this.offline = Boolean(body.offline);
    // The server's message is "<field>: rule <rule>: <reason>"; keep only the reason.
    let reason = body.message || '';
    if (this.field && reason.startsWith(`${this.field}: `)) reason = reason.slice(this.field.length + 2);
    if (this.rule && reason.startsWith(`rule ${this.rule}: `)) reason = reason.slice(this.rule.length + 7);
    this.reason = reason;
  }
}

const offlineError = () => new ApiError({ code: 'net/offline', offline: true, retry: true });

// `keepalive`: the request outlives the page (sent while it is being left or reloaded).
export async function call(rpc, body = {}, secret = '', { keepalive = false } = {}) {
  const headers = { 'content-type': 'application/json' };
  if (secret) headers.authorization = `Bearer ${secret}`;
  let response;
  try {
    response = await fetch(`/v1/${rpc}`, { method: 'POST', headers, body: JSON.stringify(body), keepalive });
  } catch (e) {
    throw offlineError();
  }
  let data;
  try {
    data = await response.json();
  } catch (e) {
    if (response.status >= 500 || response.status === 0) throw offlineError();
    throw new ApiError({ code: 'server/internal', message: `HTTP ${response.status}` });
  }
  if (!response.ok) {
    if (data && data.error) throw new ApiError(data.error);
    throw new ApiError({ code: 'server/internal', message: `HTTP ${response.status}` });
  }
  return data;
}

// A random id for request_id / idempotency keys (not guessable: request ids recover secrets).
export function randomId(n = 24) {
  const bytes = crypto.getRandomValues(new Uint8Array(n));
  return Array.from(bytes, (b) => 'abcdefghijklmnopqrstuvwxyz0123456789'[b % 36]).join('');
}

// One player's update stream. onUpdate(update) gets every update once, in seq order (presence
// notices, seq 0, as they come); onState('connecting' | 'online' | 'offline' | 'ended');
// onResync() when the server no longer has the history asked for; onFatal(ApiError) for errors
// that a retry cannot fix (a revoked secret, say). A spectator's stream is the same with
// `path: SPECTATE` and no secret (community.proto Spectate: no authorization).
export const SPECTATE = '/v1/Community/Spectate';
export class Watch {
  constructor({ gameId, secret = '', afterSeq = 0, onUpdate, onState = () => {}, onResync = () => {},
                onFatal = () => {}, path = '/v1/Game/Watch' }) {
    Object.assign(this, { gameId, secret, onUpdate, onState, onResync, onFatal, path });
    this.lastSeq = Number(afterSeq) || 0;
    this.ws = null;
    this.stopped = false;
    this.delay = 250;
    this.timer = null;
    this.state = '';
    this.wake = () => this.reconnectSoon(0);
    window.addEventListener('online', this.wake);
  }

  setState(state) {
    if (state !== this.state) {
      this.state = state;
      this.onState(state);
    }
  }

  start() {
    if (this.stopped || this.ws) return;
    this.setState(this.state === 'offline' ? 'offline' : 'connecting');
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${proto}//${location.host}${this.path}`);
    this.ws = ws;
    let failed = null;
    ws.onopen = () => {
      const hello = { game_id: this.gameId, after_seq: String(this.lastSeq) };
      ws.send(JSON.stringify(this.secret ? { authorization: `Bearer ${this.secret}`, ...hello } : hello));
      this.setState('online');
    };
    ws.onmessage = (ev) => {
      const msg = JSON.parse(ev.data);
      if (msg.error) {
        failed = new ApiError(msg.error);
        return;
      }
      this.delay = 250;
      const seq = Number(msg.seq || 0);
      if (seq > 0) {
        if (seq <= this.lastSeq) return; // already had it (never expected)
        if (seq !== this.lastSeq + 1 && msg.kind !== 'resync') {
          ws.close(4999, 'gap'); // reconnect after the last one we hold
          return;
        }
        this.lastSeq = seq;
      }
      if (msg.kind === 'resync') this.onResync(msg);
      else this.onUpdate(msg);
    };
    ws.onclose = (ev) => {
      if (this.ws === ws) this.ws = null;
      if (this.stopped) return;
      if (ev.code === 1000) {
        this.setState('ended');
        this.stop();
        return;
      }
      if (failed && !failed.retry) {
        this.stop();
        this.onFatal(failed);
        return;
      }
      this.setState('offline');
      this.reconnectSoon(this.delay);
      this.delay = Math.min(this.delay * 2, 5000);
    };
  }

  reconnectSoon(ms) {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => { this.timer = null; this.start(); }, ms);
  }

  // Drop the connection now and open a new one (a test's "network cut" looks the same).
  restart() {
    if (this.ws) this.ws.close(4998, 'restart');
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    window.removeEventListener('online', this.wake);
    if (this.ws) {
      const ws = this.ws;
      this.ws = null;
      ws.close(1000);
    }
  }
}
