// Each command registers its flags on a CLI11 subcommand and returns the handler that runs it.
#pragma once
#include <CLI/CLI.hpp>

#include <functional>

namespace trilemma::cli {

using Handler = std::function<int()>;
// `handler` is set to the command's action when that subcommand is parsed.
void add_devices_command(CLI::App& app, Handler& handler);
void add_models_command(CLI::App& app, Handler& handler);
void add_plan_command(CLI::App& app, Handler& handler);
void add_requirements_command(CLI::App& app, Handler& handler);
void add_engine_commands(CLI::App& app, Handler& handler);  // run, export
void add_emit_command(CLI::App& app, Handler& handler);
void add_gate_command(CLI::App& app, Handler& handler);
void add_verify_command(CLI::App& app, Handler& handler);
void add_fidelity_command(CLI::App& app, Handler& handler);
void add_calibrate_command(CLI::App& app, Handler& handler);

}  // namespace trilemma::cli
