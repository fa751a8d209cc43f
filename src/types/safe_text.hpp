// What text from an input may reach a file trilemma writes for another program to read (a shell
// script, an Ollama Modelfile, an MLC config): ids are tokens of a documented character set,
// and paths carry no control character (a newline in a model id once added shell lines to an
// emitted script: reliability D4). Readers of plan documents refuse the rest, naming the field;
// docs/plan-schema.md states the sets.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace trilemma {

inline constexpr std::size_t k_max_id_length = 128, k_max_path_length = 4096;

// An id (model, device, scenario, architecture, format): 1 to 128 of A-Z a-z 0-9 . _ + -, not
// starting with '-' (it would read as a flag). nullopt when it is one; else why not.
std::optional<std::string> id_problem(std::string_view id);

// A file path: 1 to 4096 bytes with no control character (bytes below 0x20, and 0x7f).
std::optional<std::string> path_problem(std::string_view path);

// `text` with every byte outside the id set replaced by '-' (a file's stem as a model id).
std::string as_id(std::string_view text);

}  // namespace trilemma
