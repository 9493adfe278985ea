// A simultaneous-move game for the capacity bench's boardgame.io peer (issue 24).
//
// Shape: the same as one round of ours.  N players; in each round every player submits one number,
// in any order (boardgame.io's `activePlayers: ActivePlayers.ALL` keeps every player active for the
// whole, single, turn).  A player who has already submitted this round is refused (INVALID_MOVE).
// When the N-th submission of a round arrives the round resolves: the submitted numbers are added
// into `total` and into each player's score by a cheap deterministic rule, the submissions are
// cleared and the next round opens.  The game never ends: the driver plays for as long as it runs.
//
// The move is long-form with two flags, both needed for simultaneous play over the network:
// - `ignoreStaleStateID: true` — boardgame.io's master refuses an action whose state id is not the
//   current one; in a simultaneous round every player but the first sends the id it saw before the
//   others' submissions, so without this flag all but one move a round would be dropped.
// - `client: false` — the move runs only on the server (no optimistic local update), so a client
//   sees its move only in the server's update: submit → seen is a real round trip.
//
// `playerView` hides the other players' numbers until the round resolves (each sees only who has
// submitted), as a game with simultaneous secret moves must; the server computes it per player
// for every update it sends.

'use strict';

const { ActivePlayers, INVALID_MOVE } = require('boardgame.io/core');

const GAME_NAME = 'simultaneous';

/** The number player `playerID` submits in `round`: deterministic, 1..10. */
function valueFor(round, playerID) {
  return ((round * 7 + Number(playerID) * 3) % 10) + 1;
}

const SimultaneousGame = {
  name: GAME_NAME,
  minPlayers: 2,
  maxPlayers: 16,

  setup: ({ ctx }) => {
    const scores = {};
    for (let p = 0; p < ctx.numPlayers; p++) scores[String(p)] = 0;
    return { round: 1, submitted: {}, count: 0, total: 0, scores };
  },

  turn: {
    activePlayers: ActivePlayers.ALL,
  },

  moves: {
    submit: {
      move: ({ G, ctx, playerID }, value) => {
        if (G.submitted[playerID] !== undefined) return INVALID_MOVE;
        if (!Number.isInteger(value) || value < 1 || value > 10) return INVALID_MOVE;
        G.submitted[playerID] = value;
        G.count += 1;
        if (G.count === ctx.numPlayers) {
          // The round resolves: the sum goes into the total; the highest number(s) score the sum.
          let sum = 0;
          let best = 0;
          for (const p in G.submitted) {
            sum += G.submitted[p];
            if (G.submitted[p] > best) best = G.submitted[p];
          }
          for (const p in G.submitted) {
            if (G.submitted[p] === best) G.scores[p] += sum;
          }
          G.total += sum;
          G.submitted = {};
          G.count = 0;
          G.round += 1;
        }
        return undefined;
      },
      client: false,
      ignoreStaleStateID: true,
    },
  },

  playerView: ({ G, playerID }) => {
    const submitted = {};
    for (const p in G.submitted) submitted[p] = p === playerID ? G.submitted[p] : true;
    return { ...G, submitted };
  },
};

module.exports = { SimultaneousGame, GAME_NAME, valueFor };
