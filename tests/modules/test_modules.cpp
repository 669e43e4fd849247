// The backend module loader (core/runtime/module_loader.hpp) on modules built broken on purpose
// (tests/modules/fixture_module.cpp): each is refused with its own reason, and nothing crashes.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "core/runtime/module_loader.hpp"
#include "porta/error.hpp"

namespace fs = std::filesystem;
using porta::Error;
using porta::ErrorCode;
using namespace porta::detail;

namespace {

fs::path fixture(const std::string& variant) {
  return fs::path(PORTA_MODULE_FIXTURES) / variant / "libporta-fixture.so";
}

// Sets PORTA_BACKEND_PATH for one scope.
class BackendPath {
 public:
  explicit BackendPath(const std::string& value) {
    if (const char* old = std::getenv("PORTA_BACKEND_PATH")) old_ = old;
    setenv("PORTA_BACKEND_PATH", value.c_str(), 1);
  }
  ~BackendPath() { old_ ? setenv("PORTA_BACKEND_PATH", old_->c_str(), 1) : unsetenv("PORTA_BACKEND_PATH"); }

 private:
  std::optional<std::string> old_;
};

// A file `name` in a fresh folder of the build tree, holding `bytes`.
fs::path write_file(const std::string& folder, const std::string& bytes) {
  const fs::path dir = fs::path(PORTA_MODULE_FIXTURES) / folder;
  fs::create_directories(dir);
  std::ofstream(dir / "libporta-fixture.so", std::ios::binary) << bytes;
  return dir / "libporta-fixture.so";
}

std::string refusal(const fs::path& file, const std::string& name = "fixture") {
  try {
    load_module(file, name);
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::DeviceUnavailable);
    return e.what();
  }
  FAIL("the module " << file << " was not refused");
  return {};
}

}  // namespace

TEST_SUITE("modules") {
  TEST_CASE("a good module loads, and its backend answers through the handshake") {
    const LoadedModule module = load_module(fixture("good"), "fixture");
    REQUIRE(module.object);
    auto* backend = static_cast<Backend*>(module.object);
    CHECK(backend->name() == "fixture");
    CHECK(backend->status().reason == "the fixture backend has no devices");
    module.destroy(module.object);
  }

  TEST_CASE("each broken module is refused with its own reason") {
    CHECK(refusal(fixture("no_entry")).find("no porta_backend_module entry point") != std::string::npos);
    CHECK(refusal(fixture("wrong_magic")).find("wrong magic number") != std::string::npos);
    CHECK(refusal(fixture("wrong_build_id")).find("must come from one build") != std::string::npos);
    CHECK(refusal(fixture("create_throws")).find("creating the module's object threw") != std::string::npos);
    CHECK(refusal(fixture("wrong_name")).find("the module is the backend 'cpu', not 'fixture'") != std::string::npos);
    CHECK(refusal(fixture("good"), "cpu").find("not 'cpu'") != std::string::npos);
    const std::string garbage = refusal(write_file("garbage", std::string(4096, '\x5a')));
    CHECK(garbage.find("not loaded: ") == 0);
    CHECK(garbage.find("libporta-fixture.so: not an ELF file") != std::string::npos);
    std::ifstream good(fixture("good"), std::ios::binary);
    std::string head(2048, '\0');
    good.read(head.data(), static_cast<std::streamsize>(head.size()));
    // dlopen itself would fault on this file (SIGBUS): the loader reads the headers first.
    CHECK(refusal(write_file("truncated", head)).find("truncated: a segment runs past the end") != std::string::npos);
    CHECK(refusal(fixture("absent")).find("No such file or directory") != std::string::npos);
  }

  TEST_CASE("the search path: PORTA_BACKEND_PATH first, never relative, the first folder with the module wins") {
    const std::string good = fixture("good").parent_path().string();
    const std::string bad = fixture("wrong_magic").parent_path().string();
    {
      const BackendPath path("relative/folder::" + good + ":" + bad);
      const auto folders = module_search_path();
      REQUIRE(folders.size() >= 3);
      CHECK(folders[0] == fs::path(good));
      CHECK(folders[1] == fs::path(bad));
      for (const fs::path& folder : folders) CHECK(folder.is_absolute());
      CHECK(make_module_backend("fixture")->status().reason == "the fixture backend has no devices");
    }
    {
      const BackendPath path(bad + ":" + good);
      const auto backend = make_module_backend("fixture");
      CHECK(backend->status().reason.find("wrong magic number") != std::string::npos);
      CHECK(backend->status().devices.empty());
      CHECK_THROWS_WITH_AS(backend->open(parse_device_spec("fixture:0")),
                           doctest::Contains("device 'fixture:0': fixture: not loaded: "), Error);
    }
    {
      const BackendPath path(good);
      const std::string why = make_module_backend("absent")->status().reason;
      CHECK(why.find("no module libporta-absent.so found (searched " + good) == 0);
    }
  }
}
