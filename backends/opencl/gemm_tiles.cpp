#include "backends/opencl/gemm_tiles.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>
#include <unistd.h>

#include "backends/opencl/program_cache.hpp"
#include "porta/error.hpp"

namespace porta::detail {
namespace {

constexpr std::string_view file_header = "porta opencl gemm tiles 1";

// Float registers of a CPU with this vector width: 32 with AVX-512, 16 with AVX2/SSE.
int vector_registers(int vector_width) { return vector_width >= 16 ? 32 : 16; }

// Register-blocking shapes (MR rows, NV vectors) that leave room for the B vectors and a broadcast.
std::vector<std::pair<int, int>> micro_shapes(int vector_width) {
  if (vector_registers(vector_width) == 32) return {{12, 2}, {14, 2}, {6, 4}, {8, 3}, {16, 1}};
  return {{6, 2}, {4, 3}, {8, 1}, {4, 2}};
}

// A block of 8 x 4 micro-tiles and KC 256: about 280 KiB of local memory at 12 x 32.
GemmTiles vector_tiles(int vector_width, int micro_m, int vectors) {
  GemmTiles t;
  t.vector_kernel = true;
  t.vector_width = vector_width;
  t.micro_m = micro_m;
  t.vectors = vectors;
  t.block_m = micro_m * 8;
  t.block_n = vector_width * vectors * 4;
  t.kc = 256;
  return t;
}

int device_vector_width(const ClDeviceDescription& device) {
  int width = 4;
  while (width < 16 && width * 2 <= device.info.subgroup_size) width *= 2;
  return width;
}


}  // namespace

std::size_t GemmTiles::work_group() const noexcept {
  if (vector_kernel) return 1;
  return work_m > 0 && work_n > 0 ? static_cast<std::size_t>((tile_m / work_m) * (tile_n / work_n)) : 0;
}

std::uint64_t GemmTiles::local_bytes() const noexcept {
  const auto bytes = [](std::int64_t floats) { return static_cast<std::uint64_t>(floats) * sizeof(float); };
  if (vector_kernel) return bytes(std::int64_t{block_m} * kc + std::int64_t{kc} * block_n + std::int64_t{block_m} * block_n);
  return bytes(std::int64_t{tile_m + tile_n} * tile_k);
}

std::string GemmTiles::build_options() const {
  std::string o;
  const auto define = [&](const char* name, int value) { o += " -D" + std::string(name) + "=" + std::to_string(value); };
  define("TILE_M", tile_m), define("TILE_N", tile_n), define("TILE_K", tile_k), define("WORK_M", work_m);
  define("WORK_N", work_n), define("VW", vector_width), define("NV", vectors), define("MR", micro_m);
  define("BLOCK_M", block_m), define("BLOCK_N", block_n), define("KC", kc);
  return o;
}

std::string GemmTiles::to_string() const {
  std::ostringstream s;
  if (vector_kernel)
    s << "vector vw=" << vector_width << " nv=" << vectors << " mr=" << micro_m << " bm=" << block_m
      << " bn=" << block_n << " kc=" << kc;
  else
    s << "tiled tm=" << tile_m << " tn=" << tile_n << " tk=" << tile_k << " wm=" << work_m << " wn=" << work_n;
  return s.str();
}

std::optional<GemmTiles> GemmTiles::parse(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string kernel;
  in >> kernel;
  GemmTiles t;
  if (kernel != "vector" && kernel != "tiled") return std::nullopt;
  t.vector_kernel = kernel == "vector";
  const std::map<std::string, int*> fields =
      t.vector_kernel ? std::map<std::string, int*>{{"vw", &t.vector_width}, {"nv", &t.vectors}, {"mr", &t.micro_m},
                                                    {"bm", &t.block_m}, {"bn", &t.block_n}, {"kc", &t.kc}}
                      : std::map<std::string, int*>{{"tm", &t.tile_m}, {"tn", &t.tile_n}, {"tk", &t.tile_k},
                                                    {"wm", &t.work_m}, {"wn", &t.work_n}};
  std::size_t seen = 0;
  for (std::string field; in >> field;) {
    const std::size_t eq = field.find('=');
    if (eq == std::string::npos) return std::nullopt;
    const auto it = fields.find(field.substr(0, eq));
    int value = 0;
    const char* first = field.data() + eq + 1;
    const char* last = field.data() + field.size();
    const auto [end, ec] = std::from_chars(first, last, value);
    if (it == fields.end() || ec != std::errc{} || end != last || value < 1 || value > 4096) return std::nullopt;
    *it->second = value;
    ++seen;
  }
  if (seen != fields.size()) return std::nullopt;
  return t;
}

bool GemmTiles::fits(const ClDeviceDescription& device) const noexcept {
  if (local_bytes() > device.local_memory) return false;
  if (vector_kernel)
    return (vector_width == 4 || vector_width == 8 || vector_width == 16) && vectors >= 1 && micro_m >= 1 &&
           block_m % micro_m == 0 && block_n % (vector_width * vectors) == 0 && kc >= 1;
  return work_m >= 1 && work_n >= 1 && tile_m % work_m == 0 && tile_n % work_n == 0 && tile_k >= 1 &&
         work_group() <= device.max_work_group;
}

GemmTiles default_gemm_tiles(const ClDeviceDescription& device) {
  if (device.is_cpu) {
    const int width = device_vector_width(device);
    GemmTiles t = width == 16 ? vector_tiles(width, 12, 2) : vector_tiles(width, 6, 2);
    while (!t.fits(device) && t.kc > 8) t.kc /= 2;
    return t;
  }
  // A tile must fit the device's work-group and local-memory limits; halve it until it does.
  GemmTiles t;
  while (!t.fits(device) && t.tile_m > t.work_m) {
    t.tile_m /= 2;
    t.tile_n /= 2;
  }
  return t;
}

std::filesystem::path tuned_tiles_file(const std::filesystem::path& cache_dir, const ClDeviceDescription& device) {
  return cache_dir / ("gemm-tiles-" + stable_hash_hex(device.identity) + ".txt");
}

GemmTiles choose_gemm_tiles(const ClDeviceDescription& device, const std::optional<std::filesystem::path>& cache_dir) {
  const char* forced = std::getenv("PORTA_OPENCL_GEMM");
  const std::string_view kernel = forced == nullptr ? "" : forced;
  GemmTiles chosen = default_gemm_tiles(device);
  if (cache_dir) {
    std::ifstream in(tuned_tiles_file(*cache_dir, device));
    std::string header, identity, tiles;
    if (std::getline(in, header) && std::getline(in, identity) && std::getline(in, tiles) && header == file_header &&
        identity == device.identity)
      if (const auto tuned = GemmTiles::parse(tiles); tuned && tuned->fits(device)) chosen = *tuned;
  }
  if ((kernel == "vector" && !chosen.vector_kernel) || (kernel == "tiled" && chosen.vector_kernel)) {
    ClDeviceDescription as_forced = device;
    as_forced.is_cpu = kernel == "vector";
    chosen = default_gemm_tiles(as_forced);
  }
  return chosen;
}

void store_tuned_tiles(const std::filesystem::path& file, const ClDeviceDescription& device, const GemmTiles& tiles) {
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  const std::filesystem::path temp = file.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::trunc);
    out << file_header << '\n' << device.identity << '\n' << tiles.to_string() << '\n';
    if (!out.flush()) {
      std::filesystem::remove(temp, ec);
      throw Error(ErrorCode::IoError, "cannot write the tuned GEMM parameters to '" + temp.string() + "'");
    }
  }
  std::filesystem::rename(temp, file, ec);
  if (ec) {
    std::filesystem::remove(temp, ec);
    throw Error(ErrorCode::IoError, "cannot write the tuned GEMM parameters to '" + file.string() + "'");
  }
}

