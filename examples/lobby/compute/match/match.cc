// The lobby's match logic: a realm module (docs/realms.md "Realm modules")
// in C++ (tessera/compute.h). The "match" realm kind names it, and the
// server calls its invoke exports, never a player directly:
//
//   realm_apply  {avatar, intent, args, state} -> {"patch": [...]} | {"refuse":
//   why}
//
// Intents:
//   move   {"cell": 0..8}  the avatar's mark (its seat, "X" or "O") in that
//                          cell, if it is its turn (X starts), the cell is
//                          empty and nobody has won; appended to "moves"
//   reset  {}              a finished game (a win or a full board) starts
//                          over: "moves" is emptied
//
//   realm_on_alarm  {alarm, state} -> {"patch": [...]}
//
// The move that ends a game also sets the realm's "rematch" alarm
// (settings.rematchAfterMs from now, 10 s by default): when it fires, a
// game still over starts again by itself. Alarms are at least once, so the
// handler checks the board rather than trusting that it has not run.
//
// The document: {"seats": {avatar: "X" | "O"}, "moves": [{by, cell,
// mark}], "chat": [...], "notes": {...}}. Seats are written by their
// avatars (the kind's rules); moves only here, so every move in the log is
// legal.
#include <tessera/compute.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace tc = tessera::compute;

struct Move {
  std::string by;
  std::int64_t cell = -1;
  std::string mark;
};
TESSERA_FIELDS(Move, by, cell, mark);

struct Settings {
  std::int64_t rematchAfterMs = 10'000;
};
TESSERA_FIELDS(Settings, rematchAfterMs);

struct Match {
  std::map<std::string, std::string> seats;
  std::vector<Move> moves;
  Settings settings;
};
TESSERA_FIELDS(Match, seats, moves, settings);

struct MoveArgs {
  std::int64_t cell = -1;
};
TESSERA_FIELDS(MoveArgs, cell);

struct ApplyParams {
  std::string avatar;
  std::string intent;
  MoveArgs args;
  Match state;
};
TESSERA_FIELDS(ApplyParams, avatar, intent, args, state);

struct AppendMove {
  std::string op = "append";
  std::vector<std::string> path = {"moves"};
  Move value;
};
TESSERA_FIELDS(AppendMove, op, path, value);

struct ClearMoves {
  std::string op = "set";
  std::vector<std::string> path = {"moves"};
  std::vector<Move> value;
};
TESSERA_FIELDS(ClearMoves, op, path, value);

template <class Op>
struct Answer {
  std::vector<Op> patch;
};
TESSERA_FIELDS(Answer<AppendMove>, patch);
TESSERA_FIELDS(Answer<ClearMoves>, patch);

struct Rematch {
  std::int64_t rematch = 0;  // ms from now
};
TESSERA_FIELDS(Rematch, rematch);

// The last move of a game, and the rematch it arms.
struct FinalMove {
  std::vector<AppendMove> patch;
  Rematch alarms;
};
TESSERA_FIELDS(FinalMove, patch, alarms);

struct AlarmParams {
  std::string alarm;
  Match state;
};
TESSERA_FIELDS(AlarmParams, alarm, state);

struct NoChange {
  std::vector<ClearMoves> patch;
};
TESSERA_FIELDS(NoChange, patch);

struct Refusal {
  std::string refuse;
};
TESSERA_FIELDS(Refusal, refuse);

std::string Refuse(std::string why) {
  return tc::to_json(Refusal{std::move(why)});
}

using Board = std::array<std::string, 9>;

Board BoardOf(const Match& match) {
  Board board;
  for (const Move& m : match.moves) {
    if (m.cell >= 0 && m.cell < 9) board[m.cell] = m.mark;
  }
  return board;
}

// "X" or "O" when a line of three is theirs, "" otherwise.
std::string Winner(const Board& board) {
  static constexpr int kLines[8][3] = {{0, 1, 2}, {3, 4, 5}, {6, 7, 8},
                                       {0, 3, 6}, {1, 4, 7}, {2, 5, 8},
                                       {0, 4, 8}, {2, 4, 6}};
  for (const auto& line : kLines) {
    const std::string& a = board[line[0]];
    if (!a.empty() && a == board[line[1]] && a == board[line[2]]) return a;
  }
  return "";
}

tessera::Result<std::string> Apply(const tc::Invocation& call) {
  tessera::Result<ApplyParams> p = call.params<ApplyParams>();
  if (!p.ok()) return tessera::Error(p.error());
  Board board = BoardOf(p->state);
  const std::string winner = Winner(board);
  const bool full = p->state.moves.size() >= 9;
  if (p->intent == "reset") {
    if (winner.empty() && !full) return Refuse("the game is still on");
    return tc::to_json(Answer<ClearMoves>{{ClearMoves{}}});
  }
  if (p->intent != "move") return Refuse("no intent \"" + p->intent + "\"");
  auto seat = p->state.seats.find(p->avatar);
  if (seat == p->state.seats.end() ||
      (seat->second != "X" && seat->second != "O")) {
    return Refuse("take a seat (X or O) first");
  }
  const std::string& mark = seat->second;
  for (const auto& [other, their_mark] : p->state.seats) {
    if (other != p->avatar && their_mark == mark) {
      return Refuse(other + " sits at " + mark + " too: one of you must move");
    }
  }
  if (!winner.empty()) return Refuse("the game is over: " + winner + " won");
  if (full) return Refuse("the game is over: a draw");
  const std::string turn = p->state.moves.size() % 2 == 0 ? "X" : "O";
  if (mark != turn) return Refuse("it is " + turn + "'s turn");
  const std::int64_t cell = p->args.cell;
  if (cell < 0 || cell > 8) return Refuse("cell must be 0..8");
  if (!board[cell].empty()) {
    return Refuse("cell " + std::to_string(cell) + " is taken");
  }
  AppendMove op;
  op.value = Move{p->avatar, cell, mark};
  board[cell] = mark;
  const bool ends = !Winner(board).empty() || p->state.moves.size() + 1 >= 9;
  if (ends) {
    return tc::to_json(
        FinalMove{{op}, Rematch{p->state.settings.rematchAfterMs}});
  }
  return tc::to_json(Answer<AppendMove>{{op}});
}

// The rematch alarm: a game still over starts again; otherwise (someone
// reset it already, or this alarm ran before) nothing changes.
tessera::Result<std::string> OnAlarm(const tc::Invocation& call) {
  tessera::Result<AlarmParams> p = call.params<AlarmParams>();
  if (!p.ok()) return tessera::Error(p.error());
  if (p->alarm != "rematch") return tc::to_json(NoChange{});
  const Board board = BoardOf(p->state);
  if (Winner(board).empty() && p->state.moves.size() < 9) {
    return tc::to_json(NoChange{});
  }
  return tc::to_json(Answer<ClearMoves>{{ClearMoves{}}});
}

tessera::Status Init() { return {}; }
tessera::Status Tick(std::uint32_t) { return {}; }

tessera::Result<std::string> Invoke(const tc::Invocation& call) {
  if (call.export_name == "realm_apply") return Apply(call);
  if (call.export_name == "realm_on_alarm") return OnAlarm(call);
  return tessera::Error("the match module has no export " + call.export_name);
}

}  // namespace

TESSERA_COMPUTE_MODULE(Init, Tick, Invoke);
