#include "sim/workload/plan.h"

#include <algorithm>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "sim/workload/errors.h"

namespace trainsim::workload {
namespace {

constexpr std::array<std::string_view, kAxisCount> kAxisNames = {"tp", "sp", "dp", "pp"};

int axis_index(Axis axis) { return static_cast<int>(axis); }

// Bit mask of the axes of a group kind.
unsigned axes_mask(GroupKind kind) {
  switch (kind) {
    case GroupKind::kTp:
    case GroupKind::kEtp:
      return 1u << 0;
    case GroupKind::kSp:
      return 1u << 1;
    case GroupKind::kDp:
    case GroupKind::kEp:
    case GroupKind::kEdp:
      return 1u << 2;
    case GroupKind::kPp:
    case GroupKind::kEmbedding:
      return 1u << 3;
    case GroupKind::kDpSp:
    case GroupKind::kEdpSp:
      return (1u << 1) | (1u << 2);
    case GroupKind::kWorld:
      return 0xFu;
  }
  return 0;
}

bool in_mask(unsigned mask, Axis axis) { return (mask >> axis_index(axis)) & 1u; }

// Fine axes (plan.h): the tp coordinate is etp_index + expert_tp * (folded part in the expert group +
// its size * folded part in the expert-data-parallel group), the dp coordinate its part in the expert
// group + that part's size * its part in the expert-data-parallel group.
constexpr int kFineEtp = 0, kFineTpEp = 1, kFineTpEdp = 2, kFineSp = 3, kFineDpEp = 4, kFineDpEdp = 5,
              kFinePp = 6;
constexpr unsigned kFineEp = (1u << kFineTpEp) | (1u << kFineDpEp);
constexpr unsigned kFineEdp = (1u << kFineTpEdp) | (1u << kFineDpEdp);

// Bit mask of the fine axes of a group kind.
unsigned fine_mask(GroupKind kind) {
  switch (kind) {
    case GroupKind::kEtp:
      return 1u << kFineEtp;
    case GroupKind::kEp:
      return kFineEp;
    case GroupKind::kEdp:
      return kFineEdp;
    case GroupKind::kEdpSp:
      return (1u << kFineSp) | kFineEdp;
    default:
      break;
  }
  const unsigned coarse = axes_mask(kind);
  unsigned mask = 0;
  if (in_mask(coarse, Axis::kTp)) mask |= (1u << kFineEtp) | (1u << kFineTpEp) | (1u << kFineTpEdp);
  if (in_mask(coarse, Axis::kSp)) mask |= 1u << kFineSp;
  if (in_mask(coarse, Axis::kDp)) mask |= (1u << kFineDpEp) | (1u << kFineDpEdp);
  if (in_mask(coarse, Axis::kPp)) mask |= 1u << kFinePp;
  return mask;
}

bool in_fine_mask(unsigned mask, int fine_axis) { return (mask >> fine_axis) & 1u; }

}  // namespace

ParallelPlan::ParallelPlan(const config::Parallelism& parallelism) {
  degree_ = {parallelism.tp, parallelism.sp, parallelism.dp, parallelism.pp};
  for (int i = 0; i < kAxisCount; ++i) {
    TRAINSIM_WORKLOAD_CHECK(degree_[i] >= 1) << kAxisNames[i] << " " << degree_[i];
    world_size_ *= degree_[i];
  }
  // Parse "tp-sp-dp-pp" (innermost first).
  std::array<bool, kAxisCount> seen{};
  int count = 0;
  size_t start = 0;
  const std::string& text = parallelism.order;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('-', start), text.size());
    const std::string_view name(text.data() + start, end - start);
    const auto it = std::find(kAxisNames.begin(), kAxisNames.end(), name);
    TRAINSIM_WORKLOAD_CHECK(it != kAxisNames.end() && count < kAxisCount && !seen[it - kAxisNames.begin()])
        << "order " << text;
    seen[it - kAxisNames.begin()] = true;
    order_[count++] = static_cast<Axis>(it - kAxisNames.begin());
    start = end + 1;
  }
  TRAINSIM_WORKLOAD_CHECK(count == kAxisCount) << "order " << text;
  int64_t stride = 1;
  for (Axis axis : order_) {
    stride_[axis_index(axis)] = stride;
    stride *= degree(axis);
  }
  const int64_t ep = parallelism.ep;
  const int64_t etp = parallelism.expert_tp_degree();
  TRAINSIM_WORKLOAD_CHECK(etp >= 1 && degree(Axis::kTp) % etp == 0) << "expert_tp " << etp;
  // The expert group takes the folded tensor-parallel ranks first, then data-parallel ones.
  const int64_t fold = degree(Axis::kTp) / etp;
  const int64_t tp_ep = std::clamp<int64_t>(ep, 1, fold);
  const int64_t dp_ep = ep / tp_ep;
  TRAINSIM_WORKLOAD_CHECK(ep >= 1 &&
                          (ep <= fold ? fold % ep == 0 : ep % fold == 0 && degree(Axis::kDp) % dp_ep == 0))
      << "ep " << ep << " with tp / expert_tp " << fold << " and dp " << degree(Axis::kDp);
  fine_degree_ = {
      etp, tp_ep, fold / tp_ep, degree(Axis::kSp), dp_ep, degree(Axis::kDp) / dp_ep, degree(Axis::kPp)};
  int fine = 0;
  for (Axis axis : order_) {
    switch (axis) {
      case Axis::kTp:
        fine_order_[fine++] = kFineEtp;
        fine_order_[fine++] = kFineTpEp;
        fine_order_[fine++] = kFineTpEdp;
        break;
      case Axis::kSp:
        fine_order_[fine++] = kFineSp;
        break;
      case Axis::kDp:
        fine_order_[fine++] = kFineDpEp;
        fine_order_[fine++] = kFineDpEdp;
        break;
      case Axis::kPp:
        fine_order_[fine++] = kFinePp;
        break;
    }
  }
}

