#include "core/runtime/fault_injection.hpp"

namespace porta::detail::fault {

std::atomic<bool> armed{false};

namespace {
std::atomic<int> armed_site{-1};
std::atomic<long> remaining{0};
std::atomic<bool> has_fired{false};
}  // namespace

bool fail_now(Site site) noexcept {
  if (armed_site.load() != static_cast<int>(site)) return false;
  if (remaining.fetch_sub(1) != 1) return false;
  has_fired.store(true);
  return true;
}

void arm(Site site, long nth) noexcept {
  armed_site.store(static_cast<int>(site));
  remaining.store(nth);
  has_fired.store(false);
  armed.store(true);
}

void disarm() noexcept {
  armed.store(false);
  armed_site.store(-1);
}

bool fired() noexcept { return has_fired.load(); }

}  // namespace porta::detail::fault
