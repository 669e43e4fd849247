// The .npy reader and writer that porta-run uses.
#include <cstring>
#include <filesystem>
#include <string>

#include "npy.hpp"
#include "test_util.hpp"

namespace {

using namespace porta;
using namespace porta::test;

std::vector<std::byte> bytes_of(const std::string& s) {
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  return {p, p + s.size()};
}

// A version 1.0 file with the given header dict and data bytes.
std::vector<std::byte> npy_file(const std::string& dict, std::size_t data_bytes) {
  std::string header = dict + "\n";
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header + std::string(data_bytes, '\0');
  return bytes_of(out);
}

}  // namespace

TEST_SUITE("npy") {
  TEST_CASE("round trip: float32 and float16, every rank from 0") {
    for (const DType dtype : {DType::f32, DType::f16}) {
      for (const Shape& shape : {Shape{}, Shape{4}, Shape{2, 3}, Shape{1, 3, 2, 2}}) {
        CAPTURE(to_string(shape));
        npy::Array a{dtype, shape, {}};
        std::size_t n = 1;
        for (auto d : shape) n *= static_cast<std::size_t>(d);
        a.data.resize(n * size_of(dtype));
        for (std::size_t i = 0; i < n; ++i) store_from_f32(a.data.data(), i, dtype, static_cast<float>(i) - 2.5f);
        const auto bytes = npy::serialize(a);
        CHECK((10 + std::to_integer<unsigned>(bytes[8]) + 256 * std::to_integer<unsigned>(bytes[9])) % 64 == 0);
        const npy::Array b = npy::parse(bytes, "mem");
        CHECK(b.dtype == dtype);
        CHECK(b.shape == shape);
        CHECK(b.data == a.data);
      }
    }
    const auto path = std::filesystem::temp_directory_path() / "porta_test_npy.npy";
    npy::write(path, {DType::f32, {2}, std::vector<std::byte>(8, std::byte{0})});
    CHECK(npy::read(path).shape == Shape{2});
    std::filesystem::remove(path);
  }

  TEST_CASE("headers written by numpy parse, version 2 included") {
    const auto a = npy::parse(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24), "a.npy");
    CHECK(a.shape == Shape{2, 3});
    std::string v2 = std::string("\x93NUMPY\x02\x00", 8);
    const std::string dict = "{'descr': '<f2', 'fortran_order': False, 'shape': (5,), }\n";
    v2 += std::string(1, static_cast<char>(dict.size())) + std::string(3, '\0') + dict + std::string(10, '\0');
    const auto b = npy::parse(bytes_of(v2), "b.npy");
    CHECK(b.dtype == DType::f16);
    CHECK(b.shape == Shape{5});
  }

  TEST_CASE("errors name the file and the problem") {
    check_error([] { npy::parse(npy_file("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24), "f.npy"); },
                ErrorCode::InvalidArgument, {"f.npy", "Fortran"});
    check_error([] { npy::parse(npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16), "d.npy"); },
                ErrorCode::InvalidArgument, {"d.npy", "'<f8'"});
    check_error([] { npy::parse(npy_file("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8), "e.npy"); },
                ErrorCode::InvalidArgument, {"'>f4'"});
    check_error(
        [] { npy::parse(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20), "t.npy"); },
        ErrorCode::InvalidArgument, {"t.npy", "24 data bytes", "has 20", "truncated"});
    check_error(
        [] { npy::parse(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", 0), "s.npy"); },
        ErrorCode::InvalidArgument, {"s.npy", "dimension"});
    check_error([] { npy::parse(npy_file("{'descr': '<f4', 'fortran_order': False}", 0), "n.npy"); },
                ErrorCode::InvalidArgument, {"'shape'"});
    check_error([] { npy::parse(bytes_of("PK\x03\x04 not npy"), "z.npy"); }, ErrorCode::InvalidArgument,
                {"z.npy", "magic"});
    check_error([] { npy::read("/nonexistent/x.npy"); }, ErrorCode::IoError, {"/nonexistent/x.npy"});
    // Every prefix of a valid file is an error, never a crash.
    const auto full = npy::serialize({DType::f32, {3}, std::vector<std::byte>(12, std::byte{1})});
    for (std::size_t n = 0; n < full.size(); ++n) {
      CAPTURE(n);
      CHECK_THROWS_AS(npy::parse(std::span(full).first(n), "cut.npy"), Error);
    }
  }
}
