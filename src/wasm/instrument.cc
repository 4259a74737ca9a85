#include "wasm/instrument.h"

#include <wabt/ir.h>

#include <memory>
#include <vector>

namespace tessera::wasm {
namespace {

using wabt::Expr;
using wabt::ExprList;
using wabt::ExprType;
using wabt::Index;
using wabt::Location;
using wabt::Opcode;
using wabt::Var;

// Counts the instructions of `list` that run once per entry into the
// region: nested blocks and ifs count, loop bodies are regions of their own
// and are appended to `loops`.
uint64_t CountRegion(ExprList& list, std::vector<wabt::LoopExpr*>* loops) {
  uint64_t n = 0;
  for (Expr& e : list) {
    ++n;
    switch (e.type()) {
      case ExprType::Block:
        n += CountRegion(static_cast<wabt::BlockExpr&>(e).block.exprs, loops);
        break;
      case ExprType::If: {
        auto& ife = static_cast<wabt::IfExpr&>(e);
        n += CountRegion(ife.true_.exprs, loops);
        n += CountRegion(ife.false_, loops);
        break;
      }
      case ExprType::Loop:
        loops->push_back(&static_cast<wabt::LoopExpr&>(e));
        break;
      default:
        break;
    }
  }
  return n;
}

ExprList MakeCharge(uint64_t cost, Index fuel, Index intr) {
  Location loc;
  ExprList l;
  l.push_back(std::make_unique<wabt::GlobalGetExpr>(Var(fuel, loc)));
  l.push_back(std::make_unique<wabt::ConstExpr>(wabt::Const::I64(cost)));
  l.push_back(std::make_unique<wabt::BinaryExpr>(Opcode::I64Sub));
  l.push_back(std::make_unique<wabt::GlobalSetExpr>(Var(fuel, loc)));
  l.push_back(std::make_unique<wabt::GlobalGetExpr>(Var(fuel, loc)));
  l.push_back(std::make_unique<wabt::ConstExpr>(wabt::Const::I64(0)));
  l.push_back(std::make_unique<wabt::CompareExpr>(Opcode::I64LtS));
  l.push_back(std::make_unique<wabt::GlobalGetExpr>(Var(intr, loc)));
  l.push_back(std::make_unique<wabt::BinaryExpr>(Opcode::I32Or));
  auto trap = std::make_unique<wabt::IfExpr>();
  trap->true_.exprs.push_back(std::make_unique<wabt::UnreachableExpr>());
  l.push_back(std::move(trap));
  return l;
}

void ChargeRegion(ExprList& list, Index fuel, Index intr) {
  std::vector<wabt::LoopExpr*> loops;
  uint64_t cost = CountRegion(list, &loops);
  ExprList charge = MakeCharge(cost == 0 ? 1 : cost, fuel, intr);
  list.splice(list.begin(), charge);
  for (wabt::LoopExpr* loop : loops) ChargeRegion(loop->block.exprs, fuel, intr);
}

Index AddGlobal(wabt::Module* m, const char* name, const char* export_name,
                wabt::Type type, uint64_t initial) {
  Index index = static_cast<Index>(m->globals.size());
  auto g = std::make_unique<wabt::GlobalModuleField>(Location(), name);
  g->global.type = type;
  g->global.mutable_ = true;
  g->global.init_expr.push_back(std::make_unique<wabt::ConstExpr>(
      type == wabt::Type::I64
          ? wabt::Const::I64(initial)
          : wabt::Const::I32(static_cast<uint32_t>(initial))));
  m->AppendField(std::move(g));
  auto e = std::make_unique<wabt::ExportModuleField>();
  e->export_.name = export_name;
  e->export_.kind = wabt::ExternalKind::Global;
  e->export_.var = Var(index, Location());
  m->AppendField(std::move(e));
  return index;
}

}  // namespace

void InstrumentFuel(wabt::Module* m) {
  Index fuel = AddGlobal(m, "$tessera_fuel", kFuelExport, wabt::Type::I64,
                         kInstantiationFuel);
  Index intr =
      AddGlobal(m, "$tessera_intr", kInterruptExport, wabt::Type::I32, 0);
  for (Index i = m->num_func_imports; i < m->funcs.size(); ++i) {
    ChargeRegion(m->funcs[i]->exprs, fuel, intr);
  }
}

void CapMemory(wabt::Module* m, uint32_t cap_pages) {
  if (m->memories.empty() || m->num_memory_imports > 0) return;
  wabt::Limits& lim = m->memories[0]->page_limits;
  if (!lim.has_max || lim.max > cap_pages) {
    lim.max = cap_pages;
    lim.has_max = true;
  }
}

}  // namespace tessera::wasm
