#include "tests/support/test_pki.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>
#include <vector>

#include "tests/support/run_command.hpp"

namespace cdc2doris::test {

namespace {

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

TestPki::TestPki()
    : dir_(std::filesystem::temp_directory_path() /
           ("cdc2doris-pki-" + std::to_string(::getpid()) + "-" + std::to_string(reinterpret_cast<uintptr_t>(this)))) {
  std::filesystem::create_directories(dir_);
  openssl("req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=test-ca -keyout " + file("ca.key") + " -out " +
          file("ca.pem"));
  openssl("req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=other-ca -keyout " + file("other-ca.key") + " -out " +
          file("other-ca.pem"));
}

TestPki::~TestPki() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void TestPki::openssl(const std::string& args) {
  auto argv = words(args);
  argv.insert(argv.begin(), "openssl");
  run_checked(argv, dir_);
}

void TestPki::issue(const std::string& name, const std::string& san) {
  std::ofstream(file(name + ".ext")) << "subjectAltName=" << san << "\n";
  openssl("req -newkey rsa:2048 -nodes -subj /CN=" + name + " -keyout " + file(name + ".key") + " -out " +
          file(name + ".csr"));
  openssl("x509 -req -days 2 -in " + file(name + ".csr") + " -CA " + file("ca.pem") + " -CAkey " + file("ca.key") +
          " -CAcreateserial -out " + file(name + ".pem") + " -extfile " + file(name + ".ext"));
}

}  // namespace cdc2doris::test