std::vector<GemmTiles> gemm_shape_candidates(const ClDeviceDescription& device) {
  std::vector<GemmTiles> list;
  const GemmTiles base = default_gemm_tiles(device);
  if (base.vector_kernel) {
    for (const auto& [micro_m, vectors] : micro_shapes(base.vector_width))
      list.push_back(vector_tiles(base.vector_width, micro_m, vectors));
  } else {
    for (const auto& [work_m, work_n] : {std::pair{4, 4}, {8, 4}, {4, 8}, {8, 8}, {2, 2}}) {
      GemmTiles t = base;
      t.work_m = work_m;
      t.work_n = work_n;
      list.push_back(t);
    }
  }
  std::erase_if(list, [&](const GemmTiles& t) { return !t.fits(device); });
  return list;
}

std::vector<GemmTiles> gemm_block_candidates(const ClDeviceDescription& device, const GemmTiles& shape) {
  std::vector<GemmTiles> list;
  if (shape.vector_kernel) {
    const int nr = shape.vector_width * shape.vectors;
    // (micro-tiles down, micro-tiles across, KC) around the default 8 x 4 x 256.
    for (const auto& [rows, across, kc] : {std::tuple{8, 4, 128}, {8, 4, 512}, {4, 4, 256}, {16, 4, 256},
                                           {8, 2, 256}, {8, 8, 256}, {4, 8, 256}, {16, 2, 256}}) {
      GemmTiles t = shape;
      t.block_m = shape.micro_m * rows;
      t.block_n = nr * across;
      t.kc = kc;
      list.push_back(t);
    }
  } else {
    for (const auto& [tile_m, tile_n, tile_k] :
         {std::tuple{64, 64, 16}, {128, 64, 16}, {64, 128, 16}, {128, 128, 8}, {32, 32, 16}, {64, 64, 32}}) {
      GemmTiles t = shape;
      t.tile_m = tile_m;
      t.tile_n = tile_n;
      t.tile_k = tile_k;
      list.push_back(t);
    }
  }
  std::erase_if(list, [&](const GemmTiles& t) { return !t.fits(device) || t.to_string() == shape.to_string(); });
  return list;
}

}  // namespace porta::detail
