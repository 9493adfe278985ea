// The load driver of the capacity bench's boardgame.io peer (issue 24): a process of its own running
// M matches × N players of real boardgame.io clients (`boardgame.io/client` Client with the SocketIO
// multiplayer transport, websocket only), against server.js.
//
//   node driver.js --url http://127.0.0.1:PORT [--matches M] [--players N] [--seconds S]
//                  [--warmup W] [--watch-stdin]
//
// The matches are made through the server's lobby API (create, then join every seat: each client
// holds its seat's credentials, which the server checks on every move).  Closed loop: each client
// submits its move as soon as its round opens (its state shows the round with no submission of
// its own), and a move counts as acknowledged when the mover's client sees a server update that
// holds it (the move runs on the server only, so this is the round trip submit → update).
// After W s of warm-up the acknowledged moves are counted for S s.  A live counter goes to stderr
// once a second, between the lines `peer driver: window open` and `peer driver: window closed …`
// (a parent may sample the server's CPU at those); at the end ONE JSON line goes to stdout:
//   {"moves_per_s", "p50_ms", "p99_ms", "moves", "matches", "players", "seconds", "warmup_s",
//    "per_second": [moves acknowledged in each whole second of the window], "stalled",
//    "disconnects", "setup_s", "driver_cpu_s" (the driver's own CPU over the window)}
// `stalled`: moves submitted but not seen within 5 s when the window closed (a healthy run: 0).
// With --watch-stdin the driver exits when its standard input closes (no orphan if its parent dies).

'use strict';

const { Client, LobbyClient } = require('boardgame.io/client');
const { SocketIO } = require('boardgame.io/multiplayer');
const { SimultaneousGame, GAME_NAME, valueFor } = require('./game');

function parseArgs(argv) {
  const opts = { url: '', matches: 50, players: 4, seconds: 20, warmup: 3, watchStdin: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--url') opts.url = next();
    else if (a === '--matches') opts.matches = Number(next());
    else if (a === '--players') opts.players = Number(next());
    else if (a === '--seconds') opts.seconds = Number(next());
    else if (a === '--warmup') opts.warmup = Number(next());
    else if (a === '--watch-stdin') opts.watchStdin = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!opts.url) throw new Error('--url is required');
  if (!(Number.isInteger(opts.matches) && opts.matches >= 1)) throw new Error('--matches must be ≥ 1');
  if (!(Number.isInteger(opts.players) && opts.players >= 2)) throw new Error('--players must be ≥ 2');
  if (!(opts.seconds > 0)) throw new Error('--seconds must be > 0');
  if (!(opts.warmup >= 0)) throw new Error('--warmup must be ≥ 0');
  return opts;
}

const now = () => Number(process.hrtime.bigint()) / 1e6; // ms, monotonic

