#pragma once
// Runs a command line as a user would (through the shell) and keeps its exit code, stdout and stderr.

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace kotae::testing {

struct CommandRun {
  int exit_code = -1;
  std::string out, err;
};

// `stderr_file` is a scratch file the command's stderr goes through.
inline CommandRun run_command(const std::string& command_line, const std::filesystem::path& stderr_file) {
  CommandRun run;
  FILE* pipe = popen((command_line + " 2>" + stderr_file.string()).c_str(), "r");
  if (!pipe) return run;
  std::array<char, 4096> buffer;
  while (std::size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) run.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(stderr_file);
  run.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return run;
}

}  // namespace kotae::testing
