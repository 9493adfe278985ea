// boardgame.io's Server for the capacity bench's peer (issue 24): the game of game.js, its lobby
// API and its socket.io transport on one port, bound to 127.0.0.1.
//
//   node server.js [--port P] [--storage memory|flatfile] [--dir DIR] [--watch-stdin] [--no-write-queue]
//
// Environment: PORT, PEER_STORAGE, PEER_DIR give the same (the flags win).  Storage: `memory`
// (boardgame.io's InMemory, the default: nothing durable) or `flatfile` (boardgame.io's FlatFile,
// node-persist files in DIR: the durable variant).  With --watch-stdin the server exits when its
// standard input closes, so a parent that dies without killing it leaves no orphan.
// --no-write-queue (flatfile only, not boardgame.io's default): node-persist writes each file at once
// instead of through its write queue.  Neither way fsyncs.
// Prints `READY <port>` on stdout once it listens.

'use strict';

const fs = require('fs');
const { Server, Origins, FlatFile } = require('boardgame.io/server');
const { SimultaneousGame } = require('./game');

function parseArgs(argv) {
  const opts = {
    port: Number(process.env.PORT || 8000),
    storage: process.env.PEER_STORAGE || 'memory',
    dir: process.env.PEER_DIR || '',
    watchStdin: false,
    writeQueue: true,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--port') opts.port = Number(next());
    else if (a === '--storage') opts.storage = next();
    else if (a === '--dir') opts.dir = next();
    else if (a === '--watch-stdin') opts.watchStdin = true;
    else if (a === '--no-write-queue') opts.writeQueue = false;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) {
    throw new Error(`bad port ${opts.port}`);
  }
  if (opts.storage !== 'memory' && opts.storage !== 'flatfile') {
    throw new Error(`storage must be memory or flatfile, not ${opts.storage}`);
  }
  if (opts.storage === 'flatfile' && !opts.dir) throw new Error('flatfile storage needs --dir');
  return opts;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  let db;
  if (opts.storage === 'flatfile') {
    fs.mkdirSync(opts.dir, { recursive: true });
    db = new FlatFile({ dir: opts.dir, logging: false });
    if (opts.writeQueue === false) {
      // node-persist ≥ 3.1.1 queues each file's writes and flushes a queue that is busy only on a
      // 1 s timer, so a match's serialised moves wait on it; FlatFile passes no options through.
      db.connect = () => db.games.init({ dir: opts.dir, logging: false, ttl: false, writeQueue: false });
    }
  }
  const server = Server({
    games: [SimultaneousGame],
    db, // undefined: boardgame.io's InMemory
    origins: [Origins.LOCALHOST],
  });
  // Server.run() listens on every interface; the bench's traffic stays on loopback.  koa-socket-2
  // has made app.listen(port, cb) call the http server's listen(port, cb): add the host.
  const listen = server.app.listen.bind(server.app);
  server.app.listen = (port, cb) => listen(port, '127.0.0.1', cb);
  const { appServer } = await server.run(opts.port);
  const address = appServer.address();
  process.stdout.write(`READY ${address.port}\n`);

  const stop = () => {
    server.kill({ appServer });
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  if (opts.watchStdin) {
    process.stdin.on('end', stop);
    process.stdin.on('error', stop);
    process.stdin.resume();
  }
}

main().catch((e) => {
  process.stderr.write(`server: ${e && e.stack ? e.stack : e}\n`);
  process.exit(2);
});
