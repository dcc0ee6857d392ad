// The parallel plan: which rank holds which (tp, sp, dp, pp) coordinates, the process groups each
// rank belongs to, and the classes of symmetric ranks. Everything is computed on demand from the
// degrees and the rank order, so it costs O(1) per query whatever the world size (group members
// cost O(group size)).
//
// Rank order: `parallelism.order` lists the axes innermost (fastest varying) first. The default
// "tp-sp-dp-pp" is Megatron-LM's (megatron/core/parallel_state.py: tp-cp-dp-pp), which keeps each
// tensor-parallel group inside a node.
//
// Groups. A group kind is a set of axes: the group of rank r of kind K holds every rank that shares
// r's coordinates on the axes outside K. Its index is the linear index of those outer coordinates
// (in rank order); its members are listed in ascending rank, which is also their local rank order.
//   tp, sp, dp, pp      one axis each (sp: Ulysses / ring / FPDT sequence-parallel group)
//   dp_sp               dp x sp: where gradients are reduced and ZeRO shards live when sp > 1
//                       (DeepSpeed's sequence-data-parallel group, Megatron's dp-cp group)
//   etp                 expert tensor parallelism: the expert_tp consecutive tp coordinates that
//                       split each expert (the tp group when expert_tp == tp)
//   ep                  expert parallelism: ep ranks, where MoE layers exchange tokens by
//                       all-to-all; they take the tp / expert_tp tensor-parallel coordinates that
//                       share an etp coordinate first (MoE parallel folding), then consecutive dp
//                       coordinates (so, with expert_tp == tp, ep consecutive dp coordinates)
//   edp, edp_sp         expert data parallelism: the ranks (x sp) of a tp-and-dp block that hold the
//                       same experts, where expert gradients are reduced and their ZeRO shards live
//                       (Megatron's expert-data-parallel group); dp and dp_sp when ep == 1 and
//                       expert_tp == tp
//   world               every rank (FPDT's dist.barrier())
//   embedding           the first and last pipeline stage of one pipeline, when pp > 1: tied
//                       word-embedding gradients are all-reduced there (Megatron's embedding group)
//
// Symmetry. Ranks of one pipeline stage run graphs that are identical up to renaming peers and
// group indices: every tensor-, sequence- and data-parallel rank does the same work on its shard
// (ring attention included, see ring_attention.cc). Stages differ (warm-up lengths, embedding, LM
// head), so there is one class per stage, with the stage's rank of coordinates (0, 0, 0, stage) as
// representative.
#ifndef TRAINSIM_SIM_WORKLOAD_PLAN_H_
#define TRAINSIM_SIM_WORKLOAD_PLAN_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "sim/config/plan_rules.h"
#include "sim/config/scenario.h"

namespace trainsim::workload {

enum class Axis : uint8_t { kTp, kSp, kDp, kPp };
inline constexpr int kAxisCount = 4;

struct Coords {
  std::array<int64_t, kAxisCount> at{};  // indexed by Axis
  int64_t tp() const { return at[0]; }
  int64_t sp() const { return at[1]; }
  int64_t dp() const { return at[2]; }
  int64_t pp() const { return at[3]; }
  int64_t& operator[](Axis axis) { return at[static_cast<int>(axis)]; }
  int64_t operator[](Axis axis) const { return at[static_cast<int>(axis)]; }
  bool operator==(const Coords&) const = default;
};

enum class GroupKind : uint8_t { kTp, kSp, kDp, kPp, kDpSp, kWorld, kEmbedding, kEp, kEdp, kEdpSp, kEtp };
inline constexpr int kGroupKindCount = 11;

struct GroupId {
  GroupKind kind;
  int32_t index;
  bool operator==(const GroupId&) const = default;
};

struct SymmetryClass {
  int32_t id = 0;
  int64_t stage = 0;           // pipeline stage of every member
  int64_t representative = 0;  // the member with coordinates (0, 0, 0, stage)
  int64_t size = 0;            // number of member ranks
};

class ParallelPlan {
 public:
  // Degrees and order from `parallelism`, which obeys the plan rules (config/plan_rules.h: degrees at
  // least 1, an order naming each axis once, expert groups that nest in tp / expert_tp and dp); a
  // plan that does not is a bug of the caller (make_plan checks scenarios).
  explicit ParallelPlan(const config::Parallelism& parallelism);

  int64_t world_size() const { return world_size_; }
  int64_t degree(Axis axis) const { return degree_[static_cast<int>(axis)]; }
  // Expert-parallel degree and expert tensor-parallel degree (a divisor of tp).
  int64_t ep() const;
  int64_t expert_tp() const;
  // Axes innermost first.
  const std::array<Axis, kAxisCount>& order() const { return order_; }

  // Rank <-> coordinates. Both abort on out-of-range input.
  Coords coords(int64_t rank) const;
  int64_t rank_of(const Coords& coords) const;

  // The group of `kind` that `rank` belongs to. Aborts for kEmbedding when `rank` is not on the
  // first or last stage, or pp == 1.
  GroupId group_of(int64_t rank, GroupKind kind) const;
  int64_t group_size(GroupKind kind) const;
  // Members in ascending rank (== local rank order). O(group size).
  std::vector<int64_t> members(GroupId group) const;
  // Position of `rank` in its group of `kind`.
  int64_t rank_in_group(int64_t rank, GroupKind kind) const;
  // Number of distinct groups of `kind`.
  int64_t group_count(GroupKind kind) const;

  std::vector<SymmetryClass> symmetry_classes() const;
  int32_t class_of(int64_t rank) const;
  // Every rank of class `id`, ascending. O(world size / pp).
  std::vector<int64_t> class_members(int32_t id) const;

 private:
  // Groups are computed on fine axes, in rank order: the tp axis split into its expert
  // tensor-parallel part and its folded parts in the expert group and the expert-data-parallel group,
  // sp, the dp axis split into its parts in the expert group (inner) and the expert-data-parallel
  // group, and pp.
  static constexpr int kFineAxisCount = 7;
  using FineCoords = std::array<int64_t, kFineAxisCount>;
  FineCoords fine_coords(int64_t rank) const;

  std::array<int64_t, kAxisCount> degree_{};
  std::array<Axis, kAxisCount> order_{};
  std::array<int64_t, kAxisCount> stride_{};  // rank stride of each axis
  std::array<int64_t, kFineAxisCount> fine_degree_{};
  std::array<int, kFineAxisCount> fine_order_{};  // fine axes innermost first
  int64_t world_size_ = 1;
};

// The first plan rule the workload needs that `scenario` breaks (config/plan_rules.h; every rule but
// those of the topology and hardware files, and without cluster.gpus when it is 0), or nothing.
std::optional<config::PlanViolation> broken_plan_rule(const config::Scenario& scenario);

// The plan of a scenario. Throws PlanError for the first plan rule it breaks (broken_plan_rule).
ParallelPlan make_plan(const config::Scenario& scenario);

std::string_view to_string(Axis axis);
std::string_view to_string(GroupKind kind);
// What a group name of the communication log (a GroupKind's to_string, or the label of point-to-point
// sends: pp_comm, cp_comm) means, in words; empty for a name it does not know.
std::string_view describe_group(std::string_view name);

}  // namespace trainsim::workload

#endif  // TRAINSIM_SIM_WORKLOAD_PLAN_H_
