#pragma once
// A private CA made with openssl in a temp dir, and server certificates it
// signs, for tests of HTTPS endpoints (the Doris emulator's --tls-cert).
//   TestPki pki;                                  // CA "test-ca" + "other-ca" (signs nothing)
//   pki.issue("server", "DNS:localhost,IP:127.0.0.1");
//   pki.file("server.pem"), pki.file("server.key"), pki.file("ca.pem"), pki.file("other-ca.pem")
#include <filesystem>
#include <string>

namespace cdc2doris::test {

class TestPki {
 public:
  TestPki();   // throws std::runtime_error if openssl fails
  ~TestPki();  // removes the directory
  TestPki(const TestPki&) = delete;
  TestPki& operator=(const TestPki&) = delete;

  // <name>.pem / <name>.key: a certificate for `san` ("DNS:a,IP:b") signed by ca.pem.
  void issue(const std::string& name, const std::string& san);
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

 private:
  void openssl(const std::string& args);
  std::filesystem::path dir_;
};

}  // namespace cdc2doris::test