int64_t ParallelPlan::ep() const { return fine_degree_[kFineTpEp] * fine_degree_[kFineDpEp]; }

int64_t ParallelPlan::expert_tp() const { return fine_degree_[kFineEtp]; }

ParallelPlan::FineCoords ParallelPlan::fine_coords(int64_t rank) const {
  const Coords c = coords(rank);
  const int64_t folded = c.tp() / fine_degree_[kFineEtp];
  return {c.tp() % fine_degree_[kFineEtp],
          folded % fine_degree_[kFineTpEp],
          folded / fine_degree_[kFineTpEp],
          c.sp(),
          c.dp() % fine_degree_[kFineDpEp],
          c.dp() / fine_degree_[kFineDpEp],
          c.pp()};
}

Coords ParallelPlan::coords(int64_t rank) const {
  TRAINSIM_WORKLOAD_CHECK(rank >= 0 && rank < world_size_) << "rank " << rank << " of " << world_size_;
  Coords c;
  for (int i = 0; i < kAxisCount; ++i) c.at[i] = (rank / stride_[i]) % degree_[i];
  return c;
}

int64_t ParallelPlan::rank_of(const Coords& c) const {
  int64_t rank = 0;
  for (int i = 0; i < kAxisCount; ++i) {
    TRAINSIM_WORKLOAD_CHECK(c.at[i] >= 0 && c.at[i] < degree_[i])
        << kAxisNames[i] << " coordinate " << c.at[i] << " of " << degree_[i];
    rank += c.at[i] * stride_[i];
  }
  return rank;
}

GroupId ParallelPlan::group_of(int64_t rank, GroupKind kind) const {
  const Coords c = coords(rank);
  if (kind == GroupKind::kEmbedding) {
    TRAINSIM_WORKLOAD_CHECK(degree(Axis::kPp) > 1 && (c.pp() == 0 || c.pp() == degree(Axis::kPp) - 1))
        << "rank " << rank << " (stage " << c.pp() << ") has no embedding group";
  }
  const unsigned mask = fine_mask(kind);
  const FineCoords f = fine_coords(rank);
  int64_t index = 0;
  int64_t stride = 1;
  for (const int axis : fine_order_) {
    if (in_fine_mask(mask, axis)) continue;
    index += f[axis] * stride;
    stride *= fine_degree_[axis];
  }
  return {kind, static_cast<int32_t>(index)};
}

int64_t ParallelPlan::group_size(GroupKind kind) const {
  if (kind == GroupKind::kEmbedding) return degree(Axis::kPp) > 1 ? 2 : 1;
  const unsigned mask = fine_mask(kind);
  int64_t size = 1;
  for (int i = 0; i < kFineAxisCount; ++i) {
    if (in_fine_mask(mask, i)) size *= fine_degree_[i];
  }
  return size;
}

int64_t ParallelPlan::group_count(GroupKind kind) const {
  if (kind == GroupKind::kEmbedding) return degree(Axis::kPp) > 1 ? world_size_ / degree(Axis::kPp) : 0;
  return world_size_ / group_size(kind);
}