function percentile(sorted, q) {
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function makeMatches(url, matches, players) {
  const lobby = new LobbyClient({ server: url });
  const made = [];
  for (let m = 0; m < matches; m++) {
    const { matchID } = await lobby.createMatch(GAME_NAME, { numPlayers: players });
    const seats = [];
    for (let p = 0; p < players; p++) {
      const playerID = String(p);
      const { playerCredentials } = await lobby.joinMatch(GAME_NAME, matchID, {
        playerID,
        playerName: `m${m}p${p}`,
      });
      seats.push({ playerID, credentials: playerCredentials });
    }
    made.push({ matchID, seats });
  }
  return made;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const t0 = now();
  const stats = {
    phase: 'setup', // setup → warmup → measure → done
    measureStart: 0,
    acked: 0, // in the window
    ackedAll: 0,
    latencies: [], // ms, acks in the window
    perSecond: [],
    disconnects: 0,
  };

  if (opts.watchStdin) {
    process.stdin.on('end', () => process.exit(3));
    process.stdin.on('error', () => process.exit(3));
    process.stdin.resume();
  }

  const matches = await withTimeout(
    makeMatches(opts.url, opts.matches, opts.players),
    60000,
    'creating matches through the lobby API',
  );

  const players = [];
  for (const { matchID, seats } of matches) {
    for (const { playerID, credentials } of seats) {
      const client = Client({
        game: SimultaneousGame,
        numPlayers: opts.players,
        multiplayer: SocketIO({ server: opts.url, socketOpts: { transports: ['websocket'] } }),
        matchID,
        playerID,
        credentials,
        debug: false,
      });
      const player = { client, playerID, pending: null, synced: false, connected: false };
      players.push(player);
      client.subscribe((state) => onState(player, state));
    }
  }

  function onState(player, state) {
    if (!state || !state.G) return;
    if (!player.synced) player.synced = true;
    if (player.connected && !state.isConnected) stats.disconnects += 1;
    player.connected = state.isConnected;
    const G = state.G;
    const me = player.playerID;
    const p = player.pending;
    if (p !== null && (G.round > p.round || G.submitted[me] !== undefined)) {
      const t = now();
      stats.ackedAll += 1;
      if (stats.phase === 'measure') {
        stats.acked += 1;
        stats.latencies.push(t - p.at);
        const second = Math.floor((t - stats.measureStart) / 1000);
        while (stats.perSecond.length <= second) stats.perSecond.push(0);
        stats.perSecond[second] += 1;
      }
      player.pending = null;
    }
    if (player.pending === null && stats.phase !== 'setup' && stats.phase !== 'done' &&
        G.submitted[me] === undefined && state.ctx.gameover === undefined) {
      player.pending = { round: G.round, at: now() };
      player.client.moves.submit(valueFor(G.round, me));
    }
  }

  let ready;
  const allSynced = new Promise((resolve) => { ready = resolve; });
  const syncPoll = setInterval(() => {
    if (players.every((pl) => pl.synced && pl.connected)) ready();
  }, 20);
  for (const pl of players) pl.client.start();
  await withTimeout(allSynced, 60000, `connecting ${players.length} clients`);
  clearInterval(syncPoll);
  const setupS = (now() - t0) / 1000;

  // Open play: every client submits in its current round.
  stats.phase = 'warmup';
  for (const pl of players) onState(pl, pl.client.getState());
  process.stderr.write(
    `peer driver: ${opts.matches} matches × ${opts.players} players connected in ${setupS.toFixed(1)} s; ` +
    `warm-up ${opts.warmup} s, then ${opts.seconds} s measured\n`,
  );

  await new Promise((r) => setTimeout(r, opts.warmup * 1000));
  stats.phase = 'measure';
  stats.measureStart = now();
  const cpuAtOpen = process.cpuUsage();
  process.stderr.write('peer driver: window open\n');
  let lastCount = 0;
  const live = setInterval(() => {
    const elapsed = (now() - stats.measureStart) / 1000;
    const inLast = stats.acked - lastCount;
    lastCount = stats.acked;
    process.stderr.write(
      `peer driver: ${elapsed.toFixed(0)} s, ${stats.acked} moves, ` +
      `${Math.round(stats.acked / elapsed)} moves/s (last second ${inLast})\n`,
    );
  }, 1000);
  await new Promise((r) => setTimeout(r, opts.seconds * 1000));
  const windowS = (now() - stats.measureStart) / 1000;
  const cpuUsed = process.cpuUsage(cpuAtOpen);
  stats.phase = 'done';
  clearInterval(live);
  process.stderr.write(`peer driver: window closed after ${windowS.toFixed(3)} s, ${stats.acked} moves\n`);

  const tEnd = now();
  const stalled = players.filter((pl) => pl.pending !== null && tEnd - pl.pending.at > 5000).length;
  const sorted = Float64Array.from(stats.latencies).sort();
  const round3 = (x) => (x === null ? null : Math.round(x * 1000) / 1000);
  const result = {
    moves_per_s: Math.round((stats.acked / windowS) * 10) / 10,
    p50_ms: round3(percentile(sorted, 0.5)),
    p99_ms: round3(percentile(sorted, 0.99)),
    moves: stats.acked,
    matches: opts.matches,
    players: opts.players,
    seconds: Math.round(windowS * 1000) / 1000,
    warmup_s: opts.warmup,
    per_second: stats.perSecond.slice(0, Math.ceil(opts.seconds)),
    stalled,
    disconnects: stats.disconnects,
    setup_s: Math.round(setupS * 1000) / 1000,
    driver_cpu_s: Math.round((cpuUsed.user + cpuUsed.system) / 1000) / 1000,
  };
  process.stdout.write(JSON.stringify(result) + '\n', () => {
    for (const pl of players) pl.client.stop();
    process.exit(0);
  });
}

main().catch((e) => {
  process.stderr.write(`peer driver: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
