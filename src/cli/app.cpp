#include "cli/app.hpp"

#include <nlohmann/json.hpp>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/commands.hpp"
#include "cli/json_output.hpp"
#include "cli/completion.hpp"
#include "cli/exit_codes.hpp"
#include "devices/device_db.hpp"
#include "cli/host_measurer.hpp"
#include "cli/log.hpp"
#include "cli/suggest.hpp"

namespace trilemma::cli {

int exit_code_for(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::usage: return k_exit_usage;
    case ErrorKind::input: return k_exit_input;
    case ErrorKind::infeasible: return k_exit_infeasible;
    case ErrorKind::io: return k_exit_io;
    case ErrorKind::memory: return k_exit_memory;
    case ErrorKind::internal: return k_exit_internal;
  }
  return k_exit_internal;
}

int report_error(const Error& error) {
  std::cerr << "trilemma: error: " << error.to_string() << "\n";
  return exit_code_for(error.kind);
}

namespace {

// Every command, in the order --help lists them.
void add_commands(CLI::App& app, Handler& handler) {
  add_devices_command(app, handler);
  add_models_command(app, handler);
  add_plan_command(app, handler);
  add_requirements_command(app, handler);
  add_engine_commands(app, handler);
  add_emit_command(app, handler);
  add_gate_command(app, handler);
  add_verify_command(app, handler);
  add_fidelity_command(app, handler);
  add_calibrate_command(app, handler);
  add_completion_command(app, handler);  // last: it lists the commands above
}

// The exit code when parsing ends the run (help, version, a usage error), nullopt to go on.
std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11 reports a misspelt required option as missing and a misspelt command as none given:
    // name the word that was not understood when there is one.
    const auto unknown = unknown_word(app, std::vector<std::string>(argv + 1, argv + argc));
    std::cerr << "trilemma: error: " << (unknown ? *unknown : std::string(e.what())) << "\n(see `trilemma --help`)\n";
    return k_exit_usage;
  }
  return std::nullopt;
}

// Runs the chosen command; what escapes it becomes an exit code, never a crash.
int run_command(const Handler& handler) {
  try {
    const int code = handler();
    // A report nobody received is a failure (`plan --json > /dev/full`): stdout is buffered,
    // so its errors surface at the flush.
    std::cout.flush();
    if (!std::cout) {
      std::cerr << "trilemma: error: cannot write to standard output\n";
      return code == k_exit_ok || code == k_exit_check_failed ? k_exit_io : code;
    }
    return code;
  } catch (const std::bad_alloc&) {
    std::cerr << "trilemma: error: out of memory\n";
    return k_exit_memory;
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the user gave that the system cannot resolve (a symlink loop, a name too long, a
    // file where a directory is needed) is their input; anything else, a failing disk. Callers
    // check what they can; this keeps the rest from reading as a bug (reliability D9).
    const int code = e.code().value();
    const bool input = code == ELOOP || code == ENAMETOOLONG || code == ENOTDIR || code == ENOENT;
    std::string path = e.path1().string();
    if (path.size() > 256) path = path.substr(0, 256) + "...";
    std::cerr << "trilemma: error: " << path << ": " << e.code().message() << "\n";
    return input ? k_exit_input : k_exit_io;
  } catch (const ImpossibleFigure& e) {
    std::cerr << "trilemma: error: " << e.what()
              << ": a figure no run or estimate can have; the inputs behind it (a device or model file, a report) are out of range\n";
    return k_exit_input;
  } catch (const nlohmann::json::exception& e) {
    // A field of another type than a reader expects: the readers check the fields they know;
    // this keeps one they missed from reading as a bug (reliability D8).
    std::cerr << "trilemma: error: a JSON input holds a field of an unexpected type or value: " << e.what() << "\n";
    return k_exit_input;
  } catch (const std::exception& e) {
    std::cerr << "trilemma: internal error: " << e.what() << "\n";
    return k_exit_internal;
  }
}

}  // namespace

int run(int argc, char** argv) {
  // `host` probes on first use; progress goes to stderr so stdout stays machine-readable.
  devices::set_host_prober([] {
    spdlog::info("probing this machine (first use of `host`; cached in {})", devices::host_profile_path());
    return devices::probe_host(engine_measurer(), [](const std::string& step) { spdlog::info("  probe: {}", step); });
  });
  CLI::App app{"trilemma: plan, configure and verify on-device LLM deployments"};
  app.set_version_flag("--version", "trilemma 0.1.0");
  app.require_subcommand(1);
  // Global, before or after the command (fallthrough): how much goes to stderr (cli/log.hpp).
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "also print debug diagnostics on stderr");
  app.add_flag("-q,--quiet", quiet, "print only errors on stderr (no progress, no warnings)");
  app.fallthrough();
  Handler handler;
  add_commands(app, handler);
  if (const auto code = parse(app, argc, argv)) return *code;
  if (!handler) return k_exit_usage;
  if (!configure_logging(verbose, quiet))
    std::cerr << "trilemma: warning: TRILEMMA_LOG must be debug, info, warn or error; using info\n";
  return run_command(handler);
}

}  // namespace trilemma::cli