std::vector<int64_t> ParallelPlan::members(GroupId group) const {
  const unsigned mask = fine_mask(group.kind);
  TRAINSIM_WORKLOAD_CHECK(group.index >= 0 && group.index < group_count(group.kind))
      << to_string(group.kind) << " group " << group.index << " of " << group_count(group.kind);
  // Coordinates outside the group, from the index.
  FineCoords base{};
  int64_t rest = group.index;
  for (const int axis : fine_order_) {
    if (in_fine_mask(mask, axis)) continue;
    base[axis] = rest % fine_degree_[axis];
    rest /= fine_degree_[axis];
  }
  const auto rank_of_fine = [&](const FineCoords& f) {
    Coords c;
    c[Axis::kTp] =
        f[kFineEtp] + fine_degree_[kFineEtp] * (f[kFineTpEp] + fine_degree_[kFineTpEp] * f[kFineTpEdp]);
    c[Axis::kSp] = f[kFineSp];
    c[Axis::kDp] = f[kFineDpEp] + fine_degree_[kFineDpEp] * f[kFineDpEdp];
    c[Axis::kPp] = f[kFinePp];
    return rank_of(c);
  };
  std::vector<int64_t> ranks;
  if (group.kind == GroupKind::kEmbedding) {
    FineCoords first = base, last = base;
    first[kFinePp] = 0;
    last[kFinePp] = degree(Axis::kPp) - 1;
    ranks = {rank_of_fine(first), rank_of_fine(last)};
    return ranks;
  }
  const int64_t size = group_size(group.kind);
  ranks.reserve(size);
  for (int64_t local = 0; local < size; ++local) {
    FineCoords f = base;
    int64_t r = local;
    for (const int axis : fine_order_) {
      if (!in_fine_mask(mask, axis)) continue;
      f[axis] = r % fine_degree_[axis];
      r /= fine_degree_[axis];
    }
    ranks.push_back(rank_of_fine(f));
  }
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

int64_t ParallelPlan::rank_in_group(int64_t rank, GroupKind kind) const {
  const Coords c = coords(rank);
  if (kind == GroupKind::kEmbedding) return c.pp() == 0 ? 0 : 1;
  const unsigned mask = fine_mask(kind);
  const FineCoords f = fine_coords(rank);
  int64_t local = 0;
  int64_t stride = 1;
  for (const int axis : fine_order_) {
    if (!in_fine_mask(mask, axis)) continue;
    local += f[axis] * stride;
    stride *= fine_degree_[axis];
  }
  return local;
}

std::vector<SymmetryClass> ParallelPlan::symmetry_classes() const {
  std::vector<SymmetryClass> classes;
  const int64_t stages = degree(Axis::kPp);
  classes.reserve(stages);
  for (int64_t stage = 0; stage < stages; ++stage) {
    Coords c;
    c[Axis::kPp] = stage;
    classes.push_back({static_cast<int32_t>(stage), stage, rank_of(c), world_size_ / stages});
  }
  return classes;
}

int32_t ParallelPlan::class_of(int64_t rank) const { return static_cast<int32_t>(coords(rank).pp()); }

std::vector<int64_t> ParallelPlan::class_members(int32_t id) const {
  TRAINSIM_WORKLOAD_CHECK(id >= 0 && id < degree(Axis::kPp)) << "class " << id;
  std::vector<int64_t> ranks;
  ranks.reserve(world_size_ / degree(Axis::kPp));
  for (int64_t rank = 0; rank < world_size_; ++rank) {
    if ((rank / stride_[axis_index(Axis::kPp)]) % degree(Axis::kPp) == id) ranks.push_back(rank);
  }
  return ranks;
}

std::optional<config::PlanViolation> broken_plan_rule(const config::Scenario& scenario) {
  // The workload reads neither the topology nor the hardware profile; a scenario built in code may
  // leave cluster.gpus at 0 (any count).
  unsigned sections = config::kEverySection & ~config::kClusterFiles;
  if (scenario.cluster.gpus == 0) sections &= ~(config::kClusterGpus);
  return config::first_plan_violation(scenario, sections);
}

ParallelPlan make_plan(const config::Scenario& scenario) {
  if (std::optional<config::PlanViolation> broken = broken_plan_rule(scenario))
    throw PlanError(std::move(*broken));
  return ParallelPlan(scenario.parallelism);
}

std::string_view to_string(Axis axis) { return kAxisNames[axis_index(axis)]; }

std::string_view describe_group(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> kMeanings[] = {
      {"tp", "tensor-parallel group"},
      {"sp", "sequence- or context-parallel group (Ulysses, ring, FPDT)"},
      {"dp", "data-parallel group"},
      {"pp", "pipeline-parallel group"},
      {"dp_sp", "data- and sequence-parallel ranks together (gradients and ZeRO shards when sp > 1)"},
      {"world", "every rank"},
      {"embedding", "the first and last pipeline stages (tied embedding gradients)"},
      {"ep", "expert-parallel group (token all-to-alls)"},
      {"edp", "expert data-parallel group (the ranks holding the same experts)"},
      {"edp_sp", "expert data- and sequence-parallel ranks together"},
      {"etp", "expert tensor-parallel group"},
      {"pp_comm", "sends between adjacent pipeline stages"},
      {"cp_comm", "ring attention's K/V sends between context-parallel neighbours"},
  };
  for (const auto& [known, meaning] : kMeanings) {
    if (known == name) return meaning;
  }
  return {};
}

std::string_view to_string(GroupKind kind) {
  switch (kind) {
    case GroupKind::kTp:
      return "tp";
    case GroupKind::kSp:
      return "sp";
    case GroupKind::kDp:
      return "dp";
    case GroupKind::kPp:
      return "pp";
    case GroupKind::kDpSp:
      return "dp_sp";
    case GroupKind::kWorld:
      return "world";
    case GroupKind::kEmbedding:
      return "embedding";
    case GroupKind::kEp:
      return "ep";
    case GroupKind::kEdp:
      return "edp";
    case GroupKind::kEdpSp:
      return "edp_sp";
    case GroupKind::kEtp:
      return "etp";
  }
  return "?";
}

}  // namespace trainsim::workload
